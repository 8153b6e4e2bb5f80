// buildBucketTimings (gui_core, bucket_timings.h): a run's per-bucket series grouped by bucket,
// the medians of their finite values, the step-level figures, and names that are not its own
// ignored; a run's summary is its median, not its last step.
#include <QtTest>

#include <cmath>
#include <limits>

#include "ringside/gui/bucket_timings.h"

using namespace ringside::gui;

namespace {

std::vector<SeriesPoint> points(std::initializer_list<std::pair<double, double>> xy) {
  std::vector<SeriesPoint> out;
  for (const auto& p : xy) out.push_back(SeriesPoint{p.first, p.second});
  return out;
}

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

}  // namespace

class BucketTimingsTest : public QObject {
  Q_OBJECT

 private slots:
  void groupsSeriesByBucketInIndexOrder() {
    MetricSeriesMap series;
    // Bucket 10 sorts after bucket 2 by index, not by name.
    series[QStringLiteral("comm/bucket10/bytes")] = points({{10, 1290}, {20, 1290}});
    series[QStringLiteral("comm/bucket2/bytes")] = points({{10, 1611304}});
    series[QStringLiteral("comm/bucket2/allreduce_ms")] = points({{10, 0.5}, {20, 0.25}});
    series[QStringLiteral("comm/bucket2/algbw_GBps")] = points({{10, 3.2}, {20, 6.4}});
    series[QStringLiteral("comm/bucket2/busbw_GBps")] = points({{10, 3.2}, {20, kNaN}});
    series[QStringLiteral("comm/bucket10/allreduce_ms")] = points({{10, 0.125}});
    const BucketTimings timings = buildBucketTimings(series);
    QCOMPARE(timings.buckets.size(), size_t(2));
    QCOMPARE(timings.buckets[0].bucket, 2);
    QCOMPARE(timings.buckets[1].bucket, 10);
    const BucketFigures& two = timings.buckets[0].median;
    QCOMPARE(*two.bytes, 1611304.0);
    QCOMPARE(*two.allreduceMs, 0.375);  // the median of 0.5 and 0.25
    QCOMPARE(*two.algbwGBps, 4.8);
    // Finite values only: a NaN at the last step is not a value.
    QCOMPARE(*two.busbwGBps, 3.2);
    QCOMPARE(timings.buckets[0].allreduceMs.size(), size_t(2));
    QCOMPARE(timings.buckets[0].allreduceMs[1].x, 20.0);
    // Bucket 10 never reported a bandwidth: absent, not 0.
    QVERIFY(!timings.buckets[1].median.algbwGBps);
    QVERIFY(!timings.buckets[1].median.busbwGBps);
  }

  void readsTheStepLevelFigures() {
    MetricSeriesMap series;
    series[QStringLiteral("time/allreduce_ms")] = points({{10, 0.9}, {20, 0.8}});
    series[QStringLiteral("time/exposed_comm_ms")] = points({{10, 0.3}});
    series[QStringLiteral("time/step_ms")] = points({{10, 40}});
    series[QStringLiteral("comm/bytes")] = points({{10, 1686568}});
    series[QStringLiteral("comm/algbw_GBps")] = points({{10, 2.1}});
    series[QStringLiteral("comm/busbw_GBps")] = points({{10, 2.1}});
    series[QStringLiteral("train/loss")] = points({{10, 1.5}});
    const BucketTimings timings = buildBucketTimings(series);
    QVERIFY(timings.buckets.empty());
    QCOMPARE(*timings.step.allreduceMs, 0.85);
    QCOMPARE(*timings.step.bytes, 1686568.0);
    QCOMPARE(*timings.step.algbwGBps, 2.1);
    QCOMPARE(*timings.step.busbwGBps, 2.1);
    QCOMPARE(*timings.exposedCommMs, 0.3);
    QCOMPARE(*timings.stepMs, 40.0);
  }

  // Regression: a finished run's summary said "13.568 ms exposed, 92.6 % of the 14.65 ms step"
  // while its median step took 1.4 ms: the figures were the exit step's outlier.
  void aFinishedRunsSummaryIsItsMedianNotItsLastStep() {
    MetricSeriesMap series;
    std::vector<SeriesPoint> step, exposed;
    for (int i = 1; i <= 99; ++i) {
      step.push_back({double(i), 1.4});
      exposed.push_back({double(i), i <= 80 ? 0.1 : 0.2});
    }
    step.push_back({100, 14.65});
    exposed.push_back({100, 13.568});
    series[QStringLiteral("time/step_ms")] = step;
    series[QStringLiteral("time/exposed_comm_ms")] = exposed;
    const BucketTimings timings = buildBucketTimings(series);
    QCOMPARE(*timings.stepMs, 1.4);
    QCOMPARE(*timings.exposedCommMs, 0.1);
    QVERIFY(std::fabs(*timings.exposedCommP90Ms - 0.2) < 1e-12);
    QCOMPARE(timings.steps, size_t(100));
    // The quantile between ranks: linear, as numpy's default.
    QCOMPARE(*finiteQuantile(points({{1, 1}, {2, 2}, {3, kNaN}, {4, 4}}), 0.5), 2.0);
    QCOMPARE(*finiteQuantile(points({{1, 1}, {2, 2}}), 0.9), 1.9);
    QVERIFY(!finiteQuantile(points({{1, kNaN}}), 0.5));
  }

  void ignoresNamesThatAreNotItsOwn() {
    MetricSeriesMap series;
    series[QStringLiteral("comm/bucket1/unknown_field")] = points({{1, 5}});
    series[QStringLiteral("comm/bucketx/bytes")] = points({{1, 5}});
    series[QStringLiteral("comm/bucket01/bytes")] = points({{1, 5}});
    const BucketTimings timings = buildBucketTimings(series);
    QVERIFY(timings.buckets.empty());
    QVERIFY(!timings.step.bytes);

    const QStringList names = {QStringLiteral("comm/bucket0/bytes"), QStringLiteral("train/loss"),
                               QStringLiteral("comm/bytes"), QStringLiteral("time/data_ms"),
                               QStringLiteral("comm/bucket3/busbw_GBps")};
    QCOMPARE(bucketTimingMetricNames(names),
             QStringList({QStringLiteral("comm/bucket0/bytes"), QStringLiteral("comm/bytes"),
                          QStringLiteral("comm/bucket3/busbw_GBps")}));
  }

  void formatsBytesInDecimalUnits() {
    QCOMPARE(formatBytes(840), QStringLiteral("840 B"));
    QCOMPARE(formatBytes(73984), QStringLiteral("73.98 kB"));
    QCOMPARE(formatBytes(1611304), QStringLiteral("1.61 MB"));
    QCOMPARE(formatBytes(2.5e9), QStringLiteral("2.50 GB"));
  }
};

QTEST_GUILESS_MAIN(BucketTimingsTest)
#include "bucket_timings_test.moc"
