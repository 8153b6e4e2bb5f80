#include "ringside/gui/heatmap_node_rows.h"

#include <cmath>

namespace ringside::gui {

std::vector<HeatmapNodeRow> heatmapNodeRows(const RankHeatmap& heatmap) {
  std::vector<HeatmapNodeRow> nodes;
  if (heatmap.empty()) return nodes;
  const size_t windows = heatmap.windows.size();
  for (const HeatmapNodeGroup& group : heatmap.nodeGroups()) {
    HeatmapNodeRow node{.group = group,
                        .compute = std::vector<HeatmapNodeCell>(windows),
                        .wait = std::vector<HeatmapNodeCell>(windows)};
    for (size_t row = group.firstRow; row < group.endRow; ++row) {
      const int rank = heatmap.rows[row].rank;
      for (size_t window = 0; window < windows; ++window) {
        for (const HeatmapLayer layer : {HeatmapLayer::kCompute, HeatmapLayer::kWait}) {
          const auto excess = heatmap.excess(row, window, layer);
          if (!excess || !std::isfinite(*excess)) continue;
          HeatmapNodeCell& cell =
              (layer == HeatmapLayer::kCompute ? node.compute : node.wait)[window];
          if (!cell.excess || std::abs(*excess) > std::abs(*cell.excess)) {
            cell.excess = excess;
            cell.rank = rank;
          }
        }
      }
    }
    nodes.push_back(std::move(node));
  }
  return nodes;
}

}  // namespace ringside::gui
