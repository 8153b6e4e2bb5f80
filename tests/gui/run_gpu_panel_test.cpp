// The run's GPU charts (RunGpuPanel on the dashboard's GPUs page, CompareGpuChart in Compare) on a
// store-backed Controller without an agent, fed with readings shaped like the fake NVML's
// (tests/agent/fake_nvml.c: GPU 1 reports no power, SM clock or NVLink): a value a GPU does not
// report has no series (no zeros), only the run's GPUs are charted, a finished run's dashboard
// and Compare read the GPU series stored with the run, a live run's charts start with what was
// stored and add live readings without duplicates, and every GPU chart exports. RunGpuSeries and
// the gpu<i>/<field> names are tested on their own.
#include <QAbstractAxis>
#include <QChart>
#include <QComboBox>
#include <QLegend>
#include <QLocale>
#include <QMenu>
#include <QSvgRenderer>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QToolButton>
#include <QtTest>

#include <cmath>

#include "gui_test_support.h"
#include "ringside/common/curve.h"
#include "ringside/gui/run_gpu_series.h"
#include "ringside/gui/widgets/compare_gpu_chart.h"
#include "ringside/gui/widgets/compare_view.h"
#include "ringside/gui/widgets/dashboard_tab.h"
#include "ringside/gui/widgets/metric_chart.h"
#include "ringside/gui/widgets/run_gpu_panel.h"

using namespace ringside;
using namespace ringside::gui;
using ringside::gui::testing::ControllerInTempDir;

namespace {

constexpr double kStart = 1'767'000'000.0;

template <typename T>
T await(QFuture<T> future) {
  future.waitForFinished();
  return future.result();
}

// Tick `i` of the fake NVML's two GPUs: GPU 1 has no power, SM clock or NVLink reading.
v1::NodeTelemetry fakeNvmlTelemetry(double wallTime, int i = 0) {
  v1::NodeTelemetry t;
  t.set_wall_time(wallTime);
  v1::GpuTelemetry* gpu0 = t.add_gpus();
  gpu0->set_index(0);
  gpu0->set_util_pct(87 - i % 3);
  gpu0->set_mem_used_mib(1024 + i);
  gpu0->set_mem_total_mib(81559);
  gpu0->set_power_w(312.5 + i);
  gpu0->set_temp_c(71);
  gpu0->set_sm_clock_mhz(1980);
  gpu0->set_pcie_rx_mbps(25.6);
  gpu0->set_pcie_tx_mbps(12.8);
  gpu0->set_nvlink_rx_mbps(1.024);
  gpu0->set_nvlink_tx_mbps(0.512);
  v1::GpuTelemetry* gpu1 = t.add_gpus();
  gpu1->set_index(1);
  gpu1->set_util_pct(3);
  gpu1->set_mem_used_mib(512);
  gpu1->set_mem_total_mib(81559);
  gpu1->set_temp_c(35);
  gpu1->set_pcie_rx_mbps(0);
  gpu1->set_pcie_tx_mbps(0);
  return t;
}

v1::HostSlots host(const char* name, uint32_t ranks, std::initializer_list<uint32_t> gpus) {
  v1::HostSlots entry;
  entry.set_host(name);
  entry.set_ranks(ranks);
  for (uint32_t gpu : gpus) entry.add_gpus(gpu);
  return entry;
}

v1::RunInfo runInfo(const char* runId, const char* name, v1::RunState state, double start,
                    std::initializer_list<v1::HostSlots> placement) {
  v1::RunInfo run;
  run.set_run_id(runId);
  run.mutable_spec()->set_name(name);
  run.set_state(state);
  run.set_created_time(start);
  run.set_start_time(start);
  int worldSize = 0;
  for (const v1::HostSlots& entry : placement) {
    *run.add_placement() = entry;
    worldSize += static_cast<int>(entry.ranks());
  }
  run.set_world_size(worldSize);
  return run;
}

QStringList sortedNames(const MetricChart* chart) {
  QStringList names = chart->seriesNames();
  names.sort();
  return names;
}

QString yTitle(const MetricChart* chart) {
  const QList<QAbstractAxis*> axes = chart->chart()->axes(Qt::Vertical);
  return axes.isEmpty() ? QString() : axes.first()->titleText();
}

QString xTitle(const MetricChart* chart) {
  const QList<QAbstractAxis*> axes = chart->chart()->axes(Qt::Horizontal);
  return axes.isEmpty() ? QString() : axes.first()->titleText();
}

// Adds nodes "node a" (host gpu-a) and "node b" (host gpu-b); returns host -> node id.
QHash<QString, QString> addTwoNodes(Controller& controller) {
  QHash<QString, QString> ids;
  auto key = curve::generateKeyPair();
  if (!key.isOk()) return ids;
  for (const char* name : {"gpu-a", "gpu-b"}) {
    const Status added = controller.addNode(QStringLiteral("node %1").arg(QLatin1String(name + 4)),
                                            QString::fromLatin1(name), 47600, 47601,
                                            QString::fromStdString(key->publicKey));
    if (!added.isOk()) return {};
  }
  for (const NodeView& node : controller.nodes()) {
    ids[node.record.address.section(QLatin1Char(':'), 1, 1).mid(2)] = node.record.nodeId;
  }
  return ids;
}

}  // namespace

