// MetricChart's private parts, shared by its three source files: metric_chart.cpp (series, axes,
// replot and painting), metric_chart_view.cpp (interaction: zoom, pan, hover, context menu) and
// metric_chart_export.cpp (PNG, SVG and the save dialogs). Not installed; GUI thread only.
#pragma once

#include <QChartView>
#include <QColor>
#include <QGraphicsItem>
#include <QLineSeries>
#include <QPoint>
#include <QPointF>
#include <QRectF>
#include <QString>

#include <vector>

#include "ringside/gui/decimation.h"
#include "ringside/gui/widgets/metric_chart.h"

class QRubberBand;

namespace ringside::gui {

struct MetricChart::Series {
  QString name;
  std::vector<SeriesPoint> points;
  MinMaxIndex index;
  std::vector<SeriesPoint> stackTop;  // stacked mode: the sum up to and including this series
  MinMaxIndex stackIndex;
  QColor color;
  bool faint = false;
  // An empty Qt series that only gives the legend its entry; the points are drawn by Plot.
  QLineSeries* legendEntry = nullptr;
  std::vector<SeriesPoint> shown;  // what the last replot drew (the upper line in stacked mode)
  bool markers = false;            // sparse: a marker on every point (a lone point has no line)
};

// The series layer, a child item of the chart drawn over its plot area: every series' decimated
// points go straight to QPainter (a polyline; an area and its upper line in stacked mode; markers
// on sparse series), clipped to the plot area. Qt Charts still lays out and draws the title,
// axes, grid and legend. Qt's own QLineSeries would rebuild a QPainterPath and its stroked hover
// shape on every change, which cost more than the drawing itself (bench/chart: 40 ms per redraw
// of 8 x 1,000,000 points with QLineSeries against the 16 ms goal).
class MetricChart::Plot : public QGraphicsItem {
 public:
  explicit Plot(MetricChart* owner);

  void setArea(const QRectF& area);
  QRectF boundingRect() const override { return area_; }
  void paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) override;

 private:
  MetricChart* owner_;
  QRectF area_;
};

// The chart view with this chart's interaction: rubber-band zoom (left drag), pan (right or
// middle drag, arrow keys), wheel zoom in x about the cursor, reset (double-click, Home, Esc),
// +/- zoom, the hover read-out, and the context menu (a right click that does not drag, or the
// menu key).
class MetricChart::View : public QChartView {
 public:
  View(QChart* chart, MetricChart* owner);

 protected:
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;
  void contextMenuEvent(QContextMenuEvent* event) override;
  void leaveEvent(QEvent* event) override;

 private:
  MetricChart* owner_;
  QRubberBand* band_ = nullptr;
  QPoint bandOrigin_;
  bool panning_ = false;
  QPointF panOrigin_;
  QPointF pressAt_;  // where the right button went down: no drag there opens the menu
  double dragged_ = 0;
};

namespace chart_style {

constexpr double kFaintAlpha = 0.3;  // the raw line behind a smoothed one
constexpr double kAreaAlpha = 0.55;  // stacked areas

inline QColor withAlpha(QColor color, double alpha) {
  color.setAlphaF(static_cast<float>(alpha));
  return color;
}

}  // namespace chart_style

}  // namespace ringside::gui
