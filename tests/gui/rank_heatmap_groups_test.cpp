// The rank heatmap at 512 ranks on 64 nodes x 8 GPUs. It opens grouped by node:
// one row per node, coloured by its rank furthest from the median (the straggler's node red in the
// compute layer, blue in the wait layer, the others white); a click on a node's row shows its 8
// ranks below it and a second click hides them; "Group by node" off shows all 512 rows and stays
// off for the next heatmap. A heatmap of 8 ranks stays one row per rank.
#include <QCheckBox>
#include <QImage>
#include <QLocale>
#include <QtTest>

#include "ringside/gui/heatmap_node_rows.h"
#include "ringside/gui/rank_heatmap.h"
#include "ringside/gui/widgets/rank_heatmap_view.h"

using namespace ringside::gui;

namespace {

constexpr int kNodes = 64;
constexpr int kGpusPerNode = 8;
constexpr int kStraggler = 300;  // on gpu-node-37
constexpr size_t kStragglerNode = 37;

QString nodeName(int node) {
  return QStringLiteral("gpu-node-%1").arg(node, 2, 10, QLatin1Char('0'));
}

// 512 ranks over 2,000 steps logged every 10; from step 1,000 the straggler computes 15 ms
// instead of 10 and the others wait 5 ms a step for it.
RankHeatmap cluster(int ranks = kNodes * kGpusPerNode) {
  std::vector<RankTimingSeries> series;
  for (int rank = 0; rank < ranks; ++rank) {
    RankTimingSeries one;
    one.rank = rank;
    one.node = nodeName(rank / kGpusPerNode);
    for (int64_t step = 10; step <= 2'000; step += 10) {
      const bool late = step >= 1'000;
      one.computeMs.push_back(
          {static_cast<double>(step), rank == kStraggler && late ? 15.0 : 10.0});
      one.waitMs.push_back({static_cast<double>(step), late && rank != kStraggler ? 5.0 : 0.2});
    }
    series.push_back(std::move(one));
  }
  return buildRankHeatmap(series);
}

// A point in the middle of painted row `row`, window `window`; (-1, -1) when none is found. Two
// scans (down the middle column, then along the row) instead of every pixel: cellAt() lays out
// 512 labels each time.
QPoint pointIn(const RankHeatmapView& view, size_t row, size_t window) {
  const QWidget* canvas = view.canvas();
  int top = -1, bottom = -1;
  for (int y = 0; y < canvas->height(); ++y) {
    const auto cell = view.cellAt({canvas->width() / 2, y});
    if (cell && cell->row == row) {
      if (top < 0) top = y;
      bottom = y;
    }
  }
  if (top < 0) return {-1, -1};
  const int y = (top + bottom) / 2;
  int left = -1, right = -1;
  for (int x = 0; x < canvas->width(); ++x) {
    const auto cell = view.cellAt({x, y});
    if (cell && cell->window == window) {
      if (left < 0) left = x;
      right = x;
    }
  }
  if (left < 0) return {-1, -1};
  return {(left + right) / 2, y};
}

// The first window whose steps start at or after `step`.
size_t windowFrom(const RankHeatmap& heatmap, int64_t step) {
  for (size_t window = 0; window < heatmap.windows.size(); ++window) {
    if (heatmap.windows[window].firstStep >= step) return window;
  }
  return heatmap.windows.size() - 1;
}

}  // namespace

class RankHeatmapGroupsTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { QLocale::setDefault(QLocale(QLocale::English, QLocale::UnitedStates)); }

  void eachNodeRowIsItsRankFurthestFromTheMedian() {
    const RankHeatmap heatmap = cluster();
    QCOMPARE(heatmap.rows.size(), size_t{512});
    const std::vector<HeatmapNodeRow> nodes = heatmapNodeRows(heatmap);
    QCOMPARE(nodes.size(), size_t{kNodes});
    const size_t late = windowFrom(heatmap, 1'200);
    const size_t early = windowFrom(heatmap, 100);
    for (size_t node = 0; node < nodes.size(); ++node) {
      QCOMPARE(nodes[node].group.node, nodeName(static_cast<int>(node)));
      QCOMPARE(nodes[node].group.endRow - nodes[node].group.firstRow, size_t{kGpusPerNode});
      QCOMPARE(nodes[node].compute.size(), heatmap.windows.size());
      const HeatmapNodeCell& compute = nodes[node].compute[late];
      const HeatmapNodeCell& wait = nodes[node].wait[late];
      QVERIFY(compute.excess && wait.excess);
      if (node == kStragglerNode) {
        QCOMPARE(compute.rank, kStraggler);
        QVERIFY(std::abs(*compute.excess - 0.5) < 1e-9);
        QCOMPARE(wait.rank, kStraggler);
        QVERIFY(std::abs(*wait.excess - (0.2 - 5.0) / 10.0) < 1e-9);
      } else {
        // Every rank at the median: 0, named by the node's lowest rank.
        QCOMPARE(*compute.excess, 0.0);
        QCOMPARE(*wait.excess, 0.0);
        QCOMPARE(compute.rank, static_cast<int>(node) * kGpusPerNode);
      }
      QCOMPARE(*nodes[node].compute[early].excess, 0.0);
    }
    QVERIFY(heatmapNodeRows(RankHeatmap{}).empty());
  }

  void aLargeHeatmapOpensGroupedAndANodeRowExpandsOnAClick() {
    RankHeatmapView view;
    view.resize(1000, 900);
    const RankHeatmap heatmap = cluster();
    view.setHeatmap(heatmap);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QVERIFY(view.groupedByNode());
    QVERIFY(view.groupByNodeBox()->isChecked());
    QCOMPARE(view.displayRows().size(), size_t{kNodes});
    for (const auto& row : view.displayRows()) QVERIFY(!row.row);

    const size_t late = windowFrom(heatmap, 1'200);
    const QPoint hot = pointIn(view, kStragglerNode, late);
    const QPoint calm = pointIn(view, 3, late);
    QVERIFY(hot.x() >= 0 && calm.x() >= 0);
    QImage image = view.canvas()->grab().toImage();
    QVERIFY2(image.pixelColor(hot).red() > image.pixelColor(hot).blue() + 100,
             qPrintable(image.pixelColor(hot).name()));
    QCOMPARE(image.pixelColor(calm), QColor(Qt::white));
    QString tip = view.toolTipAt(hot);
    QVERIFY2(tip.contains(QStringLiteral("Node gpu-node-37: 8 ranks (click to show them)")),
             qPrintable(tip));
    QVERIFY2(tip.contains(QStringLiteral("Compute: rank 300 furthest from the median (+50%)")),
             qPrintable(tip));
    QVERIFY2(tip.contains(QStringLiteral("All-reduce wait: rank 300 furthest from the median")),
             qPrintable(tip));
    view.setLayer(HeatmapLayer::kWait);
    image = view.canvas()->grab().toImage();
    QVERIFY2(image.pixelColor(hot).blue() > image.pixelColor(hot).red() + 100,
             qPrintable(image.pixelColor(hot).name()));
    view.setLayer(HeatmapLayer::kCompute);

    // A click on the node's label expands it: its 8 ranks below its row.
    QTest::mouseClick(view.canvas(), Qt::LeftButton, {}, QPoint(8, hot.y()));
    QVERIFY(view.nodeExpanded(nodeName(kStragglerNode)));
    QCOMPARE(view.displayRows().size(), size_t{kNodes + kGpusPerNode});
    for (int i = 0; i < kGpusPerNode; ++i) {
      const auto& row = view.displayRows()[kStragglerNode + 1 + i];
      QVERIFY(row.row.has_value());
      QCOMPARE(heatmap.rows[*row.row].rank, 296 + i);
    }
    const size_t stragglerRow = kStragglerNode + 1 + (kStraggler - 296);
    QVERIFY(std::abs(*view.displayExcess(stragglerRow, late, HeatmapLayer::kCompute) - 0.5) < 1e-9);
    tip = view.toolTipAt(pointIn(view, stragglerRow, late));
    QVERIFY2(tip.contains(QStringLiteral("Rank 300 on gpu-node-37")), qPrintable(tip));
    // The node after it follows its ranks.
    QVERIFY(!view.displayRows()[kStragglerNode + 1 + kGpusPerNode].row);
    QCOMPARE(view.displayRows()[kStragglerNode + 1 + kGpusPerNode].node, kStragglerNode + 1);
    // The expansion stays with the next heatmap; a second click on the node's row hides its ranks.
    view.setHeatmap(cluster());
    QCOMPARE(view.displayRows().size(), size_t{kNodes + kGpusPerNode});
    QTest::mouseClick(view.canvas(), Qt::LeftButton, {}, pointIn(view, kStragglerNode, 0));
    QVERIFY(!view.nodeExpanded(nodeName(kStragglerNode)));
    QCOMPARE(view.displayRows().size(), size_t{kNodes});
    // A click on a rank's row expands nothing.
    view.setNodeExpanded(nodeName(0), true);
    QTest::mouseClick(view.canvas(), Qt::LeftButton, {}, pointIn(view, 1, late));
    QVERIFY(view.nodeExpanded(nodeName(0)));
  }

  void ungroupedShowsEveryRankAndStaysSo() {
    RankHeatmapView view;
    view.resize(1000, 900);
    view.setHeatmap(cluster());
    QVERIFY(view.groupedByNode());
    view.groupByNodeBox()->click();
    QVERIFY(!view.groupedByNode());
    QCOMPARE(view.displayRows().size(), size_t{512});
    for (size_t i = 0; i < 512; ++i) QCOMPARE(*view.displayRows()[i].row, i);
    view.setHeatmap(cluster());
    QVERIFY(!view.groupedByNode());
    QCOMPARE(view.displayRows().size(), size_t{512});
    // Not grouped, a new heatmap costs no node rows (O(rows x windows) on the GUI thread); they
    // are computed when the view is grouped again, and match heatmapNodeRows.
    QVERIFY(view.nodeRows().empty());
    QCOMPARE(view.nodeGroups().size(), size_t{64});
    view.setGroupedByNode(true);
    const std::vector<HeatmapNodeRow> expected = heatmapNodeRows(cluster());
    QCOMPARE(view.nodeRows().size(), expected.size());
    for (size_t node = 0; node < expected.size(); ++node) {
      QCOMPARE(view.nodeRows()[node].group.node, expected[node].group.node);
      QCOMPARE(view.nodeRows()[node].compute.size(), expected[node].compute.size());
      QCOMPARE(view.nodeRows()[node].compute[0].rank, expected[node].compute[0].rank);
    }
    QCOMPARE(view.displayRows().size(), size_t{64});
  }

  void aSmallHeatmapIsOneRowPerRank() {
    RankHeatmapView view;
    view.setHeatmap(cluster(8));
    QVERIFY(!view.groupedByNode());
    QCOMPARE(view.displayRows().size(), size_t{8});
    view.setGroupedByNode(true);
    QCOMPARE(view.displayRows().size(), size_t{1});
    view.setHeatmap(cluster(8));
    QVERIFY(view.groupedByNode());  // the user's choice stays
  }
};

QTEST_MAIN(RankHeatmapGroupsTest)
#include "rank_heatmap_groups_test.moc"
