#include "ringside/gui/export_files.h"

#include <QRegularExpression>

namespace ringside::gui {

QString fileSafeName(const QString& text) {
  static const QRegularExpression kUnsafe(QStringLiteral("[^A-Za-z0-9._-]+"));
  QString safe = text;
  safe.replace(kUnsafe, QStringLiteral("_"));
  return safe;
}

QString runCsvFileName(const QString& runName, const QString& runId) {
  const QString base = fileSafeName(runName);
  return (base.isEmpty() ? runId : base + QLatin1Char('-') + runId) + QStringLiteral(".csv");
}

QString chartFileBaseName(const QString& prefix, const QString& chart) {
  QString name = chart;
  name.replace(QLatin1Char('/'), QLatin1Char('-'));
  return fileSafeName(prefix.isEmpty() ? name : prefix + QLatin1Char('-') + name);
}

}  // namespace ringside::gui
