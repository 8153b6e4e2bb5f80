// parseMetricsLine: a custom command's JSON Lines records (docs/metrics.md) become samples; a
// "start" record's total_steps and steps_per_epoch become the run's facts, as the trainer sends
// them to the agent sink.
#include "ringside/agent/log_tailer.h"

#include <gtest/gtest.h>

#include <map>

#include "ringside/common/metric_names.h"

namespace ringside::agent {
namespace {

TEST(ParseMetricsLineTest, MetricsRecordValuesBecomeSamples) {
  const auto samples =
      parseMetricsLine(R"({"type":"metrics","step":3,"epoch":0,"time":1.5,"rank":1,)"
                       R"("metrics":{"train/loss":0.25,"broken":null}})");
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(samples[0].name(), metric::kTrainLoss);
  EXPECT_EQ(samples[0].step(), 3);
  EXPECT_EQ(samples[0].rank(), 1);
  EXPECT_EQ(samples[0].wall_time(), 1.5);
  EXPECT_TRUE(parseMetricsLine("plain progress line").empty());
  EXPECT_TRUE(parseMetricsLine(R"({"type":"end","step":9})").empty());
}

TEST(ParseMetricsLineTest, StartRecordGivesTheRunsTotalStepsAndStepsPerEpoch) {
  const auto samples = parseMetricsLine(
      R"({"type":"start","time":2.5,"world_size":2,"steps_per_epoch":468,"total_steps":1404,)"
      R"("first_step":936,"config":{"epochs":3}})");
  ASSERT_EQ(samples.size(), 2u);
  std::map<std::string, double> values;
  for (const auto& sample : samples) {
    values[sample.name()] = sample.value();
    EXPECT_EQ(sample.rank(), -1);
    EXPECT_EQ(sample.step(), 936) << "at the step the run starts from";
    EXPECT_EQ(sample.epoch(), 2);
    EXPECT_EQ(sample.wall_time(), 2.5);
  }
  EXPECT_EQ(values[metric::kRunTotalSteps], 1404);
  EXPECT_EQ(values[metric::kRunStepsPerEpoch], 468);
  // A start record without them gives nothing.
  EXPECT_TRUE(parseMetricsLine(R"({"type":"start","world_size":1})").empty());
}

}  // namespace
}  // namespace ringside::agent
