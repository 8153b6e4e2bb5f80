// RankHeatmapView: the dashboard's rank × step heatmap beside the per-rank table (issue 13, item
// 2). Paints a RankHeatmap (ringside/gui/rank_heatmap.h): one row per rank, grouped by node with
// the node's name beside its rows, one column per step window, each cell coloured by how far the
// rank's compute time (or, switched with the box above it, its all-reduce wait) lies from the
// window's median over ranks; a colour legend; a step axis below. Hovering a cell shows the rank,
// its node, the window's steps, and the rank's and the median's values.
// Paints only on setHeatmap(), a layer switch or a resize: the dashboard's timer decides how often
// new data arrives. GUI thread only.
#pragma once

#include <QString>
#include <QWidget>

#include <cstddef>
#include <optional>

#include "ringside/gui/rank_heatmap.h"

class QComboBox;
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

  // For tests and screenshots: the layer switch and the painted area.
  QComboBox* layerBox() const { return layerBox_; }
  QWidget* canvas() const;

  struct CellIndex {
    size_t row = 0;
    size_t window = 0;
  };
  // The cell under `position` (canvas coordinates); std::nullopt outside the cells.
  std::optional<CellIndex> cellAt(QPoint position) const;
  // The tooltip text for `position` (canvas coordinates); "" outside the cells.
  QString toolTipAt(QPoint position) const;

 private:
  class Canvas;
  class Legend;

  RankHeatmap heatmap_;
  QComboBox* layerBox_;
  QLabel* scaleNote_;
  Canvas* canvas_;
  Legend* legend_;
};

}  // namespace ringside::gui
