#include "ringside/gui/dashboard_tab.h"
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
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSlider>
#include <QSplitter>
#include <QTabWidget>
#include <QTimer>
#include <QVBoxLayout>

#include <cmath>

#include "ringside/common/metric_names.h"
#include "ringside/common/run_spec.h"
#include "ringside/gui/controller.h"
#include "ringside/gui/metric_chart.h"
#include "ringside/gui/rank_view.h"
#include "ringside/gui/run_placement.h"

namespace ringside::gui {

namespace {

constexpr int kTickMs = 66;                 // ~15 Hz: re-query when dirty, refresh the clock
constexpr qint64 kRankFetchEveryMs = 1000;  // per-rank values change once per log step
constexpr int kLogTailLines = 300;
constexpr size_t kTelemetryPoints = 20'000;  // per GPU and value, oldest dropped first

double nowSeconds() { return QDateTime::currentMSecsSinceEpoch() / 1000.0; }

// A metric name of metric_names.h as the store's key.
QString key(const char* metricName) { return QString::fromLatin1(metricName); }

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

std::vector<SeriesPoint> shifted(std::vector<SeriesPoint> points, double origin) {
  if (origin != 0) {
    for (SeriesPoint& point : points) point.x -= origin;
  }
  return points;
}

void appendRolling(std::vector<SeriesPoint>& series, SeriesPoint point) {
  if (!series.empty() && point.x < series.back().x) return;  // keep x sorted
  series.push_back(point);
  if (series.size() > kTelemetryPoints) {
    series.erase(series.begin(), series.begin() + (series.size() - kTelemetryPoints));
  }
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
  });
  connect(&controller_, &Controller::runStateChanged, this,
          [this](const QString& id, v1::RunState state) {
            if (id != runId_) return;
            state_->setText(stateName(state));
            stop_->setEnabled(!ended(state));
            dirty_ = true;
          });
  connect(&controller_, &Controller::runStopFailed, this,
          [this](const QString& id, const QString& message) {
            if (id == runId_) message_->setText(tr("Stop failed: %1").arg(message));
          });
  connect(&controller_, &Controller::telemetryReceived, this, &DashboardTab::onTelemetry);
  connect(timer_, &QTimer::timeout, this, &DashboardTab::onTick);
  timer_->start(kTickMs);
  sinceRankFetch_.invalidate();
}

DashboardTab::~DashboardTab() = default;

void DashboardTab::buildUi() {
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
  stop_ = new QPushButton(tr("&Stop run"), this);
  stop_->setToolTip(tr("Stop the run: its ranks checkpoint and exit"));
  connect(stop_, &QPushButton::clicked, this, &DashboardTab::requestStop);

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
  header->addStretch(1);
  header->addWidget(message_);
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
         "double-click"));
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

  loss_ = new MetricChart(tr("Loss"), this);
  accuracy_ = new MetricChart(tr("Test accuracy"), this);
  throughput_ = new MetricChart(tr("Throughput"), this);
  stepTime_ = new MetricChart(tr("Step time"), this);
  stepTime_->setStacked(true);
  allreduce_ = new MetricChart(tr("All-reduce time"), this);
  busbw_ = new MetricChart(tr("All-reduce bus bandwidth"), this);
  gpuUtil_ = new MetricChart(tr("GPU utilization"), this);
  gpuMem_ = new MetricChart(tr("GPU memory"), this);
  for (MetricChart* chart : {gpuUtil_, gpuMem_}) {
    chart->setPlaceholderText(tr("No telemetry from the run's node yet"));
  }
  const QString seconds = tr("time since start (s)");
  accuracy_->setAxisTitles(QString(), tr("accuracy"));
  loss_->setAxisTitles(QString(), tr("loss (nats)"));
  throughput_->setAxisTitles(QString(), tr("samples/s"));
  stepTime_->setAxisTitles(QString(), tr("ms per step"));
  allreduce_->setAxisTitles(QString(), tr("ms per step"));
  busbw_->setAxisTitles(QString(), tr("busbw (GB/s)"));
  gpuUtil_->setAxisTitles(seconds, tr("utilization (%)"));
  gpuMem_->setAxisTitles(seconds, tr("memory used (MiB)"));
  setXMode(0);

  auto* grid = new QGridLayout;
  const QList<MetricChart*> all = {loss_,      accuracy_, throughput_, stepTime_,
                                   allreduce_, busbw_,    gpuUtil_,    gpuMem_};
  for (int i = 0; i < all.size(); ++i) {
    all[i]->setMinimumHeight(240);
    grid->addWidget(all[i], i / 2, i % 2);
  }
  auto* chartsPage = new QWidget(this);
  chartsPage->setLayout(grid);
  auto* scroll = new QScrollArea(this);
  scroll->setWidgetResizable(true);
  scroll->setWidget(chartsPage);

  rankView_ = new RankView(this);
  log_ = new QPlainTextEdit(this);
  log_->setReadOnly(true);
  log_->setMaximumBlockCount(kLogTailLines);
  log_->setLineWrapMode(QPlainTextEdit::NoWrap);
  log_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  auto* bottom = new QTabWidget(this);
  bottom->addTab(rankView_, tr("Per rank"));
  bottom->addTab(log_, tr("Log"));

  auto* splitter = new QSplitter(Qt::Vertical, this);
  splitter->addWidget(scroll);
  splitter->addWidget(bottom);
  splitter->setStretchFactor(0, 3);
  splitter->setStretchFactor(1, 1);

  auto* layout = new QVBoxLayout(this);
  layout->addLayout(header);
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
  return {loss_, accuracy_, throughput_, stepTime_, allreduce_, busbw_, gpuUtil_, gpuMem_};
}

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
}

