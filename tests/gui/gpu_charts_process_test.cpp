// The run's GPU charts end to end with the tests' fake NVML (tests/agent/fake_nvml.c: two GPUs,
// the second without power, SM clock and NVLink readings): the controller's local agent loads it
// (--nvml-library, through a wrapper script as the agent binary), a 2-rank command run gets both
// GPUs, and the dashboard's GPUs page charts the readings the real agent's NVML probe sends while
// the run runs. After the run completed, a dashboard opened anew (as from History) shows the same
// series from the store, as the live one does once the run ended. With RINGSIDE_SCREENSHOT_DIR set
// it saves the live dashboard's GPUs page as gpu-charts.png there (how docs/images/gpu-charts.png
// is made).
#include <QAbstractAxis>
#include <QChart>
#include <QDir>
#include <QFile>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QtTest>

#include "build_paths.h"
#include "gui_test_support.h"
#include "ringside/gui/controller.h"
#include "ringside/gui/widgets/dashboard_tab.h"
#include "ringside/gui/widgets/metric_chart.h"
#include "ringside/gui/widgets/run_gpu_panel.h"

using namespace ringside::gui;
namespace v1 = ringside::v1;

namespace {

constexpr int kRunSeconds = 25;

QStringList sortedNames(const MetricChart* chart) {
  QStringList names = chart->seriesNames();
  names.sort();
  return names;
}

// Points per series of every GPU chart, by chart title and series name.
QMap<QString, size_t> pointCounts(RunGpuPanel* panel) {
  QMap<QString, size_t> counts;
  for (MetricChart* chart : panel->charts()) {
    for (const QString& name : chart->seriesNames()) {
      counts[chart->title() + QStringLiteral(": ") + name] = chart->seriesData(name).size();
    }
  }
  return counts;
}

}  // namespace

class GpuChartsProcessTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { testing::allowMpirunAsRoot(); }

  void fakeNvmlReadingsAreChartedLiveAndFromTheStore() {
    QTemporaryDir scripts;
    QVERIFY(scripts.isValid());
    // The local agent, started by the controller, with the fake NVML.
    const QString agent = scripts.filePath(QStringLiteral("ringside-agent-fake-nvml"));
    QFile script(agent);
    QVERIFY(script.open(QIODevice::WriteOnly));
    script.write(QByteArray("#!/bin/sh\nexec '") + ringside::test::agentBin() + "' --nvml-library '" +
                 ringside::test::fakeNvmlFull() + "' \"$@\"\n");
    script.close();
    QVERIFY(script.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner |
                                  QFileDevice::ExeOwner));
    ControllerOptions options = testing::withBuiltLocalAgent();
    options.agentBinary = agent;
    testing::ControllerInTempDir fixture(options);
    Controller& controller = fixture.controller;
    QVERIFY(controller.start().isOk());
    QTRY_VERIFY_WITH_TIMEOUT(!testing::onlineLocalNodeId(controller).isEmpty(), 30000);
    const QString nodeId = testing::onlineLocalNodeId(controller);
    QCOMPARE(controller.node(nodeId)->info->gpus_size(), 2);

    // A job that takes the node's GPUs (slots by kind: a custom command would take CPU cores):
    // a "script" job run by /bin/sh that sleeps.
    const QString sleeper = scripts.filePath(QStringLiteral("sleep.sh"));
    QFile sleepScript(sleeper);
    QVERIFY(sleepScript.open(QIODevice::WriteOnly));
    sleepScript.write(QStringLiteral("exec /bin/sleep %1\n").arg(kRunSeconds).toUtf8());
    sleepScript.close();
    RunForm form;
    form.name = QStringLiteral("GPU charts (fake NVML)");
    form.job = RunForm::Job::kPython;
    form.pythonInterpreter = QStringLiteral("/bin/sh");
    form.pythonScript = sleeper;
    form.pythonUseGpus = true;
    form.nodeIds = {nodeId};
    form.ranksPerNode = 2;
    QString launchError;
    const QString runId = testing::launchAndWait(controller, form, &launchError);
    QVERIFY2(!runId.isEmpty(), qPrintable(launchError));

    DashboardTab live(controller, runId);
    live.resize(1400, 1500);
    live.chartPages()->setCurrentIndex(1);
    live.show();
    QVERIFY(QTest::qWaitForWindowExposed(&live));
    RunGpuPanel* panel = live.gpuPanel();
    // Both GPUs of the run, every value the fake reports, none it does not.
    QTRY_VERIFY_WITH_TIMEOUT(panel->utilChart()->seriesData(QStringLiteral("GPU 1")).size() >= 5,
                             60000);
    QCOMPARE(sortedNames(panel->utilChart()), (QStringList{"GPU 0", "GPU 1"}));
    QCOMPARE(panel->utilChart()->seriesData(QStringLiteral("GPU 0")).back().y, 87.0);
    QCOMPARE(panel->memChart()->seriesData(QStringLiteral("GPU 1")).back().y, 512.0);
    QCOMPARE(sortedNames(panel->powerChart()), QStringList{"GPU 0"});
    QCOMPARE(panel->powerChart()->seriesData(QStringLiteral("GPU 0")).back().y, 312.5);
    QCOMPARE(sortedNames(panel->tempChart()), (QStringList{"GPU 0", "GPU 1"}));
    QCOMPARE(sortedNames(panel->smClockChart()), QStringList{"GPU 0"});
    QCOMPARE(sortedNames(panel->pcieChart()),
             (QStringList{"GPU 0 rx", "GPU 0 tx", "GPU 1 rx", "GPU 1 tx"}));
    // 25,000 KB/s of 1,024 B: 25.6 MB/s.
    QCOMPARE(panel->pcieChart()->seriesData(QStringLiteral("GPU 0 rx")).back().y, 25.6);
    QCOMPARE(sortedNames(panel->nvlinkChart()), (QStringList{"GPU 0 rx", "GPU 0 tx"}));
    QVERIFY(panel->nvlinkChart()->seriesData(QStringLiteral("GPU 0 rx")).back().y > 0);
    const QString memoryXTitle =
        panel->memChart()->chart()->axes(Qt::Horizontal).first()->titleText();
    QVERIFY2(memoryXTitle.contains(QStringLiteral("memory size")), qPrintable(memoryXTitle));

    QTRY_VERIFY_WITH_TIMEOUT(testing::storedRunState(controller, runId) == v1::COMPLETED,
                             (kRunSeconds + 60) * 1000);
    // The tab read the stored series again when the run ended, and again when the run's window
    // fetched from the node's telemetry journal brought readings it missed live (DESIGN decision
    // 12): it shows what History will.
    QTRY_VERIFY_WITH_TIMEOUT(panel->storedLoadCount() >= 2, 10000);
    const QString hostName = QString::fromStdString(controller.node(nodeId)->info->hostname());
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
          auto windows = controller.store().telemetryWindows(nodeId, hostName).result();
          return windows.isOk() && windows->empty();
        }(),
        20000);
    panel->redrawNow();
    const QMap<QString, size_t> liveCounts = pointCounts(panel);
    QVERIFY(liveCounts.value(QStringLiteral("GPU utilization: GPU 0")) >= 10);
    const QString screenshots = qEnvironmentVariable("RINGSIDE_SCREENSHOT_DIR");
    if (!screenshots.isEmpty()) {
      QVERIFY(live.grab().save(QDir(screenshots).filePath(QStringLiteral("gpu-charts.png"))));
    }

    // Reopened after the end: the same series from the store.
    DashboardTab reopened(controller, runId);
    reopened.resize(1400, 1500);
    emit controller.runDataChanged(runId);
    QTRY_VERIFY_WITH_TIMEOUT(reopened.gpuPanel()->storedLoaded(), 10000);
    reopened.gpuPanel()->redrawNow();
    const QMap<QString, size_t> storedCounts = pointCounts(reopened.gpuPanel());
    QCOMPARE(storedCounts.keys(), liveCounts.keys());
    // The live tab's last read of the store may still be under way.
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
          panel->redrawNow();
          return pointCounts(panel) == storedCounts;
        }(),
        10000);
  }
};

QTEST_MAIN(GpuChartsProcessTest)
#include "gpu_charts_process_test.moc"
