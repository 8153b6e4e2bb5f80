#include "ringside/gui/metric_chart.h"

#include <QChart>
#include <QChartView>
#include <QFile>
#include <QGraphicsItem>
#include <QGraphicsLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLocale>
#include <QLogValueAxis>
#include <QMouseEvent>
#include <QPainter>
#include <QPen>
#include <QPixmap>
#include <QPolygonF>
#include <QRubberBand>
#include <QSaveFile>
#include <QTextStream>
#include <QTimer>
#include <QVBoxLayout>
#include <QValueAxis>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>
#include <limits>

namespace ringside::gui {

namespace {

constexpr int kReplotIntervalMs = 33;  // coalescing timer: at most ~30 redraws per second
// Pixel coordinates are clamped to this far outside the plot before they reach QPainter, whose
// raster engine works in fixed point: a point zoomed far out of view must not overflow it.
constexpr double kPixelLimit = 1e6;
constexpr double kFaintAlpha = 0.3;  // the raw line behind a smoothed one
constexpr double kAreaAlpha = 0.55;  // stacked areas
constexpr double kMarkerRadius = 3.5;

double toAxis(double value, bool log) { return log ? std::log10(value) : value; }
double fromAxis(double value, bool log) { return log ? std::pow(10.0, value) : value; }

// A value as the read-out and the SVG's tick labels show it: 6 significant digits in the
// default locale (a decimal comma in German), as the axis labels (QChart::localizeNumbers).
QString formatNumber(double value) { return QLocale().toString(value, 'g', 6); }

// A tick interval of 1, 2, 2.5 or 5 times a power of ten giving about `ticks` ticks over `span`:
// the raw interval span / (ticks - 1) rounded to the nearest such number (Heckbert, "Nice numbers
// for graph labels", Graphics Gems, 1990, with 2.5 added), so a span of 1.66 over 4 ticks gets 0.5
// (ticks 0.5, 1, 1.5), not 1 (a single tick).
double niceStep(double span, int ticks) {
  if (!(span > 0) || !std::isfinite(span)) return 1.0;
  const double raw = span / std::max(1, ticks - 1);
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double fraction = raw / magnitude;
  const double nice = fraction < 1.5    ? 1
                      : fraction < 2.25 ? 2
                      : fraction < 3.5  ? 2.5
                      : fraction < 7.5  ? 5
                                        : 10;
  return nice * magnitude;
}

// Sets an axis' range with dynamic ticks at multiples of a nice step, so the range can stay the
// data's exact range. The interval and the range change in the order that never pairs a wide
// range with a fine interval in between: Qt Charts lays out a label per tick at once, and a
// full-view range over a zoomed-in interval would create thousands of labels (~30 ms).
void setAxisRange(QAbstractAxis* axis, double low, double high, int ticks) {
  auto* valueAxis = qobject_cast<QValueAxis*>(axis);
  if (valueAxis == nullptr) {  // a log axis: its ticks are the powers of ten
    axis->setRange(low, high);
    return;
  }
  const double interval = niceStep(high - low, ticks);
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

QColor withAlpha(QColor color, double alpha) {
  color.setAlphaF(static_cast<float>(alpha));
  return color;
}

}  // namespace

// ---- MetricChart

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
  explicit Plot(MetricChart* owner) : QGraphicsItem(owner->chart_), owner_(owner) {
    // Above the grid and Qt's (empty) series, below the legend (Qt Charts' ChartPresenter
    // stacks plot area 0, shades 1, grid 2, axes 3, series 4, legend 5).
    setZValue(4.5);
    setAcceptedMouseButtons(Qt::NoButton);
  }

  void setArea(const QRectF& area) {
    if (area == area_) return;
    prepareGeometryChange();
    area_ = area;
  }

  QRectF boundingRect() const override { return area_; }

  void paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) override {
    owner_->paintSeries(*painter);
  }

 private:
  MetricChart* owner_;
  QRectF area_;
};

