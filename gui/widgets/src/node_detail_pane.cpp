#include "ringside/gui/widgets/node_detail_pane.h"

#include <QChart>
#include <QChartView>
#include <QCursor>
#include <QEvent>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineSeries>
#include <QListWidget>
#include <QLocale>
#include <QMap>
#include <QScrollArea>
#include <QScrollBar>
#include <QShowEvent>
#include <QStackedWidget>
#include <QTimer>
#include <QToolTip>
#include <QVBoxLayout>
#include <QValueAxis>
#include <algorithm>
#include <cmath>
#include <iterator>
#include <optional>
#include <utility>

#include "ringside/gui/controller.h"
#include "ringside/gui/widgets/node_table_model.h"

namespace ringside::gui {

namespace {

constexpr int kRedrawDelayMs = 500;  // charts redraw at most twice a second
constexpr double kMiBPerGiB = 1024.0;
constexpr int kChartMinHeight = 170;

QString gib(double mib) { return QLocale().toString(mib / kMiBPerGiB, 'f', 1); }

// The GPU indices to draw: the inventory's, else those in the latest sample.
QList<uint32_t> gpuIndices(const v1::NodeInfo* info, const std::deque<v1::NodeTelemetry>& samples) {
  QList<uint32_t> indices;
  if (info) {
    for (const v1::GpuInfo& gpu : info->gpus()) indices.append(gpu.index());
  } else if (!samples.empty()) {
    for (const v1::GpuTelemetry& gpu : samples.back().gpus()) indices.append(gpu.index());
  }
  return indices;
}

// GPU `index` of `sample`, which lists it at `position` when its list is the inventory's.
const v1::GpuTelemetry* gpuSample(const v1::NodeTelemetry& sample, uint32_t index, int position) {
  if (position < sample.gpus_size() && sample.gpus(position).index() == index) {
    return &sample.gpus(position);
  }
  for (const v1::GpuTelemetry& gpu : sample.gpus()) {
    if (gpu.index() == index) return &gpu;
  }
  return nullptr;
}

// One GPU value of GpuTelemetry, by its protobuf accessors.
struct GpuField {
  bool (v1::GpuTelemetry::*has)() const;
  double (v1::GpuTelemetry::*get)() const;
};

std::optional<double> gpuValue(const v1::NodeTelemetry& sample, uint32_t index, int position,
                               GpuField field, double scale = 1.0) {
  const v1::GpuTelemetry* gpu = gpuSample(sample, index, position);
  if (gpu == nullptr || !(gpu->*field.has)()) return std::nullopt;
  return (gpu->*field.get)() * scale;
}

// The top of a y axis for values up to `max`: 15 % headroom, at least `floor`.
double axisTop(double max, double floor) { return std::max(floor, max * 1.15); }

// Tableau 10 (Tableau's default categorical palette): ten hues told apart on light and dark
// backgrounds.
constexpr QRgb kGpuPalette[] = {0x4e79a7, 0xf28e2b, 0xe15759, 0x76b7b2, 0x59a14f,
                                0xedc948, 0xb07aa1, 0xff9da7, 0x9c755f, 0xbab0ac};

}  // namespace

NodeDetailPane::NodeDetailPane(Controller& controller, QWidget* parent)
    : QWidget(parent), controller_(controller) {
  pages_ = new QStackedWidget;
  auto* hint = new QLabel(tr("Select a node to see its details and live charts."));
  hint->setAlignment(Qt::AlignCenter);
  hint->setEnabled(false);
  pages_->addWidget(hint);

  auto* page = new QWidget;
  auto* row = new QHBoxLayout(page);
  row->setContentsMargins(0, 0, 0, 0);
  auto* infoColumn = new QVBoxLayout;
  title_ = new QLabel;
  QFont titleFont = title_->font();
  titleFont.setBold(true);
  titleFont.setPointSizeF(titleFont.pointSizeF() * 1.15);
  title_->setFont(titleFont);
  title_->setWordWrap(true);
  infoColumn->addWidget(title_);
  info_ = new QLabel;
  info_->setTextFormat(Qt::RichText);
  info_->setWordWrap(true);
  info_->setAlignment(Qt::AlignTop | Qt::AlignLeft);
  info_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* scroll = new QScrollArea;
  scroll->setWidget(info_);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  infoColumn->addWidget(scroll, 1);
  // Each GPU's latest reading: a list lays out only the rows in view, where a rich-text label
  // of 64 GPUs' readings cost 200 to 400 ms of layout per update.
  gpuReadingsTitle_ = new QLabel(tr("Latest GPU readings"));
  QFont bold = gpuReadingsTitle_->font();
  bold.setBold(true);
  gpuReadingsTitle_->setFont(bold);
  infoColumn->addWidget(gpuReadingsTitle_);
  gpuReadings_ = new QListWidget;
  gpuReadings_->setUniformItemSizes(true);
  gpuReadings_->setSelectionMode(QAbstractItemView::NoSelection);
  gpuReadings_->setFocusPolicy(Qt::NoFocus);
  infoColumn->addWidget(gpuReadings_, 1);
  gpuReadingsTitle_->hide();
  gpuReadings_->hide();
  auto* infoBox = new QWidget;
  infoBox->setLayout(infoColumn);
  infoBox->setMinimumWidth(240);
  infoBox->setMaximumWidth(340);
  row->addWidget(infoBox);

  cpu_ = makeChart(tr("CPU (%)"), tr("%"));
  memory_ = makeChart(tr("Memory used (GiB)"), tr("GiB"));
  network_ = makeChart(tr("Network (MB/s)"), tr("MB/s"));
  gpuUtil_ = makeChart(tr("GPU utilization (%)"), tr("%"));
  gpuMemory_ = makeChart(tr("GPU memory used (GiB)"), tr("GiB"));
  gpuPower_ = makeChart(tr("GPU power (W)"), tr("W"));
  gpuTemp_ = makeChart(tr("GPU temperature (°C)"), tr("°C"));
  gpuClock_ = makeChart(tr("GPU SM clock (MHz)"), tr("MHz"));
  gpuPcie_ = makeChart(tr("GPU PCIe (MB/s)"), tr("MB/s"));
  gpuNvlink_ = makeChart(tr("GPU NVLink (MB/s)"), tr("MB/s"));
  setLines(cpu_, {tr("CPU")});
  setLines(memory_, {tr("used")});
  setLines(network_, {tr("receive"), tr("transmit")});
  cpu_.chart->legend()->hide();
  memory_.chart->legend()->hide();
  for (Chart* chart :
       {&gpuUtil_, &gpuMemory_, &gpuPower_, &gpuTemp_, &gpuClock_, &gpuPcie_, &gpuNvlink_}) {
    chart->chart->legend()->hide();  // the GPU legend above them names the colors
  }
  setYRange(cpu_, 100, false);
  setYRange(gpuUtil_, 100, false);
  gpuLegend_ = new QLabel;
  gpuLegend_->setTextFormat(Qt::RichText);
  gpuLegend_->setWordWrap(true);
  gpuLegend_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  gpuLegend_->hide();
  auto* grid = new QGridLayout;
  grid->setSpacing(4);
  grid->addWidget(cpu_.view, 0, 0);
  grid->addWidget(memory_.view, 0, 1);
  grid->addWidget(network_.view, 0, 2);
  grid->addWidget(gpuLegend_, 1, 0, 1, 3);
  grid->addWidget(gpuUtil_.view, 2, 0);
  grid->addWidget(gpuMemory_.view, 2, 1);
  grid->addWidget(gpuPower_.view, 2, 2);
  grid->addWidget(gpuTemp_.view, 3, 0);
  grid->addWidget(gpuClock_.view, 3, 1);
  grid->addWidget(gpuPcie_.view, 3, 2);
  grid->addWidget(gpuNvlink_.view, 4, 0);
  // Ten charts do not fit a short window: they scroll.
  auto* charts = new QWidget;
  charts->setLayout(grid);
  chartScroll_ = new QScrollArea;
  chartScroll_->setWidget(charts);
  chartScroll_->setWidgetResizable(true);
  chartScroll_->setFrameShape(QFrame::NoFrame);
  row->addWidget(chartScroll_, 1);
  pages_->addWidget(page);

  auto* column = new QVBoxLayout(this);
  column->setContentsMargins(0, 0, 0, 0);
  column->addWidget(pages_);
  applyTheme();

  redrawTimer_ = new QTimer(this);
  redrawTimer_->setSingleShot(true);
  redrawTimer_->setInterval(kRedrawDelayMs);
  connect(redrawTimer_, &QTimer::timeout, this, &NodeDetailPane::redraw);
  stepTimer_ = new QTimer(this);
  stepTimer_->setSingleShot(true);
  stepTimer_->setInterval(0);
  connect(stepTimer_, &QTimer::timeout, this, &NodeDetailPane::drawStep);
  // Charts scrolled into view draw what they missed.
  auto drawShown = [this] {
    if (!nodeId_.isEmpty() && !stepTimer_->isActive()) stepTimer_->start();
  };
  connect(chartScroll_->verticalScrollBar(), &QScrollBar::valueChanged, this, drawShown);
  connect(chartScroll_->horizontalScrollBar(), &QScrollBar::valueChanged, this, drawShown);
  connect(chartScroll_->verticalScrollBar(), &QScrollBar::rangeChanged, this, drawShown);
  auto markDirty = [this] {
    dirty_ = true;
    if (!nodeId_.isEmpty() && !redrawTimer_->isActive()) redrawTimer_->start();
  };
  connect(&controller_, &Controller::telemetryReceived, this,
          [this, markDirty](const QString& nodeId, const v1::NodeTelemetry& telemetry) {
            onTelemetry(nodeId, telemetry);
            if (nodeId == nodeId_) markDirty();
          });
  connect(&controller_, &Controller::nodesChanged, this, markDirty);
}

NodeDetailPane::Chart NodeDetailPane::makeChart(const QString& title, const QString& yTitle) {
  Chart chart;
  chart.chart = new QChart;
  chart.chart->setTitle(title);
  chart.chart->setMargins(QMargins(2, 2, 2, 2));
  chart.chart->legend()->setAlignment(Qt::AlignBottom);
  // Axis labels in the default locale ("0,5" in German); the label formats below only choose
  // the precision then.
  chart.chart->setLocalizeNumbers(true);
  chart.x = new QValueAxis;
  chart.x->setRange(-kHistorySeconds, 0);
  chart.x->setTickCount(6);
  chart.x->setLabelFormat(QStringLiteral("%d"));
  chart.x->setTitleText(tr("seconds ago"));
  chart.y = new QValueAxis;
  chart.y->setRange(0, chart.top);
  chart.y->setTickType(QValueAxis::TicksDynamic);
  chart.y->setTickAnchor(0);
  chart.y->setTickInterval(chart.step);
  chart.y->setLabelFormat(QStringLiteral("%.4g"));
  chart.y->setTitleText(yTitle);
  chart.chart->addAxis(chart.x, Qt::AlignBottom);
  chart.chart->addAxis(chart.y, Qt::AlignLeft);
  chart.view = new QChartView(chart.chart);
  chart.view->setRenderHint(QPainter::Antialiasing);
  chart.view->setMinimumHeight(kChartMinHeight);
  chart.view->setMinimumWidth(220);
  return chart;
}

void NodeDetailPane::setLines(Chart& chart, const QStringList& names, int perGpu) {
  if (chart.lines.size() == names.size()) {
    for (int i = 0; i < names.size(); ++i) {
      if (chart.lines[i]->name() != names[i]) chart.lines[i]->setName(names[i]);
    }
    return;
  }
  while (chart.lines.size() > names.size()) {
    QLineSeries* line = chart.lines.takeLast();
    chart.chart->removeSeries(line);
    delete line;
  }
  while (chart.lines.size() < names.size()) {
    auto* line = new QLineSeries;
    chart.chart->addSeries(line);
    line->attachAxis(chart.x);
    line->attachAxis(chart.y);
    // The line's name and value under the mouse, as the legend of many GPUs cannot show it.
    connect(line, &QLineSeries::hovered, this, [line](const QPointF& point, bool state) {
      if (!state) {
        QToolTip::hideText();
        return;
      }
      QToolTip::showText(QCursor::pos(),
                         tr("%1: %2 (%3 s ago)")
                             .arg(line->name(), QLocale().toString(point.y(), 'g', 4),
                                  QLocale().toString(-point.x(), 'f', 0)));
    });
    chart.lines.append(line);
  }
  for (int i = 0; i < names.size(); ++i) chart.lines[i]->setName(names[i]);
  applyLinePens(chart, perGpu);
}

void NodeDetailPane::applyLinePens(Chart& chart, int perGpu) {
  if (perGpu == 0) return;
  // Thinner lines where many share a chart, so one GPU does not hide the others.
  const double width = chart.lines.size() > 16 ? 1.0 : 1.5;
  for (int i = 0; i < chart.lines.size(); ++i) {
    QPen pen(gpuColor(i / perGpu), width);
    if (i % perGpu == 1) pen.setStyle(Qt::DashLine);
    chart.lines[i]->setPen(pen);
  }
}

QColor NodeDetailPane::gpuColor(int position) {
  constexpr int kColors = static_cast<int>(std::size(kGpuPalette));
  return QColor::fromRgb(kGpuPalette[((position % kColors) + kColors) % kColors]);
}

void NodeDetailPane::setYRange(Chart& chart, double top, bool roundUp) {
  if (!(top > 0) || !std::isfinite(top)) top = 1.0;
  // A round step (1, 2 or 5 times a power of ten) giving two to five intervals.
  const double raw = top / 5.0;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude;
  for (double factor : {2.0, 5.0, 10.0}) {
    if (step >= raw) break;
    step = factor * magnitude;
  }
  if (roundUp) top = std::ceil(top / step - 1e-9) * step;
  if (top == chart.top && step == chart.step) return;
  // Qt Charts makes a tick item per interval of the range: set the coarser step first, or a
  // range grown from 0..1 to 0..400,000 with the old 0.2 step makes two million of them.
  if (step > chart.step) {
    chart.y->setTickInterval(step);
    chart.y->setRange(0, top);
  } else {
    chart.y->setRange(0, top);
    chart.y->setTickInterval(step);
  }
  chart.top = top;
  chart.step = step;
}

void NodeDetailPane::applyTheme() {
  const bool dark = palette().color(QPalette::Window).lightness() < 128;
  for (Chart* chart : allCharts()) {
    chart->chart->setTheme(dark ? QChart::ChartThemeDark : QChart::ChartThemeLight);
    chart->chart->setBackgroundRoundness(0);
  }
  // The theme set its own colors on every line.
  for (Chart* chart : {&gpuUtil_, &gpuMemory_, &gpuPower_, &gpuTemp_, &gpuClock_}) {
    applyLinePens(*chart, 1);
  }
  applyLinePens(gpuPcie_, 2);
  applyLinePens(gpuNvlink_, 2);
}

QList<NodeDetailPane::Chart*> NodeDetailPane::allCharts() {
  return {&cpu_,      &memory_,  &network_,  &gpuUtil_, &gpuMemory_,
          &gpuPower_, &gpuTemp_, &gpuClock_, &gpuPcie_, &gpuNvlink_};
}

QList<const NodeDetailPane::Chart*> NodeDetailPane::allCharts() const {
  return {&cpu_,      &memory_,  &network_,  &gpuUtil_, &gpuMemory_,
          &gpuPower_, &gpuTemp_, &gpuClock_, &gpuPcie_, &gpuNvlink_};
}

void NodeDetailPane::changeEvent(QEvent* event) {
  if (event->type() == QEvent::PaletteChange) applyTheme();
  QWidget::changeEvent(event);
}

void NodeDetailPane::onTelemetry(const QString& nodeId, const v1::NodeTelemetry& telemetry) {
  std::deque<v1::NodeTelemetry>& samples = history_[nodeId];
  // A clock set back would leave the series unsorted: start over.
  if (!samples.empty() && telemetry.wall_time() < samples.back().wall_time()) samples.clear();
  samples.push_back(telemetry);
  while (samples.front().wall_time() < telemetry.wall_time() - kHistorySeconds) {
    samples.pop_front();
  }
}

void NodeDetailPane::setNodeId(const QString& nodeId) {
  if (nodeId == nodeId_) return;
  nodeId_ = nodeId;
  pages_->setCurrentIndex(nodeId.isEmpty() ? 0 : 1);
  if (!nodeId.isEmpty()) redraw();
}

int NodeDetailPane::sampleCount(const QString& nodeId) const {
  auto it = history_.find(nodeId);
  return it == history_.end() ? 0 : static_cast<int>(it->size());
}

QHash<QString, QList<int>> NodeDetailPane::chartPointCounts() const {
  QHash<QString, QList<int>> counts;
  for (const Chart* chart : allCharts()) {
    QList<int>& lines = counts[chart->chart->title()];
    for (const QLineSeries* line : chart->lines) lines.append(static_cast<int>(line->count()));
  }
  return counts;
}

QStringList NodeDetailPane::gpuReadingTexts() const {
  QStringList texts;
  for (int i = 0; i < gpuReadings_->count(); ++i) texts.append(gpuReadings_->item(i)->text());
  return texts;
}

const v1::NodeInfo* NodeDetailPane::nodeInfo() const {
  return node_ && node_->info ? &*node_->info : nullptr;
}

const std::deque<v1::NodeTelemetry>& NodeDetailPane::samples() const {
  static const std::deque<v1::NodeTelemetry> kNone;
  auto it = history_.constFind(nodeId_);
  return it == history_.constEnd() ? kNone : *it;
}

void NodeDetailPane::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  if (!nodeId_.isEmpty() && !stepTimer_->isActive()) stepTimer_->start();
}

