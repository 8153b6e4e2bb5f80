#include "ringside/gui/rank_heatmap.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include <QPromise>
#include <QThreadPool>

#include "ringside/gui/rank_stats.h"

namespace ringside::gui {

namespace {

// floor(a / b) for b > 0, also for negative a.
int64_t floorDiv(int64_t a, int64_t b) {
  const int64_t quotient = a / b;
  return (a % b != 0 && a < 0) ? quotient - 1 : quotient;
}

int64_t windowCount(int64_t firstStep, int64_t lastStep, int64_t width) {
  return floorDiv(lastStep, width) - floorDiv(firstStep, width) + 1;
}

int64_t stepOf(const SeriesPoint& point) { return static_cast<int64_t>(std::floor(point.x)); }

bool usable(const SeriesPoint& point) { return std::isfinite(point.x) && std::isfinite(point.y); }

// Gaps looked at per rank: the log interval is the same all along a run.
constexpr size_t kSpacingGapsPerRank = 4096;

// The median gap between consecutive distinct steps of each rank's samples (its first
// kSpacingGapsPerRank); 1 when no rank has two.
int64_t sampleSpacing(const std::vector<const RankTimingSeries*>& ranks) {
  std::vector<int64_t> gaps;
  for (const RankTimingSeries* rank : ranks) {
    const auto& points = rank->computeMs.empty() ? rank->waitMs : rank->computeMs;
    std::optional<int64_t> previous;
    const size_t before = gaps.size();
    for (const SeriesPoint& point : points) {
      if (gaps.size() - before >= kSpacingGapsPerRank) break;
      if (!usable(point)) continue;
      const int64_t step = stepOf(point);
      if (previous && step > *previous) gaps.push_back(step - *previous);
      previous = step;
    }
  }
  if (gaps.empty()) return 1;
  auto middle = gaps.begin() + static_cast<std::ptrdiff_t>(gaps.size() / 2);
  std::nth_element(gaps.begin(), middle, gaps.end());
  return std::max<int64_t>(1, *middle);
}

std::optional<double> medianOfPresent(std::vector<double>& values) {
  if (values.empty()) return std::nullopt;
  return medianOf(values);
}

}  // namespace

int64_t heatmapWindowSteps(int64_t firstStep, int64_t lastStep, int64_t sampleSpacing,
                           int maxWindows) {
  lastStep = std::max(lastStep, firstStep);
  sampleSpacing = std::max<int64_t>(1, sampleSpacing);
  maxWindows = std::max(1, maxWindows);
  // Far beyond any run: the loop ends there even where no width fits (a span across 0 never
  // fits one window).
  constexpr int64_t kLargest = std::numeric_limits<int64_t>::max() / 10;
  for (int64_t decade = 1;; decade *= 10) {
    for (int64_t multiple : {1, 2, 5}) {
      const int64_t width = multiple * decade;
      if (width >= kLargest) return width;
      if (width >= sampleSpacing && windowCount(firstStep, lastStep, width) <= maxWindows) {
        return width;
      }
    }
  }
}

RankHeatmap buildRankHeatmap(const std::vector<RankTimingSeries>& ranks, int maxWindows) {
  // Rows: each rank once, grouped by node (nodes ordered by their lowest rank), then by rank.
  std::vector<const RankTimingSeries*> unique;
  std::set<int> seen;
  std::map<QString, int> lowestRankOfNode;
  for (const RankTimingSeries& rank : ranks) {
    if (!seen.insert(rank.rank).second) continue;
    unique.push_back(&rank);
    auto [it, inserted] = lowestRankOfNode.try_emplace(rank.node, rank.rank);
    if (!inserted) it->second = std::min(it->second, rank.rank);
  }
  std::sort(unique.begin(), unique.end(),
            [&lowestRankOfNode](const RankTimingSeries* a, const RankTimingSeries* b) {
              const int nodeA = lowestRankOfNode.at(a->node);
              const int nodeB = lowestRankOfNode.at(b->node);
              return nodeA != nodeB ? nodeA < nodeB : a->rank < b->rank;
            });

  RankHeatmap heatmap;
  std::optional<int64_t> firstStep;
  std::optional<int64_t> lastStep;
  for (const RankTimingSeries* rank : unique) {
    for (const auto* points : {&rank->computeMs, &rank->waitMs}) {
      for (const SeriesPoint& point : *points) {
        if (!usable(point)) continue;
        const int64_t step = stepOf(point);
        firstStep = firstStep ? std::min(*firstStep, step) : step;
        lastStep = lastStep ? std::max(*lastStep, step) : step;
      }
    }
  }
  if (!firstStep) return heatmap;

  const int64_t width =
      heatmapWindowSteps(*firstStep, *lastStep, sampleSpacing(unique), maxWindows);
  const int64_t firstWindow = floorDiv(*firstStep, width);
  const auto windowCountAll = static_cast<size_t>(windowCount(*firstStep, *lastStep, width));
  heatmap.windowSteps = width;
  for (size_t window = 0; window < windowCountAll; ++window) {
    HeatmapWindow entry;
    entry.firstStep = (firstWindow + static_cast<int64_t>(window)) * width;
    entry.lastStep = entry.firstStep + width - 1;
    heatmap.windows.push_back(entry);
  }
  for (const RankTimingSeries* rank : unique) heatmap.rows.push_back({rank->rank, rank->node});

  // Sums and counts per (row, window) for each metric, then the means.
  const size_t cellCount = unique.size() * windowCountAll;
  heatmap.cells.resize(cellCount);
  std::vector<double> sum(cellCount);
  std::vector<int> count(cellCount);
  const auto meansOf = [&](const std::vector<SeriesPoint> RankTimingSeries::*points,
                           std::optional<double> HeatmapCell::*field) {
    std::fill(sum.begin(), sum.end(), 0.0);
    std::fill(count.begin(), count.end(), 0);
    for (size_t row = 0; row < unique.size(); ++row) {
      for (const SeriesPoint& point : unique[row]->*points) {
        if (!usable(point)) continue;
        const auto window = static_cast<size_t>(floorDiv(stepOf(point), width) - firstWindow);
        sum[row * windowCountAll + window] += point.y;
        ++count[row * windowCountAll + window];
      }
    }
    for (size_t index = 0; index < cellCount; ++index) {
      if (count[index] > 0) heatmap.cells[index].*field = sum[index] / count[index];
    }
  };
  meansOf(&RankTimingSeries::computeMs, &HeatmapCell::computeMs);
  meansOf(&RankTimingSeries::waitMs, &HeatmapCell::waitMs);

  std::vector<double> computes;
  std::vector<double> waits;
  for (size_t window = 0; window < windowCountAll; ++window) {
    computes.clear();
    waits.clear();
    for (size_t row = 0; row < unique.size(); ++row) {
      const HeatmapCell& cell = heatmap.cell(row, window);
      if (cell.computeMs) computes.push_back(*cell.computeMs);
      if (cell.waitMs) waits.push_back(*cell.waitMs);
    }
    heatmap.windows[window].medianComputeMs = medianOfPresent(computes);
    heatmap.windows[window].medianWaitMs = medianOfPresent(waits);
  }
  return heatmap;
}

QFuture<RankHeatmap> buildRankHeatmapAsync(std::vector<RankTimingSeries> ranks, int maxWindows) {
  auto promise = std::make_shared<QPromise<RankHeatmap>>();
  QFuture<RankHeatmap> future = promise->future();
  promise->start();
  auto input = std::make_shared<std::vector<RankTimingSeries>>(std::move(ranks));
  QThreadPool::globalInstance()->start([promise, input, maxWindows] {
    promise->addResult(buildRankHeatmap(*input, maxWindows));
    promise->finish();
  });
  return future;
}

std::optional<double> RankHeatmap::excess(size_t row, size_t window, HeatmapLayer layer) const {
  const HeatmapWindow& columns = windows[window];
  const HeatmapCell& value = cell(row, window);
  if (!columns.medianComputeMs || !(*columns.medianComputeMs > 0)) return std::nullopt;
  if (layer == HeatmapLayer::kCompute) {
    if (!value.computeMs) return std::nullopt;
    return *value.computeMs / *columns.medianComputeMs - 1.0;
  }
  if (!value.waitMs || !columns.medianWaitMs) return std::nullopt;
  return (*value.waitMs - *columns.medianWaitMs) / *columns.medianComputeMs;
}

std::vector<HeatmapNodeGroup> RankHeatmap::nodeGroups() const {
  std::vector<HeatmapNodeGroup> groups;
  for (size_t row = 0; row < rows.size(); ++row) {
    if (groups.empty() || groups.back().node != rows[row].node) {
      groups.push_back({rows[row].node, row, row + 1});
    } else {
      groups.back().endRow = row + 1;
    }
  }
  return groups;
}

QColor heatmapColor(std::optional<double> excess) {
  if (!excess || !std::isfinite(*excess)) return QColor(0xdd, 0xdd, 0xdd);
  const double strength = std::clamp(std::abs(*excess) / kHeatmapSaturation, 0.0, 1.0);
  // Towards (0.84, 0.19, 0.15) above the median, (0.19, 0.42, 0.75) below: a red and a blue of
  // equal weight, light enough at full strength for dark text.
  const auto mix = [strength](double towards) { return 1.0 - (1.0 - towards) * strength; };
  if (*excess >= 0) return QColor::fromRgbF(mix(0.86), mix(0.24), mix(0.20));
  return QColor::fromRgbF(mix(0.25), mix(0.47), mix(0.80));
}

}  // namespace ringside::gui