// The chart view with this chart's interaction: rubber-band zoom (left drag), pan (right or
// middle drag, arrow keys), wheel zoom in x about the cursor, reset (double-click, Home, Esc),
// +/- zoom, and the hover read-out.
class MetricChart::View : public QChartView {
 public:
  View(QChart* chart, MetricChart* owner) : QChartView(chart, owner), owner_(owner) {
    setRenderHint(QPainter::Antialiasing, false);
    setMouseTracking(true);
    setFocusPolicy(Qt::StrongFocus);
    setRubberBand(QChartView::NoRubberBand);  // ours, so the decimation sees every change
  }

 protected:
  void mousePressEvent(QMouseEvent* event) override {
    if (event->button() == Qt::LeftButton) {
      bandOrigin_ = event->position().toPoint();
      if (band_ == nullptr) band_ = new QRubberBand(QRubberBand::Rectangle, this);
      band_->setGeometry(QRect(bandOrigin_, QSize()));
      band_->show();
    } else if (event->button() == Qt::RightButton || event->button() == Qt::MiddleButton) {
      panning_ = true;
      panOrigin_ = event->position();
    }
    event->accept();
  }

  void mouseMoveEvent(QMouseEvent* event) override {
    if (band_ != nullptr && band_->isVisible()) {
      band_->setGeometry(QRect(bandOrigin_, event->position().toPoint()).normalized());
    } else if (panning_) {
      const QRectF plot = owner_->chart_->plotArea();
      const QPointF delta = event->position() - panOrigin_;
      panOrigin_ = event->position();
      if (plot.width() > 0 && plot.height() > 0) {
        owner_->pan(-delta.x() / plot.width(), delta.y() / plot.height());
      }
    }
    owner_->updateHover(event->position());
    event->accept();
  }

  void mouseReleaseEvent(QMouseEvent* event) override {
    if (event->button() == Qt::LeftButton && band_ != nullptr && band_->isVisible()) {
      band_->hide();
      const QRect rect = band_->geometry();
      if (rect.width() > 4) {
        const SeriesPoint a = owner_->valueAt(rect.bottomLeft());
        const SeriesPoint b = owner_->valueAt(rect.topRight());
        owner_->setXRange(a.x, b.x);
        if (rect.height() > 4) owner_->setYRange(a.y, b.y);
        emit owner_->viewChanged();
      }
    }
    panning_ = false;
    event->accept();
  }

  void mouseDoubleClickEvent(QMouseEvent* event) override {
    owner_->resetZoom();
    emit owner_->viewChanged();
    event->accept();
  }

  void wheelEvent(QWheelEvent* event) override {
    const double notches = event->angleDelta().y() / 120.0;
    if (notches != 0) {
      const SeriesPoint center = owner_->valueAt(event->position());
      owner_->zoom(std::pow(0.8, notches), QPointF(center.x, center.y));
    }
    event->accept();
  }

  void keyPressEvent(QKeyEvent* event) override {
    switch (event->key()) {
      case Qt::Key_Left:
        owner_->pan(-0.1, 0);
        break;
      case Qt::Key_Right:
        owner_->pan(0.1, 0);
        break;
      case Qt::Key_Up:
        owner_->pan(0, 0.1);
        break;
      case Qt::Key_Down:
        owner_->pan(0, -0.1);
        break;
      case Qt::Key_Plus:
      case Qt::Key_Equal:
      case Qt::Key_Minus: {
        const auto [x0, x1] = owner_->shownX_;
        const double middle =
            fromAxis((toAxis(x0, owner_->logX_) + toAxis(x1, owner_->logX_)) / 2, owner_->logX_);
        owner_->zoom(event->key() == Qt::Key_Minus ? 1.25 : 0.8, QPointF(middle, 0));
        break;
      }
      case Qt::Key_Home:
      case Qt::Key_Escape:
        owner_->resetZoom();
        emit owner_->viewChanged();
        break;
      default:
        QChartView::keyPressEvent(event);
        return;
    }
    event->accept();
  }

