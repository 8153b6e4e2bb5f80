#include "ringside/gui/widgets/compare_view.h"
#include "ringside/gui/when_ready.h"

#include <QCheckBox>
#include <QDateTime>
#include <QFutureWatcher>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QMenu>
#include <QPixmap>
#include <QPushButton>
#include <QScrollArea>
#include <QSplitter>
#include <QTableWidget>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>

#include "ringside/common/metric_names.h"
#include "ringside/gui/config_diff.h"
#include "ringside/gui/controller.h"
#include "ringside/gui/duration_format.h"
#include "ringside/gui/export_files.h"
#include "ringside/gui/run_table_model.h"
#include "ringside/gui/widgets/compare_gpu_chart.h"
#include "ringside/gui/widgets/compare_metric_chart.h"
#include "ringside/gui/widgets/metric_chart.h"
#include "ringside/gui/widgets/run_csv_export.h"

namespace ringside::gui {

namespace {

constexpr int kReloadIntervalMs = 1000;  // live runs: re-read at most once a second

bool isActive(v1::RunState state) {
  return state == v1::QUEUED || state == v1::STARTING || state == v1::RUNNING;
}

QIcon swatch(const QColor& color) {
  QPixmap pixmap(12, 12);
  pixmap.fill(color);
  return QIcon(pixmap);
}

// The background of a value that differs between runs: translucent amber, readable on light
// and dark palettes.
QColor differenceColor() { return QColor(255, 176, 0, 70); }

}  // namespace

QStringList CompareView::chartedMetrics() {
  return {QString::fromLatin1(metric::kTrainLoss), QString::fromLatin1(metric::kTestAccuracy),
          QString::fromLatin1(metric::kTrainSamplesPerS), QString::fromLatin1(metric::kStepMs)};
}

QColor CompareView::runColor(int index) {
  // Tableau 10: distinguishable, and readable on light and dark backgrounds.
  static const QRgb kColors[] = {0x4e79a7, 0xf28e2b, 0xe15759, 0x76b7b2, 0x59a14f,
                                 0xedc948, 0xb07aa1, 0xff9da7, 0x9c755f, 0xbab0ac};
  constexpr int kCount = sizeof(kColors) / sizeof(kColors[0]);
  return QColor::fromRgb(kColors[((index % kCount) + kCount) % kCount]);
}

CompareView::CompareView(Controller& controller, QStringList runIds, QWidget* parent)
    : QWidget(parent), controller_(controller), runIds_(std::move(runIds)) {
  records_.resize(runIds_.size());
  reloadRun_.fill(false, runIds_.size());

  auto* title = new QLabel(tr("Comparing %Ln run(s)", nullptr, static_cast<int>(runIds_.size())));
  QFont titleFont = title->font();
  titleFont.setBold(true);
  title->setFont(titleFont);
  auto* exportChart = new QToolButton;
  exportChart->setText(tr("Export &chart"));
  exportChart->setToolTip(tr("Save one chart, as shown, as PNG or SVG"));
  exportChart->setPopupMode(QToolButton::InstantPopup);
  auto* exportChartMenu = new QMenu(exportChart);
  exportChart->setMenu(exportChartMenu);
  auto* exportCsv = new QPushButton(tr("Export metrics &CSV…"));
  exportCsv->setToolTip(
      tr("Write every metric sample of each run, at full resolution, to <name>-<run id>.csv in "
         "a folder"));
  auto* top = new QHBoxLayout;
  top->addWidget(title);
  top->addStretch();
  top->addWidget(exportChart);
  top->addWidget(exportCsv);

  auto* bottom = new QSplitter(Qt::Horizontal);
  bottom->addWidget(buildSummary());
  bottom->addWidget(buildConfig());
  bottom->setStretchFactor(0, 2);
  bottom->setStretchFactor(1, 3);
  auto* split = new QSplitter(Qt::Vertical);
  split->addWidget(buildCharts());
  split->addWidget(bottom);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  split->setChildrenCollapsible(false);

  auto* column = new QVBoxLayout(this);
  column->addLayout(top);
  column->addWidget(split, 1);

  for (const Chart& chart : charts_) {
    QMenu* menu = exportChartMenu->addMenu(chart.title);
    const QString metric = chart.metric;
    menu->addAction(tr("As PNG…"), chart.widget, &MetricChart::askExportPng);
    menu->addAction(tr("As SVG…"), chart.widget, &MetricChart::askExportSvg);
  }
  QMenu* gpuMenu = exportChartMenu->addMenu(gpuChart_->chart()->title());
  gpuMenu->addAction(tr("As PNG…"), gpuChart_->chart(), &MetricChart::askExportPng);
  gpuMenu->addAction(tr("As SVG…"), gpuChart_->chart(), &MetricChart::askExportSvg);
  QMenu* metricMenu = exportChartMenu->addMenu(tr("Chosen metric"));
  metricMenu->addAction(tr("As PNG…"), metricChart_->chart(), &MetricChart::askExportPng);
  metricMenu->addAction(tr("As SVG…"), metricChart_->chart(), &MetricChart::askExportSvg);
  connect(exportCsv, &QPushButton::clicked, this, &CompareView::exportMetricsCsv);

  reloadTimer_.setSingleShot(true);
  reloadTimer_.setInterval(kReloadIntervalMs);
  connect(&reloadTimer_, &QTimer::timeout, this, [this] {
    for (int i = 0; i < runIds_.size(); ++i) {
      if (reloadRun_[i]) {
        reloadRun_[i] = false;
        loadRun(i);
      }
    }
  });
  connect(&controller_, &Controller::runDataChanged, this, [this](const QString& runId) {
    const int index = static_cast<int>(runIds_.indexOf(runId));
    if (index < 0) return;
    reloadRun_[index] = true;
    if (!reloadTimer_.isActive()) reloadTimer_.start();
  });

  for (int i = 0; i < runIds_.size(); ++i) loadRun(i);
}

CompareView::~CompareView() = default;

QWidget* CompareView::buildCharts() {
  const QStringList metrics = chartedMetrics();
  const QStringList titles = {tr("Training loss"), tr("Test accuracy"), tr("Throughput"),
                              tr("Step time")};
  const QStringList units = {tr("loss (nats)"), tr("accuracy (%)"), tr("samples/s"), tr("ms")};
  auto* grid = new QWidget;
  auto* layout = new QGridLayout(grid);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(4);
  charts_.resize(metrics.size());
  for (int c = 0; c < metrics.size(); ++c) {
    Chart& chart = charts_[c];
    chart.metric = metrics[c];
    chart.title = titles[c];
    chart.scale = metrics[c] == QLatin1String(metric::kTestAccuracy) ? 100.0 : 1.0;
    chart.data.resize(runIds_.size());
    chart.widget = new MetricChart(titles[c]);
    chart.widget->setAxisTitles(tr("step"), units[c]);
    chart.widget->setExportName(chartFileBaseName(QStringLiteral("compare"), metrics[c]));
    chart.widget->setPlaceholderText(tr("Loading…"));
    chart.widget->setMinimumSize(320, 220);
    layout->addWidget(chart.widget, c / 2, c % 2);
  }
  // The GPU values stored with the runs, under the others across the whole width.
  gpuChart_ = new CompareGpuChart(controller_.store());
  layout->addWidget(gpuChart_, static_cast<int>((metrics.size() + 1) / 2), 0, 1, 2);
  // Any other metric the runs logged (a script's own names), under the GPU chart.
  metricChart_ = new CompareMetricChart(controller_.store());
  layout->addWidget(metricChart_, static_cast<int>((metrics.size() + 1) / 2) + 1, 0, 1, 2);
  auto* scroll = new QScrollArea;
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setWidget(grid);
  return scroll;
}

QWidget* CompareView::buildSummary() {
  auto* box = new QGroupBox(tr("Summary"));
  auto* layout = new QVBoxLayout(box);
  summaryTable_ = new QTableWidget;
  summaryTable_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  summaryTable_->setSelectionMode(QAbstractItemView::ContiguousSelection);
  summaryTable_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  summaryTable_->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  layout->addWidget(summaryTable_);
  return box;
}

QWidget* CompareView::buildConfig() {
  auto* box = new QGroupBox(tr("Settings"));
  auto* layout = new QVBoxLayout(box);
  onlyDifferences_ = new QCheckBox(tr("Show only settings that &differ"));
  configTable_ = new QTableWidget;
  configTable_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  configTable_->setSelectionMode(QAbstractItemView::ContiguousSelection);
  configTable_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  configTable_->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  layout->addWidget(onlyDifferences_);
  layout->addWidget(configTable_);
  connect(onlyDifferences_, &QCheckBox::toggled, this, [this](bool only) {
    for (int row = 0; row < configTable_->rowCount(); ++row) {
      const bool differs = configTable_->verticalHeaderItem(row)->data(Qt::UserRole).toBool();
      configTable_->setRowHidden(row, only && !differs);
    }
  });
  return box;
}

void CompareView::loadRun(int runIndex) {
  const QString runId = runIds_[runIndex];
  MetricsStore& store = controller_.store();
  pendingLoads_ += 1 + static_cast<int>(charts_.size());
  whenReady(this, store.run(runId), [this, runIndex](Result<RunRecord> record) {
    if (record.isOk()) {
      records_[runIndex] = std::move(record).value();
    } else if (record.status().code() != Status::Code::kNotFound) {
      emit errorMessage(
          tr("Could not read run %1: %2")
              .arg(runIds_[runIndex], QString::fromStdString(record.status().message())));
    }
    loadDone();
  });
  for (int c = 0; c < charts_.size(); ++c) {
    whenReady(this, store.series(runId, charts_[c].metric, -1, SeriesX::kStep),
              [this, runIndex, c](Result<std::vector<SeriesPoint>> points) {
                if (points.isOk()) charts_[c].data[runIndex] = std::move(points).value();
                loadDone();
              });
  }
}

void CompareView::loadDone() {
  if (--pendingLoads_ > 0) return;
  firstLoadDone_ = true;
  fillSummary();
  fillConfig();
  updateCharts();
  QList<CompareGpuChart::Run> runs;
  for (int i = 0; i < runIds_.size(); ++i) {
    const auto& record = records_[i];
    const double origin = !record                 ? 0.0
                          : record->startTime > 0 ? record->startTime
                                                  : record->createdTime;
    runs.append(CompareGpuChart::Run{
        .runId = runIds_[i],
        .label = runLabel(i),
        .color = runColor(i),
        .origin = origin,
        .placement = record ? record->placement : std::vector<v1::HostSlots>{}});
  }
  gpuChart_->setRuns(std::move(runs));
  QList<CompareMetricChart::Run> metricRuns;
  for (int i = 0; i < runIds_.size(); ++i) {
    metricRuns.append({.runId = runIds_[i], .label = runLabel(i), .color = runColor(i)});
  }
  metricChart_->setRuns(std::move(metricRuns));
  emit loadFinished();
}

QString CompareView::runLabel(int runIndex) const {
  const auto& record = records_[runIndex];
  if (!record || record->name.isEmpty()) return runIds_[runIndex];
  // Names repeat across runs (clones); the id keeps them apart.
  int sameName = 0;
  for (const auto& other : records_) sameName += other && other->name == record->name ? 1 : 0;
  return sameName > 1 ? tr("%1 (%2)").arg(record->name, runIds_[runIndex]) : record->name;
}

void CompareView::updateCharts() {
  for (Chart& chart : charts_) {
    bool any = false;
    // Series are named by run label; labels are known only now, so the chart is rebuilt.
    chart.widget->clearSeries();
    for (int i = 0; i < runIds_.size(); ++i) {
      std::vector<SeriesPoint> points = chart.data[i];
      if (chart.scale != 1.0) {
        for (SeriesPoint& point : points) point.y *= chart.scale;
      }
      any |= !points.empty();
      chart.widget->setSeries(runLabel(i), std::move(points), runColor(i));
    }
    chart.widget->setPlaceholderText(any ? QString() : tr("No data"));
  }
}

void CompareView::fillSummary() {
  const QLocale locale;
  const QStringList rows = {tr("State"),         tr("Nodes × ranks"), tr("Final loss"),
                            tr("Best accuracy"), tr("Samples/s"),     tr("Duration"),
                            tr("Samples stored")};
  summaryTable_->clear();
  summaryTable_->setRowCount(static_cast<int>(rows.size()));
  summaryTable_->setColumnCount(static_cast<int>(runIds_.size()));
  summaryTable_->setVerticalHeaderLabels(rows);
  // The best value of a row (lowest loss, highest accuracy and throughput) is shown bold.
  auto bestOf = [this](auto member, bool lowest) -> std::optional<double> {
    std::optional<double> best;
    for (const auto& record : records_) {
      if (!record || !((*record).*member)) continue;
      const double value = *((*record).*member);
      if (!best || (lowest ? value < *best : value > *best)) best = value;
    }
    return best;
  };
  const auto bestLoss = bestOf(&RunRecord::finalLoss, true);
  const auto bestAccuracy = bestOf(&RunRecord::bestAccuracy, false);
  const auto bestSpeed = bestOf(&RunRecord::meanSamplesPerS, false);
  const QString na = tr("N/A");
  for (int i = 0; i < runIds_.size(); ++i) {
    auto* header = new QTableWidgetItem(swatch(runColor(i)), runLabel(i));
    header->setToolTip(runIds_[i]);
    summaryTable_->setHorizontalHeaderItem(i, header);
    const auto& record = records_[i];
    auto put = [&](int row, const QString& text, bool best = false, bool number = true) {
      auto* item = new QTableWidgetItem(text);
      if (best) {
        QFont font = item->font();
        font.setBold(true);
        item->setFont(font);
      }
      item->setTextAlignment((number ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignVCenter);
      summaryTable_->setItem(row, i, item);
    };
    if (!record) {
      for (int row = 0; row < rows.size(); ++row) put(row, na);
      continue;
    }
    put(0, RunTableModel::stateText(record->state), false, false);
    put(1, RunTableModel::placementText(*record), false, false);
    put(2, record->finalLoss ? locale.toString(*record->finalLoss, 'f', 4) : na,
        record->finalLoss && record->finalLoss == bestLoss);
    put(3,
        record->bestAccuracy ? tr("%1 %").arg(locale.toString(*record->bestAccuracy * 100, 'f', 2))
                             : na,
        record->bestAccuracy && record->bestAccuracy == bestAccuracy);
    put(4, record->meanSamplesPerS ? locale.toString(*record->meanSamplesPerS, 'f', 0) : na,
        record->meanSamplesPerS && record->meanSamplesPerS == bestSpeed);
    double end = record->endTime;
    if (end <= 0 && isActive(record->state)) end = QDateTime::currentMSecsSinceEpoch() / 1000.0;
    put(5, record->startTime > 0 && end > 0 ? formatDuration(end - record->startTime) : na);
    put(6, locale.toString(static_cast<qlonglong>(record->sampleCount)));
  }
}

void CompareView::fillConfig() {
  QStringList configs;
  for (const auto& record : records_) configs << (record ? record->configJson : QString());
  const QList<ConfigDiffRow> rows = configDiffFromJson(configs);
  configTable_->clear();
  configTable_->setRowCount(static_cast<int>(rows.size()));
  configTable_->setColumnCount(static_cast<int>(runIds_.size()));
  for (int i = 0; i < runIds_.size(); ++i) {
    auto* header = new QTableWidgetItem(swatch(runColor(i)), runLabel(i));
    header->setToolTip(runIds_[i]);
    configTable_->setHorizontalHeaderItem(i, header);
  }
  for (int row = 0; row < rows.size(); ++row) {
    const ConfigDiffRow& diff = rows[row];
    auto* key = new QTableWidgetItem(diff.key);
    key->setData(Qt::UserRole, diff.differs);
    if (diff.differs) {
      QFont font = key->font();
      font.setBold(true);
      key->setFont(font);
      key->setToolTip(tr("The runs differ in this setting"));
    }
    configTable_->setVerticalHeaderItem(row, key);
    for (int i = 0; i < diff.values.size(); ++i) {
      auto* item = new QTableWidgetItem(diff.values[i]);
      item->setToolTip(diff.values[i]);
      if (diff.differs) {
        QFont font = item->font();
        font.setBold(true);
        item->setFont(font);
        item->setBackground(differenceColor());
      }
      configTable_->setItem(row, i, item);
    }
    configTable_->setRowHidden(row, onlyDifferences_->isChecked() && !diff.differs);
  }
}

const CompareView::Chart* CompareView::chartOf(const QString& metric) const {
  for (const Chart& chart : charts_) {
    if (chart.metric == metric) return &chart;
  }
  return nullptr;
}

MetricChart* CompareView::chart(const QString& metric) const {
  const Chart* chart = chartOf(metric);
  return chart != nullptr ? chart->widget : nullptr;
}

int CompareView::drawnPointCount(const QString& metric, int runIndex) const {
  const Chart* chart = chartOf(metric);
  if (chart == nullptr || runIndex < 0 || runIndex >= runIds_.size()) return 0;
  return static_cast<int>(chart->widget->drawnPoints(runLabel(runIndex)).size());
}

Status CompareView::exportChartPng(const QString& metric, const QString& path) const {
  const Chart* chart = chartOf(metric);
  if (chart == nullptr) return Status::notFound("no chart of " + metric.toStdString());
  return chart->widget->exportPng(path);
}

Status CompareView::exportChartSvg(const QString& metric, const QString& path) const {
  const Chart* chart = chartOf(metric);
  if (chart == nullptr) return Status::notFound("no chart of " + metric.toStdString());
  return chart->widget->exportSvg(path);
}

void CompareView::exportMetricsCsv() {
  QList<RunToExport> runs;
  for (int i = 0; i < runIds_.size(); ++i) {
    runs.append(
        RunToExport{.runId = runIds_[i], .name = records_[i] ? records_[i]->name : QString()});
  }
  askExportRunsCsv(this, controller_.store(), runs);
}

}  // namespace ringside::gui
