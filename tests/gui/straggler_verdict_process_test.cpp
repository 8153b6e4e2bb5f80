// The straggler verdict in the GUI (docs/metrics.md, "The straggler"): a real 2-rank run through
// the controller and its local agent, with rank 1 made slow by the trainer's fault injection
// (inject_compute_delay "1:15": 15 ms more compute every step). The live dashboard's per-rank view
// must name rank 1 with the compute stage, its cost and its confidence from the verdicts the agent
// journals; the finished run's dashboard (as History opens it) the same, with the verdict over the
// run on the timeline: none while the first window fills, then rank 1 to the end.
// straggler_contention_process_test.cpp (label slow) does this with a real, bursty straggler.
// With RINGSIDE_SCREENSHOT_DIR set it saves the finished run's dashboard as
// straggler-verdict-injected.png there.
#include <QDir>
#include <QSplitter>
#include <QtTest>

#include <algorithm>

#include "gui_test_support.h"
#include "ringside/gui/controller.h"
#include "ringside/gui/widgets/dashboard_tab.h"
#include "ringside/gui/widgets/rank_view.h"
#include "ringside/gui/widgets/straggler_timeline.h"

using namespace ringside::gui;
namespace v1 = ringside::v1;

class StragglerVerdictProcessTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { testing::allowMpirunAsRoot(); }

  void injectedSlowRankIsNamedLiveAndAfterTheRun() {
    testing::ControllerInTempDir fixture(testing::withBuiltLocalAgent());
    Controller& controller = fixture.controller;
    QVERIFY(controller.start().isOk());
    QTRY_VERIFY_WITH_TIMEOUT(!testing::onlineLocalNodeId(controller).isEmpty(), 30000);

    RunForm form;
    form.name = QStringLiteral("mlp, rank 1 injected +15 ms");
    form.backend = QStringLiteral("mpi");
    form.epochs = 4;  // about 11 s: longer than the verdict's window (5 s)
    form.logEvery = 5;
    form.trainerBase.set_train_samples(20000);
    form.trainerBase.set_test_samples(1000);
    form.trainerBase.set_inject_compute_delay("1:15");
    form.nodeIds = {testing::onlineLocalNodeId(controller)};
    form.ranksPerNode = 2;
    QString launchError;
    const QString runId = testing::launchAndWait(controller, form, &launchError);
    QVERIFY2(!runId.isEmpty(), qPrintable(launchError));

    // Live: the sentence names rank 1 once the window agrees.
    DashboardTab live(controller, runId);
    live.resize(1500, 1000);
    live.show();
    QTRY_VERIFY_WITH_TIMEOUT(
        live.rankView()->summaryText().startsWith(QStringLiteral("straggler: rank 1 on ")) ||
            testing::storedRunState(controller, runId) == v1::COMPLETED,
        120000);
    QTRY_COMPARE_WITH_TIMEOUT(testing::storedRunState(controller, runId), v1::COMPLETED, 180000);

    // Finished, as History opens it.
    DashboardTab tab(controller, runId);
    tab.resize(1500, 1000);
    tab.show();
    QTRY_VERIFY_WITH_TIMEOUT(
        tab.rankView()->summaryText().startsWith(QStringLiteral("straggler: rank 1 on ")), 30000);
    const QString summary = tab.rankView()->summaryText();
    QVERIFY2(summary.contains(QStringLiteral(", compute: ")), qPrintable(summary));
    QVERIFY2(summary.contains(QStringLiteral("the other ranks wait")), qPrintable(summary));
    QVERIFY2(summary.contains(QStringLiteral("of the step time (confidence ")),
             qPrintable(summary));
    StragglerTimeline* timeline = tab.rankView()->stragglerTimeline();
    QTRY_VERIFY_WITH_TIMEOUT(timeline->isVisible() && !timeline->spans().empty(), 30000);
    const std::vector<StragglerSpan> spans = timeline->spans();
    QCOMPARE(spans.front().rank, -1);  // while the first window fills
    QCOMPARE(spans.back().rank, 1);
    QCOMPARE(spans.back().stage, 2);
    QVERIFY(spans.back().maxCostShare.value_or(0) > 0.2);

    const QString screenshots = qEnvironmentVariable("RINGSIDE_SCREENSHOT_DIR");
    if (!screenshots.isEmpty()) {
      for (QSplitter* splitter : tab.findChildren<QSplitter*>()) {
        if (splitter->orientation() == Qt::Vertical) splitter->setSizes({560, 360});
      }
      QTest::qWait(1500);
      QVERIFY(tab.grab().save(
          QDir(screenshots).filePath(QStringLiteral("straggler-verdict-injected.png"))));
    }
  }
};

QTEST_MAIN(StragglerVerdictProcessTest)
#include "straggler_verdict_process_test.moc"
