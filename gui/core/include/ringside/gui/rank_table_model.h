// The dashboard's per-rank table as an item model: each rank's latest step
// time and all-reduce wait (time/step_ms, time/exposed_comm_ms, docs/metrics.md), flat or grouped
// under one row per node, and a proxy that sorts any column numerically, filters by rank or node
// text and keeps only the k slowest ranks. Built for 512 ranks on 64 nodes: an update with the
// same ranks on the same nodes changes cells in place (O(ranks log ranks), expanded nodes and the
// selection stay), a new set of ranks rebuilds the rows. GUI thread only (Qt item models).
#pragma once

#include <QSortFilterProxyModel>
#include <QStandardItemModel>
#include <QString>

#include <array>
#include <optional>
#include <vector>

#include "ringside/gui/rank_stats.h"

namespace ringside::gui {

class RankTableModel : public QStandardItemModel {
  Q_OBJECT

 public:
  enum Column { kRankColumn, kNodeColumn, kStepColumn, kExposedColumn, kVsMedianColumn, kColumns };
  enum Role {
    // The value a column sorts by: the rank number, the node name, or the value in ms / percent
    // (a double); invalid where the value is N/A.
    kSortRole = Qt::UserRole + 1,
    // On a rank row: its place among the ranks by step time, slowest first (0 = slowest; ranks
    // without a step time come last, by rank). On a node row: the best place of its ranks.
    kSlowOrderRole,
    // On a rank row: the rank; on a node row: -1.
    kRankRole,
  };

  explicit RankTableModel(QObject* parent = nullptr);

  // Shows `ranks` (any order; a rank listed twice keeps its first entry). `markedRank` is drawn in
  // bold (the straggler or the slowest rank; -1: none). `groupByNode`: one top-level row per node
  // (named by the node, in the order of its lowest rank) whose values are its slowest rank's
  // (step, "vs median") and its longest wait, with its ranks below it; otherwise one row per rank.
  // Cells are coloured by how far a value is above the median over ranks (white at or below it,
  // deepening red up to 50 % above, as the heatmap's scale).
  void setRanks(std::vector<RankStat> ranks, int markedRank, bool groupByNode);
  bool groupedByNode() const { return grouped_; }
  // The ranks as last set, ascending by rank.
  const std::vector<RankStat>& ranks() const { return ranks_; }

 private:
  struct Layout {
    bool grouped = false;
    std::vector<std::pair<int, QString>> ranks;  // (rank, node), ascending
    bool operator==(const Layout&) const = default;
  };
  void rebuild();

  std::vector<RankStat> ranks_;
  Layout layout_;
  bool grouped_ = false;
  // The cells of ranks_[i]'s row, and of each node row (grouped only).
  std::vector<std::array<QStandardItem*, kColumns>> rankRows_;
  std::vector<std::array<QStandardItem*, kColumns>> nodeRows_;
  std::vector<std::vector<size_t>> nodeRanks_;  // indices into ranks_ per node row
};

// Sorts any column of a RankTableModel by kSortRole (N/A below every value), node rows among
// themselves and ranks within their node; accepts a rank row when its rank number or node name
// contains the filter text (case-insensitive; "" accepts all) and, with a top-k limit, when it is
// among the k slowest; a node row shows while any of its ranks does.
class RankTableProxy : public QSortFilterProxyModel {
  Q_OBJECT

 public:
  explicit RankTableProxy(QObject* parent = nullptr);

  void setFilterText(const QString& text);
  QString filterText() const { return filter_; }
  // Keep only the `k` slowest ranks by step time; 0: all.
  void setTopK(int k);
  int topK() const { return topK_; }

 protected:
  bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;
  bool lessThan(const QModelIndex& left, const QModelIndex& right) const override;

 private:
  QString filter_;
  int topK_ = 0;
};

}  // namespace ringside::gui
