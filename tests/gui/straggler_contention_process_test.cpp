// The straggler verdict in the GUI (docs/metrics.md, "The straggler"): a real 2-rank run through
// the controller and its local agent, with rank 1 made slow by the trainer's fault injection
// (inject_compute_delay "1:15": 15 ms more compute every step). The dashboard's per-rank view must
// name rank 1 with the compute stage from the verdict the agent journaled, for the finished run.
// With RINGSIDE_SCREENSHOT_DIR set it saves the dashboard as straggler-verdict.png there.
#include <QDir>
#include <QLabel>
#include <QSignalSpy>
#include <QSplitter>
#include <QTemporaryDir>
#include <QtTest>

#include "gui_test_support.h"
#include "ringside/gui/controller.h"
#include "ringside/gui/widgets/dashboard_tab.h"
#include "ringside/gui/widgets/rank_view.h"

using namespace ringside::gui;
namespace v1 = ringside::v1;

class StragglerVerdictProcessTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { testing::allowMpirunAsRoot(); }

  void injectedSlowRankIsNamedOnTheDashboard() {
    testing::ControllerInTempDir fixture(testing::withBuiltLocalAgent());
    Controller& controller = fixture.controller;
    QVERIFY(controller.start().isOk());
    QTRY_VERIFY_WITH_TIMEOUT(!testing::onlineLocalNodeId(controller).isEmpty(), 30000);
    const QString nodeId = testing::onlineLocalNodeId(controller);

    RunForm form;
    form.name = QStringLiteral("mlp, rank 1 injected +15 ms");
    form.backend = QStringLiteral("mpi");
    form.epochs = 1;
    form.logEvery = 5;
    form.trainerBase.set_train_samples(10000);
    form.trainerBase.set_inject_compute_delay("1:15");
    form.nodeIds = {nodeId};
    form.ranksPerNode = 2;
    QString launchError;
    const QString runId = testing::launchAndWait(controller, form, &launchError);
    QVERIFY2(!runId.isEmpty(), qPrintable(launchError));
    QTRY_COMPARE_WITH_TIMEOUT(testing::storedRunState(controller, runId), v1::COMPLETED, 180000);

    DashboardTab tab(controller, runId);
    tab.resize(1500, 1000);
    tab.show();
    QTRY_VERIFY_WITH_TIMEOUT(
        tab.rankView()->summaryText().startsWith(QStringLiteral("straggler: rank 1 on ")), 30000);
    const QString summary = tab.rankView()->summaryText();
    QVERIFY2(summary.contains(QStringLiteral(", compute: ")), qPrintable(summary));
    QVERIFY2(summary.contains(QStringLiteral("the other ranks wait")), qPrintable(summary));

    const QString screenshots = qEnvironmentVariable("RINGSIDE_SCREENSHOT_DIR");
    if (!screenshots.isEmpty()) {
      for (QSplitter* splitter : tab.findChildren<QSplitter*>()) {
        if (splitter->orientation() == Qt::Vertical) splitter->setSizes({620, 300});
      }
      QTest::qWait(1500);
      QVERIFY(tab.grab().save(QDir(screenshots).filePath(QStringLiteral("straggler-verdict.png"))));
    }
  }
};

QTEST_MAIN(StragglerVerdictProcessTest)
#include "straggler_verdict_process_test.moc"
