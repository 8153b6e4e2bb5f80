// RankHeatmapView: the dashboard's rank × step heatmap beside the per-rank table.
// Paints a RankHeatmap (ringside/gui/rank_heatmap.h): one row per rank, grouped by node with
// the node's name beside its rows, one column per step window, each cell coloured by how far the
// rank's compute time (or, switched with the box above it, its all-reduce wait) lies from the
// window's median over ranks; a colour legend; a step axis below. Hovering a cell shows the rank,
// its node, the window's steps, and the rank's and the median's values.
// Above kGroupAboveRows rows with more than one node (64 nodes x 8 GPUs: a rank's row would be
// under 2 pixels) it opens grouped by node, until the user switches "Group by node": one row per
// node (HeatmapNodeRow: its rank furthest from the median in each window) that a click expands
// to its ranks, and collapses again.
// Paints only on setHeatmap(), a layer switch or a resize: the dashboard's timer decides how often
// new data arrives. GUI thread only.
#pragma once

#include <QSet>
#include <QString>
#include <QWidget>

#include <cstddef>
#include <optional>
#include <vector>

#include "ringside/gui/heatmap_node_rows.h"
#include "ringside/gui/rank_heatmap.h"

class QCheckBox;
class QComboBox;
class QScrollArea;
class QLabel;

namespace ringside::gui {

class RankHeatmapView : public QWidget {
  Q_OBJECT

 public:
  explicit RankHeatmapView(QWidget* parent = nullptr);

  // Replaces what is shown (an empty heatmap shows a placeholder).
  void setHeatmap(RankHeatmap heatmap);
  const RankHeatmap& heatmap() const { return heatmap_; }

  HeatmapLayer layer() const;
  void setLayer(HeatmapLayer layer);

  // More rows than this (with more than one node) open grouped by node.
  static constexpr size_t kGroupAboveRows = 64;

  // One painted row: a node's row (row == nullopt; node indexes nodeGroups() and nodeRows()) or
  // a rank's row (row: its index in heatmap().rows, node: its node). Not grouped, row i is
  // heatmap row i.
  struct DisplayRow {
    size_t node = 0;
    std::optional<size_t> row;
  };
  const std::vector<DisplayRow>& displayRows() const { return displayRows_; }
  // The heatmap's nodes with their rows (heatmap().nodeGroups()).
  const std::vector<HeatmapNodeGroup>& nodeGroups() const { return nodeGroups_; }
  // The nodes' rows with their cells, in nodeGroups() order: computed for a heatmap only once
  // it is shown grouped by node (O(rows x windows) on the GUI thread), empty until then.
  const std::vector<HeatmapNodeRow>& nodeRows() const { return nodeRows_; }
  bool groupedByNode() const;
  // Switching by hand (or with the box) ends the automatic choice by size.
  void setGroupedByNode(bool grouped);
  bool nodeExpanded(const QString& node) const { return expanded_.contains(node); }
  // Shows a node's ranks below its row (grouped only; kept across setHeatmap()).
  void setNodeExpanded(const QString& node, bool expanded);
  // The colour value of a painted cell (`displayRow` < displayRows().size(), `window` <
  // heatmap().windows.size()): the rank's excess, or the node's (HeatmapNodeCell).
  std::optional<double> displayExcess(size_t displayRow, size_t window, HeatmapLayer layer) const;

  // For tests and screenshots: the layer switch, the grouping switch and the painted area.
  QComboBox* layerBox() const { return layerBox_; }
  QCheckBox* groupByNodeBox() const { return groupByNode_; }
  QWidget* canvas() const;

  struct CellIndex {
    size_t row = 0;  // into displayRows()
    size_t window = 0;
  };
  // The cell under `position` (canvas coordinates); std::nullopt outside the cells.
  std::optional<CellIndex> cellAt(QPoint position) const;
  // The painted row at `position`'s height, labels included; std::nullopt outside the rows.
  std::optional<size_t> displayRowAt(QPoint position) const;
  // The tooltip text for `position` (canvas coordinates); "" outside the cells.
  QString toolTipAt(QPoint position) const;

 private:
  class Canvas;
  class Legend;

  // Rebuilds displayRows_ from the grouping and the expanded nodes.
  void layOutRows();
  // Grouped: a canvas tall enough for a line of text per row (the scroll area scrolls it).
  void fitCanvasHeight();

  RankHeatmap heatmap_;
  std::vector<HeatmapNodeGroup> nodeGroups_;
  std::vector<HeatmapNodeRow> nodeRows_;
  bool nodeRowsStale_ = true;  // nodeRows_ not computed for heatmap_ yet
  std::vector<DisplayRow> displayRows_;
  QSet<QString> expanded_;
  bool userChoseGrouping_ = false;
  QComboBox* layerBox_;
  QCheckBox* groupByNode_;
  QLabel* scaleNote_;
  Canvas* canvas_;
  Legend* legend_;
  QScrollArea* scroll_ = nullptr;
};

}  // namespace ringside::gui