void DashboardTab::onTick() {
  updateClock();
  if (gpuDirty_) {
    gpuDirty_ = false;
    for (const auto& [gpu, points] : gpuUtilSeries_) gpuUtil_->setSeries(gpuNames_[gpu], points);
    for (const auto& [gpu, points] : gpuMemSeries_) gpuMem_->setSeries(gpuNames_[gpu], points);
  }
  if (inFlight_ > 0) return;
  if (dirty_) {
    dirty_ = false;
    fetch();
  }
  if (inFlight_ == 0 &&
      (!sinceRankFetch_.isValid() || sinceRankFetch_.elapsed() >= kRankFetchEveryMs) &&
      rankDirty_ && run_.has_value() && run_->worldSize != 1) {
    fetchRanks();
  }
}

void DashboardTab::fetch() {
  const SeriesX x = static_cast<SeriesX>(xMode_->currentIndex());
  std::vector<std::pair<QString, SeriesX>> requests;
  for (const char* name :
       {metric::kTrainLoss, metric::kTestLoss, metric::kTestAccuracy, metric::kTrainSamplesPerS,
        metric::kComputeMs, metric::kExposedCommMs, metric::kAllreduceMs, metric::kCommBusbw}) {
    requests.emplace_back(key(name), x);
  }
  // For the ETA (runProgress): the run's facts and the last train step, by step.
  for (const char* name : {metric::kRunTotalSteps, metric::kRunStepsPerEpoch}) {
    requests.emplace_back(key(name), SeriesX::kStep);
  }
  if (x != SeriesX::kStep) requests.emplace_back(key(metric::kTrainLoss), SeriesX::kStep);
  MetricsStore& store = controller_.store();
  const int generation = generation_;
  const int expected = static_cast<int>(requests.size()) + 2;
  auto answered = std::make_shared<int>(0);
  auto done = [this, generation, expected, answered] {
    if (generation != generation_) return;
    --inFlight_;
    if (++*answered == expected) applySeries();
  };
  inFlight_ += expected;
  whenReady(this, store.run(runId_), [this, generation, done](Result<RunRecord> run) {
    if (generation == generation_ && run.isOk()) applyRun(run.value());
    done();
  });
  whenReady(this, store.logTail(runId_, kLogTailLines),
            [this, generation, done](Result<std::vector<v1::LogLine>> lines) {
              if (generation == generation_ && lines.isOk()) {
                QStringList text;
                for (const v1::LogLine& line : lines.value()) {
                  text << QString::fromStdString(line.text());
                }
                const QString joined = text.join(QLatin1Char('\n'));
                if (joined != log_->toPlainText()) {
                  QScrollBar* bar = log_->verticalScrollBar();
                  const bool atEnd = bar->value() == bar->maximum();
                  log_->setPlainText(joined);
                  if (atEnd) bar->setValue(bar->maximum());
                }
              }
              done();
            });
  for (const auto& [name, seriesX] : requests) {
    const auto key = std::make_pair(name, static_cast<int>(seriesX));
    whenReady(this, store.series(runId_, name, -1, seriesX),
              [this, generation, done, key](Result<std::vector<SeriesPoint>> points) {
                if (generation == generation_) {
                  if (points.isOk()) {
                    fetched_[key] = std::move(points.value());
                  } else {
                    message_->setText(QString::fromStdString(points.status().message()));
                  }
                }
                done();
              });
  }
}

