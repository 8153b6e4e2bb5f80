#include "ringside/gui/queue_text.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QLocale>

namespace ringside::gui {

QString queuedText(const v1::RunInfo& run) {
  if (run.state() != v1::QUEUED) return {};
  QString text = run.queue_position() > 0
                     ? QCoreApplication::translate("ringside::gui::Queue", "Queued: position %1")
                           .arg(run.queue_position())
                     : QCoreApplication::translate("ringside::gui::Queue", "Queued");
  if (run.estimated_start() > 0) {
    const QDateTime at = QDateTime::fromMSecsSinceEpoch(
        static_cast<qint64>(run.estimated_start() * 1000.0));
    // The locale's short time, to the minute (some locales' short format has seconds).
    QString format = QLocale().timeFormat(QLocale::ShortFormat);
    format.remove(QStringLiteral(":ss"));
    text += QCoreApplication::translate("ringside::gui::Queue", ", estimated start %1")
                .arg(QLocale().toString(at.time(), format));
  }
  text += QLatin1Char('.');
  if (!run.waiting_reason().empty()) {
    text += QLatin1Char(' ') + QString::fromStdString(run.waiting_reason());
  }
  return text;
}

}  // namespace ringside::gui
