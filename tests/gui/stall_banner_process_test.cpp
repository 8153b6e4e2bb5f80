// A stalled run in the GUI (docs/metrics.md, "Hangs"): a real 2-rank run through the controller
// and its local agent; rank 1 is stopped with SIGSTOP. The dashboard's banner must show the
// verdict naming rank 1, the Nodes panel's node must list the stalled run, and both must clear
// once the rank continues. With RINGSIDE_SCREENSHOT_DIR set it also saves the dashboard as
// stalled-dashboard.png there (how docs/images/stalled-dashboard.png is made).
#include <signal.h>

#include <QDir>
#include <QFile>
#include <QLabel>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "ringside/gui/controller.h"
#include "ringside/gui/widgets/dashboard_tab.h"

using namespace ringside::gui;
namespace v1 = ringside::v1;

namespace {

qint64 rankPid(const QString& runId, int rank) {
  const QByteArray runVariable = "RINGSIDE_RUN_ID=" + runId.toUtf8();
  const QByteArray rankVariable = "OMPI_COMM_WORLD_RANK=" + QByteArray::number(rank);
  for (const QString& entry : QDir(QStringLiteral("/proc")).entryList(QDir::Dirs)) {
    bool isPid = false;
    const qint64 pid = entry.toLongLong(&isPid);
    if (!isPid) continue;
    QFile environ(QStringLiteral("/proc/%1/environ").arg(pid));
    if (!environ.open(QIODevice::ReadOnly)) continue;
    const QList<QByteArray> variables = environ.readAll().split('\0');
    if (variables.contains(runVariable) && variables.contains(rankVariable)) return pid;
  }
  return -1;
}

QString localNodeId(const Controller& controller) {
  for (const NodeView& node : controller.nodes()) {
    if (node.local && node.state == NodeState::Online && node.info) return node.record.nodeId;
  }
  return {};
}

QStringList stallsOfNode(const Controller& controller, const QString& nodeId) {
  const std::optional<NodeView> node = controller.node(nodeId);
  return node ? node->stalls : QStringList();
}

}  // namespace

class StallBannerProcessTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    qputenv("OMPI_ALLOW_RUN_AS_ROOT", "1");
    qputenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    qputenv("OMPI_MCA_rmaps_base_oversubscribe", "1");
  }

  void stoppedRankShowsOnTheDashboardAndTheNodeUntilItContinues() {
    QTemporaryDir dir;
    ControllerOptions options;
    options.dataDir = dir.path();
    options.agentBinary = QStringLiteral(RINGSIDE_AGENT_BIN);
    options.trainerBinary = QStringLiteral(RINGSIDE_TRAINER_BIN);
    Controller controller(options);
    QVERIFY(controller.start().isOk());
    QTRY_VERIFY_WITH_TIMEOUT(!localNodeId(controller).isEmpty(), 30000);
    const QString nodeId = localNodeId(controller);

    RunForm form = watchedDefaultRun();
    form.name = QStringLiteral("cnn, rank 1 stopped");
    form.backend = QStringLiteral("mpi");
    form.epochs = 20;
    form.nodeIds = {nodeId};
    form.ranksPerNode = 2;
    QSignalSpy launched(&controller, &Controller::runLaunched);
    QSignalSpy failed(&controller, &Controller::launchFailed);
    controller.launch(form);
    QTRY_VERIFY_WITH_TIMEOUT(launched.count() == 1 || failed.count() == 1, 30000);
    QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.at(0).at(0).toString()));
    const QString runId = launched.at(0).at(0).toString();

    DashboardTab tab(controller, runId);
    tab.resize(1500, 1000);
    tab.show();
    // Training under way: some steps journaled, then rank 1 stops.
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
          auto points = controller.store().series(runId, QStringLiteral("train/loss"), -1).result();
          return points.isOk() && points->size() >= 3;
        }(),
        120000);
    qint64 pid = -1;
    QTRY_VERIFY_WITH_TIMEOUT((pid = rankPid(runId, 1)) > 0, 10000);
    QCOMPARE(::kill(static_cast<pid_t>(pid), SIGSTOP), 0);
    auto resume = qScopeGuard([pid] { ::kill(static_cast<pid_t>(pid), SIGCONT); });

    QTRY_VERIFY_WITH_TIMEOUT(controller.stallOf(runId).has_value(), 60000);
    QTRY_VERIFY_WITH_TIMEOUT(tab.stallBanner()->isVisible(), 5000);
    const QString banner = tab.stallBanner()->text();
    QVERIFY2(banner.startsWith(QStringLiteral("Stalled: no progress for")), qPrintable(banner));
    QVERIFY2(banner.contains(QStringLiteral("rank 1 on ")), qPrintable(banner));
    QVERIFY2(banner.contains(QStringLiteral("(process stopped)")), qPrintable(banner));
    QVERIFY(controller.stallOf(runId)->stuck_ranks_size() == 1);
    const QStringList stalls = stallsOfNode(controller, nodeId);
    QCOMPARE(stalls.size(), 1);
    QVERIFY2(stalls[0].startsWith(form.name + QStringLiteral(": ")), qPrintable(stalls[0]));

    const QString screenshots = qEnvironmentVariable("RINGSIDE_SCREENSHOT_DIR");
    if (!screenshots.isEmpty()) {
      QTest::qWait(3000);  // the banner's count grows; the charts redraw
      QVERIFY(tab.grab().save(QDir(screenshots).filePath(QStringLiteral("stalled-dashboard.png"))));
    }

    resume.dismiss();
    QCOMPARE(::kill(static_cast<pid_t>(pid), SIGCONT), 0);
    QTRY_VERIFY_WITH_TIMEOUT(!controller.stallOf(runId).has_value(), 30000);
    QTRY_VERIFY_WITH_TIMEOUT(!tab.stallBanner()->isVisible(), 5000);
    QVERIFY(stallsOfNode(controller, nodeId).isEmpty());
    controller.stopRun(runId, 5);
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
          auto run = controller.store().run(runId).result();
          return run.isOk() && (run->state == v1::STOPPED || run->state == v1::FAILED);
        }(),
        60000);
  }
};

QTEST_MAIN(StallBannerProcessTest)
#include "stall_banner_process_test.moc"
