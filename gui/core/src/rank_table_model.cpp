#include "ringside/gui/rank_table_model.h"

#include <QColor>
#include <QFont>
#include <QHash>
#include <QLocale>

#include <algorithm>
#include <array>
#include <numeric>

#include "ringside/gui/rank_heatmap.h"
#include "ringside/gui/sort_values.h"

namespace ringside::gui {

namespace {

QString formatMs(const std::optional<double>& value) {
  return value ? QLocale().toString(*value, 'f', 3) : RankTableModel::tr("N/A");
}

// "+12", "-3", "+0": a difference in percent, signed, in the default locale.
QString signedPercent(double pct) {
  return (pct >= 0 ? QStringLiteral("+") : QString()) + QLocale().toString(pct, 'f', 0);
}

// A heat colour for a value relative to the median: none at or below it, deepening red up to
// kHeatmapSaturation above (50 %, the heatmap's saturation).
QColor heat(const std::optional<double>& value, const std::optional<double>& median) {
  if (!value || !median || !(*median > 0)) return {};
  const double excess = std::clamp((*value / *median - 1.0) / kHeatmapSaturation, 0.0, 1.0);
  if (excess <= 0) return {};
  return QColor::fromRgbF(1.0, 1.0 - 0.55 * excess, 1.0 - 0.55 * excess);
}

std::optional<double> percentOverMedian(const std::optional<double>& value,
                                        const std::optional<double>& median) {
  if (!value || !median || !(*median > 0)) return std::nullopt;
  return (*value / *median - 1.0) * 100.0;
}

QVariant sortValue(const std::optional<double>& value) {
  return value ? QVariant(*value) : QVariant();
}

// Sets what changed only, so an unchanged cell costs no repaint.
void setIfChanged(QStandardItem* item, const QVariant& value, int role) {
  if (item->data(role) != value) item->setData(value, role);
}

void fillCell(QStandardItem* item, const QString& text, const QVariant& sort,
              const QColor& background, bool bold) {
  setIfChanged(item, text, Qt::DisplayRole);
  setIfChanged(item, sort, RankTableModel::kSortRole);
  setIfChanged(item, background.isValid() ? QVariant(background) : QVariant(), Qt::BackgroundRole);
  // Dark text on a heat colour stays readable under a dark palette too.
  setIfChanged(item, background.isValid() ? QVariant(QColor(Qt::black)) : QVariant(),
               Qt::ForegroundRole);
  QVariant font;
  if (bold) {
    QFont boldFont;
    boldFont.setBold(true);
    font = boldFont;
  }
  setIfChanged(item, font, Qt::FontRole);
}

QList<QStandardItem*> newRow() {
  QList<QStandardItem*> row;
  for (int column = 0; column < RankTableModel::kColumns; ++column) {
    auto* item = new QStandardItem;
    item->setEditable(false);
    if (column != RankTableModel::kRankColumn && column != RankTableModel::kNodeColumn) {
      item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    }
    row.append(item);
  }
  return row;
}

}  // namespace

RankTableModel::RankTableModel(QObject* parent) : QStandardItemModel(0, kColumns, parent) {
  setHorizontalHeaderLabels(
      {tr("Rank"), tr("Node"), tr("Step (ms)"), tr("All-reduce wait (ms)"), tr("Step vs median")});
}

void RankTableModel::rebuild() {
  // One reset instead of a signal per inserted row: at 512 ranks the views and the proxy would
  // otherwise re-map once per row.
  beginResetModel();
  const bool blocked = blockSignals(true);
  removeRows(0, rowCount());
  rankRows_.assign(ranks_.size(), {});
  nodeRows_.clear();
  nodeRanks_.clear();
  const auto keep = [](const QList<QStandardItem*>& row) {
    std::array<QStandardItem*, kColumns> cells{};
    for (int column = 0; column < kColumns; ++column) cells[column] = row[column];
    return cells;
  };
  if (!grouped_) {
    for (size_t i = 0; i < ranks_.size(); ++i) {
      const QList<QStandardItem*> row = newRow();
      rankRows_[i] = keep(row);
      appendRow(row);
    }
  } else {
    QHash<QString, size_t>
        nodeIndex;  // ranks_ is ascending: nodes in the order of their lowest rank
    for (size_t i = 0; i < ranks_.size(); ++i) {
      const auto found = nodeIndex.constFind(ranks_[i].node);
      if (found != nodeIndex.cend()) {
        nodeRanks_[*found].push_back(i);
      } else {
        nodeIndex.insert(ranks_[i].node, nodeRanks_.size());
        nodeRanks_.push_back({i});
      }
    }
    for (const std::vector<size_t>& members : nodeRanks_) {
      const QList<QStandardItem*> nodeRow = newRow();
      nodeRows_.push_back(keep(nodeRow));
      for (const size_t i : members) {
        const QList<QStandardItem*> row = newRow();
        rankRows_[i] = keep(row);
        nodeRow.front()->appendRow(row);
      }
      appendRow(nodeRow);
    }
  }
  blockSignals(blocked);
  endResetModel();
}

void RankTableModel::setRanks(std::vector<RankStat> ranks, int markedRank, bool groupByNode) {
  std::stable_sort(ranks.begin(), ranks.end(),
                   [](const RankStat& a, const RankStat& b) { return a.rank < b.rank; });
  ranks.erase(std::unique(ranks.begin(), ranks.end(),
                          [](const RankStat& a, const RankStat& b) { return a.rank == b.rank; }),
              ranks.end());
  Layout layout{.grouped = groupByNode, .ranks = {}};
  layout.ranks.reserve(ranks.size());
  for (const RankStat& rank : ranks) layout.ranks.emplace_back(rank.rank, rank.node);
  ranks_ = std::move(ranks);
  grouped_ = groupByNode;
  if (!(layout == layout_)) {
    layout_ = std::move(layout);
    rebuild();
  }

  const auto stepMedian = medianOf(ranks_, &RankStat::stepMs);
  const auto exposedMedian = medianOf(ranks_, &RankStat::exposedCommMs);
  // The ranks slowest first: by step time descending, those without one last, ties by rank.
  std::vector<size_t> bySlowness(ranks_.size());
  std::iota(bySlowness.begin(), bySlowness.end(), size_t{0});
  std::stable_sort(bySlowness.begin(), bySlowness.end(), [this](size_t a, size_t b) {
    const auto& stepA = ranks_[a].stepMs;
    const auto& stepB = ranks_[b].stepMs;
    if (stepA.has_value() != stepB.has_value()) return stepA.has_value();
    return stepA && *stepA > *stepB;
  });
  std::vector<int> slowOrder(ranks_.size());
  for (size_t place = 0; place < bySlowness.size(); ++place) {
    slowOrder[bySlowness[place]] = static_cast<int>(place);
  }

  // Cells change in place with the model's signals held back, then one dataChanged per block of
  // rows: the proxy re-sorts and re-filters once per update, not once per cell.
  const bool blocked = blockSignals(true);
  for (size_t i = 0; i < ranks_.size(); ++i) {
    const RankStat& rank = ranks_[i];
    const auto& cells = rankRows_[i];
    const bool bold = markedRank >= 0 && rank.rank == markedRank;
    const QString node = rank.node.isEmpty() ? tr("unknown") : rank.node;
    fillCell(cells[kRankColumn], QString::number(rank.rank), rank.rank, {}, bold);
    setIfChanged(cells[kRankColumn], rank.rank, kRankRole);
    setIfChanged(cells[kRankColumn], slowOrder[i], kSlowOrderRole);
    fillCell(cells[kNodeColumn], node, node, {}, bold);
    fillCell(cells[kStepColumn], formatMs(rank.stepMs), sortValue(rank.stepMs),
             heat(rank.stepMs, stepMedian), bold);
    fillCell(cells[kExposedColumn], formatMs(rank.exposedCommMs), sortValue(rank.exposedCommMs),
             heat(rank.exposedCommMs, exposedMedian), bold);
    const auto over = percentOverMedian(rank.stepMs, stepMedian);
    fillCell(cells[kVsMedianColumn], over ? signedPercent(*over) + QLatin1Char('%') : tr("N/A"),
             sortValue(over), {}, bold);
  }
  for (size_t n = 0; n < nodeRows_.size(); ++n) {
    const std::vector<size_t>& members = nodeRanks_[n];
    const auto& cells = nodeRows_[n];
    // The node's values are its slowest rank's step and its longest wait.
    std::optional<size_t> slowest;
    std::optional<double> longestWait;
    int bestPlace = static_cast<int>(ranks_.size());
    bool marked = false;
    for (const size_t i : members) {
      if (slowOrder[i] < bestPlace) {
        bestPlace = slowOrder[i];
        slowest = i;
      }
      if (ranks_[i].exposedCommMs && (!longestWait || *ranks_[i].exposedCommMs > *longestWait)) {
        longestWait = ranks_[i].exposedCommMs;
      }
      marked |= markedRank >= 0 && ranks_[i].rank == markedRank;
    }
    const std::optional<double> step = slowest ? ranks_[*slowest].stepMs : std::nullopt;
    const QString node = ranks_[members.front()].node;
    const QString name = node.isEmpty() ? tr("unknown") : node;
    fillCell(cells[kRankColumn], name, name, {}, marked);
    setIfChanged(cells[kRankColumn], -1, kRankRole);
    setIfChanged(cells[kRankColumn], bestPlace, kSlowOrderRole);
    const QString count = tr("%1 ranks").arg(members.size());
    fillCell(cells[kNodeColumn], count, static_cast<qulonglong>(members.size()), {}, marked);
    fillCell(cells[kStepColumn], formatMs(step), sortValue(step), heat(step, stepMedian), marked);
    fillCell(cells[kExposedColumn], formatMs(longestWait), sortValue(longestWait),
             heat(longestWait, exposedMedian), marked);
    const auto over = percentOverMedian(step, stepMedian);
    fillCell(cells[kVsMedianColumn], over ? signedPercent(*over) + QLatin1Char('%') : tr("N/A"),
             sortValue(over), {}, marked);
  }
  blockSignals(blocked);
  for (const auto& cells : nodeRows_) {
    QStandardItem* node = cells[kRankColumn];
    if (node->rowCount() > 0) {
      emit dataChanged(node->child(0, 0)->index(),
                       node->child(node->rowCount() - 1, kColumns - 1)->index());
    }
  }
  if (rowCount() > 0) emit dataChanged(index(0, 0), index(rowCount() - 1, kColumns - 1));
}

RankTableProxy::RankTableProxy(QObject* parent) : QSortFilterProxyModel(parent) {
  setSortRole(RankTableModel::kSortRole);
  setRecursiveFilteringEnabled(true);
  setDynamicSortFilter(true);
}

void RankTableProxy::setFilterText(const QString& text) {
  const QString trimmed = text.trimmed();
  if (trimmed == filter_) return;
  filter_ = trimmed;
  invalidateRowsFilter();
}

void RankTableProxy::setTopK(int k) {
  k = std::max(0, k);
  if (k == topK_) return;
  topK_ = k;
  invalidateRowsFilter();
}

bool RankTableProxy::filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const {
  const QModelIndex first =
      sourceModel()->index(sourceRow, RankTableModel::kRankColumn, sourceParent);
  const int rank = first.data(RankTableModel::kRankRole).toInt();
  // A node row shows through its ranks (recursive filtering asks them).
  if (rank < 0) return false;
  if (topK_ > 0 && first.data(RankTableModel::kSlowOrderRole).toInt() >= topK_) return false;
  if (filter_.isEmpty()) return true;
  bool isNumber = false;
  const int wanted = filter_.toInt(&isNumber);
  if (isNumber && wanted == rank) return true;
  const QString node =
      sourceModel()->index(sourceRow, RankTableModel::kNodeColumn, sourceParent).data().toString();
  return node.contains(filter_, Qt::CaseInsensitive);
}

bool RankTableProxy::lessThan(const QModelIndex& left, const QModelIndex& right) const {
  return compareSortValues(left.data(sortRole()), right.data(sortRole())) < 0;
}

}  // namespace ringside::gui