class RunGpuPanelTest : public QObject {
  Q_OBJECT

 private slots:
  void metricNamesRoundTrip() {
    for (GpuField field : kGpuFields) {
      const QString name = gpuMetricName(12, field);
      const std::optional<GpuMetric> parsed = parseGpuMetricName(name);
      QVERIFY2(parsed && parsed->index == 12 && parsed->field == field, qPrintable(name));
    }
    QCOMPARE(gpuMetricName(1, GpuField::kTempC), QStringLiteral("gpu1/temp_C"));
    for (const char* name :
         {"gpu/power_W", "gpux/power_W", "gpu1/power", "gpu1/power_W/x", "node/cpu_pct",
          "gpu1234567890/power_W", "gpu-1/power_W", "train/loss", "gpu\u0661/power_W"}) {
      QVERIFY2(!parseGpuMetricName(QString::fromUtf8(name)), name);
    }
  }

  void seriesKeepAbsentValuesAbsentAndOnlyTheRunsGpus() {
    RunGpuSeries series;
    // The run holds GPU 1 of this node only: GPU 0's readings are not its.
    NodeGpus onlyOne;
    onlyOne.ofRun = true;
    onlyOne.gpus = {1};
    QVERIFY(series.addTelemetry(0, onlyOne, fakeNvmlTelemetry(10)));
    const RunGpu gpu1{.firstRank = 0, .index = 1};
    QCOMPARE(series.gpus(), (std::vector<RunGpu>{gpu1}));
    QCOMPARE(series.points(gpu1, GpuField::kTempC).size(), size_t{1});
    QCOMPARE(series.points(gpu1, GpuField::kTempC).front().y, 35.0);
    for (GpuField absent : {GpuField::kPowerW, GpuField::kSmClockMHz, GpuField::kNvlinkRxMBps,
                            GpuField::kNvlinkTxMBps}) {
      QVERIFY(series.points(gpu1, absent).empty());
    }
    QCOMPARE(series.memTotalMiB(gpu1), std::optional<double>(81559));
    // A node that is not the run's adds nothing.
    QVERIFY(!series.addTelemetry(2, NodeGpus{}, fakeNvmlTelemetry(11)));
    QCOMPARE(series.gpus().size(), size_t{1});
    // Every GPU of the (owner's) node when the placement is unknown.
    NodeGpus all;
    all.ofRun = true;
    all.allGpus = true;
    QVERIFY(series.addTelemetry(2, all, fakeNvmlTelemetry(12)));
    const RunGpu gpu0{.firstRank = 2, .index = 0};
    QCOMPARE(series.points(gpu0, GpuField::kPowerW).front().y, 312.5);
    QCOMPARE(series.gpus().size(), size_t{3});
    // The same reading again adds nothing.
    (void)series.takeChanged();
    QVERIFY(!series.addTelemetry(2, all, fakeNvmlTelemetry(12)));
    QVERIFY(series.takeChanged().empty());
  }

