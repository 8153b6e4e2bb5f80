#include "ringside/gui/widgets/metric_chart.h"

#include <QAction>
#include <QChart>
#include <QGraphicsLayout>
#include <QLabel>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QMenu>
#include <QPainter>
#include <QPen>
#include <QPolygonF>
#include <QTimer>
#include <QVBoxLayout>
#include <QValueAxis>

#include <algorithm>
#include <cmath>
#include <limits>

#include "metric_chart_parts.h"

namespace ringside::gui {

namespace {

using chart_style::kAreaAlpha;
using chart_style::kFaintAlpha;
using chart_style::withAlpha;

constexpr int kReplotIntervalMs = 33;  // coalescing timer: at most ~30 redraws per second
// Pixel coordinates are clamped to this far outside the plot before they reach QPainter, whose
// raster engine works in fixed point: a point zoomed far out of view must not overflow it.
constexpr double kPixelLimit = 1e6;
constexpr double kMarkerRadius = 3.5;

// Sets an axis' range with dynamic ticks at multiples of a nice step (niceTickStep), so the
// range can stay the data's exact range. The interval and the range change in the order that
// never pairs a wide range with a fine interval in between: Qt Charts lays out a label per tick at
// once, and a full-view range over a zoomed-in interval would create thousands of labels (~30 ms).
void setAxisRange(QAbstractAxis* axis, double low, double high, int ticks) {
  auto* valueAxis = qobject_cast<QValueAxis*>(axis);
  if (valueAxis == nullptr) {  // a log axis: its ticks are the powers of ten
    axis->setRange(low, high);
    return;
  }
  const double interval = niceTickStep(high - low, ticks);
  valueAxis->setTickType(QValueAxis::TicksDynamic);
  valueAxis->setTickAnchor(0.0);
  if (interval > valueAxis->tickInterval()) {
    valueAxis->setTickInterval(interval);
    valueAxis->setRange(low, high);
  } else {
    valueAxis->setRange(low, high);
    valueAxis->setTickInterval(interval);
  }
}

// The palette for series without an explicit colour (Qt Charts' light theme order).
QColor paletteColor(int index) {
  static const QColor kColors[] = {QColor(0x20, 0x9f, 0xdf), QColor(0x99, 0xca, 0x53),
                                   QColor(0xf6, 0xa6, 0x25), QColor(0x6d, 0x5f, 0xd5),
                                   QColor(0xbf, 0x59, 0x3e), QColor(0x2c, 0xa0, 0x8f),
                                   QColor(0xd6, 0x4f, 0x8c), QColor(0x7f, 0x7f, 0x7f)};
  return kColors[index % std::size(kColors)];
}

}  // namespace

// ---- Plot

MetricChart::Plot::Plot(MetricChart* owner) : QGraphicsItem(owner->chart_), owner_(owner) {
  // Above the grid and Qt's (empty) series, below the legend (Qt Charts' ChartPresenter
  // stacks plot area 0, shades 1, grid 2, axes 3, series 4, legend 5).
  setZValue(4.5);
  setAcceptedMouseButtons(Qt::NoButton);
}

void MetricChart::Plot::setArea(const QRectF& area) {
  if (area == area_) return;
  prepareGeometryChange();
  area_ = area;
}

void MetricChart::Plot::paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) {
  owner_->paintSeries(*painter, owner_->cutToPlot_);
}

// ---- MetricChart

MetricChart::MetricChart(const QString& title, QWidget* parent)
    : QWidget(parent),
      chart_(new QChart),
      readout_(new QLabel(this)),
      placeholder_(nullptr),
      replotTimer_(new QTimer(this)),
      menu_(new QMenu(this)) {
  chart_->setTitle(title);
  chart_->setAnimationOptions(QChart::NoAnimation);
  chart_->setLocalizeNumbers(true);  // axis labels in the default locale
  chart_->legend()->setAlignment(Qt::AlignBottom);
  chart_->layout()->setContentsMargins(0, 0, 0, 0);
  chart_->setMargins(QMargins(4, 4, 4, 4));
  plot_ = new Plot(this);  // owned by the chart item
  connect(chart_, &QChart::plotAreaChanged, this, [this](const QRectF& area) {
    plot_->setArea(area);
    scheduleReplot();  // the pixel columns changed
  });
  view_ = new View(chart_, this);
  view_->setMinimumSize(240, 180);
  placeholder_ = new QLabel(view_);
  placeholder_->setAlignment(Qt::AlignCenter);
  placeholder_->setAttribute(Qt::WA_TransparentForMouseEvents);
  placeholder_->hide();
  readout_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  readout_->setMinimumHeight(readout_->fontMetrics().height());
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(2);
  layout->addWidget(view_, 1);
  layout->addWidget(readout_);
  replotTimer_->setSingleShot(true);
  replotTimer_->setInterval(kReplotIntervalMs);
  connect(replotTimer_, &QTimer::timeout, this, &MetricChart::replotNow);
  menu_->addAction(tr("Save as &PNG…"), this, &MetricChart::askExportPng);
  menu_->addAction(tr("Save as &SVG…"), this, &MetricChart::askExportSvg);
  menu_->addSeparator();
  menu_->addAction(tr("&Reset zoom"), this, [this] {
    resetZoom();
    emit viewChanged();
  });
  rebuildAxes();
  dirty_ = true;
}