void NodeDetailPane::redraw() {
  redrawTimer_->stop();
  dirty_ = false;
  if (nodeId_.isEmpty()) return;
  node_ = controller_.node(nodeId_);
  infoStale_ = readingsStale_ = legendStale_ = true;
  for (Chart* chart : allCharts()) chart->stale = true;
  if (!stepTimer_->isActive()) stepTimer_->start();
}

bool NodeDetailPane::isOnScreen(const Chart& chart) const {
  if (!chart.view->isVisible()) return false;  // hidden itself, or the pane or its window
  const QWidget* viewport = chartScroll_->viewport();
  const QRect inViewport(chart.view->mapTo(viewport, QPoint(0, 0)), chart.view->size());
  return viewport->rect().intersects(inViewport);
}

void NodeDetailPane::drawStep() {
  if (nodeId_.isEmpty() || !isVisible()) return;  // showEvent() goes on
  // The title and inventory, the GPU readings, the GPU legend: a step each.
  if (infoStale_) {
    infoStale_ = false;
    updateInfo();
    stepTimer_->start();
    return;
  }
  if (readingsStale_) {
    readingsStale_ = false;
    updateGpuReadings();
    stepTimer_->start();
    return;
  }
  if (legendStale_) {
    legendStale_ = false;
    updateGpuCharts();
    stepTimer_->start();
    return;
  }
  for (Chart* chart : allCharts()) {
    if (chart->view->isVisibleTo(this) != chart->wanted) {
      chart->view->setVisible(chart->wanted);
      stepTimer_->start();
      return;
    }
  }
  // Round robin, so that redraws coming faster than a loaded machine draws still reach every
  // chart.
  const QList<Chart*> charts = allCharts();
  for (int i = 0; i < charts.size(); ++i) {
    const int at = (nextChart_ + i) % static_cast<int>(charts.size());
    Chart* chart = charts[at];
    if (chart->stale && isOnScreen(*chart)) {
      drawChart(*chart);
      chart->stale = false;
      nextChart_ = at + 1;
      stepTimer_->start();  // the next chart after the events queued meanwhile
      return;
    }
  }
}

