// End to end: a user's PyTorch DDP script (examples/pytorch/ddp_fashion_mnist.py, with
// the ringside package's three calls) launched as a "PyTorch script" job through the GUI's
// controller and a real local agent, on Debian's python3-torch (CPU, gloo). The GUI's store gets
// the script's loss for both ranks, the hook's per-rank all-reduce times and the run's busbw and
// per-bucket figures, its hyperparameters (ringside.config) with the run, and the agent's
// straggler verdict names the rank the script was told to slow down.
#include <QDir>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <map>

#include "build_paths.h"
#include "gui_test_support.h"
#include "ringside/common/metric_names.h"
#include "ringside/gui/controller.h"
#include "ringside/gui/widgets/dashboard_tab.h"
#include "ringside/gui/widgets/metric_chart.h"

namespace ringside::gui {

class PyTorchScriptProcessTest : public QObject {
  Q_OBJECT

  static std::vector<int> ranksOf(Controller& controller, const QString& runId, const char* name) {
    auto ranks = controller.store().metricRanks(runId, QString::fromLatin1(name)).result();
    return ranks.isOk() ? ranks.value() : std::vector<int>{};
  }
  static bool ended(v1::RunState state) {
    return state == v1::COMPLETED || state == v1::FAILED || state == v1::STOPPED;
  }
  static bool has(const std::vector<int>& ranks, int rank) {
    return std::find(ranks.begin(), ranks.end(), rank) != ranks.end();
  }

 private slots:
  void initTestCase() { testing::allowMpirunAsRoot(); }

