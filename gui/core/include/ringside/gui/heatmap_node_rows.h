// The node-level rows of the rank heatmap grouped by node: at 64 nodes x 8
// GPUs a row per rank is under 2 pixels tall, so the heatmap can show one row per node that
// expands to its ranks. A node's cell is its rank furthest from the window's median, either way
// (the largest |excess|, rank_heatmap.h): in the compute layer a straggler makes its node red, in
// the wait layer the straggler, which never waits, makes its node blue, and a node whose ranks all
// sit at the median stays white. Pure functions of Qt Core/Gui, thread-safe.
#pragma once

#include <optional>
#include <vector>

#include "ringside/gui/rank_heatmap.h"

namespace ringside::gui {

// One node's value in one window of one layer.
struct HeatmapNodeCell {
  std::optional<double> excess;  // its rank's excess; nullopt when no rank of it has one
  int rank = -1;                 // that rank; -1 with no value
};

struct HeatmapNodeRow {
  HeatmapNodeGroup group;                // the node and its rows in RankHeatmap::rows
  std::vector<HeatmapNodeCell> compute;  // one per window, HeatmapLayer::kCompute
  std::vector<HeatmapNodeCell> wait;     // one per window, HeatmapLayer::kWait

  const std::vector<HeatmapNodeCell>& cells(HeatmapLayer layer) const {
    return layer == HeatmapLayer::kCompute ? compute : wait;
  }
};

// The node rows of `heatmap`, in RankHeatmap::nodeGroups() order. Ties keep the lower row (the
// lower rank). Cost O(rows × windows); empty for an empty heatmap.
std::vector<HeatmapNodeRow> heatmapNodeRows(const RankHeatmap& heatmap);

}  // namespace ringside::gui
