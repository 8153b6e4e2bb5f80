// Hangs under a real agent (docs/metrics.md, "Hangs"): one rank of a 2-rank trainer run is
// stopped with SIGSTOP; the agent must flag the run stalled within seconds, name the stopped
// rank, clear the verdict when the rank continues, and, with a hang timeout, end the run FAILED
// with the verdict as its reason and no rank left behind.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "agent_fixture.h"

namespace ringside::agent {
namespace {

namespace fs = std::filesystem;

double wallNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

class HangProcessTest : public AgentProcessTest {
 protected:
  // A trainer run long enough to be stopped in the middle (about a minute when left alone).
  v1::RunInfo launchLong(std::optional<uint32_t> hangTimeoutSeconds) {
    v1::Envelope envelope;
    auto* spec = envelope.mutable_launch_run()->mutable_spec();
    spec->set_name("hang");
    spec->set_ranks_per_node(2);
    if (hangTimeoutSeconds) spec->set_hang_timeout_s(*hangTimeoutSeconds);
    auto typed = trainerConfigFromJson(smallRun(400).dump());
    EXPECT_TRUE(typed.isOk()) << typed.status().toString();
    *spec->mutable_trainer()->mutable_config() = *typed;
    const v1::Envelope reply = request(envelope);
    EXPECT_TRUE(reply.has_launch_run_reply()) << reply.DebugString();
    return reply.launch_run_reply().run();
  }

  // The pids of this run's processes with a rank (rank >= 0: only that rank).
  static std::vector<pid_t> rankPids(const std::string& runId, int rank = -1) {
    std::vector<pid_t> pids;
    for (const auto& entry : fs::directory_iterator("/proc")) {
      const std::string name = entry.path().filename();
      if (name.find_first_not_of("0123456789") != std::string::npos) continue;
      const std::string env = readFile(entry.path().string() + "/environ");
      if (env.find("RINGSIDE_RUN_ID=" + runId + '\0') == std::string::npos) continue;
      const std::string tag = "OMPI_COMM_WORLD_RANK=";
      const size_t at = env.find(tag);
      if (at == std::string::npos) continue;
      if (rank >= 0 && std::atoi(env.c_str() + at + tag.size()) != rank) continue;
      pids.push_back(std::stoi(name));
    }
    return pids;
  }

