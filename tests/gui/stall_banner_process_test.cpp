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

#include "gui_test_support.h"
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

QStringList stallsOfNode(const Controller& controller, const QString& nodeId) {
  const std::optional<NodeView> node = controller.node(nodeId);
  return node ? node->stalls : QStringList();
}

}  // namespace

class StallBannerProcessTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { testing::allowMpirunAsRoot(); }

  void stoppedRankShowsOnTheDashboardAndTheNodeUntilItContinues() {
    testing::ControllerInTempDir fixture(testing::withBuiltLocalAgent());
    Controller& controller = fixture.controller;
    QVERIFY(controller.start().isOk());
    QTRY_VERIFY_WITH_TIMEOUT(!testing::onlineLocalNodeId(controller).isEmpty(), 30000);
    const QString nodeId = testing::onlineLocalNodeId(controller);

    RunForm form = watchedDefaultRun();
    form.name = QStringLiteral("cnn, rank 1 stopped");
    form.backend = QStringLiteral("mpi");
    form.epochs = 20;
    form.nodeIds = {nodeId};
    form.ranksPerNode = 2;
    QString launchError;
    const QString runId = testing::launchAndWait(controller, form, &launchError);
    QVERIFY2(!runId.isEmpty(), qPrintable(launchError));

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
    QTRY_VERIFY_WITH_TIMEOUT(testing::storedRunState(controller, runId) == v1::STOPPED ||
                                 testing::storedRunState(controller, runId) == v1::FAILED,
                             60000);
  }
};

QTEST_MAIN(StallBannerProcessTest)
#include "stall_banner_process_test.moc"