  void storedAndLiveMergeWithoutDuplicates() {
    RunGpuSeries series;
    NodeGpus all;
    all.ofRun = true;
    all.allGpus = true;
    const RunGpu gpu0{.firstRank = 0, .index = 0};
    QVERIFY(series.addTelemetry(0, all, fakeNvmlTelemetry(3, 5)));  // power 317.5
    QVERIFY(series.addTelemetry(0, all, fakeNvmlTelemetry(4, 6)));
    (void)series.takeChanged();
    // Stored readings, unordered, one of them the live reading at x = 3 again.
    series.addStored(gpu0, GpuField::kPowerW, {{2, 314.5}, {1, 313.5}, {3, 317.5}, {NAN, 1}});
    const auto changed = series.takeChanged();
    QCOMPARE(changed.size(), size_t{1});
    QVERIFY(changed.contains({gpu0, GpuField::kPowerW}));
    const std::vector<SeriesPoint>& power = series.points(gpu0, GpuField::kPowerW);
    QCOMPARE(power.size(), size_t{4});
    for (size_t i = 0; i < power.size(); ++i) QCOMPARE(power[i].x, double(i + 1));
    QCOMPARE(power[2].y, 317.5);
    // A late live reading goes in order.
    NodeGpus used;
    used.ofRun = true;
    used.gpus = {0};
    QVERIFY(series.addTelemetry(0, used, fakeNvmlTelemetry(2.5, 0)));
    QCOMPARE(series.points(gpu0, GpuField::kPowerW)[2].x, 2.5);
    QCOMPARE(series.firstX(), std::optional<double>(1));
    // The oldest points go first beyond the bound.
    std::vector<SeriesPoint> many(RunGpuSeries::kMaxPoints + 10);
    for (size_t i = 0; i < many.size(); ++i) many[i] = SeriesPoint{.x = 100.0 + i, .y = 1};
    series.addStored(gpu0, GpuField::kTempC, many);
    QCOMPARE(series.points(gpu0, GpuField::kTempC).size(), RunGpuSeries::kMaxPoints);
    QCOMPARE(series.points(gpu0, GpuField::kTempC).back().x, 100.0 + many.size() - 1);
  }