  // Waits until the run has trained a few steps (a metric sample at step >= 10).
  void waitForSteps(const std::string& runId) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (std::chrono::steady_clock::now() < deadline) {
      for (const auto& sample : fetchAll(runId).samples) {
        if (sample.step() >= 10) return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    FAIL() << "run " << runId << " trained no steps";
  }

  // Polls list_runs until `done(run)` or `seconds` pass.
  template <typename Done>
  v1::RunInfo waitFor(const std::string& runId, Done done, int seconds) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    v1::RunInfo run;
    while (std::chrono::steady_clock::now() < deadline) {
      run = findRun(runId);
      if (done(run)) return run;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    ADD_FAILURE() << "run " << runId << " never reached the condition: " << run.DebugString();
    return run;
  }
};

TEST_F(HangProcessTest, StoppedRankIsFlaggedStalledNamedAndClearedWhenItContinues) {
  const v1::RunInfo launched = launchLong(std::nullopt);
  waitForState(launched.run_id(), {v1::RUNNING});
  waitForSteps(launched.run_id());
  const std::vector<pid_t> rank1 = rankPids(launched.run_id(), 1);
  ASSERT_EQ(rank1.size(), 1u);
  const double stoppedAt = wallNow();
  ASSERT_EQ(::kill(rank1[0], SIGSTOP), 0);

  const v1::RunInfo stalled = waitFor(
      launched.run_id(), [](const v1::RunInfo& run) { return run.has_stall(); }, 60);
  ASSERT_TRUE(stalled.has_stall());
  const v1::StallVerdict& verdict = stalled.stall();
  EXPECT_EQ(stalled.state(), v1::RUNNING);
  // Flagged within 10 s of the last progress, by the verdict's own timestamps (the threshold is
  // the rule's 8 s floor: the steps of this run take milliseconds), and soon after the stop.
  EXPECT_NEAR(verdict.threshold_seconds(), 8.0, 0.5);
  EXPECT_LE(verdict.detected_time() - verdict.since(), 10.0);
  EXPECT_LE(verdict.detected_time() - stoppedAt, 15.0);
  ASSERT_EQ(verdict.stuck_ranks_size(), 1) << verdict.DebugString();
  EXPECT_EQ(verdict.stuck_ranks(0), 1);
  ASSERT_EQ(verdict.ranks_size(), 2);
  EXPECT_EQ(verdict.ranks(1).process_state(), "stopped");
  EXPECT_FALSE(verdict.ranks(0).stuck());
  EXPECT_FALSE(verdict.ranks(0).waiting_in().empty()) << verdict.DebugString();
  EXPECT_NE(verdict.summary().find("rank 1"), std::string::npos) << verdict.summary();
  EXPECT_NE(verdict.summary().find("has not reported"), std::string::npos) << verdict.summary();
  EXPECT_NE(verdict.summary().find("process stopped"), std::string::npos) << verdict.summary();
  EXPECT_NE(verdict.summary().find("rank 0 waits in"), std::string::npos) << verdict.summary();

  ASSERT_EQ(::kill(rank1[0], SIGCONT), 0);
  const v1::RunInfo cleared = waitFor(
      launched.run_id(), [](const v1::RunInfo& run) { return !run.has_stall(); }, 30);
  EXPECT_FALSE(cleared.has_stall());
  // Stop it rather than wait for 400 epochs: it was healthy again.
  v1::Envelope stop;
  stop.mutable_stop_run()->set_run_id(launched.run_id());
  ASSERT_TRUE(request(stop).has_stop_run_reply());
  const v1::RunInfo ended = waitForState(launched.run_id(), {v1::STOPPED, v1::FAILED});
  EXPECT_EQ(ended.state(), v1::STOPPED) << ended.reason();

  // The journal holds the verdict and its clearing as state events, and notes in the log.
  uint64_t after = 0;
  bool more = true, sawStall = false, sawClearAfterStall = false, notedStall = false;
  while (more) {
    v1::Envelope fetch;
    fetch.mutable_fetch_run_data()->set_run_id(launched.run_id());
    fetch.mutable_fetch_run_data()->set_after_seq(after);
    const auto page = request(fetch).fetch_run_data_reply();
    for (const auto& event : page.states()) {
      if (event.run().has_stall()) sawStall = true;
      if (sawStall && !event.run().has_stall() && event.run().state() == v1::RUNNING) {
        sawClearAfterStall = true;
      }
    }
    for (const auto& line : page.log_lines()) {
      notedStall |= line.text().find("ringside-agent: the run stalled") != std::string::npos;
    }
    after = page.last_seq();
    more = page.more();
  }
  EXPECT_TRUE(sawStall);
  EXPECT_TRUE(sawClearAfterStall);
  EXPECT_TRUE(notedStall);
}

TEST_F(HangProcessTest, HangTimeoutFailsTheRunWithTheVerdictAndLeavesNoRank) {
  const v1::RunInfo launched = launchLong(20);
  waitForState(launched.run_id(), {v1::RUNNING});
  waitForSteps(launched.run_id());
  const std::vector<pid_t> rank1 = rankPids(launched.run_id(), 1);
  ASSERT_EQ(rank1.size(), 1u);
  const double stoppedAt = wallNow();
  ASSERT_EQ(::kill(rank1[0], SIGSTOP), 0);

  const v1::RunInfo ended =
      waitForState(launched.run_id(), {v1::FAILED, v1::COMPLETED, v1::STOPPED}, 90);
  EXPECT_EQ(ended.state(), v1::FAILED);
  EXPECT_NE(ended.reason().find("hang timeout"), std::string::npos) << ended.reason();
  EXPECT_NE(ended.reason().find("rank 1"), std::string::npos) << ended.reason();
  EXPECT_NE(ended.reason().find("process stopped"), std::string::npos) << ended.reason();
  EXPECT_FALSE(ended.has_stall());
  // 20 s without progress, then at most the 10 s grace and the agent's polling.
  EXPECT_GE(ended.end_time() - stoppedAt, 19.0);
  EXPECT_LE(ended.end_time() - stoppedAt, 45.0);
  EXPECT_TRUE(rankPids(launched.run_id()).empty()) << "a rank of the hung run is still alive";
}

// A custom command sends no heartbeats: the agent judges it from the steps its ranks print. Rank 1
// stops reporting at step 20 while rank 0 goes on to step 25 and then waits (as it would in a
// collective): rank 1 is named as behind.
TEST_F(HangProcessTest, CustomCommandRankThatFallsBehindIsNamed) {
  v1::Envelope envelope;
  auto* spec = envelope.mutable_launch_run()->mutable_spec();
  spec->set_name("custom hang");
  spec->set_ranks_per_node(2);
  for (const char* arg :
       {"sh", "-c",
        R"(r=$OMPI_COMM_WORLD_RANK; n=20; [ "$r" = 0 ] && n=25; i=0; )"
        R"(while [ $i -lt $n ]; do i=$((i+1)); )"
        R"(echo "{\"type\":\"metrics\",\"step\":$i,\"rank\":$r,\"metrics\":{\"train/loss\":1}}"; )"
        R"(sleep 0.1; done; sleep 300)"}) {
    spec->mutable_command()->add_argv(arg);
  }
  const v1::Envelope reply = request(envelope);
  ASSERT_TRUE(reply.has_launch_run_reply()) << reply.DebugString();
  const std::string runId = reply.launch_run_reply().run().run_id();
  const v1::RunInfo stalled = waitFor(
      runId, [](const v1::RunInfo& run) { return run.has_stall(); }, 60);
  ASSERT_TRUE(stalled.has_stall());
  const v1::StallVerdict& verdict = stalled.stall();
  ASSERT_EQ(verdict.stuck_ranks_size(), 1) << verdict.DebugString();
  EXPECT_EQ(verdict.stuck_ranks(0), 1);
  EXPECT_EQ(verdict.step(), 25);
  EXPECT_NE(verdict.summary().find("rank 1 on"), std::string::npos) << verdict.summary();
  EXPECT_NE(verdict.summary().find("is behind: it reported step 20, others step 25"),
            std::string::npos)
      << verdict.summary();
  // The agent sees both processes (sleeping) and their CPU time since the stall.
  ASSERT_EQ(verdict.ranks_size(), 2);
  EXPECT_EQ(verdict.ranks(1).process_state(), "sleeping");
  EXPECT_GE(verdict.ranks(1).cpu_seconds_in_stall(), 0.0);
  v1::Envelope stop;
  stop.mutable_stop_run()->set_run_id(runId);
  stop.mutable_stop_run()->set_grace_seconds(2);
  ASSERT_TRUE(request(stop).has_stop_run_reply());
  waitForState(runId, {v1::STOPPED, v1::FAILED});
}

TEST_F(HangProcessTest, HangTimeoutNotShorterThanTheCollectiveTimeoutIsRefused) {
  v1::Envelope envelope;
  auto* spec = envelope.mutable_launch_run()->mutable_spec();
  spec->set_ranks_per_node(2);
  spec->set_hang_timeout_s(1200);
  auto typed = trainerConfigFromJson(smallRun(1).dump());
  ASSERT_TRUE(typed.isOk());
  *spec->mutable_trainer()->mutable_config() = *typed;
  const v1::Envelope reply = request(envelope);
  ASSERT_TRUE(reply.has_error()) << reply.DebugString();
  EXPECT_NE(reply.error().message().find("collective timeout"), std::string::npos)
      << reply.error().message();
}

}  // namespace
}  // namespace ringside::agent