void NodeDetailPane::updateGpuCharts() {
  const QList<uint32_t> gpus = gpuIndices(nodeInfo(), samples());
  // NVLink only where a GPU of the node reports it (PCIe cards have none).
  bool nvlink = false;
  for (const v1::NodeTelemetry& sample : samples()) {
    for (const v1::GpuTelemetry& gpu : sample.gpus()) {
      nvlink = nvlink || gpu.has_nvlink_rx_mbps() || gpu.has_nvlink_tx_mbps();
    }
    if (nvlink) break;
  }
  // Shown or hidden by drawStep(), one per step: showing a chart view first costs its polish and
  // layout.
  for (Chart* chart : {&gpuUtil_, &gpuMemory_, &gpuPower_, &gpuTemp_, &gpuClock_, &gpuPcie_}) {
    chart->wanted = !gpus.isEmpty();
  }
  gpuNvlink_.wanted = !gpus.isEmpty() && nvlink;

  QString html;
  if (!gpus.isEmpty()) {
    QStringList entries;
    for (int i = 0; i < gpus.size(); ++i) {
      entries.append(QStringLiteral("<span style='color:%1'>&#9632;</span>&nbsp;%2")
                         .arg(gpuColor(i).name(), tr("GPU %1").arg(gpus[i]).toHtmlEscaped()));
    }
    html = entries.join(QStringLiteral(" &nbsp; "));
    html += QStringLiteral("<br><span style='color:gray'>%1</span>")
                .arg(tr("PCIe and NVLink: solid receive, dashed transmit. Point at a line for "
                        "its GPU and value.")
                         .toHtmlEscaped());
  }
  if (html != gpuLegendHtml_) {
    gpuLegendHtml_ = html;
    gpuLegend_->setText(html);
  }
  gpuLegend_->setVisible(!gpus.isEmpty());
}

