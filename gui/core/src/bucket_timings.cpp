#include "ringside/gui/bucket_timings.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "ringside/common/metric_names.h"

namespace ringside::gui {

namespace {

std::optional<double> medianOf(const std::vector<SeriesPoint>& points) {
  return finiteQuantile(points, 0.5);
}

size_t finiteCount(const std::vector<SeriesPoint>& points) {
  return static_cast<size_t>(std::count_if(points.begin(), points.end(),
                                           [](const SeriesPoint& p) { return std::isfinite(p.y); }));
}

bool isStepLevel(const QString& name) {
  for (const char* known : {metric::kAllreduceMs, metric::kExposedCommMs, metric::kStepMs,
                            metric::kCommBytes, metric::kCommAlgbw, metric::kCommBusbw}) {
    if (name == QLatin1String(known)) return true;
  }
  return false;
}

// The field's slot in BucketFigures, or null for an unknown field.
std::optional<double>* figureOf(BucketFigures& figures, std::string_view field) {
  if (field == metric::kBucketBytes) return &figures.bytes;
  if (field == metric::kBucketAllreduceMs) return &figures.allreduceMs;
  if (field == metric::kBucketAlgbw) return &figures.algbwGBps;
  if (field == metric::kBucketBusbw) return &figures.busbwGBps;
  return nullptr;
}

}  // namespace

std::optional<double> finiteQuantile(const std::vector<SeriesPoint>& points, double q) {
  std::vector<double> values;
  values.reserve(points.size());
  for (const SeriesPoint& p : points) {
    if (std::isfinite(p.y)) values.push_back(p.y);
  }
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  const double position = std::clamp(q, 0.0, 1.0) * static_cast<double>(values.size() - 1);
  const size_t below = static_cast<size_t>(std::floor(position));
  const size_t above = std::min(below + 1, values.size() - 1);
  const double fraction = position - static_cast<double>(below);
  return values[below] + (values[above] - values[below]) * fraction;
}

bool isBucketTimingMetric(const QString& metricName) {
  if (isStepLevel(metricName)) return true;
  const std::string name = metricName.toStdString();
  return metric::parseBucketMetric(name).has_value();
}

QStringList bucketTimingMetricNames(const QStringList& runMetricNames) {
  QStringList names;
  for (const QString& name : runMetricNames) {
    if (isBucketTimingMetric(name)) names << name;
  }
  return names;
}

BucketTimings buildBucketTimings(const MetricSeriesMap& series) {
  BucketTimings timings;
  std::map<int, BucketRow> rows;
  for (const auto& entry : series) {
    const QString& name = entry.first;
    const std::vector<SeriesPoint>& points = entry.second;
    const std::string text = name.toStdString();
    if (const auto parsed = metric::parseBucketMetric(text)) {
      BucketRow& row = rows[parsed->bucket];
      row.bucket = parsed->bucket;
      std::optional<double>* figure = figureOf(row.median, parsed->field);
      if (figure == nullptr) continue;
      *figure = medianOf(points);
      if (parsed->field == metric::kBucketAllreduceMs) row.allreduceMs = points;
      continue;
    }
    if (name == QLatin1String(metric::kCommBytes)) timings.step.bytes = medianOf(points);
    if (name == QLatin1String(metric::kAllreduceMs)) timings.step.allreduceMs = medianOf(points);
    if (name == QLatin1String(metric::kCommAlgbw)) timings.step.algbwGBps = medianOf(points);
    if (name == QLatin1String(metric::kCommBusbw)) timings.step.busbwGBps = medianOf(points);
    if (name == QLatin1String(metric::kExposedCommMs)) {
      timings.exposedCommMs = medianOf(points);
      timings.exposedCommP90Ms = finiteQuantile(points, 0.9);
      if (timings.steps == 0) timings.steps = finiteCount(points);
    }
    if (name == QLatin1String(metric::kStepMs)) {
      timings.stepMs = medianOf(points);
      timings.stepP90Ms = finiteQuantile(points, 0.9);
      timings.steps = finiteCount(points);
    }
  }
  for (auto& entry : rows) {
    // A bucket known only by an unknown field has nothing to show.
    const BucketFigures& f = entry.second.median;
    if (!f.bytes && !f.allreduceMs && !f.algbwGBps && !f.busbwGBps &&
        entry.second.allreduceMs.empty()) {
      continue;
    }
    timings.buckets.push_back(std::move(entry.second));
  }
  return timings;
}

QString formatBytes(double bytes) {
  if (!std::isfinite(bytes)) return QStringLiteral("?");
  if (bytes >= 1e9) return QStringLiteral("%1 GB").arg(bytes / 1e9, 0, 'f', 2);
  if (bytes >= 1e6) return QStringLiteral("%1 MB").arg(bytes / 1e6, 0, 'f', 2);
  if (bytes >= 1e3) return QStringLiteral("%1 kB").arg(bytes / 1e3, 0, 'f', 2);
  return QStringLiteral("%1 B").arg(bytes, 0, 'f', 0);
}

}  // namespace ringside::gui
