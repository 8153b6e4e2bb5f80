#include "ringside/gui/widgets/dashboard_tab.h"
#include "ringside/gui/widgets/custom_metrics_panel.h"
#include "ringside/gui/when_ready.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDateTime>
#include <QFontDatabase>
#include <QFutureWatcher>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLocale>
#include <QMenu>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSlider>
#include <QSplitter>
#include <QTabWidget>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

#include <cmath>

#include "ringside/common/metric_names.h"
#include "ringside/common/run_spec.h"
#include "ringside/gui/clipped_text.h"
#include "ringside/gui/controller.h"
#include "ringside/gui/export_files.h"
#include "ringside/gui/run_resume.h"
#include "ringside/gui/stall_text.h"
#include "ringside/gui/widgets/bucket_timings_view.h"
#include "ringside/gui/widgets/metric_chart.h"
#include "ringside/gui/widgets/rank_view.h"
#include "ringside/gui/widgets/run_csv_export.h"
#include "ringside/gui/widgets/run_gpu_panel.h"

namespace ringside::gui {

namespace {

constexpr int kTickMs = 66;  // ~15 Hz: re-query when dirty, refresh the clock

double nowSeconds() { return QDateTime::currentMSecsSinceEpoch() / 1000.0; }

QString stateName(v1::RunState state) {
  switch (state) {
    case v1::QUEUED:
      return DashboardTab::tr("queued");
    case v1::STARTING:
      return DashboardTab::tr("starting");
    case v1::RUNNING:
      return DashboardTab::tr("running");
    case v1::COMPLETED:
      return DashboardTab::tr("completed");
    case v1::FAILED:
      return DashboardTab::tr("failed");
    case v1::STOPPED:
      return DashboardTab::tr("stopped");
    default:
      return DashboardTab::tr("unknown");
  }
}

bool ended(v1::RunState state) {
  return state == v1::COMPLETED || state == v1::FAILED || state == v1::STOPPED;
}

}  // namespace

QString DashboardTab::rawLossName() { return tr("train loss (raw)"); }
QString DashboardTab::smoothedLossName() { return tr("train loss"); }
QString DashboardTab::testLossName() { return tr("test loss"); }

DashboardTab::DashboardTab(Controller& controller, const QString& runId, QWidget* parent)
    : QWidget(parent), controller_(controller), runId_(runId), timer_(new QTimer(this)) {
  buildUi();
  connect(&controller_, &Controller::runDataChanged, this, [this](const QString& id) {
    if (id != runId_) return;
    dirty_ = true;
    rankDirty_ = true;
    customDirty_ = true;
  });
  connect(&controller_, &Controller::runStateChanged, this,
          [this](const QString& id, v1::RunState state) {
            if (id != runId_) return;
            state_->setText(stateName(state));
            stop_->setEnabled(!ended(state));
            dirty_ = true;
            updateResume();
          });
  // Resume depends on the owner node being online.
  connect(&controller_, &Controller::nodesChanged, this, &DashboardTab::updateResume);
  connect(&controller_, &Controller::runStopFailed, this,
          [this](const QString& id, const QString& message) {
            if (id != runId_) return;
            const QString text = tr("Stop failed: %1").arg(message);
            message_->setText(elidedLine(text));  // an agent's text: one short line, all in the tip
            message_->setToolTip(tooltipText(text));
          });
  connect(&controller_, &Controller::runStallChanged, this, [this](const QString& id) {
    if (id == runId_) updateStall();
  });
  connect(timer_, &QTimer::timeout, this, &DashboardTab::onTick);
  timer_->start(kTickMs);
  updateStall();  // a run that is stalled already when its tab opens
  sinceRankFetch_.invalidate();
}

DashboardTab::~DashboardTab() = default;

void DashboardTab::buildUi() {
  // Before charts() is first asked (its charts come and go with the run's metric names).
  customMetrics_ = new CustomMetricsPanel(controller_.store(), runId_, this);
  name_ = new QLabel(runId_, this);
  QFont bold = name_->font();
  bold.setBold(true);
  bold.setPointSizeF(bold.pointSizeF() * 1.2);
  name_->setFont(bold);
  name_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  state_ = new QLabel(tr("unknown"), this);
  elapsed_ = new QLabel(this);
  eta_ = new QLabel(this);
  message_ = new QLabel(this);
  message_->setStyleSheet(QStringLiteral("color: #b00020"));
  stall_ = new QLabel(this);
  stall_->setWordWrap(true);
  stall_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  stall_->setStyleSheet(QStringLiteral(
      "background: #fff3cd; color: #6b4e00; border: 1px solid #d69e10; padding: 4px"));
  stall_->setToolTip(
      tr("No rank has made progress for the stall threshold: the ranks named are the ones the "
         "others wait for. The run fails when this lasts for its hang timeout "
         "(docs/metrics.md, Hangs)."));
  stall_->hide();
  stop_ = new QPushButton(tr("&Stop run"), this);
  stop_->setToolTip(tr("Stop the run: its ranks checkpoint and exit"));
  connect(stop_, &QPushButton::clicked, this, &DashboardTab::requestStop);
  resume_ = new QPushButton(tr("Res&ume"), this);
  resume_->setToolTip(
      tr("Start a new run that continues this one from its last checkpoint, on the same node"));
  resume_->hide();
  connect(resume_, &QPushButton::clicked, this, &DashboardTab::requestResume);
  resumedFrom_ = new QLabel(this);
  resumedFrom_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  resumedFrom_->hide();

  auto* header = new QHBoxLayout;
  header->addWidget(name_);
  header->addSpacing(12);
  header->addWidget(new QLabel(tr("State:"), this));
  header->addWidget(state_);
  header->addSpacing(12);
  header->addWidget(new QLabel(tr("Elapsed:"), this));
  header->addWidget(elapsed_);
  header->addSpacing(12);
  header->addWidget(new QLabel(tr("ETA:"), this));
  header->addWidget(eta_);
  header->addSpacing(12);
  header->addWidget(resumedFrom_);
  header->addStretch(1);
  header->addWidget(message_);
  header->addWidget(resume_);
  header->addWidget(stop_);

  xMode_ = new QComboBox(this);
  xMode_->addItems({tr("Step"), tr("Epoch"), tr("Wall time")});
  xMode_->setToolTip(tr("What the x axis of the training charts shows"));
  logX_ = new QCheckBox(tr("Log &x"), this);
  logY_ = new QCheckBox(tr("Log &y"), this);
  smoothing_ = new QSlider(Qt::Horizontal, this);
  smoothing_->setRange(0, 99);
  smoothing_->setValue(60);
  smoothing_->setMaximumWidth(180);
  smoothing_->setToolTip(tr("Exponential moving average weight of the train loss line"));
  smoothingValue_ = new QLabel(QLocale().toString(smoothing_->value() / 100.0, 'f', 2), this);
  auto* resetZoom = new QPushButton(tr("&Reset zoom"), this);
  resetZoom->setToolTip(
      tr("Zoom: drag a rectangle or use the wheel; pan: right-drag or arrow keys; reset: "
         "double-click; export: right-click a chart"));
  exportChart_ = new QToolButton(this);
  exportChart_->setText(tr("Export c&hart"));
  exportChart_->setToolTip(tr("Save one chart, as shown, as PNG or SVG"));
  exportChart_->setPopupMode(QToolButton::InstantPopup);
  exportChart_->setMenu(new QMenu(exportChart_));
  exportCsv_ = new QPushButton(tr("Export metrics CS&V…"), this);
  exportCsv_->setToolTip(
      tr("Write every metric sample of the run, every rank, at full resolution to a CSV file"));
  connect(exportCsv_, &QPushButton::clicked, this, &DashboardTab::exportMetricsCsv);
  auto* controls = new QHBoxLayout;
  controls->addWidget(new QLabel(tr("X axis:"), this));
  controls->addWidget(xMode_);
  controls->addWidget(logX_);
  controls->addWidget(logY_);
  controls->addSpacing(12);
  controls->addWidget(new QLabel(tr("Smoothing:"), this));
  controls->addWidget(smoothing_);
  controls->addWidget(smoothingValue_);
  controls->addStretch(1);
  controls->addWidget(resetZoom);
  controls->addWidget(exportChart_);
  controls->addWidget(exportCsv_);

  loss_ = new MetricChart(tr("Loss"), this);
  accuracy_ = new MetricChart(tr("Test accuracy"), this);
  throughput_ = new MetricChart(tr("Throughput"), this);
  stepTime_ = new MetricChart(tr("Step time"), this);
  stepTime_->setStacked(true);
  allreduce_ = new MetricChart(tr("All-reduce time"), this);
  busbw_ = new MetricChart(tr("All-reduce bus bandwidth"), this);
  gpuPanel_ = new RunGpuPanel(controller_, runId_, this);
  accuracy_->setAxisTitles(QString(), tr("accuracy"));
  loss_->setAxisTitles(QString(), tr("loss (nats)"));
  throughput_->setAxisTitles(QString(), tr("samples/s"));
  stepTime_->setAxisTitles(QString(), tr("ms per step"));
  allreduce_->setAxisTitles(QString(), tr("ms per step"));
  busbw_->setAxisTitles(QString(), tr("busbw (GB/s)"));
  setXMode(0);
  for (MetricChart* chart : charts()) {
    QMenu* menu = exportChart_->menu()->addMenu(chart->title());
    menu->addAction(tr("As PNG…"), chart, &MetricChart::askExportPng);
    menu->addAction(tr("As SVG…"), chart, &MetricChart::askExportSvg);
    chart->contextMenu()->addSeparator();
    chart->contextMenu()->addAction(tr("Export the run's metrics as CSV…"), this,
                                    &DashboardTab::exportMetricsCsv);
  }
  updateExportNames();

  auto* grid = new QGridLayout;
  const QList<MetricChart*> all = {loss_, accuracy_, throughput_, stepTime_, allreduce_, busbw_};
  for (int i = 0; i < all.size(); ++i) {
    all[i]->setMinimumHeight(240);
    grid->addWidget(all[i], i / 2, i % 2);
  }
  auto* chartsPage = new QWidget(this);
  chartsPage->setLayout(grid);
  chartPages_ = new QTabWidget(this);
  for (QWidget* page : {chartsPage, static_cast<QWidget*>(gpuPanel_),
                        static_cast<QWidget*>(customMetrics_)}) {
    auto* scroll = new QScrollArea(this);
    scroll->setWidgetResizable(true);
    scroll->setWidget(page);
    chartPages_->addTab(scroll, page == chartsPage  ? tr("&Training")
                                : page == gpuPanel_ ? tr("&GPUs")
                                                    : tr("&Metrics"));
  }

  rankView_ = new RankView(this);
  buckets_ = new BucketTimingsView(this);
  log_ = new QPlainTextEdit(this);
  log_->setReadOnly(true);
  log_->setMaximumBlockCount(kLogTailLines);
  log_->setLineWrapMode(QPlainTextEdit::NoWrap);
  log_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  auto* bottom = new QTabWidget(this);
  bottom->addTab(rankView_, tr("Per rank"));
  bottom->addTab(buckets_, tr("Per bucket"));
  bottom->addTab(log_, tr("Log"));

  auto* splitter = new QSplitter(Qt::Vertical, this);
  splitter->addWidget(chartPages_);
  splitter->addWidget(bottom);
  splitter->setStretchFactor(0, 3);
  splitter->setStretchFactor(1, 1);

  auto* layout = new QVBoxLayout(this);
  layout->addLayout(header);
  layout->addWidget(stall_);
  layout->addLayout(controls);
  layout->addWidget(splitter, 1);

  connect(xMode_, &QComboBox::currentIndexChanged, this, &DashboardTab::setXMode);
  connect(logX_, &QCheckBox::toggled, this, [this](bool on) {
    for (MetricChart* chart : charts()) chart->setLogX(on);
  });
  connect(logY_, &QCheckBox::toggled, this, [this](bool on) {
    for (MetricChart* chart : charts()) chart->setLogY(on);
  });
  connect(smoothing_, &QSlider::valueChanged, this, [this](int value) {
    smoothingValue_->setText(QLocale().toString(value / 100.0, 'f', 2));
    applySmoothing();
  });
  connect(resetZoom, &QPushButton::clicked, this, [this] {
    for (MetricChart* chart : charts()) chart->resetZoom();
  });
}

QList<MetricChart*> DashboardTab::charts() const {
  return QList<MetricChart*>{loss_, accuracy_, throughput_, stepTime_, allreduce_, busbw_} +
         gpuPanel_->charts() + customMetrics_->charts();
}

MetricChart* DashboardTab::gpuUtilChart() const { return gpuPanel_->utilChart(); }
MetricChart* DashboardTab::gpuMemChart() const { return gpuPanel_->memChart(); }

QString DashboardTab::title() const { return run_ && !run_->name.isEmpty() ? run_->name : runId_; }

QString DashboardTab::etaText() const { return eta_->text(); }
QString DashboardTab::stateText() const { return state_->text(); }
QString DashboardTab::logText() const { return log_->toPlainText(); }

void DashboardTab::refresh() { dirty_ = true; }

void DashboardTab::setXMode(int index) {
  const QString titles[] = {tr("step"), tr("epoch"), tr("time since start (s)")};
  for (MetricChart* chart : {loss_, accuracy_, throughput_, stepTime_, allreduce_, busbw_}) {
    chart->setAxisTitles(titles[std::clamp(index, 0, 2)], QString());
    chart->resetZoom();
  }
  loss_->setAxisTitles(titles[std::clamp(index, 0, 2)], tr("loss (nats)"));
  accuracy_->setAxisTitles(titles[std::clamp(index, 0, 2)], tr("accuracy"));
  throughput_->setAxisTitles(titles[std::clamp(index, 0, 2)], tr("samples/s"));
  stepTime_->setAxisTitles(titles[std::clamp(index, 0, 2)], tr("ms per step"));
  allreduce_->setAxisTitles(titles[std::clamp(index, 0, 2)], tr("ms per step"));
  busbw_->setAxisTitles(titles[std::clamp(index, 0, 2)], tr("busbw (GB/s)"));
  ++generation_;  // answers for the old x mode are dropped
  inFlight_ = 0;
  fetched_.clear();
  dirty_ = true;
  customDirty_ = true;
  sinceCustomFetch_.invalidate();
}

void DashboardTab::updateStall() {
  const std::optional<v1::StallVerdict> verdict = controller_.stallOf(runId_);
  if (!verdict) {
    stall_->hide();
    return;
  }
  const double now = QDateTime::currentMSecsSinceEpoch() / 1000.0;
  stall_->setText(stallBannerText(*verdict, now));
  stall_->show();
}

void DashboardTab::onTick() {
  updateClock();
  if (stall_->isVisible()) updateStall();  // the time without progress grows
  if (inFlight_ > 0) return;
  if (dirty_) {
    dirty_ = false;
    fetch();
  }
  if (inFlight_ == 0 &&
      (!sinceRankFetch_.isValid() || sinceRankFetch_.elapsed() >= rankFetchEveryMs_) &&
      rankDirty_ && run_.has_value() && run_->worldSize != 1) {
    fetchRanks();
  }
  // Custom metrics at most once a second: a query per charted name and rank.
  if (customDirty_ && (!sinceCustomFetch_.isValid() || sinceCustomFetch_.elapsed() >= 1000)) {
    customDirty_ = false;
    sinceCustomFetch_.start();
    customMetrics_->refresh(xMode(), xOrigin(), progress_.stepsPerEpoch.value_or(0));
  }
}

void DashboardTab::applySmoothing() {
  loss_->setSeries(smoothedLossName(), emaSmooth(rawLoss_, smoothing_->value() / 100.0),
                   QColor(0x20, 0x9f, 0xdf));
}

void DashboardTab::applyRun(const RunRecord& run) {
  const QString before = title();
  const bool worldSizeChanged = !run_ || run_->worldSize != run.worldSize;
  if (!run_ || run_->spec != run.spec) {
    // The step rate is samples/s over the global batch of the run spec (defaults applied).
    v1::RunSpec spec;
    progress_.globalBatch = 0;
    if (spec.ParseFromArray(run.spec.constData(), static_cast<int>(run.spec.size())) &&
        spec.has_trainer()) {
      const auto config = trainerConfigOf(spec.trainer());
      if (config.isOk()) progress_.globalBatch = withTrainerDefaults(config.value()).global_batch();
    }
  }
  const bool wasQueued = run_ && run_->state == v1::QUEUED;
  run_ = run;
  gpuPanel_->setRun(run);
  name_->setText(elidedLine(run.name.isEmpty() ? runId_ : run.name));
  name_->setToolTip(tooltipText(run.name));
  state_->setText(stateName(run.state));
  stop_->setEnabled(!ended(run.state));
  // A queued run's line (its place and why it waits) is news, not an error: the palette's colour.
  message_->setStyleSheet(run.state == v1::QUEUED ? QString() : QStringLiteral("color: #b00020"));
  if (!run.reason.isEmpty()) {
    message_->setText(elidedLine(run.reason));  // the agent's text: one short line, all in the tip
    message_->setToolTip(tooltipText(run.reason));
  } else if (wasQueued) {
    // The queue's "Queued: position ..." line ends when the run leaves the queue.
    message_->clear();
    message_->setToolTip(QString());
  }
  const QString original = resumedFromRunId(run.tags);
  resumedFrom_->setText(original.isEmpty() ? QString() : tr("resumed from %1").arg(original));
  resumedFrom_->setVisible(!original.isEmpty());
  updateResume();
  if (title() != before) {
    updateExportNames();
    emit titleChanged(title());
  }
  if (worldSizeChanged) rankDirty_ = true;
}

void DashboardTab::updateClock() {
  if (!run_ || run_->startTime <= 0) {
    elapsed_->setText(tr("N/A"));
    eta_->setText(tr("N/A"));
    return;
  }
  const double end = run_->endTime > 0 ? run_->endTime : nowSeconds();
  elapsed_->setText(formatDuration(end - run_->startTime));
  if (ended(run_->state)) {
    eta_->setText(tr("done"));
    return;
  }
  progress_.runningSeconds = end - run_->startTime;
  const auto eta = runProgress(progress_).etaSeconds;
  eta_->setText(eta ? formatDuration(*eta) : tr("N/A"));
}

void DashboardTab::updateExportNames() {
  const QString run = title();
  const QStringList names = QStringList{QStringLiteral("loss"),       QStringLiteral("accuracy"),
                                        QStringLiteral("throughput"), QStringLiteral("step-time"),
                                        QStringLiteral("all-reduce"), QStringLiteral("busbw")} +
                            RunGpuPanel::exportNames();
  const QList<MetricChart*> all = charts();
  for (int i = 0; i < all.size() && i < names.size(); ++i) {
    all[i]->setExportName(chartFileBaseName(run, names[i]));
  }
}

void DashboardTab::exportMetricsCsv() {
  askExportRunsCsv(this, controller_.store(),
                   {RunToExport{.runId = runId_, .name = run_ ? run_->name : QString()}});
}

QString DashboardTab::resumedFromText() const { return resumedFrom_->text(); }

void DashboardTab::updateResume() {
  v1::RunSpec spec;
  const bool resumable =
      run_ && spec.ParseFromArray(run_->spec.constData(), static_cast<int>(run_->spec.size())) &&
      hasResumableCheckpoint(run_->state, spec);
  resume_->setVisible(resumable);
  if (!resumable) return;
  const QString problem = controller_.resumeProblem(runId_);
  resume_->setEnabled(problem.isEmpty());
  resume_->setToolTip(
      problem.isEmpty()
          ? tr("Start a new run that continues this one from its last checkpoint (%1 on its "
               "node)")
                .arg(controller_.checkpointDirOf(runId_))
          : problem);
}

void DashboardTab::requestResume() {
  message_->clear();
  resume_->setEnabled(false);  // one new run per click; updateResume enables it again
  controller_.resumeRun(runId_);
  QTimer::singleShot(2000, this, &DashboardTab::updateResume);
}

void DashboardTab::requestStop() {
  const auto answer = QMessageBox::question(
      this, tr("Stop run"),
      tr("Stop the run \"%1\"? Its ranks write a checkpoint and exit.").arg(title()),
      QMessageBox::Yes | QMessageBox::No, QMessageBox::No);
  if (answer != QMessageBox::Yes) return;
  controller_.stopRun(runId_);
  message_->clear();
  stop_->setEnabled(false);
}

}  // namespace ringside::gui
