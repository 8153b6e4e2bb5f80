#include "ringside/gui/straggler_text.h"

#include <QCoreApplication>
#include <QLocale>

namespace ringside::gui {

namespace {

QString ms(double value) { return QLocale().toString(value, 'f', 2); }

}  // namespace

QString stragglerText(const StragglerView& v, const QString& node) {
  if (v.rank < 0 || v.stage == 0) {
    return QCoreApplication::translate(
               "StragglerText",
               "straggler: none at step %1: no rank's data or compute time keeps the others "
               "waiting")
        .arg(v.step);
  }
  const QString stage = v.stage == 1 ? QCoreApplication::translate("StragglerText", "data")
                                     : QCoreApplication::translate("StragglerText", "compute");
  // A rank number is an id, not a quantity: never grouped.
  const QString where =
      node.isEmpty()
          ? QCoreApplication::translate("StragglerText", "rank %1").arg(QString::number(v.rank))
          : QCoreApplication::translate("StragglerText", "rank %1 on %2")
                .arg(QString::number(v.rank), node);
  return QCoreApplication::translate("StragglerText",
                                     "straggler: %1, %2: %3 ms vs median %4 ms; the other ranks "
                                     "wait %5 ms for it (step %6)")
      .arg(where, stage, ms(v.stageMs), ms(v.medianMs), ms(v.othersWaitMs),
           QString::number(v.step));
}

}  // namespace ringside::gui
