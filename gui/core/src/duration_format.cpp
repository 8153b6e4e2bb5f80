#include "ringside/gui/duration_format.h"

#include <QCoreApplication>
#include <QLocale>

#include <algorithm>
#include <cmath>

namespace ringside::gui {

QString formatDuration(double seconds) {
  const qint64 total = static_cast<qint64>(std::llround(std::max(0.0, seconds)));
  const qint64 hours = total / 3600;
  const qint64 minutes = (total % 3600) / 60;
  const qint64 secs = total % 60;
  const QLocale locale;
  if (hours > 0) {
    return QCoreApplication::translate("Duration", "%1 h %2 min")
        .arg(locale.toString(hours))
        .arg(minutes, 2, 10, QLatin1Char('0'));
  }
  if (minutes > 0) {
    return QCoreApplication::translate("Duration", "%1 min %2 s")
        .arg(locale.toString(minutes))
        .arg(secs, 2, 10, QLatin1Char('0'));
  }
  return QCoreApplication::translate("Duration", "%1 s").arg(locale.toString(secs));
}

}  // namespace ringside::gui