  void liveDashboardChartsEveryValuePerGpuAndNoneItCannotRead() {
    ControllerInTempDir fixture;
    Controller& controller = fixture.controller;
    QVERIFY(controller.start().isOk());
    const QString owner = QStringLiteral("node-own");
    QVERIFY(
        await(controller.store().upsertRun(owner, runInfo("run-live", "live run", v1::RUNNING,
                                                          kStart, {host("gpu-own", 2, {0, 1})})))
            .isOk());
    DashboardTab tab(controller, QStringLiteral("run-live"));
    tab.resize(1400, 1000);
    emit controller.runDataChanged(QStringLiteral("run-live"));
    QTRY_COMPARE(tab.title(), QStringLiteral("live run"));
    RunGpuPanel* panel = tab.gpuPanel();
    QTRY_VERIFY(panel->storedLoaded());
    QCOMPARE(panel->utilChart()->placeholderText(),
             QStringLiteral("No telemetry from the run's node yet"));
    for (int i = 0; i < 30; ++i) {
      emit controller.telemetryReceived(owner, fakeNvmlTelemetry(kStart + 2 + i, i));
      // Another node, not of the run.
      emit controller.telemetryReceived(QStringLiteral("node-other"),
                                        fakeNvmlTelemetry(kStart + 2 + i, i));
    }
    QTRY_COMPARE(sortedNames(panel->utilChart()), (QStringList{"GPU 0", "GPU 1"}));
    const std::vector<SeriesPoint>& util = panel->utilChart()->seriesData("GPU 0");
    QCOMPARE(util.size(), size_t{30});
    QCOMPARE(util.front().x, 2.0);  // seconds since the run's start
    QCOMPARE(util.front().y, 87.0);
    QCOMPARE(sortedNames(panel->memChart()), (QStringList{"GPU 0", "GPU 1"}));
    QCOMPARE(panel->memChart()->seriesData("GPU 0").back().y, 1024.0 + 29);
    QCOMPARE(sortedNames(panel->powerChart()), QStringList{"GPU 0"});
    QCOMPARE(panel->powerChart()->seriesData("GPU 0").size(), size_t{30});
    // A single series still says which GPU it is.
    QVERIFY(panel->powerChart()->chart()->legend()->isVisible());
    QCOMPARE(sortedNames(panel->tempChart()), (QStringList{"GPU 0", "GPU 1"}));
    QCOMPARE(panel->tempChart()->seriesData("GPU 1").front().y, 35.0);
    QCOMPARE(sortedNames(panel->smClockChart()), QStringList{"GPU 0"});
    QCOMPARE(sortedNames(panel->pcieChart()),
             (QStringList{"GPU 0 rx", "GPU 0 tx", "GPU 1 rx", "GPU 1 tx"}));
    QCOMPARE(panel->pcieChart()->seriesData("GPU 1 rx").front().y, 0.0);  // read as 0: kept
    QCOMPARE(sortedNames(panel->nvlinkChart()), (QStringList{"GPU 0 rx", "GPU 0 tx"}));
    QCOMPARE(panel->nvlinkChart()->seriesData("GPU 0 tx").front().y, 0.512);
    const QString total = QLocale().toString(81559.0, 'f', 0);
    QTRY_COMPARE(xTitle(panel->memChart()),
                 QStringLiteral("time since start (s); memory size %1 MiB").arg(total));
    QCOMPARE(yTitle(panel->memChart()), QStringLiteral("memory used (MiB)"));
    // The GPUs page holds them; the dashboard lists them for export and zoom.
    QCOMPARE(tab.chartPages()->count(), 3);  // Training, GPUs, Metrics
    QCOMPARE(tab.chartPages()->tabText(1), QStringLiteral("&GPUs"));
    QVERIFY(tab.charts().contains(panel->nvlinkChart()));
    QCOMPARE(tab.gpuUtilChart(), panel->utilChart());
  }

