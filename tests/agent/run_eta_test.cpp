// RunEtas: a run's time left from the samples the agent journals, as the dashboard reckons it.
#include "ringside/agent/run_eta.h"

#include <gtest/gtest.h>

#include <cmath>

#include "ringside/common/metric_names.h"

namespace ringside::agent {
namespace {

v1::MetricSample sample(const char* name, int64_t step, double value, int32_t rank = -1) {
  v1::MetricSample out;
  out.set_name(name);
  out.set_step(step);
  out.set_value(value);
  out.set_rank(rank);
  return out;
}

TEST(RunEtaTest, TheMeanRateSinceTheFirstSampleOrTheThroughputGivesTheTimeLeft) {
  RunEtas etas;
  EXPECT_FALSE(etas.remainingSeconds("r", 0, 100.0).has_value());  // nothing known
  etas.onSamples("r", {sample(metric::kRunTotalSteps, 0, 1000)}, 100.0);
  EXPECT_FALSE(etas.remainingSeconds("r", 0, 110.0).has_value());  // no step yet
  // 100 steps in the 10 s since the first sample: 10 steps/s, 900 steps left.
  etas.onSamples("r", {sample(metric::kTrainLoss, 100, 0.5), sample(metric::kTrainLoss, 50, 0.6, 1)},
                 110.0);
  ASSERT_TRUE(etas.remainingSeconds("r", 0, 110.0).has_value());
  EXPECT_DOUBLE_EQ(*etas.remainingSeconds("r", 0, 110.0), 90.0);
  // With the run's global batch, the throughput sample sets the rate: 640 samples/s / 64.
  etas.onSamples("r", {sample(metric::kTrainSamplesPerS, 100, 640.0)}, 110.0);
  EXPECT_DOUBLE_EQ(*etas.remainingSeconds("r", 64, 110.0), 90.0);
  EXPECT_DOUBLE_EQ(*etas.remainingSeconds("r", 32, 110.0), 45.0);
  // A rank's own loss is not the run's step; a NaN is ignored; done is 0 s left.
  etas.onSamples("r", {sample(metric::kTrainLoss, 999, 0.1, 0), sample(metric::kTrainLoss, 2000, NAN)},
                 111.0);
  EXPECT_DOUBLE_EQ(*etas.remainingSeconds("r", 64, 111.0), 90.0);
  etas.onSamples("r", {sample(metric::kTrainLoss, 1000, 0.1)}, 112.0);
  EXPECT_DOUBLE_EQ(*etas.remainingSeconds("r", 64, 112.0), 0.0);
  etas.forget("r");
  EXPECT_FALSE(etas.remainingSeconds("r", 64, 112.0).has_value());
}

TEST(RunEtaTest, AResumedRunCountsItsRateFromTheStepItResumedAt) {
  RunEtas etas;
  etas.onSamples("r", {sample(metric::kRunTotalSteps, 500, 1000)}, 0.0);
  etas.onSamples("r", {sample(metric::kTrainLoss, 600, 0.5)}, 20.0);  // 100 steps in 20 s
  EXPECT_DOUBLE_EQ(*etas.remainingSeconds("r", 0, 20.0), 80.0);
}

}  // namespace
}  // namespace ringside::agent
