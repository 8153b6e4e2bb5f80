// MetricChart: one Qt Charts plot of named series, each held in full in memory and reduced to
// min/max per pixel column (MinMaxIndex, docs/design.md decision 8) on every replot, so redraw cost
// depends on the chart's width, not on the run's length. Qt Charts lays out and draws the title,
// axes, grid and legend; the decimated series are painted by the chart's own item over the plot
// area (a QLineSeries would rebuild a path and a stroked shape per change, costlier than drawing).
// Zoom (rubber band with the left button, wheel), pan (right or middle drag, arrow keys), reset
// (double-click, Home), linear or log axes, a hover read-out of the nearest drawn point, a legend,
// an optional stacked-area mode, and PNG or SVG export (QSvgGenerator), also from the chart's
// context menu (a right click without dragging, or the menu key). Replots are coalesced: every
// change only marks the chart dirty and a single-shot timer (at most ~30 Hz) redraws once. The
// axis arithmetic lives in gui_core (chart_axis.h). GUI thread only.
#pragma once

#include <QColor>
#include <QPointF>
#include <QString>
#include <QWidget>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "ringside/common/status.h"
#include "ringside/gui/chart_axis.h"
#include "ringside/gui/decimation.h"
#include "ringside/gui/smoothing.h"

class QChart;
class QChartView;
class QLabel;
class QMenu;
class QPainter;
class QTimer;
class QAbstractAxis;

namespace ringside::gui {

// One point found by the hover read-out.
struct HoverPoint {
  QString series;
  SeriesPoint point;
};

class MetricChart : public QWidget {
  Q_OBJECT

 public:
  explicit MetricChart(const QString& title, QWidget* parent = nullptr);
  ~MetricChart() override;

  // Adds a series or replaces its data (points sorted by x ascending; y NaN = gap). `faint`
  // draws it thin and translucent without a legend entry (the raw line behind a smoothed one).
  // An invalid colour picks the next of the chart's palette. Marks the chart dirty.
  void setSeries(const QString& name, std::vector<SeriesPoint> points, QColor color = {},
                 bool faint = false);
  void removeSeries(const QString& name);
  void clearSeries();
  // The data last given for `name` (empty when unknown).
  const std::vector<SeriesPoint>& seriesData(const QString& name) const;
  QStringList seriesNames() const;

  // Stacked area: series drawn in insertion order, each as an area from the sum of the ones
  // before it to that sum plus its own value (the earlier series' value at the same or the
  // nearest earlier x). For "step time = compute + exposed communication".
  void setStacked(bool stacked);
  bool stacked() const { return stacked_; }

  // Shows the legend also when the chart has a single series (by default it shows only from
  // two on): for charts whose series' names say what the line is, e.g. which GPU.
  void setLegendForSingleSeries(bool on);

  // The title drawn above the chart.
  QString title() const;

  void setAxisTitles(const QString& x, const QString& y);
  // Log scale (base 10) per axis; points with x <= 0 (y <= 0) are not drawn on a log axis.
  void setLogX(bool on);
  void setLogY(bool on);
  bool logX() const { return logX_; }
  bool logY() const { return logY_; }

  // Text drawn over an empty chart, e.g. "no GPUs" (empty: none).
  void setPlaceholderText(const QString& text);
  QString placeholderText() const;

  // The visible x (y) range; unset = fit the data. Setting marks the chart dirty.
  void setXRange(double min, double max);
  void setYRange(double min, double max);
  void resetZoom();
  // Zooms by `factor` (< 1 zooms in) about the value-space point `center`.
  void zoom(double factor, QPointF center);
  // Pans by a fraction of the visible range (0.1 = a tenth to the right / up).
  void pan(double dxFraction, double dyFraction);
  // The range drawn at the last replot (min, max).
  std::pair<double, double> visibleXRange() const { return shownX_; }
  std::pair<double, double> visibleYRange() const { return shownY_; }

  // Redraws now if dirty (normally the coalescing timer does it).
  void replotNow();
  // Redraws now even when nothing changed: the decimation runs again (benchmarks).
  void forceReplot();
  // Pixel columns of the plot area used by the last replot.
  int plotColumns() const { return plotColumns_; }