void NodeDetailPane::drawChart(Chart& chart) {
  const std::deque<v1::NodeTelemetry>& samples = this->samples();
  const v1::NodeInfo* info = nodeInfo();
  const double latest = samples.empty() ? 0.0 : samples.back().wall_time();

  // One line per value: x = seconds before the latest sample (the node's clock, so a skewed
  // clock does not shift the lines), y = the value; an absent value leaves a gap in the points.
  auto points = [&](auto value) {
    QList<QPointF> line;
    line.reserve(static_cast<qsizetype>(samples.size()));
    for (const v1::NodeTelemetry& sample : samples) {
      if (const std::optional<double> y = value(sample)) {
        line.append(QPointF(sample.wall_time() - latest, *y));
      }
    }
    return line;
  };
  auto maxOf = [](const QList<QPointF>& line) {
    double max = 0;
    for (const QPointF& point : line) max = std::max(max, point.y());
    return max;
  };

  if (&chart == &cpu_) {
    cpu_.lines[0]->replace(points([](const v1::NodeTelemetry& s) {
      return s.has_cpu_pct() ? std::optional<double>(s.cpu_pct()) : std::nullopt;
    }));
    return;
  }
  if (&chart == &memory_) {
    const QList<QPointF> memory = points([](const v1::NodeTelemetry& s) {
      return s.has_mem_used_mib() ? std::optional<double>(s.mem_used_mib() / kMiBPerGiB)
                                  : std::nullopt;
    });
    memory_.lines[0]->replace(memory);
    const double memoryTotal =
        info && info->memory_total_mib() > 0 ? info->memory_total_mib() / kMiBPerGiB : 0.0;
    if (memoryTotal > 0) {
      setYRange(memory_, memoryTotal, false);  // the node's size, exact
    } else {
      setYRange(memory_, axisTop(maxOf(memory), 1.0), true);
    }
    return;
  }
  if (&chart == &network_) {
    const QList<QPointF> rx = points([](const v1::NodeTelemetry& s) {
      return s.has_net_rx_mbps() ? std::optional<double>(s.net_rx_mbps()) : std::nullopt;
    });
    const QList<QPointF> tx = points([](const v1::NodeTelemetry& s) {
      return s.has_net_tx_mbps() ? std::optional<double>(s.net_tx_mbps()) : std::nullopt;
    });
    network_.lines[0]->replace(rx);
    network_.lines[1]->replace(tx);
    setYRange(network_, axisTop(std::max(maxOf(rx), maxOf(tx)), 1.0), true);
    return;
  }

  const QList<uint32_t> gpus = gpuIndices(info, samples);
  // One line per GPU of `field`; returns the largest value drawn.
  auto drawPerGpu = [&](GpuField field, double scale) {
    QStringList names;
    for (uint32_t index : gpus) names.append(tr("GPU %1").arg(index));
    setLines(chart, names, 1);
    double max = 0;
    for (int i = 0; i < gpus.size(); ++i) {
      const uint32_t index = gpus[i];
      const QList<QPointF> line = points([index, i, field, scale](const v1::NodeTelemetry& s) {
        return gpuValue(s, index, i, field, scale);
      });
      max = std::max(max, maxOf(line));
      chart.lines[i]->replace(line);
    }
    return max;
  };
  // Receive and transmit lines per GPU; returns the largest value.
  auto drawDirections = [&](GpuField rx, GpuField tx) {
    QStringList names;
    for (uint32_t index : gpus) {
      names.append(tr("GPU %1 rx").arg(index));
      names.append(tr("GPU %1 tx").arg(index));
    }
    setLines(chart, names, 2);
    double max = 0;
    for (int i = 0; i < gpus.size(); ++i) {
      const uint32_t index = gpus[i];
      for (int direction = 0; direction < 2; ++direction) {
        const GpuField field = direction == 0 ? rx : tx;
        const QList<QPointF> line = points(
            [index, i, field](const v1::NodeTelemetry& s) { return gpuValue(s, index, i, field); });
        max = std::max(max, maxOf(line));
        chart.lines[2 * i + direction]->replace(line);
      }
    }
    return max;
  };

  if (&chart == &gpuUtil_) {
    drawPerGpu({&v1::GpuTelemetry::has_util_pct, &v1::GpuTelemetry::util_pct}, 1.0);
    return;
  }
  if (&chart == &gpuMemory_) {
    const double gpuMemoryMax = drawPerGpu(
        {&v1::GpuTelemetry::has_mem_used_mib, &v1::GpuTelemetry::mem_used_mib}, 1.0 / kMiBPerGiB);
    double gpuMemoryTotal = 0;
    if (info) {
      for (const v1::GpuInfo& gpu : info->gpus()) {
        gpuMemoryTotal = std::max(gpuMemoryTotal, gpu.memory_total_mib() / kMiBPerGiB);
      }
    }
    if (!samples.empty()) {
      for (const v1::GpuTelemetry& gpu : samples.back().gpus()) {
        if (gpu.has_mem_total_mib()) {
          gpuMemoryTotal = std::max(gpuMemoryTotal, gpu.mem_total_mib() / kMiBPerGiB);
        }
      }
    }
    if (gpuMemoryTotal > 0) {
      setYRange(gpuMemory_, gpuMemoryTotal, false);  // the largest GPU's memory, exact
    } else {
      setYRange(gpuMemory_, axisTop(gpuMemoryMax, 1.0), true);
    }
    return;
  }
  // The per-GPU charts whose y axis follows the data: the axis' top raised to a multiple of
  // `step`, so it moves only when a value crosses it.
  struct PerGpuChart {
    Chart* chart;
    GpuField field;
    double step;
  };
  for (const PerGpuChart& perGpu :
       {PerGpuChart{&gpuPower_, {&v1::GpuTelemetry::has_power_w, &v1::GpuTelemetry::power_w}, 10.0},
        PerGpuChart{&gpuTemp_, {&v1::GpuTelemetry::has_temp_c, &v1::GpuTelemetry::temp_c}, 10.0},
        PerGpuChart{&gpuClock_,
                    {&v1::GpuTelemetry::has_sm_clock_mhz, &v1::GpuTelemetry::sm_clock_mhz},
                    100.0}}) {
    if (&chart == perGpu.chart) {
      setYRange(chart, axisTop(drawPerGpu(perGpu.field, 1.0), perGpu.step), true);
      return;
    }
  }
  if (&chart == &gpuPcie_) {
    const double max =
        drawDirections({&v1::GpuTelemetry::has_pcie_rx_mbps, &v1::GpuTelemetry::pcie_rx_mbps},
                       {&v1::GpuTelemetry::has_pcie_tx_mbps, &v1::GpuTelemetry::pcie_tx_mbps});
    setYRange(gpuPcie_, axisTop(max, 1.0), true);
  } else if (&chart == &gpuNvlink_) {
    const double max =
        drawDirections({&v1::GpuTelemetry::has_nvlink_rx_mbps, &v1::GpuTelemetry::nvlink_rx_mbps},
                       {&v1::GpuTelemetry::has_nvlink_tx_mbps, &v1::GpuTelemetry::nvlink_tx_mbps});
    setYRange(gpuNvlink_, axisTop(max, 1.0), true);
  }
}

