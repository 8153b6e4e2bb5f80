#include "ringside/gui/widgets/run_gpu_panel.h"

#include <QGridLayout>
#include <QLocale>
#include <QTimer>

#include <algorithm>
#include <memory>

#include "ringside/gui/controller.h"
#include "ringside/gui/run_placement.h"
#include "ringside/gui/when_ready.h"
#include "ringside/gui/widgets/metric_chart.h"

namespace ringside::gui {

namespace {

constexpr int kRedrawDelayMs = 250;  // telemetry comes once a second per node: coalesce
constexpr int kChartMinimumHeight = 240;

// Tableau 10, as CompareView's runs: one colour per GPU, the same in every chart.
QColor gpuColor(size_t order) {
  static const QRgb kColors[] = {0x4e79a7, 0xf28e2b, 0xe15759, 0x76b7b2, 0x59a14f,
                                 0xedc948, 0xb07aa1, 0xff9da7, 0x9c755f, 0xbab0ac};
  return QColor::fromRgb(kColors[order % (sizeof(kColors) / sizeof(kColors[0]))]);
}

bool isTransmit(GpuField field) {
  return field == GpuField::kPcieTxMBps || field == GpuField::kNvlinkTxMBps;
}

bool isReceive(GpuField field) {
  return field == GpuField::kPcieRxMBps || field == GpuField::kNvlinkRxMBps;
}

}  // namespace

RunGpuPanel::RunGpuPanel(Controller& controller, QString runId, QWidget* parent)
    : QWidget(parent),
      controller_(controller),
      runId_(std::move(runId)),
      redrawTimer_(new QTimer(this)) {
  struct Spec {
    QString title;
    QString unit;
    GpuField rx;
    std::optional<GpuField> tx;
  };
  const QList<Spec> specs = {
      {tr("GPU utilization"), tr("utilization (%)"), GpuField::kUtilPct, std::nullopt},
      {tr("GPU memory"), tr("memory used (MiB)"), GpuField::kMemUsedMiB, std::nullopt},
      {tr("GPU power"), tr("power (W)"), GpuField::kPowerW, std::nullopt},
      {tr("GPU temperature"), tr("temperature (°C)"), GpuField::kTempC, std::nullopt},
      {tr("GPU SM clock"), tr("SM clock (MHz)"), GpuField::kSmClockMHz, std::nullopt},
      {tr("GPU PCIe throughput"), tr("PCIe rx, tx (MB/s)"), GpuField::kPcieRxMBps,
       GpuField::kPcieTxMBps},
      {tr("GPU NVLink throughput (all links)"), tr("NVLink rx, tx (MB/s)"), GpuField::kNvlinkRxMBps,
       GpuField::kNvlinkTxMBps},
  };
  auto* grid = new QGridLayout(this);
  grid->setContentsMargins(0, 0, 0, 0);
  for (const Spec& spec : specs) {
    auto* chart = new MetricChart(spec.title, this);
    chart->setAxisTitles(tr("time since start (s)"), spec.unit);
    chart->setMinimumHeight(kChartMinimumHeight);
    chart->setLegendForSingleSeries(true);  // which GPU, also when only one reports the value
    const int position = static_cast<int>(charts_.size());
    grid->addWidget(chart, position / 2, position % 2);
    charts_.append(Chart{.widget = chart, .rx = spec.rx, .tx = spec.tx});
  }
  updatePlaceholders();
  redrawTimer_->setSingleShot(true);
  redrawTimer_->setInterval(kRedrawDelayMs);
  connect(redrawTimer_, &QTimer::timeout, this, &RunGpuPanel::redraw);
  connect(&controller_, &Controller::telemetryReceived, this, &RunGpuPanel::onTelemetry);
  // Readings fetched from a node's telemetry journal (the GUI was away, or missed some live):
  // read again; once the run ended, the charts show exactly what is stored.
  connect(&controller_, &Controller::runTelemetryStored, this, [this](const QString& runId) {
    if (runId != runId_ || !storedRequested_) return;
    loadStored(run_ && run_->state != v1::RUNNING);
  });
}

RunGpuPanel::~RunGpuPanel() = default;

QList<MetricChart*> RunGpuPanel::charts() const {
  QList<MetricChart*> widgets;
  for (const Chart& chart : charts_) widgets.append(chart.widget);
  return widgets;
}

QStringList RunGpuPanel::exportNames() {
  return {QStringLiteral("gpu-util"),     QStringLiteral("gpu-memory"),
          QStringLiteral("gpu-power"),    QStringLiteral("gpu-temperature"),
          QStringLiteral("gpu-sm-clock"), QStringLiteral("gpu-pcie"),
          QStringLiteral("gpu-nvlink")};
}

MetricChart* RunGpuPanel::utilChart() const { return charts_[0].widget; }
MetricChart* RunGpuPanel::memChart() const { return charts_[1].widget; }
MetricChart* RunGpuPanel::powerChart() const { return charts_[2].widget; }
MetricChart* RunGpuPanel::tempChart() const { return charts_[3].widget; }
MetricChart* RunGpuPanel::smClockChart() const { return charts_[4].widget; }
MetricChart* RunGpuPanel::pcieChart() const { return charts_[5].widget; }
MetricChart* RunGpuPanel::nvlinkChart() const { return charts_[6].widget; }

void RunGpuPanel::setRun(const RunRecord& run) {
  const bool changed = !run_ || run_->placement.size() != run.placement.size() ||
                       run_->startTime != run.startTime || run_->nodeId != run.nodeId ||
                       run_->state != run.state;
  // Once the run ended, the charts show exactly what is stored with it: live readings that came
  // while this tab still saw it starting (not charted) or already stored it as ended (charted,
  // not stored) would otherwise make it differ from the same run reopened from History.
  const bool ended = run_ && run_->state == v1::RUNNING && run.state != v1::RUNNING;
  run_ = run;
  if (!storedRequested_) {
    storedRequested_ = true;
    loadStored(false);
  } else if (ended) {
    loadStored(true);
  }
  if (changed) {
    updatePlaceholders();
    scheduleRedraw();
  }
}

void RunGpuPanel::onTelemetry(const QString& nodeId, const v1::NodeTelemetry& telemetry) {
  // Only while the run runs: what the store keeps with it (ingestTelemetry), so a reopened run
  // shows the same.
  if (!run_ || run_->state != v1::RUNNING) return;
  const QString owner = run_->nodeId.isEmpty() ? controller_.nodeOfRun(runId_) : run_->nodeId;
  QString hostName;
  for (const NodeChoice& node : controller_.nodeChoices()) {
    if (node.nodeId == nodeId) hostName = node.hostName;
  }
  const bool isOwner = nodeId == owner;
  const NodeGpus used = runGpusOnNode(run_->placement, hostName, isOwner);
  const std::optional<int> firstRank = nodeFirstRank(run_->placement, hostName, isOwner);
  if (!used.ofRun || !firstRank) return;
  if (telemetry.gpus_size() == 0) sawNodeWithoutGpus_ = true;
  sawTelemetry_ = true;
  if (series_.addTelemetry(*firstRank, used, telemetry)) scheduleRedraw();
  updatePlaceholders();
}

void RunGpuPanel::loadStored(bool replace) {
  MetricsStore& store = controller_.store();
  const int generation = ++loadGeneration_;
  auto loaded = std::make_shared<RunGpuSeries>();
  auto pending = std::make_shared<int>(1);
  // Every load of this generation answered: take the series (merged with the live readings that
  // came meanwhile, or instead of them).
  auto done = [this, generation, loaded, pending, replace] {
    if (--*pending > 0 || generation != loadGeneration_) return;
    if (replace) {
      series_.replacePoints(*loaded);
    } else {
      series_.merge(*loaded);
    }
    ++storedLoads_;
    updatePlaceholders();
    scheduleRedraw();
  };
  whenReady(
      this, store.metricNames(runId_),
      [this, &store, loaded, pending, done](Result<QStringList> names) {
        for (const QString& name : names.isOk() ? *names : QStringList()) {
          const std::optional<GpuMetric> metric = parseGpuMetricName(name);
          if (!metric) continue;
          ++*pending;
          // The sample's rank is the first rank of the GPU's node (run_gpu_metrics.h).
          whenReady(
              this, store.metricRanks(runId_, name),
              [this, &store, loaded, pending, done, name, metric](Result<std::vector<int>> ranks) {
                for (int rank : ranks.isOk() ? *ranks : std::vector<int>()) {
                  if (rank < 0) continue;
                  ++*pending;
                  const RunGpu gpu{.firstRank = rank, .index = metric->index};
                  const GpuField field = metric->field;
                  whenReady(this, store.series(runId_, name, rank, SeriesX::kWallTime),
                            [loaded, done, gpu, field](Result<std::vector<SeriesPoint>> points) {
                              if (points.isOk()) {
                                loaded->addStored(gpu, field, std::move(points.value()));
                              }
                              done();
                            });
                }
                done();
              });
        }
        done();
      });
}

void RunGpuPanel::scheduleRedraw() {
  if (!redrawTimer_->isActive()) redrawTimer_->start();
}

void RunGpuPanel::redrawNow() {
  redrawTimer_->stop();
  redraw();
}

void RunGpuPanel::redraw() {
  const std::vector<RunGpu> gpus = series_.gpus();
  std::map<std::pair<RunGpu, GpuField>, QString> names;
  for (const RunGpu& gpu : gpus) {
    const QString gpuName = this->gpuName(gpu);
    for (GpuField field : kGpuFields) {
      if (series_.points(gpu, field).empty()) continue;
      names[{gpu, field}] = isReceive(field)    ? tr("%1 rx").arg(gpuName)
                            : isTransmit(field) ? tr("%1 tx").arg(gpuName)
                                                : gpuName;
    }
  }
  const double shift = origin();
  // A new GPU, a new origin or new names (the placement arrived): every series again, so the
  // colours follow the GPUs' order and no series keeps an old name.
  bool all = !drawnOrigin_ || *drawnOrigin_ != shift || gpus != drawnGpus_;
  for (const auto& entry : drawnNames_) {
    auto now = names.find(entry.first);
    if (now == names.end() || now->second != entry.second) all = true;
  }
  if (all) {
    for (const Chart& chart : charts_) chart.widget->clearSeries();
  }
  const std::set<std::pair<RunGpu, GpuField>> changed = series_.takeChanged();
  for (const auto& entry : names) {
    if (!all && !changed.contains(entry.first)) continue;
    const RunGpu gpu = entry.first.first;
    const GpuField field = entry.first.second;
    const size_t order =
        static_cast<size_t>(std::find(gpus.begin(), gpus.end(), gpu) - gpus.begin());
    const QColor color = isTransmit(field) ? gpuColor(order).darker(150) : gpuColor(order);
    std::vector<SeriesPoint> points = series_.points(gpu, field);
    for (SeriesPoint& point : points) point.x -= shift;
    for (const Chart& chart : charts_) {
      if (chart.rx == field || chart.tx == field) {
        chart.widget->setSeries(entry.second, std::move(points), color);
        break;
      }
    }
  }
  drawnNames_ = std::move(names);
  drawnGpus_ = gpus;
  drawnOrigin_ = shift;
  updateMemoryTitle();
}

void RunGpuPanel::updatePlaceholders() {
  QString text;
  if (run_ && runUsesNoGpus(run_->placement)) {
    text = tr("The run uses no GPUs");
  } else if (!series_.empty()) {
    text = tr("N/A: no GPU of the run reports this value");
  } else if (sawNodeWithoutGpus_) {
    text = tr("No GPUs on this node");
  } else if (run_ && storedLoads_ > 0 && run_->state != v1::RUNNING && !sawTelemetry_) {
    text = tr("No GPU telemetry was stored with this run");
  } else {
    text = tr("No telemetry from the run's node yet");
  }
  for (const Chart& chart : charts_) chart.widget->setPlaceholderText(text);
}

void RunGpuPanel::updateMemoryTitle() {
  std::optional<double> low;
  std::optional<double> high;
  for (const RunGpu& gpu : drawnGpus_) {
    const std::optional<double> total = series_.memTotalMiB(gpu);
    if (!total) continue;
    low = std::min(low.value_or(*total), *total);
    high = std::max(high.value_or(*total), *total);
  }
  // The memory size goes under the x axis: the vertical title has no room for it.
  const QLocale locale;
  QString time = tr("time since start (s)");
  if (low && *low == *high) {
    time = tr("time since start (s); memory size %1 MiB").arg(locale.toString(*low, 'f', 0));
  } else if (low) {
    time = tr("time since start (s); memory size %1–%2 MiB")
               .arg(locale.toString(*low, 'f', 0), locale.toString(*high, 'f', 0));
  }
  memChart()->setAxisTitles(time, tr("memory used (MiB)"));
}

QString RunGpuPanel::gpuName(RunGpu gpu) const {
  const bool multiNode = run_ && run_->placement.size() > 1;
  return multiNode ? tr("%1 GPU %2").arg(nodeName(gpu.firstRank)).arg(gpu.index)
                   : tr("GPU %1").arg(gpu.index);
}

QString RunGpuPanel::nodeName(int firstRank) const {
  // The placement's host that runs `firstRank` first, by the name of the node with that host.
  QString host;
  int rank = 0;
  for (const v1::HostSlots& entry : run_->placement) {
    if (rank == firstRank) {
      host = QString::fromStdString(entry.host());
      break;
    }
    rank += static_cast<int>(entry.ranks());
  }
  const QList<NodeChoice> nodes = controller_.nodeChoices();
  for (const NodeChoice& node : nodes) {
    if (!host.isEmpty() && node.hostName.compare(host, Qt::CaseInsensitive) == 0) {
      return node.name.isEmpty() ? host : node.name;
    }
  }
  // The owner runs the first ranks whatever host name the placement gave it.
  if (firstRank == 0) {
    for (const NodeChoice& node : nodes) {
      if (node.nodeId == run_->nodeId && !node.name.isEmpty()) return node.name;
    }
  }
  return host.isEmpty() ? tr("rank %1's node").arg(firstRank) : host;
}

double RunGpuPanel::origin() const {
  if (run_ && run_->startTime > 0) return run_->startTime;
  if (run_ && run_->createdTime > 0) return run_->createdTime;
  return series_.firstX().value_or(0.0);
}

}  // namespace ringside::gui
