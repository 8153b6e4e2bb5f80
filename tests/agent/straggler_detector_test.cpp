// The straggler rule (straggler_detector.h, docs/metrics.md "The straggler") on synthetic
// timings that follow a synchronous step: every rank loads its batch, computes, and waits in the
// all-reduce until the last rank arrives. straggler_fixtures_test.cpp replays recorded runs.
#include "ringside/agent/straggler_detector.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <random>

#include "ringside/common/metric_names.h"

namespace ringside::agent {
namespace {

// Feeds one record of every rank at `step` and time `wall` (s): data, compute and wait per rank.
std::optional<StragglerVerdict> record(StragglerDetector& d, int64_t step, double wall,
                                       const std::vector<std::array<double, 3>>& timings) {
  std::optional<StragglerVerdict> verdict;
  for (size_t r = 0; r < timings.size(); ++r) {
    const int rank = static_cast<int>(r);
    d.onSample(rank, step, metric::kDataMs, timings[r][0], wall);
    d.onSample(rank, step, metric::kComputeMs, timings[r][1], wall);
    verdict = d.onSample(rank, step, metric::kWaitMs, timings[r][2], wall);
  }
  return verdict;
}

// A synchronous run: each step every rank spends `data[r]` and `compute[r]` ms, then waits until
// the last one arrives plus `commMs`. Returns the per-rank records.
std::vector<std::array<double, 3>> syncStep(const std::vector<double>& data,
                                            const std::vector<double>& compute,
                                            double commMs = 0.1) {
  double last = 0.0;
  for (size_t r = 0; r < data.size(); ++r) last = std::max(last, data[r] + compute[r]);
  std::vector<std::array<double, 3>> timings;
  for (size_t r = 0; r < data.size(); ++r) {
    timings.push_back({data[r], compute[r], last - data[r] - compute[r] + commMs});
  }
  return timings;
}

struct Simulated {
  std::vector<StragglerVerdict> verdicts;
};

// Simulates `seconds` of a `world`-rank run with steps of about 1 ms (jitter on every rank) where
// `slowRank` (-1: none) gets a burst of `burstMs` in `stage` with probability `burstProbability`
// per step while `busy(t)` holds.
template <typename Busy>
Simulated simulate(int world, double seconds, int slowRank, StragglerVerdict::Stage stage,
                   double burstMs, double burstProbability, Busy busy, uint32_t seed = 7,
                   StragglerRule rule = {}) {
  StragglerDetector d(world, rule);
  std::mt19937 rng(seed);
  std::normal_distribution<double> jitter(0.0, 0.03);
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  Simulated out;
  double t = 1000.0;
  for (int64_t step = 1; t < 1000.0 + seconds; ++step) {
    std::vector<double> data(world), compute(world);
    for (int r = 0; r < world; ++r) {
      data[r] = 0.05 + std::abs(jitter(rng)) / 3;
      compute[r] = 0.9 + std::abs(jitter(rng));
      if (r == slowRank && busy(t - 1000.0) && coin(rng) < burstProbability) {
        (stage == StragglerVerdict::kData ? data[r] : compute[r]) += burstMs;
      }
    }
    const auto timings = syncStep(data, compute);
    t += (timings[0][0] + timings[0][1] + timings[0][2]) / 1000.0;
    if (auto verdict = record(d, step, t, timings)) out.verdicts.push_back(*verdict);
  }
  return out;
}

TEST(StragglerDetectorTest, BurstyComputeStragglerIsNamedSteadilyWithItsCost) {
  // Rank 1 loses 4 ms in one step of 20 (a time slice taken by another process): its median
  // compute time is the others', its mean is not.
  const Simulated run =
      simulate(2, 30.0, 1, StragglerVerdict::kCompute, 4.0, 0.05, [](double) { return true; });
  ASSERT_GE(run.verdicts.size(), 50u);
  size_t judged = 0, named = 0;
  for (const StragglerVerdict& v : run.verdicts) {
    if (v.wallTime < 1006.0) continue;  // the first window
    ++judged;
    if (v.rank != 1) continue;
    ++named;
    EXPECT_EQ(v.stage, StragglerVerdict::kCompute);
    // The group waits 4 ms in one step of 20 of about 1.1 ms + 0.2 ms: about 15 % of its time.
    EXPECT_NEAR(v.costShare, 0.2 / 1.3, 0.05);
    EXPECT_GE(v.confidence, 0.5);
    EXPECT_GT(v.stageMs, v.medianMs + 0.1);
    EXPECT_GT(v.othersWaitMs, 0.1);
  }
  EXPECT_EQ(named, judged);
  // About two verdicts a second, each over a window of about 5 s.
  EXPECT_NEAR(static_cast<double>(run.verdicts.size()) / 30.0, 2.0, 0.1);
  EXPECT_NEAR(run.verdicts.back().windowSeconds, 5.0, 0.1);
  EXPECT_EQ(run.verdicts.back().leadingRank, 1);
}

TEST(StragglerDetectorTest, ABurstyStragglerIsDetectedAndClearedWithinTheWindow) {
  // Busy from 10 s to 20 s of a 35 s run.
  const auto busy = [](double t) { return t >= 10.0 && t < 20.0; };
  const Simulated run = simulate(3, 35.0, 2, StragglerVerdict::kData, 3.0, 0.1, busy);
  std::optional<double> detected, cleared;
  for (const StragglerVerdict& v : run.verdicts) {
    const double t = v.wallTime - 1000.0;
    if (t < 10.0) {
      EXPECT_EQ(v.rank, -1) << t;
    }
    if (!detected && t >= 10.0 && v.rank == 2) detected = t - 10.0;
    if (detected && t >= 10.0 + *detected && t < 20.0) {
      EXPECT_EQ(v.rank, 2) << "flickered at " << t;
      EXPECT_EQ(v.stage, StragglerVerdict::kData);
    }
    if (!cleared && t >= 20.0 && v.rank == -1) cleared = t - 20.0;
    if (cleared && t >= 20.0 + *cleared) {
      EXPECT_EQ(v.rank, -1) << t;
    }
  }
  ASSERT_TRUE(detected);
  ASSERT_TRUE(cleared);
  std::printf("detected after %.1f s, cleared after %.1f s\n", *detected, *cleared);
  // 8 of 10 slices must agree: about 4 s, within the 10 s the issue asks.
  EXPECT_LE(*detected, 5.0);
  EXPECT_GE(*detected, 3.0);
  EXPECT_LE(*cleared, 5.0);
}

TEST(StragglerDetectorTest, CleanRunSaysNoneWithHighConfidence) {
  for (int world : {2, 3, 8}) {
    const Simulated run = simulate(
        world, 20.0, -1, StragglerVerdict::kNone, 0.0, 0.0, [](double) { return false; },
        11 + world);
    for (const StragglerVerdict& v : run.verdicts) {
      EXPECT_EQ(v.rank, -1) << world << " ranks at " << v.wallTime;
      EXPECT_EQ(v.costShare, 0.0);
    }
    // Jitter alone leaves every slice below the slice threshold once the window is full.
    EXPECT_EQ(run.verdicts.back().confidence, 1.0) << world;
    // The first verdict comes at the first complete record, with nothing to be sure of yet.
    EXPECT_LE(run.verdicts.front().confidence, 0.1) << world;
  }
}

TEST(StragglerDetectorTest, SystematicLatenessOutsideDataAndComputeIsNoStraggler) {
  // Rank 0 arrives 0.1 ms late at every step's stop agreement because it writes the run's log
  // records: the others wait for it, but not for its data or compute.
  StragglerDetector d(2);
  std::optional<StragglerVerdict> last;
  double t = 0.0;
  for (int64_t step = 1; step <= 20000; ++step) {
    t += 0.0012;
    if (auto v = record(d, step, t, {{0.05, 0.95, 0.1}, {0.05, 0.95, 0.2}})) last = v;
  }
  ASSERT_TRUE(last);
  EXPECT_EQ(last->rank, -1);
  EXPECT_EQ(last->leadingRank, 0);
  EXPECT_EQ(last->leadingCostShare, 0.0);
}

TEST(StragglerDetectorTest, BurstsOutsideDataAndComputeCountAboveTheRanksSteadyOverhead) {
  // Rank 0 writes the run's records (0.1 ms late every step), and in one step of 20 another
  // process takes 4 ms from it there: the bursts count, its steady overhead does not.
  StragglerDetector d(2);
  std::optional<StragglerVerdict> last;
  double t = 0.0;
  for (int64_t step = 1; step <= 20000; ++step) {
    const double late = step % 20 == 0 ? 4.1 : 0.1;
    t += (1.1 + late) / 1000.0;
    if (auto v = record(d, step, t, {{0.05, 0.95, 0.1}, {0.05, 0.95, 0.1 + late}})) last = v;
  }
  ASSERT_TRUE(last);
  EXPECT_EQ(last->rank, 0);
  // 4 ms of every 20 steps of about 1.3 ms (the median over ranks of data + compute + wait).
  EXPECT_NEAR(last->costShare, 4.0 / (20 * 1.2 + 4.0), 0.02);
}

// `seconds` of a 2-rank run where rank 0 first spends 0.4 ms and rank 1 0.1 ms outside data and
// compute in every step (rank 0 writing the run's records), then 0.07 ms loading and
// `computeMs[r]` plus uniform noise of +-`noiseMs` computing; each reports only those three, and
// waits until the last arrives plus 0.1 ms. Returns every verdict.
std::vector<StragglerVerdict> runWithDuty(double seconds, const std::array<double, 2>& computeMs,
                                          double noiseMs, uint32_t seed) {
  StragglerDetector d(2);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> noise(-noiseMs, noiseMs);
  const std::array<double, 2> otherMs{0.4, 0.1};
  std::vector<StragglerVerdict> verdicts;
  double t = 0.0;
  for (int64_t step = 1; t < seconds; ++step) {
    const std::array<double, 2> compute{computeMs[0] + noise(rng), computeMs[1] + noise(rng)};
    double last = 0.0;
    for (size_t r = 0; r < 2; ++r) last = std::max(last, otherMs[r] + 0.07 + compute[r]);
    std::vector<std::array<double, 3>> timings;
    for (size_t r = 0; r < 2; ++r) {
      timings.push_back({0.07, compute[r], last - otherMs[r] - 0.07 - compute[r] + 0.1});
    }
    t += (last + 0.1) / 1000.0;
    if (auto v = record(d, step, t, timings)) verdicts.push_back(*v);
  }
  return verdicts;
}

TEST(StragglerDetectorTest, ARankLateFromItsDutyIsNotNamedForTheNoiseEveryRankHas) {
  // Rank 0 spends 0.3 ms more than rank 1 outside data and compute in every step, so it is the
  // late rank in most steps; both ranks' compute varies by the same +-0.7 ms. In the steps where
  // rank 0 is late, its compute is above rank 1's more often than not: counting only those (the
  // frontier's positive part) charged rank 0 up to 6.3 % of the step time and named it in 67 of
  // 110 verdicts (the rule before lateness was signed, checked). Its signed lateness around its
  // steady offset sums to about 0: none.
  std::vector<StragglerVerdict> verdicts;
  for (const StragglerVerdict& v : runWithDuty(60.0, {2.0, 2.0}, 0.7, 11)) {
    if (v.wallTime > 5.0) verdicts.push_back(v);
  }
  ASSERT_GT(verdicts.size(), 100u);
  int none = 0;
  double largest = 0.0;
  for (const StragglerVerdict& v : verdicts) {
    none += v.rank == -1 ? 1 : 0;
    largest = std::max(largest, v.leadingCostShare);
  }
  EXPECT_EQ(none, static_cast<int>(verdicts.size())) << "largest cost " << largest;
  EXPECT_LT(largest, 0.03);
}

TEST(StragglerDetectorTest, ASteadyStragglerBehindAnotherRanksDutyIsNamedForWhatItCosts) {
  // Rank 0 has 0.3 ms of duty per step, rank 1 computes 0.5 ms more in every step: rank 1 is
  // late by 0.2 ms at every step, all of it explained by its compute, so it all counts.
  const std::vector<StragglerVerdict> verdicts = runWithDuty(20.0, {2.0, 2.5}, 0.05, 12);
  ASSERT_FALSE(verdicts.empty());
  const StragglerVerdict& last = verdicts.back();
  EXPECT_EQ(last.rank, 1);
  EXPECT_EQ(last.stage, StragglerVerdict::kCompute);
  // 0.2 ms of a step of about 2.77 ms (data + compute + wait, the median over ranks).
  EXPECT_NEAR(last.costShare, 0.2 / 2.77, 0.01);
}

TEST(StragglerDetectorTest, MoreComputeThatNobodyWaitsForIsNoStraggler) {
  // More compute on rank 1, but the all-reduce hides it: nobody waits.
  StragglerDetector d(2);
  std::optional<StragglerVerdict> last;
  double t = 0.0;
  for (int64_t step = 1; step <= 10000; ++step) {
    t += 0.001;
    if (auto v = record(d, step, t, {{0.3, 9.0, 0.2}, {0.3, 12.0, 0.2}})) last = v;
  }
  ASSERT_TRUE(last);
  EXPECT_EQ(last->rank, -1);
}

TEST(StragglerDetectorTest, AVerdictNearTheThresholdDoesNotFlicker) {
  // Rank 1 costs between the exit and the enter threshold (about 4.4 %) after having cost 10 %:
  // it stays named; a fresh detector on the same timings does not name it.
  StragglerDetector held(2), fresh(2);
  double t = 0.0;
  std::vector<int> heldRanks, freshRanks;
  for (int64_t step = 1; step <= 40000; ++step) {
    t += 0.001;
    const double extra = step <= 10000 ? 0.11 : 0.044;
    const auto timings = syncStep({0.05, 0.05}, {0.9, 0.9 + extra});
    if (auto v = record(held, step, t, timings); v && step > 15000) heldRanks.push_back(v->rank);
    if (step > 10000) {
      if (auto v = record(fresh, step, t, timings); v && step > 15000) {
        freshRanks.push_back(v->rank);
      }
    }
  }
  ASSERT_FALSE(heldRanks.empty());
  for (int rank : heldRanks) EXPECT_EQ(rank, 1);
  for (int rank : freshRanks) EXPECT_EQ(rank, -1);
}

TEST(StragglerDetectorTest, SlowStepsWindowOverTenRecords) {
  // Steps of 2 s, one record each: every record ends a slice; 8 agreeing slices name the rank.
  StragglerDetector d(2);
  std::vector<StragglerVerdict> verdicts;
  for (int64_t step = 1; step <= 14; ++step) {
    const auto timings = syncStep({10.0, 10.0}, {1900.0, 2050.0});
    if (auto v = record(d, step, 2.0 * step, timings)) verdicts.push_back(*v);
  }
  ASSERT_EQ(verdicts.size(), 14u);  // the first record, then one per record after it
  EXPECT_EQ(verdicts[7].rank, -1);  // 7 slices complete
  EXPECT_EQ(verdicts[8].rank, 1);   // 8 of 10
  EXPECT_NEAR(verdicts.back().costShare, 150.0 / 2060.1, 1e-3);
  EXPECT_NEAR(verdicts.back().windowSeconds, 20.0, 1e-9);
  EXPECT_EQ(verdicts.back().confidence, 1.0);
}

TEST(StragglerDetectorTest, RecordsWithoutTimeAreTimedByTheirSteps) {
  // A sender that sets no wall time: 2 ms steps make a slice every 250 steps.
  StragglerDetector d(2);
  std::vector<StragglerVerdict> verdicts;
  for (int64_t step = 1; step <= 5000; ++step) {
    if (auto v = record(d, step, 0.0, syncStep({0.0, 0.0}, {1.5, 1.9}))) verdicts.push_back(*v);
  }
  ASSERT_NEAR(static_cast<double>(verdicts.size()), 1 + 5000 / 250, 1);
  EXPECT_EQ(verdicts.back().rank, 1);
  EXPECT_NEAR(verdicts.back().windowSeconds, 5.0, 0.05);
}

TEST(StragglerDetectorTest, CostIsTheShareOfTheGroupsStepTime) {
  // 4 ranks; rank 2 computes 0.5 ms more in every step of 2 ms: the others wait 0.5 ms of 2.6.
  StragglerDetector d(4);
  std::optional<StragglerVerdict> last;
  double t = 0.0;
  for (int64_t step = 1; step <= 5000; ++step) {
    t += 0.0026;
    const auto timings = syncStep({0.1, 0.1, 0.1, 0.1}, {2.0, 2.0, 2.5, 2.0});
    if (auto v = record(d, step, t, timings)) last = v;
  }
  ASSERT_TRUE(last);
  EXPECT_EQ(last->rank, 2);
  EXPECT_EQ(last->stage, StragglerVerdict::kCompute);
  EXPECT_NEAR(last->costShare, 0.5 / 2.7, 1e-9);  // data + compute + wait of the others: 2.7 ms
  EXPECT_NEAR(last->stageMs, 2.5, 1e-9);
  EXPECT_NEAR(last->medianMs, 2.0, 1e-9);
  EXPECT_NEAR(last->othersWaitMs, 0.6, 1e-9);
  EXPECT_EQ(last->confidence, 1.0);
}

TEST(StragglerDetectorTest, RecordsOfManyStepsWeighByTheirSteps) {
  // Records every 5 steps; one record of 1 step (an epoch's end) must not count as 5.
  StragglerDetector d(2);
  std::optional<StragglerVerdict> last;
  double t = 0.0;
  int64_t step = 0;
  for (int i = 0; i < 3000; ++i) {
    const bool short_ = i % 2 == 1;
    step += short_ ? 1 : 5;
    t += short_ ? 0.001 : 0.005;
    // Rank 1 is late by 1 ms in the 5-step records, rank 0 by 1 ms in the 1-step ones.
    const auto timings =
        short_ ? syncStep({0.0, 0.0}, {2.0, 1.0}, 0.0) : syncStep({0.0, 0.0}, {1.0, 2.0}, 0.0);
    if (auto v = record(d, step, t, timings)) last = v;
  }
  ASSERT_TRUE(last);
  EXPECT_EQ(last->rank, 1);
  // Per 6 steps of 2 ms: rank 1 charged 5 ms, rank 0 1 ms: (5 - 1) / 12.
  EXPECT_NEAR(last->costShare, 4.0 / 12.0, 0.01);
}

TEST(StragglerDetectorTest, AVerdictNeedsEveryRanksRecordAndOldPartialStepsAreDropped) {
  StragglerDetector d(2);
  EXPECT_FALSE(d.onSample(0, 1, metric::kComputeMs, 5.0, 1.0));
  EXPECT_FALSE(d.onSample(0, 2, metric::kDataMs, 0.1, 1.0));  // step 1 never completes
  EXPECT_FALSE(d.onSample(0, 2, metric::kComputeMs, 5.0, 1.0));
  EXPECT_FALSE(d.onSample(0, 2, metric::kWaitMs, 0.0, 1.0));
  EXPECT_FALSE(d.onSample(1, 2, metric::kDataMs, 0.1, 1.0));
  EXPECT_FALSE(d.onSample(1, 2, metric::kComputeMs, 5.0, 1.0));
  EXPECT_FALSE(d.onSample(1, 2, "train/loss", 1.0, 1.0));     // other names are ignored
  EXPECT_FALSE(d.onSample(1, 2, metric::kWaitMs, NAN, 1.0));  // not a value
  // The first complete record gives the first verdict: none, nothing to be sure of yet.
  const auto first = d.onSample(1, 2, metric::kWaitMs, 0.0, 1.0);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->rank, -1);
  EXPECT_EQ(first->step, 2);
  EXPECT_FALSE(d.onSample(0, 1, metric::kWaitMs, 0.0, 1.0));  // older than the last record
  EXPECT_FALSE(d.onSample(-1, 3, metric::kWaitMs, 0.0, 1.0));
  EXPECT_FALSE(d.onSample(2, 3, metric::kWaitMs, 0.0, 1.0));  // no rank 2
  // A rank that stops reporting: the other's steps wait, at most maxPendingSteps of them.
  for (int64_t step = 3; step < 5000; ++step) {
    EXPECT_FALSE(d.onSample(0, step, metric::kWaitMs, 0.0, 1.0 + step * 1e-3));
  }
  // One rank alone never has a straggler.
  StragglerDetector alone(1);
  EXPECT_FALSE(alone.onSample(0, 1, metric::kWaitMs, 0.0, 1.0));
}

// Feeds one record of every rank with each rank's run-queue delay first, as the trainer sends it.
std::optional<StragglerVerdict> recordWithRunQueue(
    StragglerDetector& d, int64_t step, double wall,
    const std::vector<std::array<double, 3>>& timings, const std::vector<double>& runQueue) {
  for (size_t r = 0; r < runQueue.size(); ++r) {
    EXPECT_FALSE(d.onSample(static_cast<int>(r), step, metric::kRunQueueMs, runQueue[r], wall));
  }
  return record(d, step, wall, timings);
}

// A run over TCP where another process takes `contendedRank`'s CPU (-1: none) in bursts of
// `burstMs` with probability `burstProbability` per step while `busy(t)`: the rank does not
// arrive late (its compute was not hit), but the all-reduce it takes part in is slowed by the
// burst for every rank. Every rank has a little run-queue delay of its own. `withRunQueue`:
// the ranks report time/runqueue_ms.
template <typename Busy>
Simulated simulateContendedAllreduce(int world, double seconds, int contendedRank, double burstMs,
                                     double burstProbability, Busy busy, bool withRunQueue,
                                     uint32_t seed = 5) {
  StragglerDetector d(world);
  std::mt19937 rng(seed);
  std::normal_distribution<double> jitter(0.0, 0.03);
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  Simulated out;
  double t = 1000.0;
  for (int64_t step = 1; t < 1000.0 + seconds; ++step) {
    std::vector<double> data(world), compute(world), runQueue(world);
    double burst = 0.0;
    for (int r = 0; r < world; ++r) {
      data[r] = 0.05 + std::abs(jitter(rng)) / 3;
      compute[r] = 0.9 + std::abs(jitter(rng));
      runQueue[r] = std::abs(jitter(rng)) / 3;
      if (r == contendedRank && busy(t - 1000.0) && coin(rng) < burstProbability) {
        burst = burstMs;
        runQueue[r] += burstMs;
      }
    }
    const auto timings = syncStep(data, compute, 0.3 + burst);
    t += (timings[0][0] + timings[0][1] + timings[0][2]) / 1000.0;
    const auto verdict = withRunQueue ? recordWithRunQueue(d, step, t, timings, runQueue)
                                      : record(d, step, t, timings);
    if (verdict) out.verdicts.push_back(*verdict);
  }
  return out;
}

TEST(StragglerDetectorTest, ARankWhoseCpuIsTakenInsideTheAllreduceIsNamedForCpu) {
  // Busy from 10 s to 25 s of a 40 s run: one step in five loses 3 ms inside the all-reduce.
  const auto busy = [](double t) { return t >= 10.0 && t < 25.0; };
  const Simulated run = simulateContendedAllreduce(3, 40.0, 1, 3.0, 0.2, busy, true);
  std::optional<double> detected, cleared;
  size_t whileBusy = 0, namedWhileBusy = 0;
  for (const StragglerVerdict& v : run.verdicts) {
    const double t = v.wallTime - 1000.0;
    if (t < 10.0) {
      EXPECT_EQ(v.rank, -1) << t;
    }
    if (!detected && t >= 10.0 && v.rank == 1) detected = t - 10.0;
    if (detected && t >= 10.0 + *detected && t < 25.0) {
      ++whileBusy;
      if (v.rank != 1) continue;
      ++namedWhileBusy;
      EXPECT_EQ(v.stage, StragglerVerdict::kCpu);
      // 3 ms in one step of five of about 1.3 ms + 0.6 ms: about 32 % of the group's time.
      EXPECT_NEAR(v.costShare, 0.6 / 1.9, 0.08) << t;
      EXPECT_NEAR(v.stageMs, 0.6, 0.15) << t;  // its run-queue delay per step
      EXPECT_LT(v.medianMs, 0.05) << t;
    }
    if (!cleared && t >= 25.0 && v.rank == -1) cleared = t - 25.0;
    if (cleared && t >= 25.0 + *cleared) {
      EXPECT_EQ(v.rank, -1) << t;
    }
  }
  ASSERT_TRUE(detected);
  ASSERT_TRUE(cleared);
  EXPECT_LE(*detected, 5.0);
  EXPECT_LE(*cleared, 5.0);
  EXPECT_EQ(namedWhileBusy, whileBusy);
  EXPECT_GT(whileBusy, 15u);
}

TEST(StragglerDetectorTest, WithoutRunQueueTheSlowedAllreduceIsChargedToNobody) {
  // The same run without time/runqueue_ms: every rank waits longer, none arrives late, and the
  // late-arrival rule alone has nobody to name (the limit the run-queue delay removes).
  const auto busy = [](double t) { return t >= 10.0 && t < 25.0; };
  const Simulated run = simulateContendedAllreduce(3, 40.0, 1, 3.0, 0.2, busy, false);
  ASSERT_GT(run.verdicts.size(), 60u);
  for (const StragglerVerdict& v : run.verdicts) EXPECT_EQ(v.rank, -1) << v.wallTime;
}

TEST(StragglerDetectorTest, CleanRunWithEveryRanksOwnRunQueueDelaySaysNone) {
  for (int world : {2, 3, 8}) {
    const Simulated run = simulateContendedAllreduce(
        world, 20.0, -1, 0.0, 0.0, [](double) { return false; }, true, 21 + world);
    ASSERT_GT(run.verdicts.size(), 30u);
    for (const StragglerVerdict& v : run.verdicts) {
      EXPECT_EQ(v.rank, -1) << world << " ranks at " << v.wallTime;
    }
  }
}

TEST(StragglerDetectorTest, RunQueueDelayThatMadeTheRankLateIsItsStageAndNotChargedTwice) {
  // Rank 1 loses 4 ms of compute in one step of 20 to another process and arrives late by that:
  // its run-queue delay explains the lateness the late-arrival charge counts, so the cost is that
  // of the run without it, and the stage says why: it waited for a CPU.
  StragglerDetector with(2), without(2), slept(2);
  std::optional<StragglerVerdict> a, b, c;
  double t = 0.0;
  for (int64_t step = 1; step <= 20000; ++step) {
    const double burst = step % 20 == 0 ? 4.0 : 0.0;
    const auto timings = syncStep({0.05, 0.05}, {0.95, 0.95 + burst});
    t += (timings[0][0] + timings[0][1] + timings[0][2]) / 1000.0;
    if (auto v = recordWithRunQueue(with, step, t, timings, {0.01, 0.01 + burst})) a = v;
    if (auto v = record(without, step, t, timings)) b = v;
    // The same lateness without run-queue delay (the rank slept or computed more): compute.
    if (auto v = recordWithRunQueue(slept, step, t, timings, {0.01, 0.01})) c = v;
  }
  ASSERT_TRUE(a);
  ASSERT_TRUE(b);
  EXPECT_EQ(a->rank, 1);
  EXPECT_EQ(a->stage, StragglerVerdict::kCpu);
  EXPECT_NEAR(a->stageMs, 0.01 + 4.0 / 20, 0.01);  // its run-queue delay per step
  EXPECT_EQ(b->rank, 1);
  EXPECT_EQ(b->stage, StragglerVerdict::kCompute);
  EXPECT_NEAR(a->costShare, b->costShare, 1e-9);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->rank, 1);
  EXPECT_EQ(c->stage, StragglerVerdict::kCompute);
  EXPECT_NEAR(c->costShare, b->costShare, 1e-9);
}

