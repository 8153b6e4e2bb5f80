// The straggler verdict in the GUI (docs/metrics.md, "The straggler"), on a real straggler: a
// 2-rank MLP run logging every step, through the controller and its local agent, each rank pinned
// to a CPU of its own; two busy loops then share rank 1's CPU (the scheduler takes time slices
// from it, as another job's process would). The live dashboard's per-rank view must name rank 1
// with its stage, cost and confidence, keep naming it while the loops run (no flicker), and stop
// once they end; the finished run's dashboard (as History opens it) must show the verdict over
// the run: a span of rank 1 on the timeline, and none at the end.
// With RINGSIDE_SCREENSHOT_DIR set it saves the live dashboard as straggler-verdict.png there.
//
// Label `slow` (opt-in): it needs two CPUs that nothing else keeps busy (other work is moved by
// the scheduler onto the CPU the loops leave alone, and makes rank 0 as slow as rank 1).
// straggler_verdict_process_test.cpp checks the same views on an injected straggler.
#include <QDir>
#include <QLabel>
#include <QSplitter>
#include <QTabWidget>
#include <QtTest>

#include <algorithm>

#include "../agent/straggler_contention.h"
#include "gui_test_support.h"
#include "ringside/gui/controller.h"
#include "ringside/gui/widgets/dashboard_tab.h"
#include "ringside/gui/widgets/rank_view.h"
#include "ringside/gui/widgets/straggler_timeline.h"

using namespace ringside::gui;
namespace v1 = ringside::v1;
namespace contention = ringside::contention;

namespace {

// Shows the dashboard's per-rank page (the tab that holds the RankView).
void showRankPage(DashboardTab& tab) {
  for (QTabWidget* tabs : tab.findChildren<QTabWidget*>()) {
    for (int i = 0; i < tabs->count(); ++i) {
      if (tabs->widget(i)->isAncestorOf(tab.rankView()) || tabs->widget(i) == tab.rankView()) {
        tabs->setCurrentIndex(i);
      }
    }
  }
}

}  // namespace

class StragglerContentionProcessTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { testing::allowMpirunAsRoot(); }

  void aRankSharingItsCpuIsNamedLiveAndOverTheRun() {
    const std::vector<int> cpus = contention::allowedCpus();
    if (cpus.size() < 2) QSKIP("needs two CPUs");
    testing::ControllerInTempDir fixture(testing::withBuiltLocalAgent());
    Controller& controller = fixture.controller;
    QVERIFY(controller.start().isOk());
    QTRY_VERIFY_WITH_TIMEOUT(!testing::onlineLocalNodeId(controller).isEmpty(), 30000);

    RunForm form;
    form.name = QStringLiteral("mlp, rank 1 shares its CPU");
    form.backend = QStringLiteral("mpi");
    form.epochs = 1000;  // stopped below
    form.logEvery = 1;
    form.trainerBase.set_train_samples(20000);
    form.trainerBase.set_test_samples(500);
    form.nodeIds = {testing::onlineLocalNodeId(controller)};
    form.ranksPerNode = 2;
    QString launchError;
    const QString runId = testing::launchAndWait(controller, form, &launchError);
    QVERIFY2(!runId.isEmpty(), qPrintable(launchError));
    std::vector<pid_t> pids;
    QTRY_VERIFY_WITH_TIMEOUT(
        (pids = contention::rankPids(runId.toStdString(), 2), pids[0] > 0 && pids[1] > 0), 60000);
    QVERIFY(contention::pinProcess(pids[0], cpus[0]));
    QVERIFY(contention::pinProcess(pids[1], cpus[1]));

    DashboardTab live(controller, runId);
    live.resize(1500, 1000);
    live.show();
    showRankPage(live);
    RankView* view = live.rankView();
    // A clean window first: the verdict is there, and it is none.
    QTRY_VERIFY_WITH_TIMEOUT(
        view->summaryText().startsWith(QStringLiteral("straggler: none (confidence ")), 30000);
    QTest::qWait(4000);

    // Training runs by now (MPI_Init is done): pinned again, and every thread checked.
    QVERIFY(contention::repinAndCheck(pids[0], cpus[0]));
    QVERIFY(contention::repinAndCheck(pids[1], cpus[1]));
    contention::BusyLoops busy(cpus[1], 2);
    QTRY_VERIFY_WITH_TIMEOUT(
        view->summaryText().startsWith(QStringLiteral("straggler: rank 1 on ")), 20000);
    const QString summary = view->summaryText();
    QVERIFY2(summary.contains(QStringLiteral("the other ranks wait")), qPrintable(summary));
    QVERIFY2(summary.contains(QStringLiteral("of the step time (confidence ")),
             qPrintable(summary));
    // Stable while the loops run: the sentence names rank 1 at every look for 6 s.
    int looks = 0, named = 0;
    for (; looks < 24; ++looks) {
      QTest::qWait(250);
      named += view->summaryText().startsWith(QStringLiteral("straggler: rank 1 on ")) ? 1 : 0;
    }
    QVERIFY2(named >= looks - 1, qPrintable(QStringLiteral("%1 of %2").arg(named).arg(looks)));
    StragglerTimeline* timeline = view->stragglerTimeline();
    QVERIFY(timeline->isVisible());
    QVERIFY(std::any_of(timeline->spans().begin(), timeline->spans().end(),
                        [](const StragglerSpan& span) { return span.rank == 1; }));

    const QString screenshots = qEnvironmentVariable("RINGSIDE_SCREENSHOT_DIR");
    if (!screenshots.isEmpty()) {
      for (QSplitter* splitter : live.findChildren<QSplitter*>()) {
        if (splitter->orientation() == Qt::Vertical) splitter->setSizes({560, 360});
      }
      QTest::qWait(1500);
      QVERIFY(
          live.grab().save(QDir(screenshots).filePath(QStringLiteral("straggler-verdict.png"))));
    }

    busy.stop();
    QTRY_VERIFY_WITH_TIMEOUT(
        !view->summaryText().startsWith(QStringLiteral("straggler: rank 1 on ")), 20000);
    QTest::qWait(3000);
    controller.stopRun(runId);
    QTRY_COMPARE_WITH_TIMEOUT(testing::storedRunState(controller, runId), v1::STOPPED, 60000);

    // The finished run, as History opens it: the verdict over the run from the stored samples.
    DashboardTab finished(controller, runId);
    finished.resize(1500, 1000);
    finished.show();
    showRankPage(finished);
    StragglerTimeline* over = finished.rankView()->stragglerTimeline();
    QTRY_VERIFY_WITH_TIMEOUT(!over->spans().empty(), 30000);
    const std::vector<StragglerSpan> spans = over->spans();
    QVERIFY(std::any_of(spans.begin(), spans.end(),
                        [](const StragglerSpan& span) { return span.rank == 1; }));
    QCOMPARE(spans.front().rank, -1);
    QVERIFY2(spans.back().rank != 1, "the verdict at the run's end still names rank 1");
    QVERIFY(finished.rankView()->summaryText().startsWith(QStringLiteral("straggler: ")));
  }
};

QTEST_MAIN(StragglerContentionProcessTest)
#include "straggler_contention_process_test.moc"
