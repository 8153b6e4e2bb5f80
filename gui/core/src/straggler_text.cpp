#include "ringside/gui/straggler_text.h"

#include <QCoreApplication>
#include <QLocale>

#include <cmath>

namespace ringside::gui {

namespace {

QString ms(double value) { return QLocale().toString(value, 'f', 2); }

// "12 %": a share 0-1 as whole percent in the default locale.
QString percent(double share) {
  return QCoreApplication::translate("StragglerText", "%1 %")
      .arg(QLocale().toString(std::round(share * 100.0), 'f', 0));
}

}  // namespace

QString stragglerText(const StragglerView& v, const QString& node) {
  // A step number is an id in this sentence: never grouped.
  const QString step = QString::number(v.step);
  if (v.rank < 0 || v.stage == 0) {
    if (v.confidence) {
      return QCoreApplication::translate(
                 "StragglerText",
                 "straggler: none (confidence %1, step %2): no rank's data or compute time keeps "
                 "the others waiting")
          .arg(percent(*v.confidence), step);
    }
    return QCoreApplication::translate(
               "StragglerText",
               "straggler: none at step %1: no rank's data or compute time keeps the others "
               "waiting")
        .arg(step);
  }
  // Stage 3: the rank's thread waited for a CPU another process had (its run-queue delay).
  const QString stage = v.stage == 1 ? QCoreApplication::translate("StragglerText", "data")
                        : v.stage == 3
                            ? QCoreApplication::translate("StragglerText", "waiting for a CPU")
                            : QCoreApplication::translate("StragglerText", "compute");
  // A rank number is an id, not a quantity: never grouped.
  const QString where =
      node.isEmpty()
          ? QCoreApplication::translate("StragglerText", "rank %1").arg(QString::number(v.rank))
          : QCoreApplication::translate("StragglerText", "rank %1 on %2")
                .arg(QString::number(v.rank), node);
  if (v.costShare && v.confidence) {
    return QCoreApplication::translate("StragglerText",
                                       "straggler: %1, %2: %3 ms vs median %4 ms; the other ranks "
                                       "wait %5 ms for it: %6 of the step time (confidence %7, "
                                       "step %8)")
        .arg(where, stage, ms(v.stageMs), ms(v.medianMs), ms(v.othersWaitMs), percent(*v.costShare),
             percent(*v.confidence), step);
  }
  return QCoreApplication::translate("StragglerText",
                                     "straggler: %1, %2: %3 ms vs median %4 ms; the other ranks "
                                     "wait %5 ms for it (step %6)")
      .arg(where, stage, ms(v.stageMs), ms(v.medianMs), ms(v.othersWaitMs), step);
}

}  // namespace ringside::gui