TEST(StragglerDetectorTest, RunQueueCountsOnlyWhenEveryRankSentItBeforeItsRecordCompleted) {
  // Rank 1's run-queue delay is large, but rank 0 never reports one: no CPU charge. Nor when the
  // delay comes after the rank's record of that step completed.
  StragglerDetector partial(2), late(2);
  std::optional<StragglerVerdict> a, b;
  double t = 0.0;
  for (int64_t step = 1; step <= 20000; ++step) {
    const auto timings = syncStep({0.05, 0.05}, {0.95, 0.95}, 0.3 + (step % 5 == 0 ? 3.0 : 0.0));
    t += (timings[0][0] + timings[0][1] + timings[0][2]) / 1000.0;
    partial.onSample(1, step, metric::kRunQueueMs, step % 5 == 0 ? 3.0 : 0.0, t);
    if (auto v = record(partial, step, t, timings)) a = v;
    auto v = record(late, step, t, timings);
    late.onSample(0, step, metric::kRunQueueMs, 0.0, t);
    late.onSample(1, step, metric::kRunQueueMs, step % 5 == 0 ? 3.0 : 0.0, t);
    if (v) b = v;
  }
  ASSERT_TRUE(a);
  ASSERT_TRUE(b);
  EXPECT_EQ(a->rank, -1);
  EXPECT_EQ(b->rank, -1);
  EXPECT_EQ(a->leadingCostShare, 0.0);
  EXPECT_EQ(b->leadingCostShare, 0.0);
}

