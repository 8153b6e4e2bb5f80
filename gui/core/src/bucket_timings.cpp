#include "ringside/gui/bucket_timings.h"

#include <cmath>
#include <string>

#include "ringside/common/metric_names.h"

namespace ringside::gui {

namespace {

std::optional<double> latestFinite(const std::vector<SeriesPoint>& points) {
  for (auto it = points.rbegin(); it != points.rend(); ++it) {
    if (std::isfinite(it->y)) return it->y;
  }
  return std::nullopt;
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
      std::optional<double>* figure = figureOf(row.latest, parsed->field);
      if (figure == nullptr) continue;
      *figure = latestFinite(points);
      if (parsed->field == metric::kBucketAllreduceMs) row.allreduceMs = points;
      continue;
    }
    if (name == QLatin1String(metric::kCommBytes)) timings.step.bytes = latestFinite(points);
    if (name == QLatin1String(metric::kAllreduceMs)) {
      timings.step.allreduceMs = latestFinite(points);
    }
    if (name == QLatin1String(metric::kCommAlgbw)) timings.step.algbwGBps = latestFinite(points);
    if (name == QLatin1String(metric::kCommBusbw)) timings.step.busbwGBps = latestFinite(points);
    if (name == QLatin1String(metric::kExposedCommMs)) {
      timings.exposedCommMs = latestFinite(points);
    }
    if (name == QLatin1String(metric::kStepMs)) timings.stepMs = latestFinite(points);
  }
  for (auto& entry : rows) {
    // A bucket known only by an unknown field has nothing to show.
    const BucketFigures& f = entry.second.latest;
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