  void aScriptRunHasItsLossCommunicationParamsAndStraggler() {
    if (!testing::pythonHasTorch()) QSKIP("/usr/bin/python3 cannot import torch (install python3-torch)");
    QTemporaryDir work;
    QVERIFY(work.isValid());
    testing::ControllerInTempDir fixture(testing::withBuiltLocalAgent());
    Controller& controller = fixture.controller;
    QVERIFY(controller.start().isOk());
    QTRY_VERIFY_WITH_TIMEOUT(!testing::onlineLocalNodeId(controller).isEmpty(), 30000);

    RunForm form;
    form.name = QStringLiteral("my DDP script");
    form.job = RunForm::Job::kPython;
    form.pythonScript =
        QString::fromUtf8(ringside::test::sourceDir()) + QStringLiteral("/examples/pytorch/ddp_fashion_mnist.py");
    // Rank 1 sleeps 60 ms in every step's data loading: a straggler in the data stage. (25 ms,
    // a quarter of a step here, was outweighed on CI by the rest of the suite starving rank 0:
    // rank 1 named in 10 and rank 0 in 3 of the last 15 verdicts.)
    form.pythonArgs = QStringLiteral(
        "--epochs 1 --train-samples 9600 --test-samples 1000 --batch 64 --log-every 1 "
        "--threads 1 --inject-delay 1:60");
    form.pythonWorkingDir = work.path();
    form.nodeIds = {testing::onlineLocalNodeId(controller)};
    form.ranksPerNode = 2;
    QString error;
    const QString runId = testing::launchAndWait(controller, form, &error);
    QVERIFY2(!runId.isEmpty(), qPrintable(error));
    // The run's live dashboard, as a user watches it (with RINGSIDE_SCREENSHOT_DIR set: saved
    // as pytorch-dashboard.png there, with the per-bucket view below the charts).
    DashboardTab live(controller, runId);
    live.resize(1500, 1000);
    live.show();
    QVERIFY(QTest::qWaitForWindowExposed(&live));
    QTRY_VERIFY_WITH_TIMEOUT(live.lossChart()->seriesData(DashboardTab::rawLossName()).size() >= 30,
                             240000);
    for (QTabWidget* tabs : live.findChildren<QTabWidget*>()) {
      for (int i = 0; i < tabs->count(); ++i) {
        if (tabs->tabText(i) == QLatin1String("Per bucket")) tabs->setCurrentIndex(i);
      }
    }
    QTest::qWait(2500);  // the per-bucket view's next read and a redraw
    if (const QString dir = qEnvironmentVariable("RINGSIDE_SCREENSHOT_DIR"); !dir.isEmpty()) {
      QVERIFY(live.grab().save(QDir(dir).filePath(QStringLiteral("pytorch-dashboard.png"))));
    }
    QTRY_VERIFY_WITH_TIMEOUT(ended(testing::storedRunState(controller, runId)), 300000);
    auto run = controller.store().run(runId).result();
    QVERIFY(run.isOk());
    QVERIFY2(run->state == v1::COMPLETED, qPrintable(run->reason));
    QCOMPARE(run->worldSize, 2);

    // The script's own values, per rank and as the run's (rank 0's).
    const std::vector<int> loss = ranksOf(controller, runId, metric::kTrainLoss);
    QVERIFY2(has(loss, -1) && has(loss, 0) && has(loss, 1), "train/loss of both ranks");
    QVERIFY(has(ranksOf(controller, runId, metric::kTestAccuracy), -1));
    // The hook's timings: every rank's all-reduce, compute, data and wait times, the run's
    // bus bandwidth and its buckets' figures.
    for (const char* name : {metric::kAllreduceMs, metric::kComputeMs, metric::kDataMs,
                             metric::kWaitMs, metric::kStepMs}) {
      const std::vector<int> ranks = ranksOf(controller, runId, name);
      QVERIFY2(has(ranks, 0) && has(ranks, 1), name);
    }
    QVERIFY(!ranksOf(controller, runId, metric::kCommBusbw).empty());
    auto names = controller.store().metricNames(runId).result();
    QVERIFY(names.isOk());
    QVERIFY2(names->contains(QStringLiteral("comm/bucket0/busbw_GBps")),
             qPrintable(names->join(QLatin1Char(' '))));
    auto busbw = controller.store().series(runId, QString::fromLatin1(metric::kCommBusbw), -1,
                                           SeriesX::kStep).result();
    QVERIFY(busbw.isOk() && !busbw->empty());
    QVERIFY(busbw->back().y > 0.0);

    // ringside.config(): the script's arguments with the run, key by key for Compare's diff.
    QVERIFY2(run->configJson.contains(QStringLiteral("\"params.batch\":64")),
             qPrintable(run->configJson));
    QVERIFY(run->configJson.contains(QStringLiteral("\"script\":")));

    // The agent's straggler verdict names rank 1 (its data stage) once the window filled.
    auto verdicts = controller.store().series(runId, QString::fromLatin1(metric::kStragglerRank),
                                              -1, SeriesX::kStep).result();
    QVERIFY(verdicts.isOk());
    QVERIFY2(verdicts->size() >= 10, "the agent judged the script's run");
    std::map<int, int> named;
    for (size_t i = verdicts->size() / 2; i < verdicts->size(); ++i) {
      ++named[static_cast<int>((*verdicts)[i].y)];
    }
    const int total = static_cast<int>(verdicts->size() - verdicts->size() / 2);
    QString sequence;
    for (const SeriesPoint& point : *verdicts) {
      sequence += QStringLiteral("%1@%2 ").arg(point.y).arg(point.x);
    }
    // Most verdicts name rank 1, and far more often than rank 0 (a 2-core machine running the
    // rest of the test suite can stall either rank now and then).
    QVERIFY2(named[1] * 2 > total && named[1] >= 4 * named[0],
             qPrintable(QStringLiteral("rank 1 named in %1 of the last %2 verdicts: %3")
                            .arg(named[1])
                            .arg(total)
                            .arg(sequence)));
  }
};

}  // namespace ringside::gui

QTEST_MAIN(ringside::gui::PyTorchScriptProcessTest)
#include "pytorch_script_process_test.moc"
