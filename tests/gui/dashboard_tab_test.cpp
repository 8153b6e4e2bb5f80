// DashboardTab on a store-backed Controller (no agent): synthetic samples ingested into the
// store reach the charts after runDataChanged, the per-rank view names the slowest rank and its
// node, GPU telemetry of the run's node is charted, the ETA comes from the run's own facts
// (run/total_steps), the epoch axis is fractional (run/steps_per_epoch), every chart exports as
// PNG or SVG and the run's metrics as CSV at full resolution through the dashboard's menus and
// file dialogs, and the progress helpers compute as documented.
#include <QComboBox>
#include <QFile>
#include <QLabel>
#include <QLineSeries>
#include <QLocale>
#include <QMenu>
#include <QPushButton>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QSvgRenderer>
#include <QTreeView>
#include <QTemporaryDir>
#include <QToolButton>
#include <QGroupBox>
#include <QtTest>

#include <cmath>

#include "gui_test_support.h"
#include "ringside/common/curve.h"
#include "ringside/common/metric_names.h"
#include "ringside/gui/controller.h"
#include "ringside/gui/run_placement.h"
#include "ringside/gui/widgets/custom_metrics_panel.h"
#include "ringside/gui/widgets/dashboard_tab.h"
#include "ringside/gui/widgets/metric_chart.h"
#include "ringside/gui/widgets/rank_view.h"

using namespace ringside;
using namespace ringside::gui;

using ringside::gui::testing::answerNextFileDialog;
using ringside::gui::testing::ControllerInTempDir;