  // The drawn point nearest to `position` (widget coordinates of the chart view), within
  // `maxPixels`; std::nullopt when none. Also what the read-out label shows on hover.
  std::optional<HoverPoint> nearestPoint(QPointF position, double maxPixels = 30) const;
  // Where a value-space point is drawn, in widget coordinates of the chart view (and back).
  QPointF positionOf(SeriesPoint point) const;
  SeriesPoint valueAt(QPointF position) const;
  // The read-out's current text.
  QString readoutText() const;

  // PNG of the chart as shown. Errors: kIOError when the file cannot be written.
  Status exportPng(const QString& path);
  // SVG (1.2 Tiny) of the chart as shown, drawn by QSvgGenerator: title, axes with ticks, labels
  // and grid, the legend, and every visible series as polylines of its drawn (decimated) points
  // cut to the plot area (stacked areas as filled polygons, sparse series with markers). Written
  // to a temporary file and renamed, so `path` is complete or untouched. Errors: kIOError when
  // the file cannot be written.
  Status exportSvg(const QString& path);

  // The base of the file name the save dialogs suggest (in the user's documents folder, with
  // .png or .svg added); the title made file-safe until set.
  void setExportName(const QString& baseName);
  QString exportName() const;
  // The menu a right click opens: Save as PNG…, Save as SVG…, Reset zoom. Owners may add their
  // own actions (the dashboard adds its CSV export).
  QMenu* contextMenu() const { return menu_; }

  // For tests and the benchmark.
  QChart* chart() const { return chart_; }
  QChartView* chartView() const;
  // The points the last replot drew for `name` (value space; the decimated visible range, its
  // upper line in stacked mode); empty when unknown or nothing is drawable.
  std::vector<SeriesPoint> drawnPoints(const QString& name) const;

 public slots:
  // Ask for a file name (QFileDialog) and write the chart as PNG (SVG); a failure is shown in a
  // message box. Nothing happens when the dialog is cancelled.
  void askExportPng();
  void askExportSvg();

 signals:
  // The visible ranges changed through zoom or pan (not through new data).
  void viewChanged();

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  class View;
  class Plot;
  struct Series;
  friend class View;
  friend class Plot;

  void scheduleReplot();
  void replot();
  // Draws every series' shown points over the plot area (Plot's paint, chart coordinates). With
  // `cutToPlot` the lines and areas are cut to the plot area geometrically instead of by the
  // painter's clip, which QSvgGenerator (Qt 6.4) does not write.
  void paintSeries(QPainter& painter, bool cutToPlot) const;
  void askExport(bool svg);
  void showContextMenu(QPoint globalPosition);
  void rebuildAxes();
  void updateHover(QPointF position);
  std::pair<double, double> dataXRange() const;
  Series* find(const QString& name);
  const Series* find(const QString& name) const;
  void rebuildStack();
  // Value space <-> chart coordinates for the ranges of the last replot.
  PlotMapping mapping() const;

  QChart* chart_;
  View* view_;
  Plot* plot_;
  QLabel* readout_;
  QLabel* placeholder_;
  QTimer* replotTimer_;
  QMenu* menu_;
  QString exportName_;      // empty: from the title
  bool cutToPlot_ = false;  // set while exportSvg paints
  QAbstractAxis* axisX_ = nullptr;
  QAbstractAxis* axisY_ = nullptr;
  QString xTitle_;
  QString yTitle_;
  std::vector<std::unique_ptr<Series>> series_;
  bool stacked_ = false;
  bool legendForSingleSeries_ = false;
  bool logX_ = false;
  bool logY_ = false;
  bool dirty_ = false;
  std::optional<std::pair<double, double>> xRange_;
  std::optional<std::pair<double, double>> yRange_;
  std::pair<double, double> shownX_{0, 1};
  std::pair<double, double> shownY_{0, 1};
  int plotColumns_ = 0;
  int nextColor_ = 0;
};

}  // namespace ringside::gui
