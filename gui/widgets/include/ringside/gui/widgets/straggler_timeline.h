// StragglerTimeline: a strip under the per-rank view's verdict that shows the owner agent's
// straggler verdict over the whole run (straggler_history.h): one band per span of steps during
// which the verdict named the same rank, coloured by rank (grey for none) and labelled with the
// rank where it fits, over a step axis from the first verdict to the last. Hovering a band shows
// its steps, the rank, its node, the stage and the largest cost. Live and finished runs alike
// (the dashboard refills it from the stored verdicts). GUI thread only.
#pragma once

#include <QColor>
#include <QMap>
#include <QString>
#include <QWidget>

#include <optional>
#include <vector>

#include "ringside/gui/straggler_history.h"

namespace ringside::gui {

class StragglerTimeline : public QWidget {
  Q_OBJECT

 public:
  explicit StragglerTimeline(QWidget* parent = nullptr);

  // Replaces the spans (stragglerSpans()) and the node each rank runs on (for the tooltip).
  void setSpans(std::vector<StragglerSpan> spans, QMap<int, QString> nodeOfRank = {});
  const std::vector<StragglerSpan>& spans() const { return spans_; }

  // The span under `position` (widget coordinates), its tooltip text ("" outside the bands), and
  // the colour of a rank's band (-1: none).
  std::optional<size_t> spanAt(QPoint position) const;
  QString toolTipAt(QPoint position) const;
  static QColor colorOfRank(int rank);

  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;

 protected:
  bool event(QEvent* event) override;
  void paintEvent(QPaintEvent* event) override;

 private:
  // The strip's area and the x of a step in it.
  QRect bandRect() const;
  double xOf(int64_t step) const;

  std::vector<StragglerSpan> spans_;
  QMap<int, QString> nodeOfRank_;
};

}  // namespace ringside::gui
