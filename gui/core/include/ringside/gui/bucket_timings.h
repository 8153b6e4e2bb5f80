// A run's per-bucket communication as the dashboard shows it (BucketTimingsView), built from its
// global metric series: each gradient bucket's comm/bucket<b>/* series and the step-level
// time/allreduce_ms, time/exposed_comm_ms, comm/bytes, comm/algbw_GBps and comm/busbw_GBps
// (docs/metrics.md, "Communication"). Pure functions: no Qt Widgets, thread-safe.
#pragma once

#include <QString>
#include <QStringList>

#include <map>
#include <optional>
#include <vector>

#include "ringside/gui/decimation.h"

namespace ringside::gui {

// Series by metric name (global values, rank -1), x as the caller charts it, y NaN for a
// non-finite value: what MetricsStore::series() returns for each name.
using MetricSeriesMap = std::map<QString, std::vector<SeriesPoint>>;

// The median of each figure's finite values over the series given (a run's: the run; absent:
// never reported, or only non-finite values). A summary states a statistic over many steps, never
// one step's value: the exit step's outlier does not speak for the run.
struct BucketFigures {
  std::optional<double> bytes;        // bytes
  std::optional<double> allreduceMs;  // ms per step
  std::optional<double> algbwGBps;    // GB/s (1e9 B/s)
  std::optional<double> busbwGBps;    // GB/s (1e9 B/s)
};

struct BucketRow {
  int bucket = 0;        // 0: the first bucket whose all-reduce starts (the last layers)
  BucketFigures median;  // its medians
  std::vector<SeriesPoint> allreduceMs;  // its duration over the run (comm/bucket<b>/allreduce_ms)
};

struct BucketTimings {
  std::vector<BucketRow> buckets;  // ascending bucket index; empty for a run without them
  BucketFigures step;              // the step-level figures (comm/bytes, time/allreduce_ms, ...)
  // time/exposed_comm_ms and time/step_ms, ms per step: medians and 90th percentiles (linear
  // interpolation between the closest ranks, as numpy's default), over `steps` reports.
  std::optional<double> exposedCommMs;
  std::optional<double> exposedCommP90Ms;
  std::optional<double> stepMs;
  std::optional<double> stepP90Ms;
  size_t steps = 0;  // finite time/step_ms values (else time/exposed_comm_ms values) summarized
};

// The q-quantile (0 <= q <= 1) of the finite y values of `points`, linear between the closest
// ranks; std::nullopt without a finite value.
std::optional<double> finiteQuantile(const std::vector<SeriesPoint>& points, double q);

// Whether `metricName` is one BucketTimings reads: a comm/bucket<b>/ name or one of the
// step-level names above (and time/step_ms).
bool isBucketTimingMetric(const QString& metricName);

// The names of `runMetricNames` (MetricsStore::metricNames) that buildBucketTimings reads, in
// the same order.
QStringList bucketTimingMetricNames(const QStringList& runMetricNames);

// Groups `series` by bucket. A comm/bucket<b>/ name with a field other than bytes, allreduce_ms,
// algbw_GBps or busbw_GBps, and every name isBucketTimingMetric rejects, is ignored.
BucketTimings buildBucketTimings(const MetricSeriesMap& series);

// "1.61 MB" (10^6), "73.98 kB" (10^3) or "840 B": a byte count as the table shows it.
QString formatBytes(double bytes);

}  // namespace ringside::gui
