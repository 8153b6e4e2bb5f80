// The rank × step heatmap's logic (rank_heatmap.h): round window widths bounded in number and
// never finer than the samples, means per window, relative-to-median values for compute and wait,
// rows grouped by node, a straggler from step 5,000 on as a streak, a million-step run in at most
// the bounded number of windows, and the colour scale.
#include <QElapsedTimer>
#include <QtTest>

#include <cmath>
#include <limits>

#include "ringside/gui/rank_heatmap.h"

using namespace ringside::gui;

namespace {

// `ms` at every `every`-th step from `every` to `lastStep`; `slowerFrom`: from that step on `ms`
// × `factor`.
std::vector<SeriesPoint> steady(int64_t lastStep, int64_t every, double ms, int64_t slowerFrom = -1,
                                double factor = 1.0) {
  std::vector<SeriesPoint> points;
  for (int64_t step = every; step <= lastStep; step += every) {
    const bool slower = slowerFrom >= 0 && step >= slowerFrom;
    points.push_back({static_cast<double>(step), slower ? ms * factor : ms});
  }
  return points;
}

}  // namespace

class RankHeatmapTest : public QObject {
  Q_OBJECT

 private slots:
  void windowWidthsAreRoundBoundedAndNoFinerThanTheSamples() {
    QCOMPARE(heatmapWindowSteps(0, 99, 1, 150), int64_t{1});
    // 10,000 steps in at most 150 windows: 50 would need 201, 100 needs 101.
    QCOMPARE(heatmapWindowSteps(1, 10'000, 1, 150), int64_t{100});
    QCOMPARE(heatmapWindowSteps(10, 10'000, 10, 150), int64_t{100});
    // A short run logging every 10 steps: windows of 10, never between two records.
    QCOMPARE(heatmapWindowSteps(10, 500, 10, 150), int64_t{10});
    QCOMPARE(heatmapWindowSteps(3, 300, 3, 150), int64_t{5});
    // Windows are aligned to multiples of their width: steps 95..105 straddle step 100 for
    // every width up to 100, so one window takes 200.
    QCOMPARE(heatmapWindowSteps(95, 105, 1, 1), int64_t{200});
    // Degenerate arguments.
    QCOMPARE(heatmapWindowSteps(7, 3, 0, 0), int64_t{1});
    QCOMPARE(heatmapWindowSteps(0, 5, 10, 150), int64_t{10});
  }

  void cellsAreWindowMeansAndMediansOverRanks() {
    std::vector<RankTimingSeries> ranks(3);
    for (int rank = 0; rank < 3; ++rank) {
      ranks[static_cast<size_t>(rank)].rank = rank;
      ranks[static_cast<size_t>(rank)].node = QStringLiteral("n");
    }
    // Steps 1..4 in windows of 2 (maxWindows 3): {1}, {2, 3}, {4}.
    ranks[0].computeMs = {{1, 10}, {2, 10}, {3, 12}, {4, 10}};
    ranks[1].computeMs = {{1, 20}, {2, 20}, {3, 20}, {4, std::nan("")}};
    ranks[2].computeMs = {{1, 30}, {2, 30}, {3, 30}, {4, 30}};
    ranks[0].waitMs = {{1, 1}, {2, 1}, {3, 1}, {4, 1}};
    ranks[1].waitMs = {{1, 2}, {2, 2}, {3, 2}, {4, 2}};
    // Rank 2 reports no wait at all.
    const RankHeatmap heatmap = buildRankHeatmap(ranks, 3);
    QCOMPARE(heatmap.windowSteps, int64_t{2});
    QCOMPARE(heatmap.windows.size(), size_t{3});
    QCOMPARE(heatmap.windows[0].firstStep, int64_t{0});
    QCOMPARE(heatmap.windows[1].firstStep, int64_t{2});
    QCOMPARE(heatmap.windows[1].lastStep, int64_t{3});
    QCOMPARE(*heatmap.cell(0, 1).computeMs, 11.0);
    QCOMPARE(*heatmap.windows[1].medianComputeMs, 20.0);
    // A NaN sample is no value: rank 1 has none in the last window; the median of two is their
    // mean.
    QVERIFY(!heatmap.cell(1, 2).computeMs);
    QCOMPARE(*heatmap.windows[2].medianComputeMs, 20.0);
    QVERIFY(!heatmap.cell(2, 0).waitMs);
    QCOMPARE(*heatmap.windows[0].medianWaitMs, 1.5);
    // Compute: relative to the median compute; wait: the difference to the median wait in units
    // of the median compute.
    QCOMPARE(*heatmap.excess(2, 0, HeatmapLayer::kCompute), 0.5);
    QCOMPARE(*heatmap.excess(0, 0, HeatmapLayer::kCompute), -0.5);
    QCOMPARE(*heatmap.excess(1, 0, HeatmapLayer::kWait), 0.5 / 20.0);
    QVERIFY(!heatmap.excess(2, 0, HeatmapLayer::kWait));
    QVERIFY(!heatmap.excess(1, 2, HeatmapLayer::kCompute));
  }

  void rowsAreGroupedByNodeThenRank() {
    std::vector<RankTimingSeries> ranks;
    // mpirun's by-slot order is not assumed: node-b holds ranks 0 and 3, node-a 1 and 2.
    for (int rank : {3, 1, 0, 2}) {
      RankTimingSeries series;
      series.rank = rank;
      series.node = rank == 0 || rank == 3 ? QStringLiteral("node-b") : QStringLiteral("node-a");
      series.computeMs = steady(100, 10, 5.0);
      ranks.push_back(series);
    }
    ranks.push_back(ranks.front());  // a rank listed twice keeps its first entry
    ranks.back().node = QStringLiteral("elsewhere");
    const RankHeatmap heatmap = buildRankHeatmap(ranks);
    QCOMPARE(heatmap.rows.size(), size_t{4});
    const int expected[] = {0, 3, 1, 2};
    for (size_t row = 0; row < 4; ++row) QCOMPARE(heatmap.rows[row].rank, expected[row]);
    const auto groups = heatmap.nodeGroups();
    QCOMPARE(groups.size(), size_t{2});
    QCOMPARE(groups[0].node, QStringLiteral("node-b"));
    QCOMPARE(groups[0].firstRow, size_t{0});
    QCOMPARE(groups[0].endRow, size_t{2});
    QCOMPARE(groups[1].node, QStringLiteral("node-a"));
    QCOMPARE(groups[1].endRow, size_t{4});
  }

  // A rank that becomes slow at step 5,000 is a streak from there on, in
  // compute (the straggler) and in the wait (the ranks waiting for it).
  void aRankSlowFromStep5000IsAStreak() {
    std::vector<RankTimingSeries> ranks;
    for (int rank = 0; rank < 4; ++rank) {
      RankTimingSeries series;
      series.rank = rank;
      series.node = rank < 2 ? QStringLiteral("node-a") : QStringLiteral("node-b");
      const bool straggler = rank == 3;
      series.computeMs = steady(10'000, 10, 10.0, straggler ? 5'000 : -1, 1.5);
      // After step 5,000 the others wait 5 ms a step for rank 3, which waits for nobody.
      for (const SeriesPoint& point : series.computeMs) {
        series.waitMs.push_back({point.x, point.x >= 5'000 && !straggler ? 5.0 : 0.2});
      }
      ranks.push_back(series);
    }
    const RankHeatmap heatmap = buildRankHeatmap(ranks);
    QCOMPARE(heatmap.windowSteps, int64_t{100});
    QCOMPARE(heatmap.windows.size(), size_t{101});  // steps 0..99 up to 10,000..10,099
    for (size_t window = 0; window < heatmap.windows.size(); ++window) {
      const bool after = heatmap.windows[window].firstStep >= 5'000;
      for (size_t row = 0; row < heatmap.rows.size(); ++row) {
        const auto compute = heatmap.excess(row, window, HeatmapLayer::kCompute);
        const auto wait = heatmap.excess(row, window, HeatmapLayer::kWait);
        QVERIFY(compute && wait);
        if (heatmap.rows[row].rank == 3 && after) {
          QVERIFY2(std::abs(*compute - 0.5) < 1e-9, qPrintable(QString::number(*compute)));
          QVERIFY(*wait < -0.4);  // (0.2 - 5) / 10: waits least
        } else {
          QVERIFY2(std::abs(*compute) < 1e-9, qPrintable(QString::number(*compute)));
          QVERIFY(std::abs(*wait) < 1e-9);
        }
      }
    }
  }

  // A million-step run logged every step: at most kDefaultMaxHeatmapWindows windows, and the
  // build stays linear in the samples.
  void aLongRunHasBoundedWindows() {
    std::vector<RankTimingSeries> ranks;
    for (int rank = 0; rank < 8; ++rank) {
      RankTimingSeries series;
      series.rank = rank;
      series.node = QStringLiteral("n%1").arg(rank / 4);
      series.computeMs = steady(1'000'000, 1, 1.0 + rank * 0.01);
      series.waitMs = series.computeMs;
      ranks.push_back(std::move(series));
    }
    QElapsedTimer timer;
    timer.start();
    const RankHeatmap heatmap = buildRankHeatmap(ranks);
    qInfo("8 ranks x 2 metrics x 1,000,000 steps: %lld ms", timer.elapsed());
    QVERIFY(heatmap.windows.size() <= static_cast<size_t>(kDefaultMaxHeatmapWindows));
    QCOMPARE(heatmap.windowSteps, int64_t{10'000});
    QCOMPARE(heatmap.cells.size(), heatmap.rows.size() * heatmap.windows.size());
    QCOMPARE(heatmap.windows.back().lastStep, int64_t{1'009'999});
  }

  void nothingToShow() {
    QVERIFY(buildRankHeatmap({}).empty());
    RankTimingSeries onlyNaN;
    onlyNaN.computeMs = {{1, std::nan("")}};
    const RankHeatmap heatmap = buildRankHeatmap({onlyNaN});
    QVERIFY(heatmap.empty());
    QCOMPARE(heatmap.windowSteps, int64_t{0});
  }

  void coloursRunFromBlueThroughWhiteToRed() {
    QCOMPARE(heatmapColor(0.0), QColor(Qt::white));
    QCOMPARE(heatmapColor(std::nullopt), QColor(0xdd, 0xdd, 0xdd));
    QCOMPARE(heatmapColor(std::numeric_limits<double>::quiet_NaN()), QColor(0xdd, 0xdd, 0xdd));
    const QColor red = heatmapColor(kHeatmapSaturation);
    QCOMPARE(heatmapColor(3.0), red);  // saturated
    QVERIFY(red.red() > red.green() + 100 && red.red() > red.blue() + 100);
    const QColor blue = heatmapColor(-kHeatmapSaturation);
    QVERIFY(blue.blue() > blue.red() + 100);
    const QColor pale = heatmapColor(0.1);
    QVERIFY(pale.green() > red.green() && pale.green() < 255);
  }
};

QTEST_GUILESS_MAIN(RankHeatmapTest)
#include "rank_heatmap_test.moc"
