#include "ringside/gui/custom_metrics.h"

#include <algorithm>

#include "ringside/common/metric_names.h"

namespace ringside::gui {

bool isChartedElsewhere(const QString& name) {
  static const QStringList kFixed = {
      QString::fromLatin1(metric::kTrainLoss),     QString::fromLatin1(metric::kTestLoss),
      QString::fromLatin1(metric::kTestAccuracy),  QString::fromLatin1(metric::kTrainSamplesPerS),
      QString::fromLatin1(metric::kComputeMs),     QString::fromLatin1(metric::kExposedCommMs),
      QString::fromLatin1(metric::kAllreduceMs),   QString::fromLatin1(metric::kCommBusbw),
      QString::fromLatin1(metric::kStepMs),        QString::fromLatin1(metric::kDataMs),
      QString::fromLatin1(metric::kWaitMs),        QString::fromLatin1(metric::kCommBytes),
      QString::fromLatin1(metric::kCommAlgbw)};
  if (kFixed.contains(name)) return true;
  for (const char* prefix : {"comm/bucket", "gpu", "node/", "run/", "straggler/"}) {
    if (name.startsWith(QLatin1String(prefix))) {
      // gpu<i>/... only: a user's "gpu_mem/..." is theirs.
      if (QLatin1String(prefix) != QLatin1String("gpu")) return true;
      const qsizetype slash = name.indexOf(QLatin1Char('/'));
      bool numeric = false;
      if (slash > 3) name.mid(3, slash - 3).toUInt(&numeric);
      if (numeric) return true;
    }
  }
  return false;
}

QList<MetricGroup> groupCustomMetrics(QStringList names, int* omitted) {
  names.sort();
  names.removeDuplicates();
  QStringList custom;
  for (const QString& name : names) {
    if (!isChartedElsewhere(name)) custom << name;
  }
  if (omitted != nullptr) *omitted = std::max<int>(0, static_cast<int>(custom.size()) - kMaxCustomCharts);
  if (custom.size() > kMaxCustomCharts) custom = custom.mid(0, kMaxCustomCharts);
  QList<MetricGroup> groups;
  MetricGroup unprefixed;
  for (const QString& name : custom) {
    const qsizetype slash = name.indexOf(QLatin1Char('/'));
    if (slash <= 0) {
      unprefixed.names << name;
      continue;
    }
    const QString prefix = name.left(slash);
    if (groups.isEmpty() || groups.last().prefix != prefix) groups.append({prefix, {}});
    groups.last().names << name;
  }
  if (!unprefixed.names.isEmpty()) groups.append(unprefixed);
  return groups;
}

}  // namespace ringside::gui
