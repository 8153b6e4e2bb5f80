#include "ringside/gui/widgets/compare_gpu_chart.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

#include "ringside/gui/export_files.h"
#include "ringside/gui/when_ready.h"
#include "ringside/gui/widgets/metric_chart.h"

namespace ringside::gui {

namespace {

// The run's colour for its first GPU; then alternately darker and lighter shades.
QColor shade(const QColor& color, int gpuOfRun) {
  if (gpuOfRun == 0) return color;
  const int step = 100 + 35 * ((gpuOfRun + 1) / 2);
  return gpuOfRun % 2 == 1 ? color.darker(step) : color.lighter(step);
}

}  // namespace

CompareGpuChart::CompareGpuChart(MetricsStore& store, QWidget* parent)
    : QWidget(parent), store_(store), fieldBox_(new QComboBox(this)) {
  for (GpuField field : kGpuFields) fieldBox_->addItem(fieldLabel(field), static_cast<int>(field));
  fieldBox_->setToolTip(tr("The GPU value stored with each run to compare (docs/metrics.md)"));
  chart_ = new MetricChart(tr("GPUs"), this);
  chart_->setExportName(chartFileBaseName(QStringLiteral("compare"), QStringLiteral("gpu")));
  chart_->setMinimumSize(320, 220);
  chart_->setLegendForSingleSeries(true);  // "<run> GPU <i>", also for a single one
  auto* label = new QLabel(tr("GPU &value:"), this);
  label->setBuddy(fieldBox_);
  auto* row = new QHBoxLayout;
  row->addWidget(label);
  row->addWidget(fieldBox_);
  row->addStretch(1);
  auto* column = new QVBoxLayout(this);
  column->setContentsMargins(0, 0, 0, 0);
  column->addLayout(row);
  column->addWidget(chart_, 1);
  connect(fieldBox_, &QComboBox::currentIndexChanged, this, [this] { load(); });
  setField(GpuField::kUtilPct);
}

CompareGpuChart::~CompareGpuChart() = default;

QString CompareGpuChart::fieldLabel(GpuField field) {
  switch (field) {
    case GpuField::kUtilPct:
      return tr("Utilization");
    case GpuField::kMemUsedMiB:
      return tr("Memory used");
    case GpuField::kPowerW:
      return tr("Power");
    case GpuField::kTempC:
      return tr("Temperature");
    case GpuField::kSmClockMHz:
      return tr("SM clock");
    case GpuField::kPcieRxMBps:
      return tr("PCIe receive");
    case GpuField::kPcieTxMBps:
      return tr("PCIe transmit");
    case GpuField::kNvlinkRxMBps:
      return tr("NVLink receive");
    case GpuField::kNvlinkTxMBps:
      return tr("NVLink transmit");
  }
  return {};
}

QString CompareGpuChart::fieldUnit(GpuField field) {
  switch (field) {
    case GpuField::kUtilPct:
      return tr("utilization (%)");
    case GpuField::kMemUsedMiB:
      return tr("memory used (MiB)");
    case GpuField::kPowerW:
      return tr("power (W)");
    case GpuField::kTempC:
      return tr("temperature (°C)");
    case GpuField::kSmClockMHz:
      return tr("SM clock (MHz)");
    case GpuField::kPcieRxMBps:
      return tr("PCIe rx (MB/s)");
    case GpuField::kPcieTxMBps:
      return tr("PCIe tx (MB/s)");
    case GpuField::kNvlinkRxMBps:
      return tr("NVLink rx, all links (MB/s)");
    case GpuField::kNvlinkTxMBps:
      return tr("NVLink tx, all links (MB/s)");
  }
  return {};
}

GpuField CompareGpuChart::field() const {
  return static_cast<GpuField>(fieldBox_->currentData().toInt());
}

void CompareGpuChart::setField(GpuField field) {
  const int index = fieldBox_->findData(static_cast<int>(field));
  if (index != fieldBox_->currentIndex()) {
    fieldBox_->setCurrentIndex(index);  // loads
  } else {
    load();
  }
}

void CompareGpuChart::setRuns(QList<Run> runs) {
  runs_ = std::move(runs);
  load();
}

void CompareGpuChart::load() {
  const int generation = ++generation_;
  const GpuField wanted = field();
  chart_->setAxisTitles(tr("time since start (s)"), fieldUnit(wanted));
  data_.clear();
  chart_->setPlaceholderText(tr("Loading…"));
  pending_ = 1;
  for (int run = 0; run < runs_.size(); ++run) {
    ++pending_;
    const QString runId = runs_[run].runId;
    whenReady(
        this, store_.metricNames(runId),
        [this, generation, wanted, run, runId](Result<QStringList> names) {
          if (generation != generation_) return;
          if (names.isOk()) {
            for (const QString& name : *names) {
              const std::optional<GpuMetric> metric = parseGpuMetricName(name);
              if (!metric || metric->field != wanted) continue;
              ++pending_;
              const uint32_t index = metric->index;
              whenReady(
                  this, store_.metricRanks(runId, name),
                  [this, generation, run, runId, name, index](Result<std::vector<int>> ranks) {
                    if (generation != generation_) return;
                    for (int rank : ranks.isOk() ? *ranks : std::vector<int>{}) {
                      if (rank < 0) continue;
                      ++pending_;
                      const Key key{.run = run, .firstRank = rank, .index = index};
                      whenReady(this, store_.series(runId, name, rank, SeriesX::kWallTime),
                                [this, generation, key](Result<std::vector<SeriesPoint>> points) {
                                  if (generation != generation_) return;
                                  if (points.isOk()) data_[key] = std::move(points.value());
                                  done(generation);
                                });
                    }
                    done(generation);
                  });
            }
          }
          done(generation);
        });
  }
  done(generation);
}

void CompareGpuChart::done(int generation) {
  if (generation != generation_ || --pending_ > 0) return;
  apply();
  emit loadFinished();
}

void CompareGpuChart::apply() {
  chart_->clearSeries();
  std::map<int, int> gpusOfRun;
  for (auto& entry : data_) {
    const Key& key = entry.first;
    std::vector<SeriesPoint> points = std::move(entry.second);
    std::erase_if(points, [](const SeriesPoint& point) { return std::isnan(point.x); });
    std::sort(points.begin(), points.end(),
              [](const SeriesPoint& a, const SeriesPoint& b) { return a.x < b.x; });
    for (SeriesPoint& point : points) point.x -= runs_[key.run].origin;
    chart_->setSeries(seriesName(key), std::move(points),
                      shade(runs_[key.run].color, gpusOfRun[key.run]++));
  }
  data_.clear();
  chart_->setPlaceholderText(tr("No run has this GPU value stored"));
}

QString CompareGpuChart::seriesName(const Key& key) const {
  const Run& run = runs_[key.run];
  if (run.placement.size() <= 1) return tr("%1 GPU %2").arg(run.label).arg(key.index);
  // The host whose first rank is the samples' rank.
  QString host = tr("rank %1's node").arg(key.firstRank);
  int rank = 0;
  for (const v1::HostSlots& entry : run.placement) {
    if (rank == key.firstRank) {
      host = QString::fromStdString(entry.host());
      break;
    }
    rank += static_cast<int>(entry.ranks());
  }
  return tr("%1 %2 GPU %3").arg(run.label, host).arg(key.index);
}

}  // namespace ringside::gui
