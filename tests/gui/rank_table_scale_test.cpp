// The dashboard's per-rank table at 512 ranks on 64 nodes x 8 GPUs. Above 64
// ranks it opens on the 16 slowest, slowest first; every column sorts (N/A last when descending);
// the filter keeps a rank by number or the ranks of matching nodes; "Group by node" shows one
// collapsed row per node with its slowest rank's step and its longest wait, which expands to its
// ranks; an update with the same ranks changes values in place and keeps expanded nodes. With
// RINGSIDE_SCREENSHOT_DIR set it also saves the per-rank page at 512 ranks as rank-view-512.png
// (the 16 slowest beside the heatmap grouped by node) and rank-view-512-grouped.png (the table
// grouped, the straggler's node expanded in both): how docs/images/ gets them (docs/dashboard.md).
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QLineEdit>
#include <QLocale>
#include <QTreeView>
#include <QtTest>

#include <cmath>

#include "ringside/gui/rank_heatmap.h"
#include "ringside/gui/rank_table_model.h"
#include "ringside/gui/widgets/rank_heatmap_view.h"
#include "ringside/gui/widgets/rank_view.h"

using namespace ringside::gui;

namespace {

constexpr int kNodes = 64;
constexpr int kGpusPerNode = 8;
constexpr int kStraggler = 300;  // on gpu-node-37
constexpr int kSilent = 17;      // has reported no step time yet

QString nodeName(int node) {
  return QStringLiteral("gpu-node-%1").arg(node, 2, 10, QLatin1Char('0'));
}

// 512 ranks, rank r on node r / 8 (mpirun's by-slot mapping); steps of 100 ms plus a spread of
// up to 6.3 ms that differs per rank, the straggler at 160 ms; waits mirror the steps (the
// straggler waits least).
std::vector<RankStat> cluster(double shift = 0) {
  std::vector<RankStat> ranks;
  for (int rank = 0; rank < kNodes * kGpusPerNode; ++rank) {
    RankStat stat;
    stat.rank = rank;
    stat.node = nodeName(rank / kGpusPerNode);
    const double spread = ((rank * 37) % 64) / 10.0;
    stat.stepMs = rank == kStraggler ? 160.0 : 100.0 + spread + shift;
    stat.exposedCommMs = rank == kStraggler ? 0.5 : 60.0 - spread;
    if (rank == kSilent) stat.stepMs.reset();
    ranks.push_back(stat);
  }
  return ranks;
}

// The same cluster's compute and wait over 3,000 steps logged every 10: the straggler computes
// 60 % longer from step 1,500 on and the others wait for it.
RankHeatmap clusterHeatmap() {
  std::vector<RankTimingSeries> series;
  for (const RankStat& rank : cluster()) {
    RankTimingSeries one;
    one.rank = rank.rank;
    one.node = rank.node;
    const double spread = ((rank.rank * 37) % 64) / 40.0;
    for (int64_t step = 10; step <= 3'000; step += 10) {
      const bool late = step >= 1'500;
      const bool slow = rank.rank == kStraggler && late;
      one.computeMs.push_back({static_cast<double>(step), (slow ? 96.0 : 60.0) + spread});
      one.waitMs.push_back({static_cast<double>(step), late && !slow ? 36.0 - spread : 2.0});
    }
    series.push_back(std::move(one));
  }
  return buildRankHeatmap(series);
}

int rankAt(const QAbstractItemModel* model, int row, const QModelIndex& parent = {}) {
  return model->index(row, RankTableModel::kRankColumn, parent)
      .data(RankTableModel::kRankRole)
      .toInt();
}

std::optional<double> valueAt(const QAbstractItemModel* model, int row, int column,
                              const QModelIndex& parent = {}) {
  const QVariant value = model->index(row, column, parent).data(RankTableModel::kSortRole);
  if (!value.isValid()) return std::nullopt;
  return value.toDouble();
}

}  // namespace

class RankTableScaleTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { QLocale::setDefault(QLocale(QLocale::English, QLocale::UnitedStates)); }

  void aLargeWorldOpensOnTheSlowestRanksFirst() {
    RankView view;
    view.setRanks(cluster());
    const QAbstractItemModel* table = view.table()->model();
    QCOMPARE(view.topKBox()->currentData().toInt(), 16);
    QCOMPARE(table->rowCount(), 16);
    QCOMPARE(rankAt(table, 0), kStraggler);
    const double median = *medianOf(cluster(), &RankStat::stepMs);
    QCOMPARE(table->index(0, RankTableModel::kVsMedianColumn).data().toString(),
             QStringLiteral("+%1%").arg(std::lround((160.0 / median - 1) * 100)));
    for (int row = 1; row < table->rowCount(); ++row) {
      QVERIFY(*valueAt(table, row - 1, RankTableModel::kStepColumn) >=
              *valueAt(table, row, RankTableModel::kStepColumn));
    }
    // The 16 rows are the 16 longest steps of all 512.
    std::vector<double> steps;
    for (const RankStat& rank : cluster()) {
      if (rank.stepMs) steps.push_back(*rank.stepMs);
    }
    std::sort(steps.rbegin(), steps.rend());
    QCOMPARE(*valueAt(table, 15, RankTableModel::kStepColumn), steps[15]);
    QVERIFY(view.summaryText().contains(QStringLiteral("rank 300 on node gpu-node-37")));

    view.topKBox()->setCurrentIndex(view.topKBox()->findData(0));
    QCOMPARE(table->rowCount(), 512);
    // The rank without a step time is last when the slowest come first.
    QCOMPARE(rankAt(table, 511), kSilent);
  }

  void aSmallWorldStaysInRankOrderWithEveryRank() {
    RankView view;
    std::vector<RankStat> ranks = cluster();
    ranks.resize(8);
    view.setRanks(ranks);
    const QAbstractItemModel* table = view.table()->model();
    QCOMPARE(table->rowCount(), 8);
    for (int row = 0; row < 8; ++row) QCOMPARE(rankAt(table, row), row);
    QCOMPARE(view.topKBox()->currentData().toInt(), 0);
  }

  void everyColumnSortsBothWays() {
    RankView view;
    view.setRanks(cluster());
    view.topKBox()->setCurrentIndex(view.topKBox()->findData(0));
    const QAbstractItemModel* table = view.table()->model();
    for (int column = 0; column < RankTableModel::kColumns; ++column) {
      for (const Qt::SortOrder order : {Qt::AscendingOrder, Qt::DescendingOrder}) {
        view.table()->sortByColumn(column, order);
        QCOMPARE(table->rowCount(), 512);
        for (int row = 1; row < 512; ++row) {
          const QVariant before = table->index(row - 1, column).data(RankTableModel::kSortRole);
          const QVariant after = table->index(row, column).data(RankTableModel::kSortRole);
          if (column == RankTableModel::kNodeColumn) {
            const int compared = QString::compare(before.toString(), after.toString());
            QVERIFY2(order == Qt::AscendingOrder ? compared <= 0 : compared >= 0,
                     qPrintable(QStringLiteral("column %1 row %2").arg(column).arg(row)));
            continue;
          }
          // N/A sorts below every value: first ascending, last descending.
          if (!before.isValid() || !after.isValid()) {
            QVERIFY(order == Qt::AscendingOrder ? !before.isValid() : !after.isValid());
            continue;
          }
          QVERIFY2(order == Qt::AscendingOrder ? before.toDouble() <= after.toDouble()
                                               : before.toDouble() >= after.toDouble(),
                   qPrintable(QStringLiteral("column %1 row %2").arg(column).arg(row)));
        }
      }
    }
    view.table()->sortByColumn(RankTableModel::kRankColumn, Qt::AscendingOrder);
    for (int row = 0; row < 512; ++row) QCOMPARE(rankAt(table, row), row);
  }

  void theFilterKeepsARankByNumberOrTheRanksOfMatchingNodes() {
    RankView view;
    view.setRanks(cluster());
    view.topKBox()->setCurrentIndex(view.topKBox()->findData(0));
    view.table()->sortByColumn(RankTableModel::kRankColumn, Qt::AscendingOrder);
    const QAbstractItemModel* table = view.table()->model();
    view.filterEdit()->setText(QStringLiteral("GPU-NODE-05"));
    QCOMPARE(table->rowCount(), 8);
    for (int row = 0; row < 8; ++row) QCOMPARE(rankAt(table, row), 40 + row);
    view.filterEdit()->setText(QStringLiteral("300"));
    QCOMPARE(table->rowCount(), 1);
    QCOMPARE(rankAt(table, 0), 300);
    view.filterEdit()->setText(QStringLiteral("node-6"));  // gpu-node-60 to gpu-node-63
    QCOMPARE(table->rowCount(), 4 * 8);
    view.filterEdit()->setText(QStringLiteral("no such node"));
    QCOMPARE(table->rowCount(), 0);
    view.filterEdit()->clear();
    QCOMPARE(table->rowCount(), 512);
    // With a top-k limit the filter looks among the k slowest only.
    view.topKBox()->setCurrentIndex(view.topKBox()->findData(8));
    view.filterEdit()->setText(QStringLiteral("gpu-node-37"));
    QCOMPARE(table->rowCount(), 1);
    QCOMPARE(rankAt(table, 0), kStraggler);
  }

  void groupedByNodeEachNodeIsARowThatExpandsToItsRanks() {
    RankView view;
    view.resize(900, 600);
    view.setRanks(cluster());
    view.topKBox()->setCurrentIndex(view.topKBox()->findData(0));
    view.groupByNodeBox()->setChecked(true);
    QTreeView* tree = view.table();
    const QAbstractItemModel* table = tree->model();
    QCOMPARE(table->rowCount(), kNodes);
    // Sorted by step time, slowest first: the straggler's node on top, collapsed (64 nodes).
    const QModelIndex top = table->index(0, 0);
    QCOMPARE(top.data().toString(), QStringLiteral("gpu-node-37"));
    QCOMPARE(rankAt(table, 0), -1);
    QVERIFY(!tree->isExpanded(top));
    QCOMPARE(table->index(0, RankTableModel::kNodeColumn).data().toString(),
             QStringLiteral("8 ranks"));
    QCOMPARE(*valueAt(table, 0, RankTableModel::kStepColumn), 160.0);
    // Every node row: its slowest rank's step and its longest wait.
    const std::vector<RankStat> ranks = cluster();
    for (int row = 0; row < kNodes; ++row) {
      const QModelIndex node = table->index(row, 0);
      QCOMPARE(table->rowCount(node), kGpusPerNode);
      const int first = node.data().toString().mid(9).toInt() * kGpusPerNode;
      std::optional<double> step;
      double wait = 0;
      for (int rank = first; rank < first + kGpusPerNode; ++rank) {
        if (ranks[rank].stepMs && (!step || *ranks[rank].stepMs > *step)) step = ranks[rank].stepMs;
        wait = std::max(wait, *ranks[rank].exposedCommMs);
      }
      QCOMPARE(valueAt(table, row, RankTableModel::kStepColumn), step);
      QCOMPARE(*valueAt(table, row, RankTableModel::kExposedColumn), wait);
      if (row > 0) {
        QVERIFY(*valueAt(table, row - 1, RankTableModel::kStepColumn) >= *step);
      }
    }
    // Expanded, the node's ranks sorted the same way: the straggler first.
    tree->expand(top);
    QVERIFY(tree->isExpanded(top));
    QCOMPARE(rankAt(table, 0, top), kStraggler);
    for (int row = 1; row < kGpusPerNode; ++row) {
      QVERIFY(*valueAt(table, row - 1, RankTableModel::kStepColumn, top) >=
              *valueAt(table, row, RankTableModel::kStepColumn, top));
    }

    // The filter shows matching nodes with their matching ranks.
    view.filterEdit()->setText(QStringLiteral("gpu-node-05"));
    QCOMPARE(table->rowCount(), 1);
    QCOMPARE(table->rowCount(table->index(0, 0)), kGpusPerNode);
    view.filterEdit()->setText(QStringLiteral("301"));
    QCOMPARE(table->rowCount(), 1);
    QCOMPARE(table->rowCount(table->index(0, 0)), 1);
    QCOMPARE(rankAt(table, 0, table->index(0, 0)), 301);
    view.filterEdit()->clear();
    // With the 8 slowest only, the nodes holding them.
    view.topKBox()->setCurrentIndex(view.topKBox()->findData(8));
    int shown = 0;
    for (int row = 0; row < table->rowCount(); ++row)
      shown += table->rowCount(table->index(row, 0));
    QCOMPARE(shown, 8);

    // Ungrouped again: one row per rank.
    view.topKBox()->setCurrentIndex(view.topKBox()->findData(0));
    view.groupByNodeBox()->setChecked(false);
    QCOMPARE(table->rowCount(), 512);
  }

  void anUpdateWithTheSameRanksKeepsExpandedNodesAndResorts() {
    RankView view;
    view.setRanks(cluster());
    view.topKBox()->setCurrentIndex(view.topKBox()->findData(0));
    view.groupByNodeBox()->setChecked(true);
    QTreeView* tree = view.table();
    const QAbstractItemModel* table = tree->model();
    tree->expand(table->index(0, 0));  // gpu-node-37
    // The straggler recovers and rank 8 (gpu-node-01) becomes the slowest.
    std::vector<RankStat> later = cluster(1.0);
    later[kStraggler].stepMs = 101.0;
    later[8].stepMs = 250.0;
    view.setRanks(later);
    QCOMPARE(table->rowCount(), kNodes);
    QCOMPARE(table->index(0, 0).data().toString(), QStringLiteral("gpu-node-01"));
    QCOMPARE(*valueAt(table, 0, RankTableModel::kStepColumn), 250.0);
    QCOMPARE(rankAt(table, 0, table->index(0, 0)), 8);
    bool stillExpanded = false;
    for (int row = 0; row < table->rowCount(); ++row) {
      const QModelIndex node = table->index(row, 0);
      if (node.data().toString() == QStringLiteral("gpu-node-37")) {
        stillExpanded = tree->isExpanded(node);
      } else {
        QVERIFY(!tree->isExpanded(node));
      }
    }
    QVERIFY(stillExpanded);
  }

  void thePerRankPageAt512Ranks() {
    RankView view;
    view.resize(1500, 900);
    view.setRanks(cluster());
    view.setHeatmap(clusterHeatmap());
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    RankHeatmapView* heatmap = view.heatmapView();
    QVERIFY(heatmap->groupedByNode());
    QCOMPARE(heatmap->displayRows().size(), size_t{kNodes});
    heatmap->setNodeExpanded(nodeName(37), true);
    QCOMPARE(heatmap->displayRows().size(), size_t{kNodes + kGpusPerNode});
    QCOMPARE(view.table()->model()->rowCount(), 16);
    const QString screenshots = qEnvironmentVariable("RINGSIDE_SCREENSHOT_DIR");
    if (!screenshots.isEmpty()) {
      QVERIFY(view.grab().save(QDir(screenshots).filePath(QStringLiteral("rank-view-512.png"))));
    }
    view.topKBox()->setCurrentIndex(view.topKBox()->findData(0));
    view.groupByNodeBox()->setChecked(true);
    const QAbstractItemModel* table = view.table()->model();
    QCOMPARE(table->rowCount(), kNodes);
    view.table()->expand(table->index(0, 0));
    QCOMPARE(table->index(0, 0).data().toString(), nodeName(37));
    if (!screenshots.isEmpty()) {
      QVERIFY(view.grab().save(
          QDir(screenshots).filePath(QStringLiteral("rank-view-512-grouped.png"))));
    }
  }
};

QTEST_MAIN(RankTableScaleTest)
#include "rank_table_scale_test.moc"
