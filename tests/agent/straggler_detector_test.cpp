// The straggler rule (straggler_detector.h, docs/metrics.md "The straggler") on recorded per-rank
// timings.
#include "ringside/agent/straggler_detector.h"

#include <gtest/gtest.h>

#include <array>

#include "ringside/common/metric_names.h"

namespace ringside::agent {
namespace {

// Feeds one record of every rank at `step`: data, compute and wait per rank.
std::optional<StragglerVerdict> record(StragglerDetector& d, int64_t step,
                                       const std::vector<std::array<double, 3>>& timings) {
  std::optional<StragglerVerdict> verdict;
  for (size_t r = 0; r < timings.size(); ++r) {
    d.onSample(static_cast<int>(r), step, metric::kDataMs, timings[r][0]);
    d.onSample(static_cast<int>(r), step, metric::kComputeMs, timings[r][1]);
    verdict = d.onSample(static_cast<int>(r), step, metric::kWaitMs, timings[r][2]);
  }
  return verdict;
}

TEST(StragglerDetectorTest, SlowComputeRankIsNamedWithItsStageAndTheOthersWait) {
  StragglerDetector d(4);
  std::optional<StragglerVerdict> verdict;
  // Rank 3 computes 14.1 ms where the others take about 9.8; they wait about 4.2 ms for it.
  for (int64_t step = 10; step <= 50; step += 10) {
    verdict =
        record(d, step, {{0.3, 9.7, 4.3}, {0.3, 9.8, 4.2}, {0.3, 9.9, 4.1}, {0.3, 14.1, 0.1}});
  }
  ASSERT_TRUE(verdict);
  EXPECT_EQ(verdict->step, 50);
  EXPECT_EQ(verdict->rank, 3);
  EXPECT_EQ(verdict->stage, StragglerVerdict::kCompute);
  EXPECT_NEAR(verdict->stageMs, 14.1, 1e-9);
  EXPECT_NEAR(verdict->medianMs, 9.8, 1e-9);
  EXPECT_NEAR(verdict->othersWaitMs, 4.2, 1e-9);
}

TEST(StragglerDetectorTest, SlowDataLoadingIsTheDataStage) {
  StragglerDetector d(2);
  const auto verdict = record(d, 5, {{0.2, 5.0, 3.1}, {3.4, 5.0, 0.0}});
  ASSERT_TRUE(verdict);
  EXPECT_EQ(verdict->rank, 1);
  EXPECT_EQ(verdict->stage, StragglerVerdict::kData);
}

TEST(StragglerDetectorTest, EqualRanksOrNoWaitingNameNone) {
  StragglerDetector equal(3);
  auto verdict = record(equal, 1, {{0.3, 9.8, 0.5}, {0.3, 9.9, 0.4}, {0.3, 9.7, 0.6}});
  ASSERT_TRUE(verdict);
  EXPECT_EQ(verdict->rank, -1);
  EXPECT_EQ(verdict->stage, StragglerVerdict::kNone);
  // More compute on rank 1, but nobody waits for it (the all-reduce hides it): no straggler.
  StragglerDetector hidden(2);
  verdict = record(hidden, 1, {{0.3, 9.0, 0.2}, {0.3, 12.0, 0.2}});
  ASSERT_TRUE(verdict);
  EXPECT_EQ(verdict->rank, -1);
}

TEST(StragglerDetectorTest, AVerdictNeedsEveryRanksRecordAndOldPartialStepsAreDropped) {
  StragglerDetector d(2);
  EXPECT_FALSE(d.onSample(0, 1, metric::kComputeMs, 5.0));
  EXPECT_FALSE(d.onSample(0, 2, metric::kDataMs, 0.1));  // step 1 never completes
  EXPECT_FALSE(d.onSample(0, 2, metric::kComputeMs, 5.0));
  EXPECT_FALSE(d.onSample(0, 2, metric::kWaitMs, 0.0));
  EXPECT_FALSE(d.onSample(1, 2, metric::kDataMs, 0.1));
  EXPECT_FALSE(d.onSample(1, 2, metric::kComputeMs, 5.0));
  EXPECT_FALSE(d.onSample(1, 2, "train/loss", 1.0));  // other names are ignored
  EXPECT_TRUE(d.onSample(1, 2, metric::kWaitMs, 0.0));
  EXPECT_FALSE(d.onSample(-1, 3, metric::kWaitMs, 0.0));
  EXPECT_FALSE(d.onSample(2, 3, metric::kWaitMs, 0.0));  // no rank 2
}

TEST(StragglerDetectorTest, VerdictBecomesGlobalSamples) {
  StragglerVerdict verdict;
  verdict.step = 40;
  verdict.rank = 1;
  verdict.stage = StragglerVerdict::kCompute;
  verdict.stageMs = 22.0;
  verdict.medianMs = 2.0;
  verdict.othersWaitMs = 19.5;
  const auto samples = StragglerDetector::toSamples(verdict, 3, 1234.5);
  ASSERT_EQ(samples.size(), 5u);
  for (const auto& s : samples) {
    EXPECT_EQ(s.rank(), -1);
    EXPECT_EQ(s.step(), 40);
    EXPECT_EQ(s.epoch(), 3);
  }
  EXPECT_EQ(samples[0].name(), metric::kStragglerRank);
  EXPECT_EQ(samples[0].value(), 1.0);
  EXPECT_EQ(samples[1].value(), 2.0);
}

}  // namespace
}  // namespace ringside::agent
