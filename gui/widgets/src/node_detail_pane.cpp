#include "ringside/gui/widgets/node_detail_pane.h"

#include <QChart>
#include <QChartView>
#include <QEvent>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineSeries>
#include <QLocale>
#include <QScrollArea>
#include <QStackedWidget>
#include <QTimer>
#include <QVBoxLayout>
#include <QValueAxis>
#include <algorithm>
#include <cmath>
#include <optional>

#include "ringside/gui/controller.h"
#include "ringside/gui/widgets/node_table_model.h"

namespace ringside::gui {

namespace {

constexpr int kRedrawDelayMs = 500;  // charts redraw at most twice a second
constexpr double kMiBPerGiB = 1024.0;
constexpr int kChartMinHeight = 170;

QString gib(double mib) { return QLocale().toString(mib / kMiBPerGiB, 'f', 1); }

// The GPU indices to draw: the inventory's, else those in the latest sample.
QList<uint32_t> gpuIndices(const std::optional<v1::NodeInfo>& info,
                           const std::deque<v1::NodeTelemetry>& samples) {
  QList<uint32_t> indices;
  if (info) {
    for (const v1::GpuInfo& gpu : info->gpus()) indices.append(gpu.index());
  } else if (!samples.empty()) {
    for (const v1::GpuTelemetry& gpu : samples.back().gpus()) indices.append(gpu.index());
  }
  return indices;
}

const v1::GpuTelemetry* gpuSample(const v1::NodeTelemetry& sample, uint32_t index) {
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

std::optional<double> gpuValue(const v1::NodeTelemetry& sample, uint32_t index, GpuField field,
                               double scale = 1.0) {
  const v1::GpuTelemetry* gpu = gpuSample(sample, index);
  if (gpu == nullptr || !(gpu->*field.has)()) return std::nullopt;
  return (gpu->*field.get)() * scale;
}

// The top of a y axis for values up to `max`: 15 % headroom, at least `floor`.
double axisTop(double max, double floor) { return std::max(floor, max * 1.15); }

// Sets `axis` to 0..top (top kept exact, e.g. a node's memory size) with ticks at a round step
// (1, 2 or 5 times a power of ten) giving two to five intervals.
void setRoundTicks(QValueAxis* axis, double top) {
  const double raw = top / 5.0;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude;
  for (double factor : {2.0, 5.0, 10.0}) {
    if (step >= raw) break;
    step = factor * magnitude;
  }
  axis->setRange(0, top);
  axis->setTickType(QValueAxis::TicksDynamic);
  axis->setTickAnchor(0);
  axis->setTickInterval(step);
}

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
  cpu_.y->setRange(0, 100);
  gpuUtil_.y->setRange(0, 100);
  auto* grid = new QGridLayout;
  grid->setSpacing(4);
  grid->addWidget(cpu_.view, 0, 0);
  grid->addWidget(memory_.view, 0, 1);
  grid->addWidget(network_.view, 0, 2);
  grid->addWidget(gpuUtil_.view, 1, 0);
  grid->addWidget(gpuMemory_.view, 1, 1);
  grid->addWidget(gpuPower_.view, 1, 2);
  grid->addWidget(gpuTemp_.view, 2, 0);
  grid->addWidget(gpuClock_.view, 2, 1);
  grid->addWidget(gpuPcie_.view, 2, 2);
  grid->addWidget(gpuNvlink_.view, 3, 0);
  // Nine charts do not fit a short window: they scroll.
  auto* charts = new QWidget;
  charts->setLayout(grid);
  auto* chartScroll = new QScrollArea;
  chartScroll->setWidget(charts);
  chartScroll->setWidgetResizable(true);
  chartScroll->setFrameShape(QFrame::NoFrame);
  row->addWidget(chartScroll, 1);
  pages_->addWidget(page);

  auto* column = new QVBoxLayout(this);
  column->setContentsMargins(0, 0, 0, 0);
  column->addWidget(pages_);
  applyTheme();

  redrawTimer_ = new QTimer(this);
  redrawTimer_->setSingleShot(true);
  redrawTimer_->setInterval(kRedrawDelayMs);
  connect(redrawTimer_, &QTimer::timeout, this, &NodeDetailPane::redraw);
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
  chart.y->setRange(0, 1);
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

void NodeDetailPane::setLines(Chart& chart, const QStringList& names) {
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
    chart.lines.append(line);
  }
  for (int i = 0; i < names.size(); ++i) chart.lines[i]->setName(names[i]);
}

void NodeDetailPane::applyTheme() {
  const bool dark = palette().color(QPalette::Window).lightness() < 128;
  for (Chart* chart : allCharts()) {
    chart->chart->setTheme(dark ? QChart::ChartThemeDark : QChart::ChartThemeLight);
    chart->chart->setBackgroundRoundness(0);
  }
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

void NodeDetailPane::redraw() {
  redrawTimer_->stop();
  dirty_ = false;
  if (nodeId_.isEmpty()) return;
  updateInfo();
  const std::optional<NodeView> node = controller_.node(nodeId_);
  static const std::deque<v1::NodeTelemetry> kNone;
  auto it = history_.constFind(nodeId_);
  const std::deque<v1::NodeTelemetry>& samples = it == history_.constEnd() ? kNone : *it;
  const std::optional<v1::NodeInfo> info = node ? node->info : std::nullopt;
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

  cpu_.lines[0]->replace(points([](const v1::NodeTelemetry& s) {
    return s.has_cpu_pct() ? std::optional<double>(s.cpu_pct()) : std::nullopt;
  }));

  const QList<QPointF> memory = points([](const v1::NodeTelemetry& s) {
    return s.has_mem_used_mib() ? std::optional<double>(s.mem_used_mib() / kMiBPerGiB)
                                : std::nullopt;
  });
  memory_.lines[0]->replace(memory);
  const double memoryTotal =
      info && info->memory_total_mib() > 0 ? info->memory_total_mib() / kMiBPerGiB : 0.0;
  setRoundTicks(memory_.y, memoryTotal > 0 ? memoryTotal : axisTop(maxOf(memory), 1.0));

  const QList<QPointF> rx = points([](const v1::NodeTelemetry& s) {
    return s.has_net_rx_mbps() ? std::optional<double>(s.net_rx_mbps()) : std::nullopt;
  });
  const QList<QPointF> tx = points([](const v1::NodeTelemetry& s) {
    return s.has_net_tx_mbps() ? std::optional<double>(s.net_tx_mbps()) : std::nullopt;
  });
  network_.lines[0]->replace(rx);
  network_.lines[1]->replace(tx);
  setRoundTicks(network_.y, axisTop(std::max(maxOf(rx), maxOf(tx)), 1.0));

  const QList<uint32_t> gpus = gpuIndices(info, samples);
  QStringList names;
  QStringList directions;  // two lines per GPU: receive, transmit
  for (uint32_t index : gpus) {
    names.append(tr("GPU %1").arg(index));
    directions.append(tr("GPU %1 rx").arg(index));
    directions.append(tr("GPU %1 tx").arg(index));
  }
  // One line per GPU of `field`; returns the largest value drawn.
  auto drawPerGpu = [&](Chart& chart, GpuField field, double scale) {
    setLines(chart, names);
    double max = 0;
    for (int i = 0; i < gpus.size(); ++i) {
      const uint32_t index = gpus[i];
      const QList<QPointF> line = points([index, field, scale](const v1::NodeTelemetry& s) {
        return gpuValue(s, index, field, scale);
      });
      max = std::max(max, maxOf(line));
      chart.lines[i]->replace(line);
    }
    return max;
  };
  // Receive and transmit lines per GPU; returns the largest value and whether any was read.
  auto drawDirections = [&](Chart& chart, GpuField rx, GpuField tx) {
    setLines(chart, directions);
    double max = 0;
    bool any = false;
    for (int i = 0; i < gpus.size(); ++i) {
      const uint32_t index = gpus[i];
      for (int direction = 0; direction < 2; ++direction) {
        const GpuField field = direction == 0 ? rx : tx;
        const QList<QPointF> line = points(
            [index, field](const v1::NodeTelemetry& s) { return gpuValue(s, index, field); });
        any = any || !line.isEmpty();
        max = std::max(max, maxOf(line));
        chart.lines[2 * i + direction]->replace(line);
      }
    }
    return std::pair<double, bool>(max, any);
  };

  drawPerGpu(gpuUtil_, {&v1::GpuTelemetry::has_util_pct, &v1::GpuTelemetry::util_pct}, 1.0);
  const double gpuMemoryMax =
      drawPerGpu(gpuMemory_, {&v1::GpuTelemetry::has_mem_used_mib, &v1::GpuTelemetry::mem_used_mib},
                 1.0 / kMiBPerGiB);
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
  setRoundTicks(gpuMemory_.y, gpuMemoryTotal > 0 ? gpuMemoryTotal : axisTop(gpuMemoryMax, 1.0));
  const double powerMax =
      drawPerGpu(gpuPower_, {&v1::GpuTelemetry::has_power_w, &v1::GpuTelemetry::power_w}, 1.0);
  setRoundTicks(gpuPower_.y, axisTop(powerMax, 10.0));
  const double tempMax =
      drawPerGpu(gpuTemp_, {&v1::GpuTelemetry::has_temp_c, &v1::GpuTelemetry::temp_c}, 1.0);
  setRoundTicks(gpuTemp_.y, axisTop(tempMax, 10.0));
  const double clockMax = drawPerGpu(
      gpuClock_, {&v1::GpuTelemetry::has_sm_clock_mhz, &v1::GpuTelemetry::sm_clock_mhz}, 1.0);
  setRoundTicks(gpuClock_.y, axisTop(clockMax, 100.0));
  const auto pcie = drawDirections(
      gpuPcie_, {&v1::GpuTelemetry::has_pcie_rx_mbps, &v1::GpuTelemetry::pcie_rx_mbps},
      {&v1::GpuTelemetry::has_pcie_tx_mbps, &v1::GpuTelemetry::pcie_tx_mbps});
  setRoundTicks(gpuPcie_.y, axisTop(pcie.first, 1.0));
  const auto nvlink = drawDirections(
      gpuNvlink_, {&v1::GpuTelemetry::has_nvlink_rx_mbps, &v1::GpuTelemetry::nvlink_rx_mbps},
      {&v1::GpuTelemetry::has_nvlink_tx_mbps, &v1::GpuTelemetry::nvlink_tx_mbps});
  setRoundTicks(gpuNvlink_.y, axisTop(nvlink.first, 1.0));

  for (Chart* chart : {&gpuUtil_, &gpuMemory_, &gpuPower_, &gpuTemp_, &gpuClock_, &gpuPcie_}) {
    chart->view->setVisible(!gpus.isEmpty());
  }
  // NVLink only where a GPU of the node reports it (PCIe cards have none).
  gpuNvlink_.view->setVisible(!gpus.isEmpty() && nvlink.second);
}

QString NodeDetailPane::gpuReadingHtml(const v1::GpuTelemetry& gpu) {
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
  for (QString& line : lines) line = line.toHtmlEscaped();
  return lines.join(QStringLiteral("<br>"));
}

void NodeDetailPane::updateInfo() {
  const std::optional<NodeView> node = controller_.node(nodeId_);
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
  QStringList gpus;
  for (const v1::GpuInfo& gpu : info.gpus()) {
    gpus.append(tr("%1: %2, %3 GiB, driver %4, CUDA %5")
                    .arg(gpu.index())
                    .arg(text(gpu.name()), gib(static_cast<double>(gpu.memory_total_mib())),
                         text(gpu.driver_version()), text(gpu.cuda_version())));
  }
  addRow(tr("GPUs"), gpus.isEmpty() ? tr("none") : gpus.join(QStringLiteral("<br>")));
  auto latest = history_.constFind(nodeId_);
  if (latest != history_.constEnd() && !latest->empty()) {
    for (const v1::GpuTelemetry& gpu : latest->back().gpus()) {
      addRow(tr("GPU %1 now").arg(gpu.index()), gpuReadingHtml(gpu));
    }
  }
  addRow(tr("Slots"), NodeTableModel::slotsText(*node).toHtmlEscaped());
  QStringList labels;
  for (const std::string& label : info.labels()) labels.append(text(label));
  addRow(tr("Labels"), labels.isEmpty() ? tr("none") : labels.join(QStringLiteral(", ")));
  addRow(tr("Agent"), text(info.agent_version()));
  addRow(tr("Node id"), text(info.node_id()));
  html += QStringLiteral("</table>");
  info_->setText(html);
}

}  // namespace ringside::gui
