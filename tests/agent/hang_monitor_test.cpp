// HangMonitor (hang_monitor.h) on a simulated clock: the run spec's phase timeout reaches the
// stall rule, and the failure reason of a hang timeout stays within kMaxStallSummaryBytes
// however many ranks the run has. /proc is an empty directory: no rank process is seen.
#include "ringside/agent/hang_monitor.h"

#include <gtest/gtest.h>

#include "ringside/common/run_limits.h"
#include "ringside/common/utf8.h"
#include "test_util.h"

namespace ringside::agent {
namespace {

v1::RunInfo runningRun(const std::string& runId, int nodes, int ranksPerNode) {
  v1::RunInfo run;
  run.set_run_id(runId);
  run.set_state(v1::RUNNING);
  run.set_world_size(static_cast<uint32_t>(nodes * ranksPerNode));
  run.mutable_spec()->mutable_trainer();
  for (int n = 0; n < nodes; ++n) {
    v1::HostSlots* host = run.add_placement();
    host->set_host("node-" + std::to_string(n + 1));
    host->set_ranks(static_cast<uint32_t>(ranksPerNode));
  }
  return run;
}

v1::RankHeartbeat beat(const std::string& runId, int rank, int64_t step, v1::RankPhase phase,
                       double phaseSeconds) {
  v1::RankHeartbeat b;
  b.set_run_id(runId);
  b.set_rank(rank);
  b.set_step(step);
  b.set_work_done(static_cast<uint64_t>(step));
  b.set_phase(phase);
  b.set_phase_seconds(phaseSeconds);
  b.set_last_step_ms(5.0);
  return b;
}

// The hang timeout's failure reason is the stall summary, which named every
// rank: 8,192 silent ranks made a reason of hundreds of KiB.
TEST(HangMonitorTest, HangTimeoutReasonOfEightThousandRanksIsBounded) {
  trainer::TempDir proc;
  HangMonitor monitor(proc.path());
  v1::RunInfo run = runningRun("big", 64, 128);
  run.mutable_spec()->set_hang_timeout_s(30);
  ASSERT_TRUE(monitor.poll({run}, "node-1", 0.0).empty());
  for (int r = 0; r < 8192; ++r) monitor.onHeartbeat(beat("big", r, 3, v1::COMPUTE, 0.1), 0.5);
  const auto actions = monitor.poll({run}, "node-1", 30.6);  // 30.1 s without progress
  ASSERT_EQ(actions.size(), 1u);
  const HangMonitor::Action& action = actions[0];
  EXPECT_EQ(action.kind, HangMonitor::Action::Kind::kTimedOut);
  EXPECT_LE(action.reason.size(), kMaxStallSummaryBytes);
  EXPECT_LE(action.verdict.summary().size(), kMaxStallSummaryBytes);
  EXPECT_TRUE(isValidUtf8(action.reason));
  EXPECT_EQ(action.reason.rfind("hung: no progress for 30 s (the run's hang timeout is 30 s); ", 0),
            0u)
      << action.reason;
  EXPECT_NE(action.reason.find("ranks 0-8191 on 64 nodes have stopped reporting"),
            std::string::npos)
      << action.reason;
}

TEST(HangMonitorTest, HangReasonIsCutAtACharacterBoundaryWithinTheBound) {
  v1::StallVerdict verdict;
  verdict.set_summary("no progress for 40 s (threshold 10 s): " +
                      std::string(2 * kMaxStallSummaryBytes, 'a') + "\u00e9\u00e9");
  const std::string reason = hangReason(40.0, 30, verdict);
  EXPECT_LE(reason.size(), kMaxStallSummaryBytes);
  EXPECT_TRUE(isValidUtf8(reason));
  EXPECT_TRUE(reason.ends_with("\u2026")) << reason.substr(reason.size() - 10);
  EXPECT_EQ(hangReason(40.0, 30, std::nullopt),
            "hung: no progress for 40 s (the run's hang timeout is 30 s)");
}

// RunSpec.phase_timeout_s reaches the stall rule; past it a rank hung in a
// checkpoint write is flagged, and the hang timeout runs from the last progress within it.
TEST(HangMonitorTest, PhaseTimeoutOfTheRunSpecBoundsACheckpointWrite) {
  trainer::TempDir proc;
  HangMonitor monitor(proc.path());
  // The owner (node-1, the placement's first host) runs no rank, so the empty /proc says nothing.
  v1::RunInfo run = runningRun("ckpt", 2, 2);
  run.mutable_placement(0)->set_ranks(0);
  run.set_world_size(2);
  run.mutable_spec()->set_phase_timeout_s(20);
  run.mutable_spec()->set_hang_timeout_s(60);
  ASSERT_TRUE(monitor.poll({run}, "node-1", 0.0).empty());
  std::vector<HangMonitor::Action> actions;
  for (double t = 1.0; t <= 120.0; t += 1.0) {
    monitor.onHeartbeat(beat("ckpt", 0, 5, v1::CHECKPOINT, t - 1.0), t);
    v1::RankHeartbeat waiting = beat("ckpt", 1, 5, v1::CHECKPOINT, t - 1.0);
    waiting.set_waiting_in("the checkpoint barrier");
    monitor.onHeartbeat(waiting, t);
    for (auto& action : monitor.poll({run}, "node-1", t)) {
      action.reason += " @" + std::to_string(static_cast<int>(t));
      actions.push_back(std::move(action));
    }
  }
  // Last progress at t = 20 (phase 19 s); stalled 8 s later (the rule's floor, StallRule); timed
  // out 60 s after it.
  ASSERT_EQ(actions.size(), 2u);
  EXPECT_EQ(actions[0].kind, HangMonitor::Action::Kind::kStalled);
  EXPECT_NEAR(actions[0].verdict.since(), 20.0, 1e-9);
  EXPECT_NE(actions[0].verdict.summary().find(
                "rank 0 on node-2 has been writing a checkpoint for 27 s (the run's phase "
                "timeout is 20 s)"),
            std::string::npos)
      << actions[0].verdict.summary();
  EXPECT_EQ(actions[1].kind, HangMonitor::Action::Kind::kTimedOut);
  EXPECT_NE(actions[1].reason.find("hung: no progress for 60 s"), std::string::npos)
      << actions[1].reason;
  EXPECT_NE(actions[1].reason.find("@80"), std::string::npos) << actions[1].reason;
}

}  // namespace
}  // namespace ringside::agent
