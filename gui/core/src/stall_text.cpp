#include "ringside/gui/stall_text.h"

#include <QCoreApplication>

#include "ringside/gui/clipped_text.h"
#include "ringside/gui/duration_format.h"

namespace ringside::gui {

namespace {

// Characters of the agent's summary the banner shows.
constexpr int kStallBannerChars = 600;

}  // namespace

QString stallBannerText(const v1::StallVerdict& verdict, double now) {
  QString details = QString::fromStdString(verdict.summary());
  // The agent writes "no progress for 15 s (threshold 10 s): <details>".
  const qsizetype head = details.indexOf(QStringLiteral("): "));
  if (details.startsWith(QStringLiteral("no progress for ")) && head >= 0) {
    details = details.mid(head + 3);
  }
  // The banner wraps its text: a long summary (up to 4 KiB, agent_bounds.h) shows its start; the
  // Nodes panel's tooltip shows it whole.
  details = elidedLine(details, kStallBannerChars);
  return QCoreApplication::translate("StallText",
                                     "Stalled: no progress for %1 since step %2 (threshold %3). %4")
      .arg(formatDuration(now - verdict.since()))
      .arg(verdict.step())
      .arg(formatDuration(verdict.threshold_seconds()))
      .arg(details);
}

}  // namespace ringside::gui