  void liveDashboardStartsWithWhatWasStored() {
    ControllerInTempDir fixture;
    Controller& controller = fixture.controller;
    QVERIFY(controller.start().isOk());
    const QString owner = QStringLiteral("node-own");
    MetricsStore& store = controller.store();
    QVERIFY(await(store.upsertRun(owner, runInfo("run-open", "reopened", v1::RUNNING, kStart,
                                                 {host("gpu-own", 1, {0})})))
                .isOk());
    // Five readings stored while no dashboard was open.
    for (int i = 0; i < 5; ++i) {
      auto stored =
          await(store.ingestTelemetry(owner, "gpu-own", fakeNvmlTelemetry(kStart + i, i)));
      QVERIFY(stored.isOk());
      QCOMPARE(*stored, QStringList{"run-open"});
    }
    DashboardTab tab(controller, QStringLiteral("run-open"));
    emit controller.runDataChanged(QStringLiteral("run-open"));
    RunGpuPanel* panel = tab.gpuPanel();
    QTRY_VERIFY(panel->storedLoaded());
    QTRY_COMPARE(panel->powerChart()->seriesData("GPU 0").size(), size_t{5});
    // GPU 1 is not the run's: nothing of it was stored, and its live readings are skipped.
    QCOMPARE(sortedNames(panel->utilChart()), QStringList{"GPU 0"});
    // The last stored reading arrives live too, then two new ones.
    for (int i = 4; i < 7; ++i) {
      emit controller.telemetryReceived(owner, fakeNvmlTelemetry(kStart + i, i));
    }
    QTRY_COMPARE(panel->powerChart()->seriesData("GPU 0").size(), size_t{7});
    const std::vector<SeriesPoint>& power = panel->powerChart()->seriesData("GPU 0");
    for (size_t i = 0; i < power.size(); ++i) {
      QCOMPARE(power[i].x, double(i));
      QCOMPARE(power[i].y, 312.5 + i);
    }
    QCOMPARE(sortedNames(panel->utilChart()), QStringList{"GPU 0"});
    // The run ends: the two live-only readings (the test's signals store nothing) give way to
    // what is stored, as the same run reopened from History shows it.
    v1::RunInfo done =
        runInfo("run-open", "reopened", v1::COMPLETED, kStart, {host("gpu-own", 1, {0})});
    QVERIFY(await(store.upsertRun(owner, done)).isOk());
    emit controller.runStateChanged(QStringLiteral("run-open"), v1::COMPLETED);
    QTRY_COMPARE(panel->storedLoadCount(), 2);
    QTRY_COMPARE(panel->powerChart()->seriesData("GPU 0").size(), size_t{5});
    QCOMPARE(panel->powerChart()->seriesData("GPU 0").back().x, 4.0);
  }

  void finishedRunShowsTheStoredGpuSeriesOnItsNodes() {
    ControllerInTempDir fixture;
    Controller& controller = fixture.controller;
    QSignalSpy started(&controller, &Controller::started);
    QVERIFY(controller.start().isOk());
    QTRY_COMPARE(started.count(), 1);
    const QHash<QString, QString> ids = addTwoNodes(controller);
    QCOMPARE(ids.size(), 2);
    MetricsStore& store = controller.store();
    // Ranks 0-1 on gpu-a with its GPU 1, ranks 2-3 on gpu-b with its GPU 0.
    v1::RunInfo run = runInfo("run-done", "two nodes", v1::RUNNING, kStart,
                              {host("gpu-a", 2, {1}), host("gpu-b", 2, {0})});
    QVERIFY(await(store.upsertRun(ids["gpu-a"], run)).isOk());
    for (int i = 0; i < 10; ++i) {
      QVERIFY(await(store.ingestTelemetry(ids["gpu-a"], "gpu-a", fakeNvmlTelemetry(kStart + i, i)))
                  .isOk());
      QVERIFY(await(store.ingestTelemetry(ids["gpu-b"], "gpu-b",
                                          fakeNvmlTelemetry(kStart + i + 0.5, i)))
                  .isOk());
    }
    run.set_state(v1::COMPLETED);
    run.set_end_time(kStart + 11);
    QVERIFY(await(store.upsertRun(ids["gpu-a"], run)).isOk());

    DashboardTab tab(controller, QStringLiteral("run-done"));
    tab.resize(1400, 1000);
    emit controller.runDataChanged(QStringLiteral("run-done"));
    RunGpuPanel* panel = tab.gpuPanel();
    QTRY_VERIFY(panel->storedLoaded());
    QTRY_COMPARE(sortedNames(panel->utilChart()), (QStringList{"node a GPU 1", "node b GPU 0"}));
    QCOMPARE(panel->utilChart()->seriesData("node a GPU 1").size(), size_t{10});
    QCOMPARE(panel->utilChart()->seriesData("node a GPU 1").front().y, 3.0);
    QCOMPARE(panel->utilChart()->seriesData("node b GPU 0").front().x, 0.5);
    // GPU 1 of gpu-a never reported power, SM clock or NVLink: only gpu-b's GPU 0 has them.
    QCOMPARE(sortedNames(panel->powerChart()), QStringList{"node b GPU 0"});
    QCOMPARE(panel->powerChart()->seriesData("node b GPU 0").back().y, 312.5 + 9);
    QCOMPARE(sortedNames(panel->smClockChart()), QStringList{"node b GPU 0"});
    QCOMPARE(sortedNames(panel->nvlinkChart()),
             (QStringList{"node b GPU 0 rx", "node b GPU 0 tx"}));
    QCOMPARE(panel->pcieChart()->seriesNames().size(), qsizetype{4});
    QCOMPARE(panel->powerChart()->placeholderText(),
             QStringLiteral("N/A: no GPU of the run reports this value"));
    // The memory size is not stored: the memory chart says only what it shows.
    QCOMPARE(xTitle(panel->memChart()), QStringLiteral("time since start (s)"));
    // The run is over: readings of its nodes are not its any more.
    emit controller.telemetryReceived(ids["gpu-a"], fakeNvmlTelemetry(kStart + 20));
    QTest::qWait(400);
    panel->redrawNow();
    QCOMPARE(panel->utilChart()->seriesData("node a GPU 1").size(), size_t{10});

    // A finished run without GPU values stored says so.
    QVERIFY(await(store.upsertRun(ids["gpu-a"], runInfo("run-none", "nothing stored", v1::COMPLETED,
                                                        kStart, {host("gpu-a", 1, {0})})))
                .isOk());
    DashboardTab empty(controller, QStringLiteral("run-none"));
    emit controller.runDataChanged(QStringLiteral("run-none"));
    QTRY_VERIFY(empty.gpuPanel()->storedLoaded());
    QCOMPARE(empty.gpuUtilChart()->placeholderText(),
             QStringLiteral("No GPU telemetry was stored with this run"));
    QVERIFY(empty.gpuUtilChart()->seriesNames().isEmpty());
  }