  void leaveEvent(QEvent* event) override {
    owner_->readout_->clear();
    QChartView::leaveEvent(event);
  }

 private:
  MetricChart* owner_;
  QRubberBand* band_ = nullptr;
  QPoint bandOrigin_;
  bool panning_ = false;
  QPointF panOrigin_;
};

MetricChart::MetricChart(const QString& title, QWidget* parent)
    : QWidget(parent),
      chart_(new QChart),
      readout_(new QLabel(this)),
      placeholder_(nullptr),
      replotTimer_(new QTimer(this)) {
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
  rebuildAxes();
  dirty_ = true;
}

MetricChart::~MetricChart() = default;

QChartView* MetricChart::chartView() const { return view_; }

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
  const std::vector<SeriesPoint>* below = nullptr;
  for (auto& series : series_) {
    series->stackTop = series->points;
    if (below != nullptr && !below->empty()) {
      size_t j = 0;
      for (SeriesPoint& point : series->stackTop) {
        while (j + 1 < below->size() && (*below)[j + 1].x <= point.x) ++j;
        const double base = (*below)[j].x <= point.x ? (*below)[j].y : 0.0;
        if (std::isfinite(base)) point.y += base;
      }
    }
    series->stackIndex = MinMaxIndex(series->stackTop);
    below = &series->stackTop;
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
  if (!(max > min) || (logX_ && !(min > 0))) return;
  xRange_ = {min, max};
  scheduleReplot();
}

void MetricChart::setYRange(double min, double max) {
  if (min > max) std::swap(min, max);
  if (!(max > min) || (logY_ && !(min > 0))) return;
  yRange_ = {min, max};
  scheduleReplot();
}

void MetricChart::resetZoom() {
  xRange_.reset();
  yRange_.reset();
  scheduleReplot();
}

void MetricChart::zoom(double factor, QPointF center) {
  const double a = toAxis(shownX_.first, logX_);
  const double b = toAxis(shownX_.second, logX_);
  double c = logX_ && !(center.x() > 0) ? (a + b) / 2 : toAxis(center.x(), logX_);
  if (!std::isfinite(c)) c = (a + b) / 2;
  setXRange(fromAxis(c + (a - c) * factor, logX_), fromAxis(c + (b - c) * factor, logX_));
  emit viewChanged();
}