QStringList NodeDetailPane::gpuReadingLines(const v1::GpuTelemetry& gpu) {
  const QString na = NodeTableModel::tr("N/A");
  auto number = [&na](bool has, double value, int decimals) {
    return has ? QLocale().toString(value, 'f', decimals) : na;
  };
  QStringList lines;
  lines.append(tr("utilization %1 %").arg(number(gpu.has_util_pct(), gpu.util_pct(), 0)));
  lines.append(tr("memory %1 / %2 GiB")
                   .arg(number(gpu.has_mem_used_mib(), gpu.mem_used_mib() / kMiBPerGiB, 1),
                        number(gpu.has_mem_total_mib(), gpu.mem_total_mib() / kMiBPerGiB, 1)));
  lines.append(tr("power %1 W").arg(number(gpu.has_power_w(), gpu.power_w(), 1)));
  lines.append(tr("temperature %1 °C").arg(number(gpu.has_temp_c(), gpu.temp_c(), 0)));
  lines.append(tr("SM clock %1 MHz").arg(number(gpu.has_sm_clock_mhz(), gpu.sm_clock_mhz(), 0)));
  lines.append(tr("PCIe rx %1, tx %2 MB/s")
                   .arg(number(gpu.has_pcie_rx_mbps(), gpu.pcie_rx_mbps(), 1),
                        number(gpu.has_pcie_tx_mbps(), gpu.pcie_tx_mbps(), 1)));
  lines.append(tr("NVLink rx %1, tx %2 MB/s")
                   .arg(number(gpu.has_nvlink_rx_mbps(), gpu.nvlink_rx_mbps(), 1),
                        number(gpu.has_nvlink_tx_mbps(), gpu.nvlink_tx_mbps(), 1)));
  return lines;
}

