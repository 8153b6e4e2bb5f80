#include "ringside/gui/stall_text.h"

#include <QCoreApplication>

#include "ringside/gui/duration_format.h"

namespace ringside::gui {

QString stallBannerText(const v1::StallVerdict& verdict, double now) {
  QString details = QString::fromStdString(verdict.summary());
  // The agent writes "no progress for 15 s (threshold 10 s): <details>".
  const qsizetype head = details.indexOf(QStringLiteral("): "));
  if (details.startsWith(QStringLiteral("no progress for ")) && head >= 0) {
    details = details.mid(head + 3);
  }
  return QCoreApplication::translate("StallText",
                                     "Stalled: no progress for %1 since step %2 (threshold %3). %4")
      .arg(formatDuration(now - verdict.since()))
      .arg(verdict.step())
      .arg(formatDuration(verdict.threshold_seconds()))
      .arg(details);
}

}  // namespace ringside::gui