void MetricChart::pan(double dxFraction, double dyFraction) {
  if (dxFraction != 0) {
    const double a = toAxis(shownX_.first, logX_);
    const double b = toAxis(shownX_.second, logX_);
    const double shift = (b - a) * dxFraction;
    setXRange(fromAxis(a + shift, logX_), fromAxis(b + shift, logX_));
  }
  if (dyFraction != 0) {
    const double a = toAxis(shownY_.first, logY_);
    const double b = toAxis(shownY_.second, logY_);
    const double shift = (b - a) * dyFraction;
    setYRange(fromAxis(a + shift, logY_), fromAxis(b + shift, logY_));
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
  chart_->legend()->setVisible(series_.size() > 1);
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
  if (!std::isfinite(low) || !std::isfinite(high))
    return logX_ ? std::pair{1.0, 10.0} : std::pair{0.0, 1.0};
  if (!(high > low)) {
    return logX_ ? std::pair{low / 2, low * 2} : std::pair{low - 0.5, high + 0.5};
  }
  return {low, high};
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
  if (stacked_ && !logY_) yLow = std::min(yLow, 0.0);

  std::pair<double, double> yRange;
  if (yRange_) {
    yRange = *yRange_;
  } else if (!anyPoint) {
    yRange = logY_ ? std::pair{1.0, 10.0} : std::pair{0.0, 1.0};
  } else if (logY_) {
    const double low = std::log10(yLow);
    const double high = std::log10(yHigh);
    const double pad = std::max((high - low) * 0.05, 0.05);
    yRange = {std::pow(10.0, low - pad), std::pow(10.0, high + pad)};
  } else {
    const double pad = yHigh > yLow ? (yHigh - yLow) * 0.05 : std::max(std::abs(yHigh) * 0.05, 0.5);
    yRange = {stacked_ && yLow >= 0 ? yLow : yLow - pad, yHigh + pad};
  }

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

void MetricChart::paintSeries(QPainter& painter) const {
  const QRectF plot = chart_->plotArea();
  if (plot.isEmpty()) return;
  painter.save();
  painter.setClipRect(plot);
  // Aliased lines of width 1 take the raster engine's fast path (the cosmetic stroker); wider
  // or antialiased pens go through the general stroker at several times the cost.
  painter.setRenderHint(QPainter::Antialiasing, false);
  const auto pixels = [this](const std::vector<SeriesPoint>& points) {
    QPolygonF polygon;
    polygon.reserve(static_cast<qsizetype>(points.size()));
    for (const SeriesPoint& point : points) {
      const QPointF at = toPixel(point);
      polygon.append(QPointF(std::clamp(at.x(), -kPixelLimit, kPixelLimit),
                             std::clamp(at.y(), -kPixelLimit, kPixelLimit)));
    }
    return polygon;
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
          area.append(toPixel({series->shown.back().x, base}));
          area.append(toPixel({series->shown.front().x, base}));
        }
        painter.setPen(Qt::NoPen);
        painter.setBrush(withAlpha(series->color, kAreaAlpha));
        painter.drawPolygon(area);
        painter.setPen(pen);
        painter.drawPolyline(line);
      }
      previousTop = line;
      continue;
    }
    painter.setPen(pen);
    painter.drawPolyline(line);
    if (series->markers) {
      painter.setBrush(pen.color());
      for (const QPointF& at : line) painter.drawEllipse(at, kMarkerRadius, kMarkerRadius);
    }
  }
  painter.restore();
}

// ---- coordinates and hover

QPointF MetricChart::toPixel(SeriesPoint point) const {
  const QRectF plot = chart_->plotArea();
  const double x0 = toAxis(shownX_.first, logX_);
  const double x1 = toAxis(shownX_.second, logX_);
  const double y0 = toAxis(shownY_.first, logY_);
  const double y1 = toAxis(shownY_.second, logY_);
  const double fx = (toAxis(point.x, logX_) - x0) / (x1 - x0);
  const double fy = (toAxis(point.y, logY_) - y0) / (y1 - y0);
  return {plot.left() + fx * plot.width(), plot.bottom() - fy * plot.height()};
}

SeriesPoint MetricChart::fromPixel(QPointF pixel) const {
  const QRectF plot = chart_->plotArea();
  const double fx = plot.width() > 0 ? (pixel.x() - plot.left()) / plot.width() : 0;
  const double fy = plot.height() > 0 ? (plot.bottom() - pixel.y()) / plot.height() : 0;
  const double x0 = toAxis(shownX_.first, logX_);
  const double x1 = toAxis(shownX_.second, logX_);
  const double y0 = toAxis(shownY_.first, logY_);
  const double y1 = toAxis(shownY_.second, logY_);
  return {fromAxis(x0 + fx * (x1 - x0), logX_), fromAxis(y0 + fy * (y1 - y0), logY_)};
}

QPointF MetricChart::positionOf(SeriesPoint point) const {
  const QPointF scene = chart_->mapToScene(toPixel(point));
  return view_->mapFromScene(scene);
}

SeriesPoint MetricChart::valueAt(QPointF position) const {
  const QPointF scene = view_->mapToScene(position.toPoint());
  return fromPixel(chart_->mapFromScene(scene));
}