MetricChart::~MetricChart() = default;

QChartView* MetricChart::chartView() const { return view_; }

QString MetricChart::title() const { return chart_->title(); }

MetricChart::Series* MetricChart::find(const QString& name) {
  for (auto& series : series_) {
    if (series->name == name) return series.get();
  }
  return nullptr;
}

const MetricChart::Series* MetricChart::find(const QString& name) const {
  return const_cast<MetricChart*>(this)->find(name);
}

void MetricChart::setSeries(const QString& name, std::vector<SeriesPoint> points, QColor color,
                            bool faint) {
  Series* series = find(name);
  if (series == nullptr) {
    series_.push_back(std::make_unique<Series>());
    series = series_.back().get();
    series->name = name;
    series->color = color.isValid() ? color : paletteColor(nextColor_++);
    series->faint = faint;
    series->points = std::move(points);
    series->index = MinMaxIndex(series->points);
    rebuildAxes();  // creates its Qt series and attaches the axes
  } else {
    if (color.isValid()) series->color = color;
    series->points = std::move(points);
    series->index = MinMaxIndex(series->points);
  }
  if (stacked_) rebuildStack();
  scheduleReplot();
}

void MetricChart::removeSeries(const QString& name) {
  auto it = std::find_if(series_.begin(), series_.end(),
                         [&](const auto& series) { return series->name == name; });
  if (it == series_.end()) return;
  series_.erase(it);
  rebuildAxes();
  if (stacked_) rebuildStack();
  scheduleReplot();
}

void MetricChart::clearSeries() {
  series_.clear();
  nextColor_ = 0;
  rebuildAxes();
  scheduleReplot();
}

const std::vector<SeriesPoint>& MetricChart::seriesData(const QString& name) const {
  static const std::vector<SeriesPoint> kEmpty;
  const Series* series = find(name);
  return series == nullptr ? kEmpty : series->points;
}

QStringList MetricChart::seriesNames() const {
  QStringList names;
  for (const auto& series : series_) names << series->name;
  return names;
}

std::vector<SeriesPoint> MetricChart::drawnPoints(const QString& name) const {
  const Series* series = find(name);
  return series == nullptr ? std::vector<SeriesPoint>{} : series->shown;
}

void MetricChart::setStacked(bool stacked) {
  if (stacked_ == stacked) return;
  stacked_ = stacked;
  rebuildAxes();
  if (stacked_) rebuildStack();
  scheduleReplot();
}

void MetricChart::rebuildStack() {
  // Each series' top = its value + the previous top at the same or nearest earlier x.
  std::span<const SeriesPoint> below;
  for (auto& series : series_) {
    series->stackTop = stackedOnto(series->points, below);
    series->stackIndex = MinMaxIndex(series->stackTop);
    below = series->stackTop;
  }
}

void MetricChart::setAxisTitles(const QString& x, const QString& y) {
  xTitle_ = x;
  yTitle_ = y;
  if (axisX_ != nullptr) axisX_->setTitleText(x);
  if (axisY_ != nullptr) axisY_->setTitleText(y);
}

void MetricChart::setLogX(bool on) {
  if (logX_ == on) return;
  logX_ = on;
  xRange_.reset();
  rebuildAxes();
  scheduleReplot();
}

void MetricChart::setLogY(bool on) {
  if (logY_ == on) return;
  logY_ = on;
  yRange_.reset();
  rebuildAxes();
  scheduleReplot();
}

QString MetricChart::placeholderText() const { return placeholder_->text(); }

void MetricChart::setPlaceholderText(const QString& text) {
  placeholder_->setText(text);
  scheduleReplot();
}

void MetricChart::setXRange(double min, double max) {
  if (min > max) std::swap(min, max);
  if (!usableRange({min, max}, logX_)) return;
  xRange_ = {min, max};
  scheduleReplot();
}

