// The communication metrics' arithmetic (comm_timing.h) on known timings: nccl-tests' algbw and
// busbw (doc/PERFORMANCE.md), a step's totals over its buckets, and the cross-rank figure.
#include "ringside/trainer/comm_timing.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "ringside/common/metric_names.h"

namespace ringside::trainer {
namespace {

TEST(CommTimingTest, DurationIsCompletionMinusStart) {
  EXPECT_DOUBLE_EQ(bucketDurationMs(BucketTiming{1000, 2.5, 4.0}), 1.5);
  EXPECT_DOUBLE_EQ(bucketDurationMs(BucketTiming{1000, 3.0, 3.0}), 0.0);
  // A clock that went backwards gives 0, not a negative duration.
  EXPECT_DOUBLE_EQ(bucketDurationMs(BucketTiming{1000, 3.0, 2.0}), 0.0);
}

TEST(CommTimingTest, AlgbwIsBytesOverTimeInGBps) {
  // 1e9 bytes in 1 s is 1 GB/s (GB = 1e9 bytes, as nccl-tests prints).
  EXPECT_DOUBLE_EQ(*algbwGBps(1e9, 1000.0), 1.0);
  // The default CNN's Linear bucket: 1,611,304 bytes in 0.5 ms = 3.222608 GB/s.
  EXPECT_NEAR(*algbwGBps(1611304.0, 0.5), 3.222608, 1e-12);
  // 256 MiB in 10 ms: 26.8435456 GB/s.
  EXPECT_NEAR(*algbwGBps(268435456.0, 10.0), 26.8435456, 1e-9);
}

TEST(CommTimingTest, AlgbwIsAbsentWithoutAPositiveTimeOrBytes) {
  EXPECT_FALSE(algbwGBps(1000.0, 0.0));
  EXPECT_FALSE(algbwGBps(1000.0, -1.0));
  EXPECT_FALSE(algbwGBps(1000.0, std::numeric_limits<double>::infinity()));
  EXPECT_FALSE(algbwGBps(1000.0, std::numeric_limits<double>::quiet_NaN()));
  EXPECT_FALSE(algbwGBps(0.0, 1.0));
}

TEST(CommTimingTest, BusbwAppliesNcclTestsAllReduceFactor) {
  // 2(n-1)/n: 1 for 2 ranks, 1.5 for 4, 1.75 for 8 (nccl-tests doc/PERFORMANCE.md).
  EXPECT_DOUBLE_EQ(allreduceBusFactor(2), 1.0);
  EXPECT_DOUBLE_EQ(allreduceBusFactor(4), 1.5);
  EXPECT_DOUBLE_EQ(allreduceBusFactor(8), 1.75);
  EXPECT_DOUBLE_EQ(allreduceBusFactor(1), 0.0);
  // nccl-tests' README example: 8 GPUs, algbw 10 GB/s -> busbw 17.5 GB/s.
  EXPECT_NEAR(*allreduceBusbwGBps(1e9, 100.0, 8), 17.5, 1e-12);
  EXPECT_NEAR(*allreduceBusbwGBps(1e9, 100.0, 2), 10.0, 1e-12);
  // One rank moves nothing over a bus: no figure.
  EXPECT_FALSE(allreduceBusbwGBps(1e9, 100.0, 1));
  EXPECT_FALSE(allreduceBusbwGBps(1e9, 0.0, 4));
}

TEST(CommTimingTest, StepTotalsSumTheBucketsOwnDurationsNotTheirSpan) {
  // Bucket 0 from 1 to 3 ms, bucket 1 from 10 to 10.5 ms (an idle gap of 7 ms between them),
  // bucket 2 (after backward) from 12 to 12.25 ms.
  const std::vector<BucketTiming> buckets = {
      {5160, 1.0, 3.0}, {1606144, 10.0, 10.5}, {75264, 12.0, 12.25}};
  const CommTotals totals = sumBuckets(buckets);
  EXPECT_EQ(totals.bytes, 5160u + 1606144u + 75264u);
  EXPECT_DOUBLE_EQ(totals.allreduceMs, 2.0 + 0.5 + 0.25);  // not 12.25 - 1.0
  // The step's algbw is then a byte-weighted mean of the buckets' own bandwidths.
  EXPECT_NEAR(*algbwGBps(double(totals.bytes), totals.allreduceMs), 1686568.0 / 2.75e-3 / 1e9,
              1e-12);
  EXPECT_EQ(sumBuckets({}).bytes, 0u);
  EXPECT_DOUBLE_EQ(sumBuckets({}).allreduceMs, 0.0);
}

TEST(CommTimingTest, MinOverRanksTakesEachColumnsSmallestRankValue) {
  // Two ranks, rows of 3 leading fields then 2 bucket durations: rank 1 joined bucket 0 late
  // (0.4 ms, while rank 0 waited 2.4 ms for it), rank 0 joined bucket 1 late.
  const std::vector<double> rows = {9, 9, 9, 2.4, 0.3,  //
                                    8, 8, 8, 0.4, 1.3};
  const std::vector<double> min = minOverRanks(rows, 2, 5, 3, 2);
  ASSERT_EQ(min.size(), 2u);
  EXPECT_DOUBLE_EQ(min[0], 0.4);
  EXPECT_DOUBLE_EQ(min[1], 0.3);
  EXPECT_TRUE(minOverRanks(rows, 2, 5, 3, 0).empty());
  // Bad shapes give nothing rather than reading past the rows.
  EXPECT_TRUE(minOverRanks(rows, 3, 5, 3, 2).empty());
  EXPECT_TRUE(minOverRanks(rows, 2, 5, 4, 2).empty());
  EXPECT_TRUE(minOverRanks(rows, 0, 5, 3, 2).empty());
}

TEST(BucketMetricNameTest, NamesAndParsesPerBucketMetrics) {
  EXPECT_EQ(metric::bucketMetric(0, metric::kBucketBytes), "comm/bucket0/bytes");
  EXPECT_EQ(metric::bucketMetric(12, metric::kBucketBusbw), "comm/bucket12/busbw_GBps");
  const auto parsed = metric::parseBucketMetric("comm/bucket12/allreduce_ms");
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->bucket, 12);
  EXPECT_EQ(parsed->field, "allreduce_ms");
  for (const char* other :
       {"comm/bytes", "comm/bucket/bytes", "comm/bucketx/bytes", "comm/bucket01/bytes",
        "comm/bucket1", "comm/bucket1/", "comm/bucket1234567/bytes", "time/allreduce_ms"}) {
    EXPECT_FALSE(metric::parseBucketMetric(other)) << other;
  }
}

}  // namespace
}  // namespace ringside::trainer