std::optional<HoverPoint> MetricChart::nearestPoint(QPointF position, double maxPixels) const {
  const QPointF pixel = chart_->mapFromScene(view_->mapToScene(position.toPoint()));
  std::optional<HoverPoint> best;
  double bestDistance = maxPixels * maxPixels;
  for (const auto& series : series_) {
    if (series->faint && series_.size() > 1) continue;  // read the smoothed line, not the raw
    for (const SeriesPoint& point : series->shown) {
      if (point.x < shownX_.first || point.x > shownX_.second) continue;
      SeriesPoint value = point;
      const QPointF at = toPixel(point);
      const double dx = at.x() - pixel.x();
      const double dy = at.y() - pixel.y();
      const double distance = dx * dx + dy * dy;
      if (distance <= bestDistance) {
        bestDistance = distance;
        if (stacked_) {
          // Read out the series' own value, not the stacked sum.
          const auto& own = series->points;
          auto it = std::lower_bound(
              own.begin(), own.end(), point.x,
              [](const SeriesPoint& candidate, double x) { return candidate.x < x; });
          if (it != own.end() && it->x == point.x) value = *it;
        }
        best = HoverPoint{series->name, value};
      }
    }
  }
  return best;
}

void MetricChart::updateHover(QPointF position) {
  const auto found = nearestPoint(position);
  if (!found) {
    readout_->clear();
    return;
  }
  readout_->setText(
      tr("%1: x = %2, y = %3")
          .arg(found->series, formatNumber(found->point.x), formatNumber(found->point.y)));
}

QString MetricChart::readoutText() const { return readout_->text(); }

// ---- export

Status MetricChart::exportPng(const QString& path) {
  replotNow();
  const QPixmap pixmap = view_->grab();
  if (pixmap.isNull() || !pixmap.save(path, "PNG")) {
    return Status::ioError(
        tr("Could not write the PNG file %1: check the folder exists and is writable.")
            .arg(path)
            .toStdString());
  }
  return Status::ok();
}

namespace {

QString svgColor(const QColor& color) { return color.name(QColor::HexRgb); }

// Ticks of one axis: evenly spaced (linear) or powers of ten (log) within [low, high].
std::vector<double> ticksOf(double low, double high, bool log) {
  std::vector<double> ticks;
  if (log) {
    for (int e = static_cast<int>(std::ceil(std::log10(low)));
         e <= static_cast<int>(std::floor(std::log10(high))); ++e) {
      ticks.push_back(std::pow(10.0, e));
    }
  } else {
    const double step = niceStep(high - low, 6);
    for (double tick = std::ceil(low / step) * step; tick <= high + step * 1e-9; tick += step) {
      ticks.push_back(std::abs(tick) < step * 1e-9 ? 0.0 : tick);
    }
  }
  return ticks;
}

}  // namespace