void MetricChart::setYRange(double min, double max) {
  if (min > max) std::swap(min, max);
  if (!usableRange({min, max}, logY_)) return;
  yRange_ = {min, max};
  scheduleReplot();
}

void MetricChart::resetZoom() {
  xRange_.reset();
  yRange_.reset();
  scheduleReplot();
}

void MetricChart::zoom(double factor, QPointF center) {
  const auto [low, high] = zoomedRange(shownX_, factor, center.x(), logX_);
  setXRange(low, high);
  emit viewChanged();
}

void MetricChart::pan(double dxFraction, double dyFraction) {
  if (dxFraction != 0) {
    const auto [low, high] = pannedRange(shownX_, dxFraction, logX_);
    setXRange(low, high);
  }
  if (dyFraction != 0) {
    const auto [low, high] = pannedRange(shownY_, dyFraction, logY_);
    setYRange(low, high);
  }
  emit viewChanged();
}

void MetricChart::scheduleReplot() {
  dirty_ = true;
  if (!replotTimer_->isActive()) replotTimer_->start();
}

void MetricChart::replotNow() {
  if (dirty_) replot();
}

void MetricChart::forceReplot() { replot(); }

void MetricChart::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  placeholder_->setGeometry(view_->rect());
  scheduleReplot();
}

void MetricChart::rebuildAxes() {
  // Delete every Qt series (also those of removed series) and axis; recreated below.
  chart_->removeAllSeries();
  for (auto& series : series_) series->legendEntry = nullptr;
  for (QAbstractAxis* axis : chart_->axes()) {
    chart_->removeAxis(axis);
    delete axis;
  }
  // Label formats carry a precision: with localizeNumbers, Qt Charts 6.4 draws no label at all
  // for a bare "%g".
  auto makeAxis = [](bool log, const QString& title) -> QAbstractAxis* {
    QAbstractAxis* axis = nullptr;
    if (log) {
      auto* logAxis = new QLogValueAxis;
      logAxis->setBase(10);
      logAxis->setLabelFormat(QStringLiteral("%.6g"));
      logAxis->setMinorTickCount(-1);
      axis = logAxis;
    } else {
      auto* valueAxis = new QValueAxis;
      valueAxis->setLabelFormat(QStringLiteral("%.6g"));
      valueAxis->setTickCount(6);
      axis = valueAxis;
    }
    axis->setTitleText(title);
    return axis;
  };
  axisX_ = makeAxis(logX_, xTitle_);
  axisY_ = makeAxis(logY_, yTitle_);
  chart_->addAxis(axisX_, Qt::AlignBottom);
  chart_->addAxis(axisY_, Qt::AlignLeft);

  for (auto& series : series_) {
    // Empty: a legend entry in the series' colour (Plot draws the points).
    series->legendEntry = new QLineSeries;
    series->legendEntry->setName(series->name);
    series->legendEntry->setPen(QPen(series->color, 2.0));
    chart_->addSeries(series->legendEntry);
    series->legendEntry->attachAxis(axisX_);
    series->legendEntry->attachAxis(axisY_);
    for (QLegendMarker* marker : chart_->legend()->markers(series->legendEntry)) {
      marker->setVisible(!series->faint);
      if (stacked_) marker->setBrush(withAlpha(series->color, kAreaAlpha));
    }
  }
  chart_->legend()->setVisible(series_.size() > (legendForSingleSeries_ ? 0 : 1));
}

void MetricChart::setLegendForSingleSeries(bool on) {
  legendForSingleSeries_ = on;
  chart_->legend()->setVisible(series_.size() > (legendForSingleSeries_ ? 0 : 1));
}

std::pair<double, double> MetricChart::dataXRange() const {
  double low = std::numeric_limits<double>::infinity();
  double high = -std::numeric_limits<double>::infinity();
  for (const auto& series : series_) {
    const auto& points = series->points;
    if (points.empty()) continue;
    auto first = points.begin();
    if (logX_) {
      first = std::upper_bound(points.begin(), points.end(), 0.0,
                               [](double x, const SeriesPoint& point) { return x < point.x; });
      if (first == points.end()) continue;
    }
    low = std::min(low, first->x);
    high = std::max(high, points.back().x);
  }
  if (!std::isfinite(low) || !std::isfinite(high)) return fitXRange(std::nullopt, logX_);
  return fitXRange(AxisRange{low, high}, logX_);
}

