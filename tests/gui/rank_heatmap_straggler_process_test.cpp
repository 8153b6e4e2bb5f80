// A real straggler in the dashboard's rank × step heatmap, not a simulated
// number: a 2-rank CNN run launched through the controller and a real local agent with the run
// form's metric interval at 5 steps; rank 0 pinned to one CPU, rank 1 to another, and from about
// a third of the run on two busy processes share rank 1's CPU. Afterwards the finished run's
// dashboard shows rank 1's compute time above the median in the windows after that step (a
// streak), clearly more than before it.
//
// Label `slow` (opt-in): it needs two CPUs that nothing else keeps busy. With
// RINGSIDE_SCREENSHOT_DIR set it also saves the dashboard as rank-heatmap.png there (how
// docs/images/rank-heatmap.png is made; see docs/dashboard.md).
#include <sched.h>
#include <unistd.h>

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QSplitter>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "gui_test_support.h"
#include "ringside/common/metric_names.h"
#include "ringside/gui/controller.h"
#include "ringside/gui/widgets/dashboard_tab.h"
#include "ringside/gui/widgets/rank_heatmap_view.h"
#include "ringside/gui/widgets/rank_view.h"

using namespace ringside::gui;
namespace v1 = ringside::v1;

namespace {

// The CPUs this process may run on, ascending.
std::vector<int> allowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

// Pins every thread of `pid` to `cpu`; false when one cannot be pinned.
bool pinProcess(qint64 pid, int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  const QStringList threads =
      QDir(QStringLiteral("/proc/%1/task").arg(pid)).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
  if (threads.isEmpty()) return false;
  for (const QString& thread : threads) {
    if (sched_setaffinity(thread.toInt(), sizeof(set), &set) != 0) return false;
  }
  return true;
}

// The PIDs of the run's ranks by rank (from each process's RINGSIDE_RUN_ID and
// OMPI_COMM_WORLD_RANK); -1 for a rank not found.
std::vector<qint64> rankPids(const QString& runId, int worldSize) {
  std::vector<qint64> pids(static_cast<size_t>(worldSize), -1);
  const QByteArray runVariable = "RINGSIDE_RUN_ID=" + runId.toUtf8();
  for (const QString& entry : QDir(QStringLiteral("/proc")).entryList(QDir::Dirs)) {
    bool isPid = false;
    const qint64 pid = entry.toLongLong(&isPid);
    if (!isPid) continue;
    QFile environ(QStringLiteral("/proc/%1/environ").arg(pid));
    if (!environ.open(QIODevice::ReadOnly)) continue;
    const QList<QByteArray> variables = environ.readAll().split('\0');
    if (!variables.contains(runVariable)) continue;
    for (const QByteArray& variable : variables) {
      if (!variable.startsWith("OMPI_COMM_WORLD_RANK=")) continue;
      const int rank =
          variable.mid(static_cast<qsizetype>(qstrlen("OMPI_COMM_WORLD_RANK="))).toInt();
      if (rank >= 0 && rank < worldSize) pids[static_cast<size_t>(rank)] = pid;
    }
  }
  return pids;
}

// The mean compute excess of `row` over the windows that start at or after `from` and end
// before `to`; NaN when there is none.
double meanExcess(const RankHeatmap& heatmap, size_t row, int64_t from, int64_t to) {
  double sum = 0;
  int count = 0;
  for (size_t window = 0; window < heatmap.windows.size(); ++window) {
    if (heatmap.windows[window].firstStep < from || heatmap.windows[window].lastStep >= to) {
      continue;
    }
    if (const auto excess = heatmap.excess(row, window, HeatmapLayer::kCompute)) {
      sum += *excess;
      ++count;
    }
  }
  return count > 0 ? sum / count : std::nan("");
}

}  // namespace

class RankHeatmapStragglerProcessTest : public QObject {
  Q_OBJECT

 private:
  static int64_t lastStep(Controller& controller, const QString& runId, int rank) {
    auto points = controller.store()
                      .series(runId, QString::fromLatin1(ringside::metric::kComputeMs), rank)
                      .result();
    return points.isOk() && !points->empty() ? static_cast<int64_t>(points->back().x) : -1;
  }

 private slots:
  void initTestCase() { testing::allowMpirunAsRoot(); }

