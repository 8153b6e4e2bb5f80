#include "ringside/gui/metric_chart.h"

#include <QAreaSeries>
#include <QChart>
#include <QChartView>
#include <QFile>
#include <QGraphicsLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QMouseEvent>
#include <QPainter>
#include <QPen>
#include <QPixmap>
#include <QRubberBand>
#include <QSaveFile>
#include <QTextStream>
#include <QTimer>
#include <QVBoxLayout>
#include <QValueAxis>
#include <QWheelEvent>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

namespace ringside::gui {

namespace {

constexpr size_t kBlock = 64;  // points per block of the min/max index
// Below this many visible points per pixel column a plain pass (decimateMinMax) is cheaper than
// one binary search per column.
constexpr size_t kIndexedPointsPerColumn = 8;
constexpr int kReplotIntervalMs = 33;  // coalescing timer: at most ~30 redraws per second

// The pixel column of x, computed exactly as decimateMinMax does (decimation.cpp's ColumnMap), so
// that the indexed path splits the points into the same columns.
class ColumnMap {
 public:
  ColumnMap(double xMin, double xMax, int columns, AxisScale scale)
      : log_(scale == AxisScale::kLog),
        origin_(log_ ? std::log10(xMin) : xMin),
        scale_(columns / ((log_ ? std::log10(xMax) : xMax) - origin_)),
        lastColumn_(columns - 1) {}

  int column(double x) const {
    const double offset = ((log_ ? std::log10(x) : x) - origin_) * scale_;
    return std::clamp(static_cast<int>(offset), 0, lastColumn_);
  }

