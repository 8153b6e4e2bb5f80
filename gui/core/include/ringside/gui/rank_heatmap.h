// The rank × time heatmap of a run's dashboard: rows are the ranks grouped by
// node, columns are windows of steps, and each cell is one rank's mean time in that window
// relative to the median over all ranks in the same window, so a rank that becomes slow at step
// 5,000 shows as a streak from there on. Pure functions of Qt Core/Gui, thread-safe; the widget
// (RankHeatmapView) only paints what buildRankHeatmap() returns, and the dashboard builds it off
// the GUI thread (buildRankHeatmapAsync).
//
// Colour value ("excess") of a cell, for the layer shown:
//  - kCompute: compute / median compute − 1 (0 = the window's median, +0.5 = 50 % slower).
//  - kWait: (all-reduce wait − median wait) / median compute: the extra waiting in units of a
//    typical rank's compute time. Relative to the median *wait* a near-zero median (no rank
//    waits) would turn noise of a few microseconds into ±100 %; measured against the compute
//    time the colour says how much of a step the waiting costs, and the ranks that wait for a
//    straggler stand out while the straggler itself (which never waits) is below the median.
#pragma once

#include <QColor>
#include <QFuture>
#include <QString>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "ringside/gui/decimation.h"

namespace ringside::gui {

// At most this many step windows by default: enough to place a change within 1 % of a run, few
// enough that a cell stays several pixels wide on a dashboard and that building costs
// O(samples), not O(steps).
inline constexpr int kDefaultMaxHeatmapWindows = 150;
// The colour saturates at this excess (±50 %), as RankView's table does.
inline constexpr double kHeatmapSaturation = 0.5;

// One rank's per-rank samples as MetricsStore::series() returns them: x = step, y = ms per step
// (the trainer's mean over the steps since its previous record; NaN = no value).
struct RankTimingSeries {
  int rank = 0;
  QString node;                        // display name of its node ("" when unknown)
  std::vector<SeriesPoint> computeMs;  // time/compute_ms
  std::vector<SeriesPoint> waitMs;     // time/exposed_comm_ms: waiting for all-reduce
};

enum class HeatmapLayer { kCompute, kWait };

struct HeatmapRow {
  int rank = 0;
  QString node;
};

// Steps [firstStep, lastStep] (inclusive), and the medians over the ranks with a value there.
struct HeatmapWindow {
  int64_t firstStep = 0;
  int64_t lastStep = 0;
  std::optional<double> medianComputeMs;
  std::optional<double> medianWaitMs;
};

// One rank's means over the samples it reported in one window; std::nullopt where it has none.
struct HeatmapCell {
  std::optional<double> computeMs;
  std::optional<double> waitMs;
};

// Consecutive rows on one node: [firstRow, endRow).
struct HeatmapNodeGroup {
  QString node;
  size_t firstRow = 0;
  size_t endRow = 0;
};

struct RankHeatmap {
  std::vector<HeatmapRow> rows;  // by node (nodes in the order of their lowest rank), then rank
  std::vector<HeatmapWindow> windows;  // ascending, contiguous, each windowSteps wide
  std::vector<HeatmapCell> cells;      // rows.size() × windows.size(), row-major
  int64_t windowSteps = 0;             // 0 when there is no sample

  bool empty() const { return rows.empty() || windows.empty(); }
  // `row` < rows.size(), `window` < windows.size().
  const HeatmapCell& cell(size_t row, size_t window) const {
    return cells[row * windows.size() + window];
  }
  // The cell's colour value (see the file comment); std::nullopt when the cell or the window's
  // median compute time is missing, or that median is not above 0.
  std::optional<double> excess(size_t row, size_t window, HeatmapLayer layer) const;
  // The rows of each node, in row order.
  std::vector<HeatmapNodeGroup> nodeGroups() const;
};

// The width of a step window: the smallest 1, 2 or 5 × 10^k that is at least `sampleSpacing`
// (so no window falls between two records of a run logging every N steps) and that covers
// [firstStep, lastStep] with at most `maxWindows` windows aligned to multiples of the width
// (window i holds the steps floor(step / width) == i, so windows stay put while a live run
// grows). Round widths keep the step ranges in tooltips readable. `maxWindows` < 1 counts as 1,
// `sampleSpacing` < 1 as 1, and lastStep < firstStep as one step.
int64_t heatmapWindowSteps(int64_t firstStep, int64_t lastStep, int64_t sampleSpacing,
                           int maxWindows);

// The heatmap of `ranks` (any order; a rank listed twice keeps its first entry). Each cell is the
// mean of the rank's finite samples whose step falls in the window (each sample weighs the same:
// the trainer sends one per log interval); windows span the first to the last step any rank
// reported; the sample spacing is the median gap between a rank's consecutive steps. Cost:
// O(samples + rows × windows), plus sorting the gaps. An empty heatmap when no rank has a finite
// sample.
RankHeatmap buildRankHeatmap(const std::vector<RankTimingSeries>& ranks,
                             int maxWindows = kDefaultMaxHeatmapWindows);

// buildRankHeatmap() on Qt's global thread pool, so a long run's heatmap is never built on the GUI
// thread; the future completes there (read it with whenReady()).
QFuture<RankHeatmap> buildRankHeatmapAsync(std::vector<RankTimingSeries> ranks,
                                           int maxWindows = kDefaultMaxHeatmapWindows);

// The cell colour for an excess: white at the median, deepening red above it (saturated at
// +kHeatmapSaturation), blue below it (saturated at −kHeatmapSaturation); light grey for
// std::nullopt (no value). Dark text stays readable on every colour.
QColor heatmapColor(std::optional<double> excess);

}  // namespace ringside::gui