Status MetricChart::exportSvg(const QString& path) {
  replotNow();
  const QSizeF size = chart_->size();
  const QRectF plot = chart_->plotArea();
  QString svg;
  QTextStream out(&svg);
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" << size.width()
      << "\" height=\"" << size.height() << "\" viewBox=\"0 0 " << size.width() << ' '
      << size.height() << "\" font-family=\"sans-serif\" font-size=\"11\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << "<defs><clipPath id=\"plot\"><rect x=\"" << plot.left() << "\" y=\"" << plot.top()
      << "\" width=\"" << plot.width() << "\" height=\"" << plot.height()
      << "\"/></clipPath></defs>\n";
  out << "<text x=\"" << size.width() / 2 << "\" y=\"16\" text-anchor=\"middle\" font-size=\"13\">"
      << chart_->title().toHtmlEscaped() << "</text>\n";
  out << "<rect class=\"frame\" x=\"" << plot.left() << "\" y=\"" << plot.top() << "\" width=\""
      << plot.width() << "\" height=\"" << plot.height()
      << "\" fill=\"none\" stroke=\"#888888\"/>\n";
  for (double tick : ticksOf(shownX_.first, shownX_.second, logX_)) {
    const double x = toPixel({tick, shownY_.first}).x();
    out << "<line x1=\"" << x << "\" y1=\"" << plot.top() << "\" x2=\"" << x << "\" y2=\""
        << plot.bottom() << "\" stroke=\"#e0e0e0\"/>"
        << "<text x=\"" << x << "\" y=\"" << plot.bottom() + 14 << "\" text-anchor=\"middle\">"
        << formatNumber(tick) << "</text>\n";
  }
  for (double tick : ticksOf(shownY_.first, shownY_.second, logY_)) {
    const double y = toPixel({shownX_.first, tick}).y();
    out << "<line x1=\"" << plot.left() << "\" y1=\"" << y << "\" x2=\"" << plot.right()
        << "\" y2=\"" << y << "\" stroke=\"#e0e0e0\"/>"
        << "<text x=\"" << plot.left() - 4 << "\" y=\"" << y + 4 << "\" text-anchor=\"end\">"
        << formatNumber(tick) << "</text>\n";
  }
  out << "<text x=\"" << plot.center().x() << "\" y=\"" << plot.bottom() + 30
      << "\" text-anchor=\"middle\">" << xTitle_.toHtmlEscaped() << "</text>\n";
  out << "<text transform=\"translate(12 " << plot.center().y()
      << ") rotate(-90)\" text-anchor=\"middle\">" << yTitle_.toHtmlEscaped() << "</text>\n";

  out << "<g clip-path=\"url(#plot)\">\n";
  const std::vector<SeriesPoint>* previousShown = nullptr;
  for (const auto& series : series_) {
    QString coordinates;
    QTextStream pointsOut(&coordinates);
    for (const SeriesPoint& point : series->shown) {
      const QPointF at = toPixel(point);
      pointsOut << at.x() << ',' << at.y() << ' ';
    }
    const double opacity = series->faint ? 0.3 : 1.0;
    if (stacked_) {
      // The area: this series' top forward, then the previous top (or the zero line) backward.
      QString lower;
      QTextStream lowerOut(&lower);
      if (previousShown != nullptr) {
        for (auto it = previousShown->rbegin(); it != previousShown->rend(); ++it) {
          const QPointF at = toPixel(*it);
          lowerOut << at.x() << ',' << at.y() << ' ';
        }
      } else if (!series->shown.empty()) {
        const double base = logY_ ? shownY_.first : 0.0;
        const QPointF right = toPixel({series->shown.back().x, base});
        const QPointF left = toPixel({series->shown.front().x, base});
        lowerOut << right.x() << ',' << right.y() << ' ' << left.x() << ',' << left.y();
      }
      out << "<polygon class=\"series\" data-name=\"" << series->name.toHtmlEscaped()
          << "\" fill=\"" << svgColor(series->color) << "\" fill-opacity=\"0.55\" stroke=\""
          << svgColor(series->color) << "\" points=\"" << coordinates << lower << "\"/>\n";
    } else {
      out << "<polyline class=\"series\" data-name=\"" << series->name.toHtmlEscaped()
          << "\" fill=\"none\" stroke=\"" << svgColor(series->color) << "\" stroke-opacity=\""
          << opacity << "\" stroke-width=\"" << (series->faint ? 1.0 : 1.5) << "\" points=\""
          << coordinates.trimmed() << "\"/>\n";
    }
    previousShown = &series->shown;
  }
  out << "</g>\n";
  double legendX = plot.left();
  for (const auto& series : series_) {
    if (series->faint) continue;
    const double y = size.height() - 8;
    out << "<rect x=\"" << legendX << "\" y=\"" << y - 8 << "\" width=\"10\" height=\"10\" fill=\""
        << svgColor(series->color) << "\"/><text x=\"" << legendX + 14 << "\" y=\"" << y << "\">"
        << series->name.toHtmlEscaped() << "</text>\n";
    legendX += 24 + 7 * series->name.size();
  }
  out << "</svg>\n";
  out.flush();

  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly) || file.write(svg.toUtf8()) < 0 || !file.commit()) {
    return Status::ioError(
        tr("Could not write the SVG file %1: %2").arg(path, file.errorString()).toStdString());
  }
  return Status::ok();
}

}  // namespace ringside::gui