 private:
  bool log_;
  double origin_;
  double scale_;
  int lastColumn_;
};

QList<QPointF> toQtPoints(const std::vector<SeriesPoint>& points) {
  QList<QPointF> out;
  out.reserve(static_cast<qsizetype>(points.size()));
  for (const SeriesPoint& point : points) out.append(QPointF(point.x, point.y));
  return out;
}

bool drawable(const SeriesPoint& point, AxisScale scale) {
  return !std::isnan(point.y) && (scale == AxisScale::kLinear || point.x > 0.0);
}

double toAxis(double value, bool log) { return log ? std::log10(value) : value; }
double fromAxis(double value, bool log) { return log ? std::pow(10.0, value) : value; }

QString formatNumber(double value) { return QString::number(value, 'g', 6); }

// A tick interval of 1, 2, 2.5 or 5 times a power of ten giving about `ticks` ticks over `span`.
double niceStep(double span, int ticks) {
  if (!(span > 0) || !std::isfinite(span)) return 1.0;
  const double raw = span / std::max(1, ticks - 1);
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double fraction = raw / magnitude;
  const double nice = fraction <= 1     ? 1
                      : fraction <= 2   ? 2
                      : fraction <= 2.5 ? 2.5
                      : fraction <= 5   ? 5
                                        : 10;
  return nice * magnitude;
}

// Dynamic ticks at multiples of a nice step, so the range can stay the data's exact range.
void setNiceTicks(QAbstractAxis* axis, double low, double high, int ticks) {
  if (auto* valueAxis = qobject_cast<QValueAxis*>(axis)) {
    valueAxis->setTickType(QValueAxis::TicksDynamic);
    valueAxis->setTickAnchor(0.0);
    valueAxis->setTickInterval(niceStep(high - low, ticks));
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

// ---- emaSmooth

std::vector<SeriesPoint> emaSmooth(std::span<const SeriesPoint> points, double weight) {
  std::vector<SeriesPoint> out(points.begin(), points.end());
  if (!(weight > 0.0) || out.empty()) return out;
  weight = std::min(weight, 0.999);
  // TensorBoard leaves a constant series alone (its debiasing would only add rounding noise).
  const bool constant = std::all_of(
      out.begin(), out.end(), [&](const SeriesPoint& point) { return point.y == out.front().y; });
  if (constant) return out;
  double last = 0.0;
  double weightPower = 1.0;  // weight^k after k finite values
  for (SeriesPoint& point : out) {
    if (!std::isfinite(point.y)) continue;
    last = last * weight + (1.0 - weight) * point.y;
    weightPower *= weight;
    point.y = last / (1.0 - weightPower);
  }
  return out;
}

// ---- MinMaxIndex

namespace {

// The better of two candidate indices (-1 = none): smaller y for the minimum, larger for the
// maximum, the smaller index on ties (the first such point, as decimateMinMax keeps).
template <bool kMin>
int64_t better(std::span<const SeriesPoint> points, int64_t a, int64_t b) {
  if (a < 0) return b;
  if (b < 0) return a;
  const double ya = points[static_cast<size_t>(a)].y;
  const double yb = points[static_cast<size_t>(b)].y;
  if (kMin ? ya < yb : ya > yb) return a;
  if (kMin ? yb < ya : yb > ya) return b;
  return std::min(a, b);
}

template <bool kMin>
int64_t scan(std::span<const SeriesPoint> points, size_t begin, size_t end) {
  int64_t best = -1;
  for (size_t i = begin; i < end; ++i) {
    const double y = points[i].y;
    if (std::isnan(y)) continue;
    if (best < 0 || (kMin ? y < points[static_cast<size_t>(best)].y
                          : y > points[static_cast<size_t>(best)].y)) {
      best = static_cast<int64_t>(i);
    }
  }
  return best;
}

template <bool kMin>
std::vector<std::vector<int32_t>> buildTable(std::span<const SeriesPoint> points) {
  const size_t blocks = (points.size() + kBlock - 1) / kBlock;
  std::vector<std::vector<int32_t>> table;
  if (blocks == 0) return table;
  table.emplace_back(blocks);
  for (size_t b = 0; b < blocks; ++b) {
    table[0][b] = static_cast<int32_t>(
        scan<kMin>(points, b * kBlock, std::min(points.size(), (b + 1) * kBlock)));
  }
  for (size_t level = 1; (size_t{1} << level) <= blocks; ++level) {
    const size_t half = size_t{1} << (level - 1);
    const size_t count = blocks - (size_t{1} << level) + 1;
    std::vector<int32_t> row(count);
    const auto& previous = table[level - 1];
    for (size_t b = 0; b < count; ++b) {
      row[b] = static_cast<int32_t>(better<kMin>(points, previous[b], previous[b + half]));
    }
    table.push_back(std::move(row));
  }
  return table;
}

// First indices of the smallest and largest non-NaN y in [begin, end), one pass.
std::pair<int64_t, int64_t> scanMinMax(std::span<const SeriesPoint> points, size_t begin,
                                       size_t end) {
  int64_t minIndex = -1;
  int64_t maxIndex = -1;
  double minY = 0;
  double maxY = 0;
  for (size_t i = begin; i < end; ++i) {
    const double y = points[i].y;
    if (std::isnan(y)) continue;
    if (minIndex < 0) {
      minIndex = maxIndex = static_cast<int64_t>(i);
      minY = maxY = y;
    } else if (y < minY) {
      minIndex = static_cast<int64_t>(i);
      minY = y;
    } else if (y > maxY) {
      maxIndex = static_cast<int64_t>(i);
      maxY = y;
    }
  }
  return {minIndex, maxIndex};
}

}  // namespace

MinMaxIndex::MinMaxIndex(std::span<const SeriesPoint> points) : points_(points) {
  if (points.size() >= static_cast<size_t>(std::numeric_limits<int32_t>::max())) return;
  minTable_ = buildTable<true>(points);
  maxTable_ = buildTable<false>(points);
  blockX_.resize(minTable_.empty() ? 0 : minTable_[0].size());
  for (size_t b = 0; b < blockX_.size(); ++b) blockX_[b] = points[b * kBlock].x;
}

std::pair<int64_t, int64_t> MinMaxIndex::argMinMax(size_t begin, size_t end) const {
  const size_t firstBlock = (begin + kBlock - 1) / kBlock;
  const size_t endBlock = end / kBlock;
  if (firstBlock >= endBlock) return scanMinMax(points_, begin, end);
  auto [minIndex, maxIndex] = scanMinMax(points_, begin, firstBlock * kBlock);
  const size_t blocks = endBlock - firstBlock;
  const size_t level = static_cast<size_t>(std::bit_width(blocks) - 1);
  const size_t second = endBlock - (size_t{1} << level);
  minIndex = better<true>(points_, minIndex, minTable_[level][firstBlock]);
  minIndex = better<true>(points_, minIndex, minTable_[level][second]);
  maxIndex = better<false>(points_, maxIndex, maxTable_[level][firstBlock]);
  maxIndex = better<false>(points_, maxIndex, maxTable_[level][second]);
  const auto [tailMin, tailMax] = scanMinMax(points_, endBlock * kBlock, end);
  return {better<true>(points_, minIndex, tailMin), better<false>(points_, maxIndex, tailMax)};
}

template <typename ColumnOf>
size_t MinMaxIndex::columnEnd(size_t first, size_t end, int column,
                              const ColumnOf& columnOf) const {
  // The first block starting beyond the column: gallop, then binary search over blockX_.
  const size_t lastBlock = (end - 1) / kBlock;
  size_t low = first / kBlock + 1;  // blocks before `low` start inside the column (or before)
  size_t high = low;
  size_t step = 1;
  while (high <= lastBlock && columnOf(blockX_[high]) <= column) {
    low = high + 1;
    high += step;
    step *= 2;
  }
  high = std::min(high, lastBlock + 1);
  while (low < high) {
    const size_t middle = low + (high - low) / 2;
    if (columnOf(blockX_[middle]) <= column) {
      low = middle + 1;
    } else {
      high = middle;
    }
  }
  // The column ends inside block low - 1: binary search its points.
  size_t inside = std::max(first, (low - 1) * kBlock);  // known inside the column
  size_t beyond = std::min(end, low * kBlock);          // known beyond it, or the end
  while (beyond - inside > 1) {
    const size_t middle = inside + (beyond - inside) / 2;
    if (columnOf(points_[middle].x) <= column) {
      inside = middle;
    } else {
      beyond = middle;
    }
  }
  return beyond;
}

std::vector<SeriesPoint> MinMaxIndex::decimate(double xMin, double xMax, int pixelColumns,
                                               AxisScale scale) const {
  std::vector<SeriesPoint> out;
  const VisibleRange range = visibleRange(points_, xMin, xMax, pixelColumns, scale);
  if (!range.drawable) return out;
  const size_t begin = range.begin;
  const size_t end = range.end;
  if (minTable_.empty() ||
      end - begin < kIndexedPointsPerColumn * static_cast<size_t>(pixelColumns)) {
    return decimateMinMax(points_, xMin, xMax, pixelColumns, scale);
  }

  out.reserve(2 * static_cast<size_t>(pixelColumns) + 2);
  for (size_t i = begin; i > 0; --i) {
    if (drawable(points_[i - 1], scale)) {
      out.push_back(points_[i - 1]);
      break;
    }
  }
  const ColumnMap columns(xMin, xMax, pixelColumns, scale);
  size_t first = begin;
  while (first < end) {
    const int column = columns.column(points_[first].x);
    const size_t high = columnEnd(first, end, column, [&](double x) { return columns.column(x); });
    const auto [minIndex, maxIndex] = argMinMax(first, high);
    if (minIndex >= 0) {
      const size_t a = static_cast<size_t>(std::min(minIndex, maxIndex));
      const size_t b = static_cast<size_t>(std::max(minIndex, maxIndex));
      out.push_back(points_[a]);
      if (b != a) out.push_back(points_[b]);
    }
    first = high;
  }
  for (size_t i = end; i < points_.size(); ++i) {
    if (drawable(points_[i], scale)) {
      out.push_back(points_[i]);
      break;
    }
  }
  return out;
}

// ---- MetricChart

struct MetricChart::Series {
  QString name;
  std::vector<SeriesPoint> points;
  MinMaxIndex index;
  std::vector<SeriesPoint> stackTop;  // stacked mode: the sum up to and including this series
  MinMaxIndex stackIndex;
  QColor color;
  bool faint = false;
  QLineSeries* line = nullptr;   // the drawn line (the area's upper line in stacked mode)
  QLineSeries* lower = nullptr;  // stacked mode: the area's lower line (nullptr for the first)
  QAreaSeries* area = nullptr;
  std::vector<SeriesPoint> shown;  // what the last replot drew (upper line)
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
  chart_->legend()->setAlignment(Qt::AlignBottom);
  chart_->layout()->setContentsMargins(0, 0, 0, 0);
  chart_->setMargins(QMargins(4, 4, 4, 4));
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

QLineSeries* MetricChart::lineSeries(const QString& name) const {
  const Series* series = find(name);
  return series == nullptr ? nullptr : series->line;
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
  // Detach and delete the Qt series first; they are recreated for the current mode below.
  for (auto& series : series_) {
    if (series->area != nullptr) {
      chart_->removeSeries(series->area);
      delete series->area;  // owns its upper and lower lines
    } else if (series->line != nullptr) {
      chart_->removeSeries(series->line);
      delete series->line;
    }
    series->area = nullptr;
    series->line = nullptr;
    series->lower = nullptr;
  }
  for (QAbstractAxis* axis : chart_->axes()) {
    chart_->removeAxis(axis);
    delete axis;
  }
  auto makeAxis = [](bool log, const QString& title) -> QAbstractAxis* {
    QAbstractAxis* axis = nullptr;
    if (log) {
      auto* logAxis = new QLogValueAxis;
      logAxis->setBase(10);
      logAxis->setLabelFormat(QStringLiteral("%g"));
      logAxis->setMinorTickCount(-1);
      axis = logAxis;
    } else {
      auto* valueAxis = new QValueAxis;
      valueAxis->setLabelFormat(QStringLiteral("%g"));
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

  QLineSeries* previousTop = nullptr;
  for (auto& series : series_) {
    QAbstractSeries* added = nullptr;
    series->line = new QLineSeries;
    series->line->setName(series->name);
    QPen pen(series->color);
    // Width 1: the raster engine's fast path for aliased lines (1.5 or 2 goes through the
    // stroker and doubles the paint time of a dense series).
    pen.setWidthF(1.0);
    if (series->faint) {
      QColor faint = series->color;
      faint.setAlphaF(0.3);
      pen.setColor(faint);
    }
    if (stacked_) {
      // The lower line is a copy of the previous top, refreshed on every replot.
      if (previousTop != nullptr) series->lower = new QLineSeries;
      series->area = new QAreaSeries(series->line, series->lower);
      series->line->setParent(series->area);  // deleted with the area
      if (series->lower != nullptr) series->lower->setParent(series->area);
      series->area->setName(series->name);
      QColor fill = series->color;
      fill.setAlphaF(0.55);
      series->area->setBrush(fill);
      series->area->setPen(pen);
      added = series->area;
      previousTop = series->line;
    } else {
      series->line->setPen(pen);
      series->line->setMarkerSize(7);  // for sparse series, see replot()
      added = series->line;
    }
    chart_->addSeries(added);
    added->attachAxis(axisX_);
    added->attachAxis(axisY_);
    if (series->faint) {
      for (QLegendMarker* marker : chart_->legend()->markers(added)) marker->setVisible(false);
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

  // 2. New axis ranges with the Qt series emptied first: Qt Charts recomputes every attached
  // series' geometry (a path stroke per series) on each range change, so changing the ranges
  // while they hold points would cost that work twice.
  if (std::pair{xMin, xMax} != shownX_ || yRange != shownY_) {
    for (auto& series : series_) {
      series->line->clear();
      if (series->lower != nullptr) series->lower->clear();
    }
  }
  axisX_->setRange(xMin, xMax);
  axisY_->setRange(yRange.first, yRange.second);
  setNiceTicks(axisX_, xMin, xMax, std::clamp(columns / 90, 3, 8));
  setNiceTicks(axisY_, yRange.first, yRange.second,
               std::clamp(static_cast<int>(plot.height()) / 28, 4, 8));

  // 3. The decimated points into the Qt series (one geometry update each).
  const std::vector<SeriesPoint>* previousShown = nullptr;
  for (auto& series : series_) {
    // Sparse series (a test metric per epoch) get markers: a single point draws no line.
    series->line->setPointsVisible(!stacked_ &&
                                   series->shown.size() * 8 <= static_cast<size_t>(columns));
    series->line->replace(toQtPoints(series->shown));
    if (series->lower != nullptr && previousShown != nullptr) {
      series->lower->replace(toQtPoints(*previousShown));
    }
    previousShown = &series->shown;
  }
  shownX_ = {xMin, xMax};
  shownY_ = yRange;

  placeholder_->setGeometry(view_->rect());
  placeholder_->setVisible(!placeholder_->text().isEmpty() && !anyPoint);
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