TEST(StragglerDetectorTest, VerdictBecomesGlobalSamples) {
  StragglerVerdict verdict;
  verdict.step = 40;
  verdict.rank = 1;
  verdict.stage = StragglerVerdict::kCompute;
  verdict.stageMs = 22.0;
  verdict.medianMs = 2.0;
  verdict.othersWaitMs = 19.5;
  verdict.costShare = 0.42;
  verdict.confidence = 0.9;
  const auto samples = StragglerDetector::toSamples(verdict, 3, 1234.5);
  ASSERT_EQ(samples.size(), 7u);
  for (const auto& s : samples) {
    EXPECT_EQ(s.rank(), -1);
    EXPECT_EQ(s.step(), 40);
    EXPECT_EQ(s.epoch(), 3);
    EXPECT_EQ(s.wall_time(), 1234.5);
    EXPECT_TRUE(metric::isAgentVerdict(s.name()));
  }
  EXPECT_EQ(samples[0].name(), metric::kStragglerRank);
  EXPECT_EQ(samples[0].value(), 1.0);
  EXPECT_EQ(samples[1].value(), 2.0);
  EXPECT_EQ(samples[5].name(), metric::kStragglerCostShare);
  EXPECT_EQ(samples[5].value(), 0.42);
  EXPECT_EQ(samples[6].name(), metric::kStragglerConfidence);
  EXPECT_EQ(samples[6].value(), 0.9);
}

}  // namespace
}  // namespace ringside::agent