namespace {

const QString kRunId = QStringLiteral("run-synthetic");
const QString kNodeId = QStringLiteral("node-a");

v1::MetricSample sample(uint64_t seq, int64_t step, int rank, const char* name, double value,
                        double wallTime) {
  v1::MetricSample s;
  s.set_seq(seq);
  s.set_step(step);
  s.set_epoch((step - 1) / 100);
  s.set_wall_time(wallTime);
  s.set_rank(rank);
  s.set_name(name);
  s.set_value(value);
  return s;
}

// A 3-rank run, 150 of 200 steps done (2 epochs of 100 steps); rank 1 is the slowest (1.5 ms
// against a median of 1.1). Without `withFacts` it lacks run/total_steps and run/steps_per_epoch,
// as a custom command that prints no start record.
IngestBatch syntheticRun(double startTime, const QString& runId = kRunId, bool withFacts = true) {
  IngestBatch batch;
  batch.runId = runId;
  batch.nodeId = kNodeId;
  v1::RunStateEvent state;
  state.set_seq(1);
  v1::RunInfo* run = state.mutable_run();
  run->set_run_id(runId.toStdString());
  run->mutable_spec()->set_name("synthetic run");
  v1::TrainerConfig* config = run->mutable_spec()->mutable_trainer()->mutable_config();
  config->set_epochs(2);
  config->set_global_batch(100);
  config->set_train_samples(10000);
  run->mutable_spec()->set_ranks_per_node(3);
  run->set_state(v1::RUNNING);
  run->set_created_time(startTime);
  run->set_start_time(startTime);
  run->set_world_size(3);
  batch.states.push_back(state);
  uint64_t seq = 2;
  // The run's facts, as the trainer sends them at its start: 2 epochs of 100 steps.
  if (withFacts) {
    batch.samples.push_back(sample(seq++, 0, -1, metric::kRunTotalSteps, 200, startTime));
    batch.samples.push_back(sample(seq++, 0, -1, metric::kRunStepsPerEpoch, 100, startTime));
  }
  for (int64_t step = 1; step <= 150; ++step) {
    const double t = startTime + 0.01 * step;
    batch.samples.push_back(sample(seq++, step, -1, "train/loss", 2.0 / std::sqrt(step), t));
    batch.samples.push_back(sample(seq++, step, -1, "train/samples_per_s", 10'000, t));
    batch.samples.push_back(sample(seq++, step, -1, "time/compute_ms", 0.8, t));
    batch.samples.push_back(sample(seq++, step, -1, "time/exposed_comm_ms", 0.2, t));
    const double stepMs[] = {1.0, 1.5, 1.1};
    for (int rank = 0; rank < 3; ++rank) {
      batch.samples.push_back(
          sample(seq++, step, rank, "time/step_ms", stepMs[rank] + (step == 150 ? 0 : 1), t));
      batch.samples.push_back(sample(seq++, step, rank, "time/exposed_comm_ms", 0.1 * rank, t));
    }
  }
  batch.samples.push_back(sample(seq++, 100, -1, "test/loss", 0.5, startTime + 1));
  batch.samples.push_back(sample(seq++, 100, -1, "test/accuracy", 0.8, startTime + 1));
  v1::LogLine line;
  line.set_seq(seq++);
  line.set_text("epoch 0 done");
  batch.logLines.push_back(line);
  return batch;
}

}  // namespace

class DashboardTabTest : public QObject {
  Q_OBJECT

 private slots:
  void chartsAndRankViewFillFromTheStore() {
    ControllerInTempDir fixture;
    Controller& controller = fixture.controller;
    QVERIFY(controller.start().isOk());
    const double start = QDateTime::currentMSecsSinceEpoch() / 1000.0 - 30;
    auto ingested = controller.store().ingest(syntheticRun(start));
    ingested.waitForFinished();
    QVERIFY(ingested.result().isOk());

    DashboardTab tab(controller, kRunId);
    tab.resize(1200, 900);
    QSignalSpy titles(&tab, &DashboardTab::titleChanged);
    emit controller.runDataChanged(kRunId);

    QTRY_VERIFY(tab.lossChart()->seriesNames().contains(DashboardTab::smoothedLossName()) &&
                tab.lossChart()->seriesData(DashboardTab::rawLossName()).size() == 150);
    QTRY_VERIFY(!tab.lossChart()->drawnPoints(DashboardTab::smoothedLossName()).empty());
    QCOMPARE(tab.lossChart()->seriesData(DashboardTab::testLossName()).size(), size_t{1});
    QCOMPARE(tab.title(), QStringLiteral("synthetic run"));
    QVERIFY(titles.count() >= 1);
    QCOMPARE(tab.stateText(), QStringLiteral("running"));
    QTRY_VERIFY(tab.logText().contains(QStringLiteral("epoch 0 done")));
    // 50 steps left at 10,000 samples/s / 100 per batch = 100 steps/s.
    QTRY_COMPARE(tab.etaText(), QStringLiteral("1 s"));
    // The stacked step-time chart holds compute below exposed communication.
    QTRY_VERIFY(tab.stepTimeChart()->seriesNames().size() == 2 &&
                tab.stepTimeChart()->seriesData(tab.stepTimeChart()->seriesNames()[1]).size() ==
                    150);

    QTRY_VERIFY2(tab.rankView()->summaryText().contains(QStringLiteral("rank 1")),
                 qPrintable(tab.rankView()->summaryText()));
    const QString summary = tab.rankView()->summaryText();
    QVERIFY2(summary.contains(QStringLiteral("on node node-a")), qPrintable(summary));
    QVERIFY2(summary.contains(QStringLiteral("1.50 ms")), qPrintable(summary));
    QVERIFY2(summary.contains(QStringLiteral("+36%")), qPrintable(summary));

    // GPU telemetry of the run's node becomes a chart series; other nodes are ignored.
    v1::NodeTelemetry telemetry;
    telemetry.set_wall_time(start + 5);
    auto* gpu = telemetry.add_gpus();
    gpu->set_index(0);
    gpu->set_util_pct(87);
    gpu->set_mem_used_mib(1024);
    emit controller.telemetryReceived(QStringLiteral("other"), telemetry);
    emit controller.telemetryReceived(kNodeId, telemetry);
    QTRY_COMPARE(tab.gpuUtilChart()->seriesNames().size(), qsizetype{1});
    QCOMPARE(tab.gpuUtilChart()->seriesData(tab.gpuUtilChart()->seriesNames()[0]).size(),
             size_t{1});
  }

  // x = epoch put every step of an epoch on one x value. Now x = step / steps per
  // epoch from the run's own facts: the steps spread over the epoch, and the test metrics of an
  // epoch's last step sit on the whole epoch. A run without the facts keeps whole epochs.
  void epochAxisIsFractional() {
    ControllerInTempDir fixture;
    Controller& controller = fixture.controller;
    QVERIFY(controller.start().isOk());
    const double start = QDateTime::currentMSecsSinceEpoch() / 1000.0 - 30;
    for (const IngestBatch& batch :
         {syntheticRun(start), syntheticRun(start, QStringLiteral("run-no-facts"), false)}) {
      auto ingested = controller.store().ingest(batch);
      ingested.waitForFinished();
      QVERIFY(ingested.result().isOk());
    }

    DashboardTab tab(controller, kRunId);
    emit controller.runDataChanged(kRunId);
    MetricChart* loss = tab.lossChart();
    QTRY_COMPARE(loss->seriesData(DashboardTab::rawLossName()).size(), size_t{150});
    tab.xModeBox()->setCurrentIndex(1);  // Epoch
    QTRY_VERIFY(!loss->seriesData(DashboardTab::rawLossName()).empty() &&
                loss->seriesData(DashboardTab::rawLossName()).back().x == 1.5);
    const std::vector<SeriesPoint> raw = loss->seriesData(DashboardTab::rawLossName());
    QCOMPARE(raw.size(), size_t{150});
    for (size_t i = 0; i < raw.size(); ++i) {
      QCOMPARE(raw[i].x, static_cast<double>(i + 1) / 100.0);  // step 1 is 0.01, step 100 is 1
    }
    QCOMPARE(loss->seriesData(DashboardTab::testLossName()).front().x, 1.0);
    const QString exposed = tab.stepTimeChart()->seriesNames().value(1);
    QCOMPARE(tab.stepTimeChart()->seriesData(exposed).back().x, 1.5);

    DashboardTab noFacts(controller, QStringLiteral("run-no-facts"));
    noFacts.xModeBox()->setCurrentIndex(1);
    emit controller.runDataChanged(QStringLiteral("run-no-facts"));
    QTRY_COMPARE(noFacts.lossChart()->seriesData(DashboardTab::rawLossName()).size(), size_t{150});
    for (const SeriesPoint& point : noFacts.lossChart()->seriesData(DashboardTab::rawLossName())) {
      QVERIFY(point.x == 0.0 || point.x == 1.0);  // the 0-based epoch of each sample
    }
  }

  // A run's dashboard exports any chart as PNG or SVG (its "Export chart" menu
  // and every chart's context menu) and the run's metrics as CSV at full resolution: every stored
  // sample of every metric and rank, not the decimated chart data.
  void exportsChartsAndFullResolutionCsv() {
    ControllerInTempDir fixture;
    Controller& controller = fixture.controller;
    QVERIFY(controller.start().isOk());
    const double start = QDateTime::currentMSecsSinceEpoch() / 1000.0 - 30;
    auto ingested = controller.store().ingest(syntheticRun(start));
    ingested.waitForFinished();
    QVERIFY(ingested.result().isOk());
    DashboardTab tab(controller, kRunId);
    tab.resize(1200, 900);
    tab.show();
    QVERIFY(QTest::qWaitForWindowExposed(&tab));
    emit controller.runDataChanged(kRunId);
    QTRY_COMPARE(tab.lossChart()->seriesData(DashboardTab::rawLossName()).size(), size_t{150});
    QTRY_COMPARE(tab.title(), QStringLiteral("synthetic run"));

    // The menu has every chart, each with PNG and SVG; every chart's context menu saves it and
    // exports the run's CSV; the file names start with the run's name.
    const QList<MetricChart*> charts = tab.charts();
    QCOMPARE(charts.size(), qsizetype{13});  // 6 training charts, 7 GPU charts
    QStringList titles;
    for (QAction* action : tab.exportChartButton()->menu()->actions()) {
      QVERIFY(action->menu() != nullptr);
      QCOMPARE(action->menu()->actions().size(), qsizetype{2});
      titles << action->text();
    }
    QCOMPARE(titles.size(), charts.size());
    for (MetricChart* chart : charts) {
      QVERIFY(titles.contains(chart->title()));
      QStringList actions;
      for (QAction* action : chart->contextMenu()->actions()) actions << action->text();
      QVERIFY2(actions.contains(QStringLiteral("Save as &PNG…")) &&
                   actions.contains(QStringLiteral("Save as &SVG…")) &&
                   actions.contains(QStringLiteral("Export the run's metrics as CSV…")),
               qPrintable(actions.join(QLatin1Char('|'))));
      QVERIFY2(chart->exportName().startsWith(QStringLiteral("synthetic_run-")),
               qPrintable(chart->exportName()));
    }

    QTemporaryDir out;
    // The loss chart as SVG from the Export chart menu, answering its save dialog.
    const QString svg = out.filePath(QStringLiteral("loss.svg"));
    answerNextFileDialog(svg);
    tab.exportChartButton()->menu()->actions().first()->menu()->actions().at(1)->trigger();
    QVERIFY(QFile::exists(svg));
    QSvgRenderer renderer(svg);
    QVERIFY(renderer.isValid());
    // The step-time chart as PNG from its context menu.
    const QString png = out.filePath(QStringLiteral("step-time.png"));
    answerNextFileDialog(png);
    tab.stepTimeChart()->contextMenu()->actions().first()->trigger();
    const QImage image(png);
    QVERIFY(!image.isNull() && image.width() > 100);

    // The CSV button: every stored sample.
    const QString csv = out.filePath(QStringLiteral("metrics.csv"));
    answerNextFileDialog(csv);
    tab.exportCsvButton()->click();
    QTRY_VERIFY(QFile::exists(csv));
    QFile file(csv);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QList<QByteArray> lines = file.readAll().trimmed().split('\n');
    QCOMPARE(lines.first(), QByteArray("step,epoch,wall_time,rank,name,value"));
    auto count = controller.store().sampleCount(kRunId);
    count.waitForFinished();
    QCOMPARE(lines.size() - 1, count.result().value());
    QCOMPARE(lines.size() - 1, 1504);  // 2 facts, 150 steps x (4 global + 3 ranks x 2), 2 test
    const auto rowsOf = [&lines](const QByteArray& rank, const QByteArray& name) {
      return std::count_if(lines.begin(), lines.end(), [&](const QByteArray& line) {
        const QList<QByteArray> fields = line.split(',');
        return fields.size() == 6 && fields[3] == rank && fields[4] == name;
      });
    };
    QCOMPARE(rowsOf("-1", "train/loss"), 150);
    QCOMPARE(rowsOf("1", "time/step_ms"), 150);
  }

  void gpuChartsShowTheRunsGpusOnEveryNodeOfTheRun() {
    ControllerInTempDir fixture;
    Controller& controller = fixture.controller;
    QSignalSpy started(&controller, &Controller::started);
    QVERIFY(controller.start().isOk());
    QTRY_COMPARE(started.count(), 1);
    auto agentKey = curve::generateKeyPair();
    QVERIFY(agentKey.isOk());
    const QString key = QString::fromStdString(agentKey->publicKey);
    QHash<QString, QString> ids;  // host -> node id
    for (const char* host : {"gpu-a", "gpu-b", "gpu-c"}) {
      QVERIFY(controller
                  .addNode(QStringLiteral("node %1").arg(QLatin1String(host + 4)),
                           QString::fromLatin1(host), 47600, 47601, key)
                  .isOk());
    }
    for (const NodeView& node : controller.nodes()) {
      ids[node.record.address.section(QLatin1Char(':'), 1, 1).mid(2)] = node.record.nodeId;
    }
    QCOMPARE(ids.size(), 3);

    // Rank 0 on gpu-a with its GPU 1, rank 1 on gpu-b with its GPU 0; gpu-c is not in the run.
    v1::RunInfo run;
    run.set_run_id("run-placed");
    run.mutable_spec()->set_name("placed run");
    run.set_state(v1::RUNNING);
    run.set_world_size(2);
    for (const auto& [host, gpu] : {std::pair{"gpu-a", 1u}, std::pair{"gpu-b", 0u}}) {
      v1::HostSlots* entry = run.add_placement();
      entry->set_host(host);
      entry->set_ranks(1);
      entry->add_gpus(gpu);
    }
    auto stored = controller.store().upsertRun(ids["gpu-a"], run);
    stored.waitForFinished();
    QVERIFY(stored.result().isOk());

    DashboardTab tab(controller, QStringLiteral("run-placed"));
    emit controller.runDataChanged(QStringLiteral("run-placed"));
    QTRY_COMPARE(tab.title(), QStringLiteral("placed run"));
    for (const QString& host :
         {QStringLiteral("gpu-a"), QStringLiteral("gpu-b"), QStringLiteral("gpu-c")}) {
      v1::NodeTelemetry telemetry;
      telemetry.set_wall_time(1000);
      for (uint32_t index = 0; index < 2; ++index) {
        v1::GpuTelemetry* gpu = telemetry.add_gpus();
        gpu->set_index(index);
        gpu->set_util_pct(10 + index);
        gpu->set_mem_used_mib(100);
      }
      emit controller.telemetryReceived(ids[host], telemetry);
    }
    QTRY_COMPARE(tab.gpuUtilChart()->seriesNames().size(), qsizetype{2});
    QStringList names = tab.gpuUtilChart()->seriesNames();
    names.sort();
    QCOMPARE(names, (QStringList{QStringLiteral("node a GPU 1"), QStringLiteral("node b GPU 0")}));
    QCOMPARE(tab.gpuUtilChart()->seriesData(QStringLiteral("node a GPU 1")).front().y, 11.0);
    QCOMPARE(tab.gpuMemChart()->seriesNames().size(), qsizetype{2});

    // A CPU run (placed, no GPU anywhere) says so instead of charting the node's GPUs.
    v1::RunInfo cpuRun = run;
    cpuRun.set_run_id("run-cpu");
    cpuRun.mutable_spec()->set_name("cpu run");
    for (v1::HostSlots& entry : *cpuRun.mutable_placement()) entry.clear_gpus();
    auto storedCpu = controller.store().upsertRun(ids["gpu-a"], cpuRun);
    storedCpu.waitForFinished();
    QVERIFY(storedCpu.result().isOk());
    DashboardTab cpuTab(controller, QStringLiteral("run-cpu"));
    emit controller.runDataChanged(QStringLiteral("run-cpu"));
    QTRY_COMPARE(cpuTab.title(), QStringLiteral("cpu run"));
    v1::NodeTelemetry telemetry;
    telemetry.add_gpus()->set_index(0);
    telemetry.mutable_gpus(0)->set_util_pct(50);
    emit controller.telemetryReceived(ids["gpu-a"], telemetry);
    QTRY_COMPARE(cpuTab.gpuUtilChart()->placeholderText(), QStringLiteral("The run uses no GPUs"));
    QVERIFY(cpuTab.gpuUtilChart()->seriesNames().isEmpty());
  }

  void runGpusOnNodeRules() {
    // Unknown placement: the owner's node with every GPU, no other node.
    NodeGpus owner = runGpusOnNode({}, QStringLiteral("a"), true);
    QVERIFY(owner.ofRun && owner.allGpus);
    QVERIFY(!runGpusOnNode({}, QStringLiteral("b"), false).ofRun);
    QVERIFY(!runUsesNoGpus({}));
    std::vector<v1::HostSlots> placement(2);
    placement[0].set_host("Node-1");
    placement[0].add_gpus(3);
    placement[1].set_host("node-2");
    // Host names match case-insensitively; the run's GPUs only.
    NodeGpus first = runGpusOnNode(placement, QStringLiteral("node-1"), false);
    QVERIFY(first.ofRun && !first.allGpus);
    QCOMPARE(first.gpus, (std::set<uint32_t>{3}));
    NodeGpus second = runGpusOnNode(placement, QStringLiteral("node-2"), false);
    QVERIFY(second.ofRun && second.gpus.empty());
    QVERIFY(!runGpusOnNode(placement, QStringLiteral("node-3"), false).ofRun);
    // The owner under another name than the spec's still runs the first entry's ranks.
    QCOMPARE(runGpusOnNode(placement, QStringLiteral("10.0.0.1"), true).gpus,
             (std::set<uint32_t>{3}));
    QVERIFY(!runUsesNoGpus(placement));
    placement[0].clear_gpus();
    QVERIFY(runUsesNoGpus(placement));
  }

  void slowestRankAndHosts() {
    std::vector<RankStat> ranks{
        {0, "a", 1.0, 0.1}, {1, "a", 2.0, 0.3}, {2, "b", 1.0, {}}, {3, "b", {}, {}}};
    const auto slowest = findSlowestRank(ranks);
    QVERIFY(slowest.has_value());
    QCOMPARE(slowest->rank, 1);
    QCOMPARE(slowest->node, QStringLiteral("a"));
    QCOMPARE(slowest->medianStepMs, 1.0);
    QCOMPARE(slowest->overMedianPct, 100.0);
    QVERIFY(!findSlowestRank({{0, "a", {}, {}}}).has_value());

    v1::RunSpec spec;
    auto* h1 = spec.add_hosts();
    h1->set_host("gpu01");
    h1->set_ranks(2);
    auto* h2 = spec.add_hosts();
    h2->set_host("gpu02");
    h2->set_ranks(2);
    QCOMPARE(hostOfRank(spec, 1, "own"), QStringLiteral("gpu01"));
    QCOMPARE(hostOfRank(spec, 2, "own"), QStringLiteral("gpu02"));
    QCOMPARE(hostOfRank(spec, 4, "own"), QString());
    QCOMPARE(hostOfRank(v1::RunSpec(), 3, "own"), QStringLiteral("own"));
  }

  // runProgress: progress and ETA from the run's facts, its last step and its throughput.
  void progressAndEtaFromTheRunsFacts() {
    ProgressFacts facts;
    facts.stepsDone = 100;
    facts.totalSteps = 400;
    facts.stepsPerEpoch = 200;
    facts.samplesPerSecond = 1280.0;
    facts.globalBatch = 128;  // 10 steps/s
    RunProgress progress = runProgress(facts);
    QCOMPARE(progress.fraction, std::optional<double>(0.25));
    QCOMPARE(progress.epochs, std::optional<double>(0.5));
    QCOMPARE(progress.stepsPerSecond, std::optional<double>(10.0));
    QCOMPARE(progress.etaSeconds, std::optional<double>(30.0));

    // Without samples/s (or the global batch), the mean rate since the start: a run resumed at
    // step 40 that did 60 steps in 12 s runs at 5 steps/s.
    facts.samplesPerSecond.reset();
    facts.firstStep = 40;
    facts.runningSeconds = 12.0;
    progress = runProgress(facts);
    QCOMPARE(progress.stepsPerSecond, std::optional<double>(5.0));
    QCOMPARE(progress.etaSeconds, std::optional<double>(60.0));

    // Unknown facts give unknown read-outs (N/A), never a guess.
    ProgressFacts unknown;
    unknown.stepsDone = 100;
    unknown.samplesPerSecond = std::nan("");
    unknown.globalBatch = 128;
    progress = runProgress(unknown);
    QVERIFY(!progress.fraction && !progress.epochs && !progress.stepsPerSecond &&
            !progress.etaSeconds);
    facts.stepsDone = 500;  // past the end (a run cut short by a stop): done
    QCOMPARE(runProgress(facts).fraction, std::optional<double>(1.0));
    QCOMPARE(runProgress(facts).etaSeconds, std::optional<double>(0.0));

    QCOMPARE(etaSeconds(100, 400, 10.0), std::optional<double>(30.0));
    QCOMPARE(etaSeconds(500, 400, 10.0), std::optional<double>(0.0));
    QCOMPARE(etaSeconds(100, std::nullopt, 10.0), std::nullopt);
    QCOMPARE(etaSeconds(100, 400, std::nullopt), std::nullopt);
    QCOMPARE(formatDuration(42.4), QStringLiteral("42 s"));
    QCOMPARE(formatDuration(185), QStringLiteral("3 min 05 s"));
    QCOMPARE(formatDuration(3720), QStringLiteral("1 h 02 min"));

    // The epoch axis: step / steps per epoch; unknown steps per epoch leaves the steps alone.
    const std::vector<SeriesPoint> bySteps{{1, 0.5}, {50, 0.4}, {100, 0.3}, {250, 0.2}};
    const std::vector<SeriesPoint> epochs = stepsToEpochs(bySteps, 100);
    QCOMPARE(epochs.size(), bySteps.size());
    QCOMPARE(epochs[0].x, 0.01);
    QCOMPARE(epochs[1].x, 0.5);
    QCOMPARE(epochs[2].x, 1.0);  // the last step of the first epoch
    QCOMPARE(epochs[3].x, 2.5);
    QCOMPARE(epochs[3].y, 0.2);
    QCOMPARE(stepsToEpochs(bySteps, 0)[3].x, 250.0);
  }

  // Under --lang de the read-outs use a decimal comma and group thousands with a dot.
  void readOutsFollowTheDefaultLocale() {
    const QLocale saved;
    QLocale::setDefault(QLocale(QLocale::German, QLocale::Germany));
    const auto restore = qScopeGuard([&saved] { QLocale::setDefault(saved); });
    QCOMPARE(formatDuration(1234 * 3600.0 + 300), QStringLiteral("1.234 h 05 min"));
    QCOMPARE(formatDuration(185), QStringLiteral("3 min 05 s"));

    RankView view;
    view.setRanks({{0, "a", 1.0, 0.25}, {1, "a", 1.5, 0.5}, {2, "b", 1.1, 0.125}});
    const QString summary = view.summaryText();
    QVERIFY2(summary.contains(QStringLiteral("step 1,50 ms (+36% over median)")),
             qPrintable(summary));
    const QAbstractItemModel* table = view.table()->model();
    QCOMPARE(table->index(1, 2).data().toString(), QStringLiteral("1,500"));  // step of rank 1
    QCOMPARE(table->index(2, 3).data().toString(), QStringLiteral("0,125"));  // wait of rank 2

    ControllerInTempDir fixture;
    Controller& controller = fixture.controller;
    QVERIFY(controller.start().isOk());
    DashboardTab tab(controller, kRunId);
    bool smoothingShown = false;  // the slider's value next to it, 0.60 at first
    for (const QLabel* label : tab.findChildren<QLabel*>()) {
      smoothingShown |= label->text() == QStringLiteral("0,60");
    }
    QVERIFY(smoothingShown);
  }
  // Every metric the run logs that the fixed charts do not show gets a chart on the
  // Metrics page, grouped by the part before '/'; a name logged per rank only has a series per
  // rank; the fixed ones (train/loss, time/..., gpu<i>/...) stay off it.
  void theMetricsPageChartsEveryOtherMetricGroupedByPrefix() {
    ControllerInTempDir fixture;
    Controller& controller = fixture.controller;
    QVERIFY(controller.start().isOk());
    const double start = QDateTime::currentMSecsSinceEpoch() / 1000.0 - 30;
    IngestBatch batch = syntheticRun(start);
    uint64_t seq = 100000;
    for (int64_t step = 1; step <= 50; ++step) {
      batch.samples.push_back(sample(seq++, step, -1, "custom/grad_norm", 1.0 / step, start));
      batch.samples.push_back(sample(seq++, step, -1, "custom/lr_scale", 0.5, start));
      batch.samples.push_back(sample(seq++, step, -1, "train/lr", 0.1, start));
      batch.samples.push_back(sample(seq++, step, -1, "gpu0/util_pct", 50, start));
      for (int rank = 0; rank < 2; ++rank) {
        batch.samples.push_back(sample(seq++, step, rank, "tokens", 100.0 * (rank + 1), start));
      }
    }
    auto ingested = controller.store().ingest(batch);
    ingested.waitForFinished();
    QVERIFY(ingested.result().isOk());

    DashboardTab tab(controller, kRunId);
    tab.resize(1200, 900);
    tab.show();
    CustomMetricsPanel* page = tab.customMetrics();
    QVERIFY(page != nullptr);
    emit controller.runDataChanged(kRunId);
    QTRY_VERIFY_WITH_TIMEOUT(page->loaded() && page->chartedNames().size() == 4, 10000);
    QCOMPARE(page->chartedNames(),
             (QStringList{"custom/grad_norm", "custom/lr_scale", "train/lr", "tokens"}));
    QTRY_COMPARE_WITH_TIMEOUT(page->chart("custom/grad_norm")->seriesData("custom/grad_norm").size(),
                              size_t{50}, 10000);
    QTRY_VERIFY_WITH_TIMEOUT(page->chart("tokens")->seriesNames().size() == 2, 10000);
    QCOMPARE(page->chart("tokens")->seriesData("rank 1").back().y, 200.0);
    QVERIFY(page->chart("train/loss") == nullptr);
    QVERIFY(page->chart("gpu0/util_pct") == nullptr);
    // Grouped: "custom", "train", then the names without a prefix.
    QStringList groups;
    for (QGroupBox* box : page->findChildren<QGroupBox*>()) groups << box->title();
    groups.sort();
    QCOMPARE(groups, (QStringList{"Other", "custom", "train"}));
    QVERIFY(tab.charts().contains(page->chart("tokens")));
  }
};

QTEST_MAIN(DashboardTabTest)
#include "dashboard_tab_test.moc"