void NodeDetailPane::updateGpuReadings() {
  const std::deque<v1::NodeTelemetry>& samples = this->samples();
  const int count = samples.empty() ? 0 : samples.back().gpus_size();
  QStringList texts;
  for (int i = 0; i < count; ++i) {
    const v1::GpuTelemetry& gpu = samples.back().gpus(i);
    texts.append((QStringList{tr("GPU %1 now").arg(gpu.index())} + gpuReadingLines(gpu))
                     .join(QLatin1Char('\n')));
  }
  if (gpuReadings_->count() != count) {
    // All items at once: one insertion for the view to lay out, not one per GPU.
    gpuReadings_->clear();
    gpuReadings_->addItems(texts);
  } else {
    for (int i = 0; i < count; ++i) {
      QListWidgetItem* item = gpuReadings_->item(i);
      if (item->text() != texts[i]) item->setText(texts[i]);
    }
  }
  gpuReadingsTitle_->setVisible(count > 0);
  gpuReadings_->setVisible(count > 0);
}

void NodeDetailPane::updateInfo() {
  const std::optional<NodeView>& node = node_;
  if (!node) {
    title_->setText(tr("Node %1 is no longer listed.").arg(nodeId_));
    info_->clear();
    return;
  }
  title_->setText(tr("%1 — %2").arg(node->record.name, NodeTableModel::stateText(*node)));
  if (!node->info) {
    info_->setText(tr("No inventory yet: the node has not answered."));
    return;
  }
  const v1::NodeInfo& info = *node->info;
  auto text = [](const std::string& value) {
    return value.empty() ? NodeTableModel::tr("N/A")
                         : QString::fromStdString(value).toHtmlEscaped();
  };
  QString html = QStringLiteral("<table cellspacing='2'>");
  auto addRow = [&html](const QString& label, const QString& value) {
    html += QStringLiteral("<tr><td valign='top'><b>%1</b>&nbsp;</td><td>%2</td></tr>")
                .arg(label.toHtmlEscaped(), value);
  };
  addRow(tr("Host name"), text(info.hostname()));
  addRow(tr("Address"), NodeTableModel::addressText(*node).toHtmlEscaped());
  addRow(tr("OS"), text(info.os()));
  addRow(tr("CPU"), text(info.cpu_model()));
  addRow(tr("Cores"), QLocale().toString(info.cpu_cores()));
  addRow(tr("Memory"), info.memory_total_mib() > 0
                           ? tr("%1 GiB").arg(gib(static_cast<double>(info.memory_total_mib())))
                           : NodeTableModel::tr("N/A"));
  // Consecutive GPUs alike share a line ("0–7: NVIDIA H100 ..."): 64 lines of rich text cost
  // the label's layout 50 to 90 ms each time the column changed size.
  QStringList gpus;
  QString groupText;
  int groupFirst = -1;
  int groupLast = -1;
  auto flush = [&] {
    if (groupFirst < 0) return;
    const QString indices = groupFirst == groupLast
                                ? QLocale().toString(groupFirst)
                                : QStringLiteral("%1–%2").arg(groupFirst).arg(groupLast);
    gpus.append(groupText.arg(indices));
  };
  for (const v1::GpuInfo& gpu : info.gpus()) {
    const QString described = tr("%1: %2, %3 GiB, driver %4, CUDA %5")
                                  .arg(QStringLiteral("%1"), text(gpu.name()),
                                       gib(static_cast<double>(gpu.memory_total_mib())),
                                       text(gpu.driver_version()), text(gpu.cuda_version()));
    const int index = static_cast<int>(gpu.index());
    if (described == groupText && index == groupLast + 1) {
      groupLast = index;
      continue;
    }
    flush();
    groupText = described;
    groupFirst = groupLast = index;
  }
  flush();
  addRow(tr("GPUs"), gpus.isEmpty() ? tr("none") : gpus.join(QStringLiteral("<br>")));
  addRow(tr("Slots"), NodeTableModel::slotsText(*node).toHtmlEscaped());
  QStringList labels;
  for (const std::string& label : info.labels()) labels.append(text(label));
  addRow(tr("Labels"), labels.isEmpty() ? tr("none") : labels.join(QStringLiteral(", ")));
  if (info.engine() == "slurm") {
    // A Slurm login node (docs/slurm.md): its runs are Slurm jobs; the cluster as sinfo says.
    addRow(tr("Engine"), tr("Slurm (runs are Slurm jobs)"));
    QStringList partitions;
    for (const v1::SlurmPartition& partition : info.slurm_partitions()) {
      QMap<QString, int> states;  // "idle" -> nodes
      uint64_t gpuCount = 0;
      for (const v1::SlurmNode& slurmNode : partition.nodes()) {
        ++states[QString::fromStdString(slurmNode.state())];
        gpuCount += slurmNode.gpus();
      }
      QStringList counts;
      for (auto it = states.begin(); it != states.end(); ++it) {
        counts << tr("%L1 %2").arg(it.value()).arg(it.key().toHtmlEscaped());
      }
      QString line = tr("<b>%1</b>%2: %3, %L4 nodes (%5), %L6 GPUs, time limit %7")
                         .arg(text(partition.name()),
                              partition.is_default() ? tr(" (default)") : QString(),
                              text(partition.availability()))
                         .arg(partition.nodes_size())
                         .arg(counts.join(QStringLiteral(", ")))
                         .arg(gpuCount)
                         .arg(text(partition.time_limit()));
      partitions << line;
    }
    addRow(tr("Partitions"), partitions.isEmpty() ? tr("not known yet (sinfo)")
                                                  : partitions.join(QStringLiteral("<br>")));
  }
  addRow(tr("Agent"), text(info.agent_version()));
  addRow(tr("Node id"), text(info.node_id()));
  html += QStringLiteral("</table>");
  if (html != info_->text()) info_->setText(html);
}

}  // namespace ringside::gui