void MetricChart::replot() {
  dirty_ = false;
  replotTimer_->stop();
  const QRectF plot = chart_->plotArea();
  int columns = static_cast<int>(plot.width());
  if (columns < 16) columns = std::max(100, view_->width() - 80);
  plotColumns_ = columns;
  const auto [xMin, xMax] = xRange_ ? *xRange_ : dataXRange();
  const AxisScale scale = logX_ ? AxisScale::kLog : AxisScale::kLinear;

  // 1. Decimate every series to the visible range and the plot's pixel columns.
  double yLow = std::numeric_limits<double>::infinity();
  double yHigh = -std::numeric_limits<double>::infinity();
  bool anyPoint = false;
  for (auto& series : series_) {
    const MinMaxIndex& index = stacked_ ? series->stackIndex : series->index;
    series->shown = index.decimate(xMin, xMax, columns, scale);
    if (logY_) {
      std::erase_if(series->shown, [](const SeriesPoint& point) { return !(point.y > 0); });
    }
    for (const SeriesPoint& point : series->shown) {
      if (point.x >= xMin && point.x <= xMax && std::isfinite(point.y)) {
        yLow = std::min(yLow, point.y);
        yHigh = std::max(yHigh, point.y);
        anyPoint = true;
      }
    }
  }
  const AxisRange yRange =
      yRange_ ? *yRange_
              : fitYRange(anyPoint ? std::optional(AxisRange{yLow, yHigh}) : std::nullopt, logY_,
                          stacked_);

  // 2. The axes (Qt Charts lays out and draws them, the grid and the legend).
  setAxisRange(axisX_, xMin, xMax, std::clamp(columns / 90, 3, 8));
  setAxisRange(axisY_, yRange.first, yRange.second,
               std::clamp(static_cast<int>(plot.height()) / 28, 4, 8));

  // 3. Plot draws the decimated points at its next paint. Sparse series (a test metric per
  // epoch) get markers: a single point draws no line.
  for (auto& series : series_) {
    series->markers = !stacked_ && series->shown.size() * 8 <= static_cast<size_t>(columns);
  }
  shownX_ = {xMin, xMax};
  shownY_ = yRange;

  placeholder_->setGeometry(view_->rect());
  placeholder_->setVisible(!placeholder_->text().isEmpty() && !anyPoint);
  plot_->update();
}

void MetricChart::paintSeries(QPainter& painter, bool cutToPlot) const {
  const QRectF plot = chart_->plotArea();
  if (plot.isEmpty()) return;
  const PlotMapping map = mapping();
  painter.save();
  painter.setClipRect(plot);
  // Aliased lines of width 1 take the raster engine's fast path (the cosmetic stroker); wider
  // or antialiased pens go through the general stroker at several times the cost.
  painter.setRenderHint(QPainter::Antialiasing, false);
  const auto pixels = [&map](const std::vector<SeriesPoint>& points) {
    QPolygonF polygon;
    polygon.reserve(static_cast<qsizetype>(points.size()));
    for (const SeriesPoint& point : points) {
      const QPointF at = map.toPixel(point);
      polygon.append(QPointF(std::clamp(at.x(), -kPixelLimit, kPixelLimit),
                             std::clamp(at.y(), -kPixelLimit, kPixelLimit)));
    }
    return polygon;
  };
  const auto drawLine = [&](const QPolygonF& line) {
    if (!cutToPlot) {
      painter.drawPolyline(line);
      return;
    }
    for (const QPolygonF& part : clipPolyline(line, plot)) painter.drawPolyline(part);
  };
  QPolygonF previousTop;  // stacked mode: the upper line of the series below
  for (const auto& series : series_) {
    const QPolygonF line = pixels(series->shown);
    const QPen pen(series->faint ? withAlpha(series->color, kFaintAlpha) : series->color, 1.0);
    if (stacked_) {
      if (!line.isEmpty()) {
        // The area between this series' upper line and the one below (or the zero line).
        QPolygonF area = line;
        if (!previousTop.isEmpty()) {
          for (auto it = previousTop.crbegin(); it != previousTop.crend(); ++it) area.append(*it);
        } else {
          const double base = logY_ ? shownY_.first : 0.0;
          area.append(map.toPixel({series->shown.back().x, base}));
          area.append(map.toPixel({series->shown.front().x, base}));
        }
        painter.setPen(Qt::NoPen);
        painter.setBrush(withAlpha(series->color, kAreaAlpha));
        painter.drawPolygon(cutToPlot ? area.intersected(QPolygonF(plot)) : area);
        painter.setPen(pen);
        drawLine(line);
      }
      previousTop = line;
      continue;
    }
    painter.setPen(pen);
    drawLine(line);
    if (series->markers) {
      painter.setBrush(pen.color());
      for (const QPointF& at : line) {
        if (!cutToPlot || plot.contains(at)) painter.drawEllipse(at, kMarkerRadius, kMarkerRadius);
      }
    }
  }
  painter.restore();
}

}  // namespace ringside::gui