  void everyGpuChartExports() {
    ControllerInTempDir fixture;
    Controller& controller = fixture.controller;
    QVERIFY(controller.start().isOk());
    const QString owner = QStringLiteral("node-own");
    QVERIFY(
        await(controller.store().upsertRun(owner, runInfo("run-export", "export run", v1::RUNNING,
                                                          kStart, {host("gpu-own", 2, {0, 1})})))
            .isOk());
    DashboardTab tab(controller, QStringLiteral("run-export"));
    tab.resize(1400, 1000);
    tab.show();
    QVERIFY(QTest::qWaitForWindowExposed(&tab));
    tab.chartPages()->setCurrentIndex(1);
    emit controller.runDataChanged(QStringLiteral("run-export"));
    QTRY_COMPARE(tab.title(), QStringLiteral("export run"));
    for (int i = 0; i < 5; ++i) {
      emit controller.telemetryReceived(owner, fakeNvmlTelemetry(kStart + i, i));
    }
    RunGpuPanel* panel = tab.gpuPanel();
    QTRY_COMPARE(panel->nvlinkChart()->seriesNames().size(), qsizetype{2});
    // The dashboard's Export chart menu has every GPU chart, named after the run.
    QStringList menuTitles;
    for (QAction* action : tab.exportChartButton()->menu()->actions()) {
      menuTitles << action->text();
    }
    const QList<MetricChart*> gpuCharts = panel->charts();
    QCOMPARE(gpuCharts.size(), qsizetype{7});
    QTemporaryDir out;
    for (int i = 0; i < gpuCharts.size(); ++i) {
      MetricChart* chart = gpuCharts[i];
      QVERIFY2(menuTitles.contains(chart->title()), qPrintable(chart->title()));
      QCOMPARE(chart->exportName(), QStringLiteral("export_run-") + RunGpuPanel::exportNames()[i]);
      const QString png = out.filePath(chart->exportName() + QStringLiteral(".png"));
      const QString svg = out.filePath(chart->exportName() + QStringLiteral(".svg"));
      QVERIFY(chart->exportPng(png).isOk());
      QVERIFY(chart->exportSvg(svg).isOk());
      const QImage image(png);
      QVERIFY(!image.isNull() && image.width() > 300);
      QVERIFY(QSvgRenderer(svg).isValid());
    }
  }