  void aRankSharingItsCpuWithABusyProcessIsAStreak() {
    const std::vector<int> cpus = allowedCpus();
    if (cpus.size() < 2) QSKIP("needs two CPUs");
    testing::ControllerInTempDir fixture(testing::withBuiltLocalAgent());
    Controller& controller = fixture.controller;
    QVERIFY(controller.start().isOk());
    QTRY_VERIFY_WITH_TIMEOUT(!testing::onlineLocalNodeId(controller).isEmpty(), 30000);

    RunForm form;
    form.name = QStringLiteral("cnn, rank 1 shares its CPU");
    form.model = QStringLiteral("cnn");
    form.backend = QStringLiteral("mpi");
    form.epochs = 1;
    form.logEvery = 5;  // the run form's metric interval
    form.nodeIds = {testing::onlineLocalNodeId(controller)};
    form.ranksPerNode = 2;
    QString launchError;
    const QString runId = testing::launchAndWait(controller, form, &launchError);
    QVERIFY2(!runId.isEmpty(), qPrintable(launchError));

    // Each rank on a CPU of its own.
    std::vector<qint64> pids;
    QTRY_VERIFY_WITH_TIMEOUT((pids = rankPids(runId, 2), pids[0] > 0 && pids[1] > 0), 60000);
    QVERIFY(pinProcess(pids[0], cpus[0]));
    QVERIFY(pinProcess(pids[1], cpus[1]));

    // From about a third of the run's 469 steps on, two busy processes share rank 1's CPU: it
    // gets a third of it.
    QTRY_VERIFY_WITH_TIMEOUT(lastStep(controller, runId, 1) >= 150, 120000);
    std::vector<std::unique_ptr<QProcess>> busy;
    auto stopBusy = qScopeGuard([&busy] {
      for (auto& process : busy) {
        process->kill();
        process->waitForFinished();
      }
      busy.clear();
    });
    for (int i = 0; i < 2; ++i) {
      busy.push_back(std::make_unique<QProcess>());
      busy.back()->start(QStringLiteral("/bin/sh"),
                         {QStringLiteral("-c"), QStringLiteral("while :; do :; done")});
      QVERIFY(busy.back()->waitForStarted());
      QVERIFY(pinProcess(busy.back()->processId(), cpus[1]));
    }
    const int64_t busyFrom = lastStep(controller, runId, 1);
    QTRY_COMPARE_WITH_TIMEOUT(testing::storedRunState(controller, runId), v1::COMPLETED, 300000);
    stopBusy.dismiss();
    for (auto& process : busy) {
      process->kill();
      process->waitForFinished();
    }

    // The finished run's dashboard.
    DashboardTab tab(controller, runId);
    tab.resize(1500, 1000);
    tab.show();
    QVERIFY(QTest::qWaitForWindowExposed(&tab));
    RankHeatmapView* view = tab.rankView()->heatmapView();
    QTRY_VERIFY_WITH_TIMEOUT(
        view->heatmap().rows.size() == 2 && view->heatmap().windows.back().lastStep >= 465, 20000);
    const RankHeatmap heatmap = view->heatmap();
    QCOMPARE(heatmap.rows[1].rank, 1);
    QCOMPARE(heatmap.windowSteps, int64_t{5});
    // A few windows after the busy process started (the records then still hold earlier steps).
    const double before = meanExcess(heatmap, 1, 0, busyFrom);
    const double after = meanExcess(heatmap, 1, busyFrom + 20, std::numeric_limits<int64_t>::max());
    qInfo("busy from step %lld; rank 1's compute vs the median: %+.0f%% before, %+.0f%% after",
          static_cast<long long>(busyFrom), before * 100, after * 100);
    QVERIFY2(after > 0.1, qPrintable(QString::number(after)));
    QVERIFY2(after > before + 0.1, qPrintable(QStringLiteral("%1 %2").arg(before).arg(after)));

    const QString screenshots = qEnvironmentVariable("RINGSIDE_SCREENSHOT_DIR");
    if (!screenshots.isEmpty()) {
      // The per-rank view as tall as the charts above it.
      for (QSplitter* splitter : tab.findChildren<QSplitter*>()) {
        if (splitter->orientation() == Qt::Vertical) splitter->setSizes({520, 400});
      }
      QTest::qWait(1500);
      QVERIFY(tab.grab().save(QDir(screenshots).filePath(QStringLiteral("rank-heatmap.png"))));
    }
  }
};

QTEST_MAIN(RankHeatmapStragglerProcessTest)
#include "rank_heatmap_straggler_process_test.moc"
