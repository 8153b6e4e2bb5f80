// The stall rule (stall_detector.h, docs/metrics.md "Hangs") on recorded heartbeats: what two
// ranks of a ringside-trainer run sent while rank 1 was stopped with SIGSTOP, and variations.
#include "ringside/agent/stall_detector.h"

#include <gtest/gtest.h>

#include <cmath>

#include "ringside/common/run_limits.h"
#include "ringside/common/utf8.h"

namespace ringside::agent {
namespace {

v1::RankHeartbeat beat(int rank, int64_t step, uint64_t work, v1::RankPhase phase,
                       const std::string& waitingIn = "", double phaseSeconds = 0.1) {
  v1::RankHeartbeat b;
  b.set_run_id("r");
  b.set_rank(rank);
  b.set_step(step);
  b.set_work_done(work);
  b.set_phase(phase);
  b.set_phase_seconds(phaseSeconds);
  b.set_waiting_in(waitingIn);
  b.set_waiting_seconds(waitingIn.empty() ? 0.0 : phaseSeconds);
  b.set_last_step_ms(4.0);
  return b;
}

// Two ranks stepping every 4 ms, heartbeats once a second from t = 100 to `until`.
void healthy(StallDetector& d, double from, double until, int64_t* step) {
  for (double t = from; t < until; t += 1.0) {
    *step += 250;
    d.onHeartbeat(beat(0, *step, *step, v1::COMPUTE), t);
    d.onHeartbeat(beat(1, *step, *step, v1::DATA), t + 0.01);
  }
}

TEST(StallDetectorTest, StoppedRankIsNamedAfterTheEightSecondFloor) {
  StallDetector d({"node-1", "node-2"}, /*heartbeats=*/true, 100.0);
  int64_t step = 0;
  healthy(d, 100.0, 110.0, &step);  // last progress: rank 0 at t = 109
  const double last = 109.0;
  // Rank 1 is stopped: no more heartbeats. Rank 0 waits in the all-reduce of the next step.
  for (double t = 110.0; t < 125.0; t += 1.0) {
    d.onHeartbeat(
        beat(0, step, step, v1::ALLREDUCE, "the all-reduce of bucket 0 of step 2501", t - 109.5),
        t);
    if (t < last + 8.0) {
      EXPECT_FALSE(d.evaluate(t)) << "flagged at " << t;
    }
  }
  d.onProcesses({RankProcessView{1, "stopped", 12.5}}, 124.0);
  const auto verdict = d.evaluate(124.0);
  ASSERT_TRUE(verdict);
  EXPECT_DOUBLE_EQ(verdict->threshold_seconds(), 8.0);  // 20 x 4 ms is far below the floor
  EXPECT_NEAR(verdict->since(), last, 1e-9);
  EXPECT_NEAR(verdict->detected_time(), last + 8.0, 1e-9);
  EXPECT_EQ(verdict->step(), step);
  ASSERT_EQ(verdict->stuck_ranks_size(), 1);
  EXPECT_EQ(verdict->stuck_ranks(0), 1);
  ASSERT_EQ(verdict->stuck_nodes_size(), 1);
  EXPECT_EQ(verdict->stuck_nodes(0), "node-2");
  EXPECT_EQ(verdict->ranks(1).process_state(), "stopped");
  EXPECT_FALSE(verdict->ranks(0).stuck());
  EXPECT_EQ(verdict->summary(),
            "no progress for 15 s (threshold 8 s): rank 1 on node-2 has not reported for 15 s "
            "(process stopped); rank 0 waits in the all-reduce of bucket 0 of step 2501");
}

TEST(StallDetectorTest, ProgressClearsTheVerdict) {
  StallDetector d({"a", "a"}, true, 0.0);
  int64_t step = 0;
  healthy(d, 0.0, 5.0, &step);
  EXPECT_TRUE(d.evaluate(20.0));
  healthy(d, 20.0, 21.0, &step);
  EXPECT_FALSE(d.evaluate(21.5));
}

// The agent stopped for 30 s (SIGSTOP, a suspend): that time is excluded, so a run whose ranks
// were heard just before is not stalled after it, and the clock of silence starts again from
// where it was.
TEST(StallDetectorTest, TimeTheAgentDidNotRunIsExcluded) {
  StallDetector d({"a", "a"}, true, 0.0);
  int64_t step = 0;
  healthy(d, 0.0, 5.0, &step);  // last progress: rank 0 at t = 4
  EXPECT_TRUE(d.evaluate(35.0)) << "without the exclusion, 31 s of quiet is a stall";
  d.excludePause(30.0);
  EXPECT_FALSE(d.evaluate(35.0));
  EXPECT_NEAR(d.secondsWithoutProgress(35.0), 1.0, 1e-9);
  const auto verdict = d.evaluate(44.0);  // 10 s of quiet of the agent's own time
  ASSERT_TRUE(verdict);
  EXPECT_NE(verdict->summary().find("no progress for 10 s"), std::string::npos)
      << verdict->summary();
  d.excludePause(-5.0);  // ignored, as is a non-finite value
  d.excludePause(std::nan(""));
  EXPECT_NEAR(d.secondsWithoutProgress(44.0), 10.0, 1e-9);
}

TEST(StallDetectorTest, ThresholdGrowsWithTheMedianStepTime) {
  StallDetector d({"a", "a"}, true, 0.0);
  // Steps of 2 s: 20 x 2 s = 40 s; 12 s of quiet is a slow step, not a stall.
  for (int i = 1; i <= 10; ++i) {
    v1::RankHeartbeat b0 = beat(0, i, i, v1::COMPUTE);
    b0.set_last_step_ms(2000.0);
    d.onHeartbeat(b0, 2.0 * i);
  }
  EXPECT_NEAR(d.thresholdSeconds(), 40.0, 1e-9);
  EXPECT_FALSE(d.evaluate(20.0 + 12.0));
  EXPECT_TRUE(d.evaluate(20.0 + 41.0));
}

TEST(StallDetectorTest, EvaluationBatchesAndSetUpAreProgress) {
  StallDetector d({"a", "a"}, true, 0.0);
  // Set-up for 30 s: heartbeats in SETUP, not waiting, keep the run alive.
  for (double t = 0.0; t <= 30.0; t += 1.0) {
    d.onHeartbeat(beat(0, 0, 0, v1::SETUP), t);
    d.onHeartbeat(beat(1, 0, 0, v1::SETUP), t);
  }
  EXPECT_FALSE(d.evaluate(31.0));
  // A long evaluation: no step, but work_done grows.
  for (int i = 1; i <= 30; ++i) {
    d.onHeartbeat(beat(0, 0, i, v1::EVALUATION), 31.0 + i);
    d.onHeartbeat(beat(1, 0, i, v1::EVALUATION), 31.0 + i);
  }
  EXPECT_FALSE(d.evaluate(62.0));
}

TEST(StallDetectorTest, BusyRankOutsideACollectiveIsTheOneTheOthersWaitFor) {
  StallDetector d({"n1", "n1", "n2"}, true, 0.0);
  int64_t step = 0;
  for (double t = 0; t < 3; t += 1.0) {
    step += 100;
    for (int r = 0; r < 3; ++r) d.onHeartbeat(beat(r, step, step, v1::COMPUTE), t);
  }
  // Rank 2 keeps reporting, stuck in its data phase (a deadlocked data loader); 0 and 1 wait.
  for (double t = 3; t < 16; t += 1.0) {
    d.onHeartbeat(beat(0, step, step, v1::ALLREDUCE, "the all-reduce of bucket 1 of step 301"), t);
    d.onHeartbeat(beat(1, step, step, v1::ALLREDUCE, "the all-reduce of bucket 1 of step 301"), t);
    d.onHeartbeat(beat(2, step, step, v1::DATA, "", t - 2.0), t);
  }
  const auto verdict = d.evaluate(15.5);
  ASSERT_TRUE(verdict);
  ASSERT_EQ(verdict->stuck_ranks_size(), 1);
  EXPECT_EQ(verdict->stuck_ranks(0), 2);
  EXPECT_EQ(verdict->stuck_nodes(0), "n2");
  EXPECT_NE(verdict->summary().find("rank 2 on n2 has been in the data phase of step 301 for 13 s"),
            std::string::npos)
      << verdict->summary();
  EXPECT_NE(verdict->summary().find("ranks 0 and 1 wait in the all-reduce of bucket 1"),
            std::string::npos)
      << verdict->summary();
}

TEST(StallDetectorTest, EveryRankWaitingBlamesTheCollective) {
  StallDetector d({"a", "b"}, true, 0.0);
  d.onHeartbeat(beat(0, 5, 5, v1::COMPUTE), 0.5);
  d.onHeartbeat(beat(1, 5, 5, v1::COMPUTE), 0.5);
  for (double t = 1; t < 13; t += 1.0) {
    d.onHeartbeat(beat(0, 5, 5, v1::ALLREDUCE, "the all-reduce of bucket 0 of step 6"), t);
    d.onHeartbeat(beat(1, 5, 5, v1::ALLREDUCE, "the all-reduce of bucket 0 of step 6"), t);
  }
  const auto verdict = d.evaluate(12.5);
  ASSERT_TRUE(verdict);
  EXPECT_EQ(verdict->stuck_ranks_size(), 0);
  EXPECT_NE(verdict->summary().find("the collective itself hung"), std::string::npos)
      << verdict->summary();
}

TEST(StallDetectorTest, CustomCommandIsJudgedFromItsStepsOnlyAfterTheFirstOne) {
  StallDetector d({"a", "a"}, /*heartbeats=*/false, 0.0);
  EXPECT_FALSE(d.armed());
  EXPECT_FALSE(d.evaluate(1000.0));  // nothing reported yet: no judgement
  // Both ranks log every 100 steps, every 5 s: the report gap (x3 = 15 s) sets the threshold.
  for (int i = 1; i <= 6; ++i) {
    d.onMetricStep(0, 100 * i, 1000.0 + 5.0 * i);
    d.onMetricStep(1, 100 * i, 1000.0 + 5.0 * i + 0.1);
  }
  EXPECT_TRUE(d.armed());
  EXPECT_NEAR(d.thresholdSeconds(), 15.0, 0.2);
  // Rank 0 reports once more, rank 1 does not.
  d.onMetricStep(0, 700, 1035.0);
  EXPECT_FALSE(d.evaluate(1045.0));
  const auto verdict = d.evaluate(1051.0);
  ASSERT_TRUE(verdict);
  ASSERT_EQ(verdict->stuck_ranks_size(), 1);
  EXPECT_EQ(verdict->stuck_ranks(0), 1);
  EXPECT_NE(verdict->summary().find("rank 1 on a is behind: it reported step 600, others step 700"),
            std::string::npos)
      << verdict->summary();
  // A stopped process outweighs the steps.
  d.onProcesses({RankProcessView{0, "stopped", 3.0}}, 1051.0);
  const auto stopped = d.evaluate(1052.0);
  ASSERT_TRUE(stopped);
  ASSERT_EQ(stopped->stuck_ranks_size(), 1);
  EXPECT_EQ(stopped->stuck_ranks(0), 0);
  EXPECT_TRUE(StallDetector::differs(verdict, stopped));
  EXPECT_FALSE(StallDetector::differs(stopped, stopped));
}

// The summary named every rank and added a sentence per stuck rank, and it is
// the failure reason on a hang timeout: 8,192 ranks made a summary of hundreds of KiB.
TEST(StallDetectorTest, StallSummaryHasNoLengthCapFixedByRangesAndAByteBound) {
  constexpr int kWorld = 8192;
  std::vector<std::string> nodes;
  for (int r = 0; r < kWorld; ++r) nodes.push_back("node-" + std::to_string(r / 128 + 1));
  StallDetector d(nodes, /*heartbeats=*/true, 0.0);
  for (int r = 0; r < kWorld; ++r) d.onHeartbeat(beat(r, 10, 10, v1::COMPUTE), 0.5);
  // Ranks 0-4095 stop reporting; 4096-8190 wait in an all-reduce, 8191 is busy in its data phase.
  for (double t = 1; t < 13; t += 1.0) {
    for (int r = 4096; r < kWorld - 1; ++r) {
      d.onHeartbeat(beat(r, 10, 10, v1::ALLREDUCE, "the all-reduce of bucket 0 of step 11"), t);
    }
    d.onHeartbeat(beat(kWorld - 1, 10, 10, v1::DATA, "", t), t);
  }
  const auto verdict = d.evaluate(12.5);
  ASSERT_TRUE(verdict);
  EXPECT_LE(verdict->summary().size(), kMaxStallSummaryBytes);
  EXPECT_LT(verdict->summary().size(), 1024u) << "ranges, not a sentence per rank";
  EXPECT_NE(verdict->summary().find("ranks 0-4095 on 32 nodes have stopped reporting; for example, "
                                    "rank 0 on node-1 has not reported for 12 s"),
            std::string::npos)
      << verdict->summary();
  EXPECT_NE(verdict->summary().find("rank 8191 on node-64 has been in the data phase of step 11"),
            std::string::npos)
      << verdict->summary();
  EXPECT_NE(verdict->summary().find(
                "ranks 4096-8190 on 32 nodes wait in the all-reduce of bucket 0 of step 11"),
            std::string::npos)
      << verdict->summary();
  EXPECT_EQ(verdict->stuck_ranks_size(), 4097);  // every stuck rank is still listed by number
  EXPECT_EQ(verdict->stuck_nodes_size(), 33);
  // Per-rank states are bounded too: the stuck ranks first, up to kMaxStallVerdictRanks.
  ASSERT_EQ(verdict->ranks_size(), static_cast<int>(kMaxStallVerdictRanks));
  EXPECT_TRUE(verdict->ranks(0).stuck());
  EXPECT_EQ(verdict->ranks(0).rank(), 0);
}

TEST(StallDetectorTest, StallSummaryOfHostileHeartbeatTextIsCutAtTheByteBound) {
  // A rank's own text (its host, the collective it waits in) is quoted: a huge one is cut, and so
  // is a summary of many distinct collectives, at a character boundary.
  constexpr int kWorld = 64;
  StallDetector d(std::vector<std::string>(kWorld), /*heartbeats=*/true, 0.0);
  for (double t = 0; t < 13; t += 1.0) {
    for (int r = 0; r < kWorld; ++r) {
      v1::RankHeartbeat b =
          beat(r, 1, 1, v1::ALLREDUCE, std::to_string(r) + std::string(100000, 'x') + "\u00e9", t);
      b.set_host(std::string(100000, 'h') + std::to_string(r));
      d.onHeartbeat(b, t);
    }
    if (t == 0) {
      for (int r = 0; r < kWorld; ++r) d.onHeartbeat(beat(r, 2, 2, v1::COMPUTE), 0.5);
    }
  }
  const auto verdict = d.evaluate(12.9);
  ASSERT_TRUE(verdict);
  EXPECT_LE(verdict->summary().size(), kMaxStallSummaryBytes);
  EXPECT_TRUE(isValidUtf8(verdict->summary()));
  EXPECT_NE(verdict->summary().find("more ranks wait in"), std::string::npos)
      << verdict->summary().substr(0, 300);
  for (const auto& rank : verdict->ranks()) {
    EXPECT_LE(rank.node().size(), kMaxHeartbeatHostBytes);
    EXPECT_LE(rank.waiting_in().size(), kMaxHeartbeatWaitingInBytes);
    EXPECT_TRUE(isValidUtf8(rank.detail()));
  }
}

// A SETUP or CHECKPOINT heartbeat counted as progress however long it lasted,
// so a rank hung in a checkpoint write with its heartbeat thread alive was never flagged.
TEST(StallDetectorTest, RankHungInSetUpOrACheckpointWriteIsFlaggedAfterThePhaseTimeout) {
  StallRule rule;
  rule.phaseTimeoutSeconds = 600.0;
  StallDetector d({"node-1", "node-2"}, true, 0.0, rule);
  int64_t step = 0;
  healthy(d, 0.0, 10.0, &step);  // last step progress at t = 9
  // Rank 0 writes a checkpoint from t = 10 on and never finishes; rank 1 waits for it.
  for (double t = 10.0; t <= 625.0; t += 1.0) {
    d.onHeartbeat(beat(0, step, step, v1::CHECKPOINT, "", t - 10.0), t);
    d.onHeartbeat(beat(1, step, step, v1::CHECKPOINT, "the checkpoint barrier", t - 10.0), t);
    // Progress until t = 609 (below), so no flag before the threshold's floor after it.
    if (t < 609.0 + rule.minSeconds) {
      EXPECT_FALSE(d.evaluate(t)) << "flagged at " << t;
    }
  }
  // The last heartbeat within the bound (phase 599 s at t = 609) was the last progress.
  EXPECT_NEAR(d.secondsWithoutProgress(625.0), 16.0, 1e-9);
  const auto verdict = d.evaluate(625.0);
  ASSERT_TRUE(verdict);
  ASSERT_EQ(verdict->stuck_ranks_size(), 1);
  EXPECT_EQ(verdict->stuck_ranks(0), 0);
  EXPECT_NE(verdict->summary().find("rank 0 on node-1 has been writing a checkpoint for 615 s "
                                    "(the run's phase timeout is 600 s)"),
            std::string::npos)
      << verdict->summary();

  // Set-up likewise; and 0 leaves the phases unbounded, as before.
  StallDetector setUp({"a"}, true, 0.0, rule);
  for (double t = 0.0; t <= 615.0; t += 1.0) setUp.onHeartbeat(beat(0, 0, 0, v1::SETUP, "", t), t);
  const auto hung = setUp.evaluate(615.0);
  ASSERT_TRUE(hung);
  EXPECT_NE(hung->summary().find("rank 0 on a has been in set-up for 615 s"), std::string::npos)
      << hung->summary();
  rule.phaseTimeoutSeconds = 0.0;
  StallDetector unbounded({"a"}, true, 0.0, rule);
  for (double t = 0.0; t <= 2000.0; t += 1.0) {
    unbounded.onHeartbeat(beat(0, 0, 0, v1::SETUP, "", t), t);
  }
  EXPECT_FALSE(unbounded.evaluate(2000.5));
}

TEST(StallDetectorTest, ProcessStateLetters) {
  EXPECT_EQ(processStateName('T'), "stopped");
  EXPECT_EQ(processStateName('t'), "stopped");
  EXPECT_EQ(processStateName('D'), "disk wait");
  EXPECT_EQ(processStateName('Z'), "zombie");
  EXPECT_EQ(processStateName('S'), "sleeping");
}

}  // namespace
}  // namespace ringside::agent
