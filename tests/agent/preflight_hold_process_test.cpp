// Pre-flight holds through the real agent: reserve_seconds that is not a number
// of seconds is refused, and a launch queued because of another client's hold names the hold.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "agent_fixture.h"

namespace ringside::agent {
namespace {

class PreflightHoldTest : public AgentProcessTest {
 protected:
  static v1::RunSpec sleeper(uint32_t ranks) {
    v1::RunSpec spec;
    spec.set_name("sleeper");
    spec.set_ranks_per_node(ranks);
    spec.mutable_command()->add_argv("sleep");
    spec.mutable_command()->add_argv("1");
    return spec;
  }
  v1::Envelope preflight(uint32_t ranks, double reserveSeconds) {
    v1::Envelope envelope;
    *envelope.mutable_preflight()->mutable_spec() = sleeper(ranks);
    envelope.mutable_preflight()->set_ranks(ranks);
    envelope.mutable_preflight()->set_reserve_seconds(reserveSeconds);
    return request(envelope);
  }
};

TEST_F(PreflightHoldTest, NonFiniteReserveSecondsHeldNothingThoughTheDocsSaidSixtySeconds) {
  for (double bad : {std::nan(""), -std::numeric_limits<double>::infinity(),
                     std::numeric_limits<double>::infinity(), -5.0}) {
    const v1::Envelope reply = preflight(1, bad);
    ASSERT_TRUE(reply.has_error()) << bad << ": " << reply.DebugString();
    EXPECT_EQ(reply.error().code(), v1::ErrorReply::INVALID_ARGUMENT);
    EXPECT_NE(reply.error().message().find("is not a hold: use 0 to only check"), std::string::npos)
        << reply.error().message();
  }
  const v1::Envelope check = preflight(1, 0);
  ASSERT_TRUE(check.has_preflight_reply()) << check.DebugString();
  EXPECT_TRUE(check.preflight_reply().reservation_id().empty()) << "0 only checks";
}

// A launch that waits because of another client's pre-flight hold names the hold, not only
// "stop a run": it is queued (docs/queue.md) with that reason, and can be cancelled while it waits.
TEST_F(PreflightHoldTest, ALaunchQueuedBehindAnotherClientsHoldNamesTheHold) {
  const v1::Envelope free = preflight(1, 0);
  ASSERT_TRUE(free.has_preflight_reply()) << free.DebugString();
  const uint32_t slots = free.preflight_reply().free_cpu_slots();
  if (slots == 0) GTEST_SKIP() << "no free CPU slot on this machine now";
  // Another client's pre-flight holds every free CPU slot for 30 s.
  const v1::Envelope held = preflight(slots, 30);
  ASSERT_TRUE(held.has_preflight_reply()) << held.DebugString();
  const std::string holdId = held.preflight_reply().reservation_id();
  ASSERT_EQ(holdId.size(), 32u) << held.DebugString();

  v1::Envelope launch;
  *launch.mutable_launch_run()->mutable_spec() = sleeper(1);
  const v1::Envelope queued = request(launch);
  ASSERT_TRUE(queued.has_launch_run_reply()) << queued.DebugString();
  const v1::RunInfo& run = queued.launch_run_reply().run();
  EXPECT_EQ(run.state(), v1::QUEUED);
  EXPECT_EQ(run.queue_position(), 1u);
  const std::string& message = run.waiting_reason();
  EXPECT_NE(message.find(std::to_string(slots) + " of this node's CPU slot"), std::string::npos)
      << message;
  EXPECT_NE(message.find("held by another client's pre-flight (hold " + holdId + " for "),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("until its run starts here or the hold expires): wait for that launch"),
            std::string::npos)
      << message;
  // The same words in a pre-flight of the same node.
  const v1::Envelope again = preflight(1, 0);
  ASSERT_EQ(again.preflight_reply().problems_size(), 1) << again.DebugString();
  EXPECT_NE(again.preflight_reply().problems(0).find("(hold " + holdId), std::string::npos)
      << again.preflight_reply().problems(0);
  // Cancelled while it waits: STOPPED, and it never started.
  v1::Envelope stop;
  stop.mutable_stop_run()->set_run_id(run.run_id());
  const v1::Envelope cancelled = request(stop);
  ASSERT_TRUE(cancelled.has_stop_run_reply()) << cancelled.DebugString();
  EXPECT_EQ(cancelled.stop_run_reply().run().state(), v1::STOPPED);
}

}  // namespace
}  // namespace ringside::agent