std::vector<SeriesPoint> DashboardTab::take(const QString& name, SeriesX x) {
  auto it = fetched_.find({name, static_cast<int>(x)});
  if (it == fetched_.end()) return {};
  return x == SeriesX::kWallTime ? shifted(it->second, xOrigin()) : it->second;
}

double DashboardTab::xOrigin() const {
  if (run_ && run_->startTime > 0) return run_->startTime;
  if (run_ && run_->createdTime > 0) return run_->createdTime;
  auto it = fetched_.find({key(metric::kTrainLoss), static_cast<int>(SeriesX::kWallTime)});
  return it != fetched_.end() && !it->second.empty() ? it->second.front().x : 0.0;
}

void DashboardTab::applySeries() {
  const SeriesX x = static_cast<SeriesX>(xMode_->currentIndex());
  rawLoss_ = take(key(metric::kTrainLoss), x);
  loss_->setSeries(rawLossName(), rawLoss_, QColor(0x20, 0x9f, 0xdf), true);
  applySmoothing();
  loss_->setSeries(testLossName(), take(key(metric::kTestLoss), x), QColor(0xe6, 0x7e, 0x22));
  accuracy_->setSeries(tr("test accuracy"), take(key(metric::kTestAccuracy), x),
                       QColor(0x27, 0xae, 0x60));
  throughput_->setSeries(tr("samples/s"), take(key(metric::kTrainSamplesPerS), x),
                         QColor(0x6d, 0x5f, 0xd5));
  stepTime_->setSeries(tr("compute"), take(key(metric::kComputeMs), x), QColor(0x20, 0x9f, 0xdf));
  stepTime_->setSeries(tr("exposed communication"), take(key(metric::kExposedCommMs), x),
                       QColor(0xe7, 0x4c, 0x3c));
  allreduce_->setSeries(tr("all-reduce"), take(key(metric::kAllreduceMs), x),
                        QColor(0xbf, 0x59, 0x3e));
  busbw_->setSeries(tr("busbw"), take(key(metric::kCommBusbw), x), QColor(0x2c, 0xa0, 0x8f));

  // Progress for the ETA: the last train step, the run's facts (the last sample of each, at the
  // step the run started from) and the latest samples/s.
  const auto byStep = [&](const char* name) -> const std::vector<SeriesPoint>& {
    static const std::vector<SeriesPoint> kEmpty;
    auto it = fetched_.find({key(name), static_cast<int>(SeriesX::kStep)});
    return it == fetched_.end() ? kEmpty : it->second;
  };
  const auto& lossBySteps = byStep(metric::kTrainLoss);
  if (!lossBySteps.empty()) progress_.stepsDone = static_cast<int64_t>(lossBySteps.back().x);
  const auto& totalSteps = byStep(metric::kRunTotalSteps);
  if (!totalSteps.empty() && std::isfinite(totalSteps.back().y)) {
    progress_.totalSteps = static_cast<int64_t>(totalSteps.back().y);
    progress_.firstStep = static_cast<int64_t>(totalSteps.back().x);
  }
  const auto& perEpoch = byStep(metric::kRunStepsPerEpoch);
  if (!perEpoch.empty() && std::isfinite(perEpoch.back().y)) {
    progress_.stepsPerEpoch = static_cast<int64_t>(perEpoch.back().y);
  }
  progress_.samplesPerSecond.reset();
  auto samples = fetched_.find({key(metric::kTrainSamplesPerS), static_cast<int>(x)});
  if (samples != fetched_.end() && !samples->second.empty()) {
    progress_.samplesPerSecond = samples->second.back().y;
  }
  updateClock();
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
  run_ = run;
  name_->setText(run.name.isEmpty() ? runId_ : run.name);
  state_->setText(stateName(run.state));
  stop_->setEnabled(!ended(run.state));
  if (!run.reason.isEmpty()) message_->setText(run.reason);
  if (title() != before) emit titleChanged(title());
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

void DashboardTab::fetchRanks() {
  sinceRankFetch_.restart();
  rankDirty_ = false;  // again after the run's data changes
  MetricsStore& store = controller_.store();
  const int generation = generation_;
  ++inFlight_;
  whenReady(
      this, store.metricRanks(runId_, key(metric::kStepMs)),
      [this, generation, &store](Result<std::vector<int>> ranks) {
        if (generation != generation_) return;
        --inFlight_;
        if (!ranks.isOk()) return;
        std::vector<int> perRank;
        for (int rank : ranks.value()) {
          if (rank >= 0) perRank.push_back(rank);
        }
        if (perRank.empty()) return;
        const QString nodeId = run_ ? run_->nodeId : controller_.nodeOfRun(runId_);
        const auto node = controller_.node(nodeId);
        const QString nodeName = node && !node->record.name.isEmpty() ? node->record.name : nodeId;
        v1::RunSpec spec;
        if (run_ && !run_->spec.isEmpty()) {
          spec.ParseFromArray(run_->spec.constData(), static_cast<int>(run_->spec.size()));
        }
        auto stats = std::make_shared<std::vector<RankStat>>();
        for (int rank : perRank) {
          stats->push_back(RankStat{rank, hostOfRank(spec, rank, nodeName), {}, {}});
        }
        auto pending = std::make_shared<int>(static_cast<int>(2 * perRank.size()));
        inFlight_ += *pending;
        for (size_t i = 0; i < perRank.size(); ++i) {
          for (bool exposed : {false, true}) {
            const QString name = key(exposed ? metric::kExposedCommMs : metric::kStepMs);
            whenReady(this, store.series(runId_, name, perRank[i]),
                      [this, generation, stats, pending, i,
                       exposed](Result<std::vector<SeriesPoint>> points) {
                        if (generation != generation_) return;
                        --inFlight_;
                        if (points.isOk() && !points.value().empty() &&
                            std::isfinite(points.value().back().y)) {
                          auto& field = exposed ? (*stats)[i].exposedCommMs : (*stats)[i].stepMs;
                          field = points.value().back().y;
                        }
                        if (--*pending == 0) rankView_->setRanks(*stats);
                      });
          }
        }
      });
}

void DashboardTab::onTelemetry(const QString& nodeId, const v1::NodeTelemetry& telemetry) {
  const QString owner =
      run_ && !run_->nodeId.isEmpty() ? run_->nodeId : controller_.nodeOfRun(runId_);
  static const std::vector<v1::HostSlots> kUnplaced;
  const std::vector<v1::HostSlots>& placement = run_ ? run_->placement : kUnplaced;
  QString hostName;
  for (const NodeChoice& node : controller_.nodeChoices()) {
    if (node.nodeId == nodeId) hostName = node.hostName;
  }
  const NodeGpus used = runGpusOnNode(placement, hostName, nodeId == owner);
  if (!used.ofRun) return;
  if (!sawTelemetry_) {
    sawTelemetry_ = true;
    telemetryOrigin_ = run_ && run_->startTime > 0 ? run_->startTime : telemetry.wall_time();
  }
  QString placeholder = tr("N/A: the node does not report this value");
  if (runUsesNoGpus(placement)) {
    placeholder = tr("The run uses no GPUs");
  } else if (telemetry.gpus_size() == 0 && gpuUtilSeries_.empty()) {
    placeholder = tr("No GPUs on this node");
  }
  gpuUtil_->setPlaceholderText(placeholder);
  gpuMem_->setPlaceholderText(placeholder);
  // Several nodes: each series names its node.
  const bool multiNode = placement.size() > 1;
  const auto node = controller_.node(nodeId);
  const QString nodeName = node ? node->record.name : nodeId;
  const double x = telemetry.wall_time() - telemetryOrigin_;
  for (const v1::GpuTelemetry& gpu : telemetry.gpus()) {
    if (!used.allGpus && !used.gpus.contains(gpu.index())) continue;
    const std::pair<QString, uint32_t> key{nodeId, gpu.index()};
    if (!gpuNames_.contains(key)) {
      gpuNames_[key] = multiNode ? tr("%1 GPU %2").arg(nodeName).arg(gpu.index())
                                 : tr("GPU %1").arg(gpu.index());
    }
    if (gpu.has_util_pct()) appendRolling(gpuUtilSeries_[key], {x, gpu.util_pct()});
    if (gpu.has_mem_used_mib()) appendRolling(gpuMemSeries_[key], {x, gpu.mem_used_mib()});
  }
  gpuDirty_ = true;
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
