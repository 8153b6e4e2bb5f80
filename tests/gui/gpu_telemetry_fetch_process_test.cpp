// DESIGN decision 12 through the Controller, on one node: a real ringside-agent with the tests'
// fake NVML (tests/agent/fake_nvml.c: two GPUs) and a fast telemetry interval journals its
// readings; the GUI launches a GPU run there and is closed at once, for the whole run. Reopened
// on the same database after the run ended, it fetches the run's window from the node's telemetry
// journal: every GPU series of the run covers the run from start to end without a hole, each
// reading stored once, also after a second reopen fetches nothing new.
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <map>
#include <optional>

#include "build_paths.h"
#include "gui_test_support.h"
#include "ringside/common/agent_ready.h"
#include "ringside/gui/controller.h"
#include "ringside/gui/run_gpu_metrics.h"

using namespace ringside::gui;
namespace v1 = ringside::v1;

namespace {

constexpr double kIntervalS = 0.25;  // the agent's --telemetry-interval
constexpr int kRunSeconds = 3;

// Every GPU series of the run by (rank, name): wall times in order.
std::map<std::pair<int, QString>, std::vector<double>> gpuSeries(Controller& controller,
                                                                 const QString& runId) {
  std::map<std::pair<int, QString>, std::vector<double>> series;
  auto names = controller.store().metricNames(runId).result();
  if (!names.isOk()) return series;
  for (const QString& name : *names) {
    if (!parseGpuMetricName(name)) continue;
    auto ranks = controller.store().metricRanks(runId, name).result();
    for (int rank : ranks.isOk() ? *ranks : std::vector<int>{}) {
      auto points = controller.store().series(runId, name, rank, SeriesX::kWallTime).result();
      if (!points.isOk()) continue;
      std::vector<double>& times = series[{rank, name}];
      for (const SeriesPoint& point : *points) times.push_back(point.x);
      std::sort(times.begin(), times.end());
    }
  }
  return series;
}

// Why `times` is not the complete series of a run from `start` to `end` ("" when it is).
QString incompleteness(const std::vector<double>& times, double start, double end) {
  // A reading every interval; a loaded machine may delay one by a few polls of the agent's loop.
  const double maxGap = 4 * kIntervalS;
  if (times.empty()) return QStringLiteral("no points");
  if (std::adjacent_find(times.begin(), times.end()) != times.end()) {
    return QStringLiteral("a reading stored twice");
  }
  if (times.front() > start + maxGap) {
    return QStringLiteral("starts %1 s after the run").arg(times.front() - start);
  }
  if (times.back() < end - maxGap) {
    return QStringLiteral("ends %1 s before the run").arg(end - times.back());
  }
  for (size_t i = 1; i < times.size(); ++i) {
    if (times[i] - times[i - 1] > maxGap) {
      return QStringLiteral("a hole of %1 s").arg(times[i] - times[i - 1]);
    }
  }
  return {};
}

}  // namespace

class GpuTelemetryFetchProcessTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { testing::allowMpirunAsRoot(); }

  void gpuSeriesAreCompleteAfterTheGuiWasClosedForTheWholeRun() {
    QTemporaryDir work;
    QVERIFY(work.isValid());
    const QString dataDir = work.filePath(QStringLiteral("gui"));
    const QString stateDir = work.filePath(QStringLiteral("agent"));
    const QString readyFile = work.filePath(QStringLiteral("agent.ready"));
    const QString sleeper = work.filePath(QStringLiteral("sleep.sh"));
    QFile script(sleeper);
    QVERIFY(script.open(QIODevice::WriteOnly));
    script.write(QStringLiteral("exec /bin/sleep %1\n").arg(kRunSeconds).toUtf8());
    script.close();
    ControllerOptions options = testing::ControllerInTempDir::withoutLocalAgent();
    options.dataDir = dataDir;

    // The GUI's key first (created by start()), allowed by the agent before it serves.
    std::optional<Controller> first(std::in_place, options);
    QVERIFY(first->start().isOk());
    QTRY_VERIFY_WITH_TIMEOUT(first->isStarted(), 10000);
    QVERIFY(QDir().mkpath(stateDir));
    QVERIFY(QFile::setPermissions(
        stateDir, QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner));
    QCOMPARE(QProcess::execute(QString::fromUtf8(ringside::test::agentBin()),
                               {QStringLiteral("--state-dir"), stateDir,
                                QStringLiteral("authorize"), first->guiPublicKey()}),
             0);
    QProcess agent;
    agent.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    agent.start(QString::fromUtf8(ringside::test::agentBin()),
                {QStringLiteral("--state-dir"), stateDir, QStringLiteral("--control-port"),
                 QStringLiteral("0"), QStringLiteral("--events-port"), QStringLiteral("0"),
                 QStringLiteral("--nvml-library"), QString::fromUtf8(ringside::test::fakeNvmlFull()),
                 QStringLiteral("--telemetry-interval"), QString::number(kIntervalS),
                 QStringLiteral("--trainer"), QString::fromUtf8(ringside::test::trainerBin()),
                 QStringLiteral("--mpirun"), QString::fromUtf8(ringside::test::mpiexec()),
                 QStringLiteral("--ready-file"), readyFile});
    QVERIFY(agent.waitForStarted());
    QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(readyFile), 30000);
    auto ready = ringside::readAgentReady(readyFile.toStdString());
    QVERIFY2(ready.isOk(), ready.status().toString().c_str());
    const auto port = [](const std::string& endpoint) {
      return QString::fromStdString(endpoint.substr(endpoint.rfind(':') + 1)).toInt();
    };
    QVERIFY(first
                ->addNode(QStringLiteral("gpu-node"), QStringLiteral("127.0.0.1"),
                          port(ready->control_endpoint()), port(ready->events_endpoint()),
                          QString::fromStdString(ready->public_key()))
                .isOk());
    QString nodeId;
    for (const NodeView& node : first->nodes()) {
      if (node.record.name == QStringLiteral("gpu-node")) nodeId = node.record.nodeId;
    }
    QVERIFY(!nodeId.isEmpty());
    QTRY_VERIFY_WITH_TIMEOUT(first->node(nodeId) && first->node(nodeId)->info &&
                                 first->node(nodeId)->state == NodeState::Online,
                             30000);

    RunForm form;
    form.name = QStringLiteral("GPU telemetry while the GUI is closed");
    form.job = RunForm::Job::kPython;
    form.pythonInterpreter = QStringLiteral("/bin/sh");
    form.pythonScript = sleeper;
    form.pythonUseGpus = true;
    form.nodeIds = {nodeId};
    form.ranksPerNode = 2;
    QSignalSpy launched(first.operator->(), &Controller::runLaunched);
    QSignalSpy failed(first.operator->(), &Controller::launchFailed);
    first->launch(form);
    QTRY_VERIFY_WITH_TIMEOUT(launched.count() + failed.count() > 0, 30000);
    QVERIFY2(failed.isEmpty(),
             failed.isEmpty() ? "" : qPrintable(failed.first().first().toString()));
    const QString runId = launched.first().first().toString();
    first.reset();  // closed before the run is under way, until after it ended
    QTest::qWait((kRunSeconds + 3) * 1000);

    for (int reopen = 0; reopen < 2; ++reopen) {
      Controller controller(options);
      QVERIFY(controller.start().isOk());
      QTRY_VERIFY_WITH_TIMEOUT(testing::storedRunState(controller, runId) == v1::COMPLETED, 30000);
      auto run = controller.store().run(runId).result();
      QVERIFY(run.isOk());
      QVERIFY(run->startTime > 0 && run->endTime > run->startTime);
      auto complete = [&] {
        const auto series = gpuSeries(controller, runId);
        // Both GPUs (2 ranks, one GPU each): utilization, memory, temperature, PCIe rx and tx
        // at least (the fake's second GPU has no power, SM clock or NVLink readings).
        if (series.size() < 10) return false;
        for (const auto& [key, times] : series) {
          if (!incompleteness(times, run->startTime, run->endTime).isEmpty()) return false;
        }
        return true;
      };
      QTRY_VERIFY_WITH_TIMEOUT(complete(), 20000);
      for (const auto& [key, times] : gpuSeries(controller, runId)) {
        const QString why = incompleteness(times, run->startTime, run->endTime);
        QVERIFY2(why.isEmpty(), qPrintable(key.second + QStringLiteral(": ") + why));
      }
      // The window is fetched to the end once: the second reopen finds it complete as stored.
      QTest::qWait(500);
    }
    agent.terminate();
    QVERIFY(agent.waitForFinished(10000));
  }
};

QTEST_MAIN(GpuTelemetryFetchProcessTest)
#include "gpu_telemetry_fetch_process_test.moc"