  void compareChartsAChosenStoredGpuValuePerRunAndGpu() {
    ControllerInTempDir fixture;
    Controller& controller = fixture.controller;
    QVERIFY(controller.start().isOk());
    MetricsStore& store = controller.store();
    const QString owner = QStringLiteral("node-own");
    // Two finished runs an hour apart on the same node and GPUs; "plain" stored nothing.
    for (int r = 0; r < 2; ++r) {
      const double start = kStart + 3600 * r;
      v1::RunInfo run = runInfo(r == 0 ? "run-1" : "run-2", r == 0 ? "first" : "second",
                                v1::RUNNING, start, {host("gpu-own", 2, {0, 1})});
      QVERIFY(await(store.upsertRun(owner, run)).isOk());
      for (int i = 0; i < 8; ++i) {
        QVERIFY(await(store.ingestTelemetry(owner, "gpu-own",
                                            fakeNvmlTelemetry(start + 1 + i, i + 10 * r)))
                    .isOk());
      }
      run.set_state(v1::COMPLETED);
      QVERIFY(await(store.upsertRun(owner, run)).isOk());
    }
    QVERIFY(await(store.upsertRun(owner, runInfo("run-3", "plain", v1::COMPLETED, kStart,
                                                 {host("gpu-own", 1, {})})))
                .isOk());
    CompareView view(controller, {"run-1", "run-2", "run-3"});
    view.resize(1400, 1100);
    CompareGpuChart* gpu = view.gpuChart();
    QTRY_VERIFY(view.loaded() && gpu->loaded() && !gpu->chart()->seriesNames().isEmpty());
    QCOMPARE(gpu->field(), GpuField::kUtilPct);
    QCOMPARE(sortedNames(gpu->chart()),
             (QStringList{"first GPU 0", "first GPU 1", "second GPU 0", "second GPU 1"}));
    // x is the time since each run's start, so both runs start at 1 s.
    QCOMPARE(gpu->chart()->seriesData("second GPU 0").front().x, 1.0);
    QCOMPARE(gpu->chart()->seriesData("first GPU 1").size(), size_t{8});
    // Power: only GPU 0 reported it.
    QSignalSpy loaded(gpu, &CompareGpuChart::loadFinished);
    gpu->fieldBox()->setCurrentIndex(gpu->fieldBox()->findText(QStringLiteral("Power")));
    QTRY_COMPARE(loaded.count(), 1);
    QCOMPARE(gpu->field(), GpuField::kPowerW);
    QCOMPARE(sortedNames(gpu->chart()), (QStringList{"first GPU 0", "second GPU 0"}));
    QCOMPARE(gpu->chart()->seriesData("second GPU 0").front().y, 312.5 + 10);
    QCOMPARE(yTitle(gpu->chart()), QStringLiteral("power (W)"));
    // NVLink: GPU 0 only, too.
    gpu->setField(GpuField::kNvlinkRxMBps);
    QTRY_COMPARE(loaded.count(), 2);
    QCOMPARE(sortedNames(gpu->chart()), (QStringList{"first GPU 0", "second GPU 0"}));
    QTemporaryDir out;
    QVERIFY(gpu->chart()->exportPng(out.filePath("compare-gpu.png")).isOk());
    // No run has a value: the chart says so.
    CompareView plain(controller, {"run-3"});
    QTRY_VERIFY(plain.loaded() && plain.gpuChart()->loaded());
    QTRY_COMPARE(plain.gpuChart()->chart()->placeholderText(),
                 QStringLiteral("No run has this GPU value stored"));
    QVERIFY(plain.gpuChart()->chart()->seriesNames().isEmpty());
  }
};

QTEST_MAIN(RunGpuPanelTest)
#include "run_gpu_panel_test.moc"
