#include "ringside/gui/straggler_history.h"

#include <algorithm>
#include <cmath>

namespace ringside::gui {

namespace {

enum Series { kRank, kStage, kStageMs, kMedianMs, kOthersWaitMs, kCostShare, kConfidence };

// The value of `points` at step `x` (the last point there), if any.
std::optional<double> at(const std::vector<SeriesPoint>& points, double x) {
  auto it = std::upper_bound(points.begin(), points.end(), x,
                             [](double step, const SeriesPoint& p) { return step < p.x; });
  if (it == points.begin()) return std::nullopt;
  --it;
  if (it->x != x || !std::isfinite(it->y)) return std::nullopt;
  return it->y;
}

}  // namespace

std::optional<StragglerView> latestStraggler(const StragglerSeries& verdicts) {
  const auto& ranks = verdicts.series[kRank];
  if (ranks.empty()) return std::nullopt;
  const double step = ranks.back().x;
  std::array<std::optional<double>, 7> values;
  for (size_t i = 0; i < values.size(); ++i) values[i] = at(verdicts.series[i], step);
  for (size_t i = kRank; i <= kOthersWaitMs; ++i) {
    if (!values[i]) return std::nullopt;  // a verdict whose samples are not all stored yet
  }
  StragglerView view;
  view.step = static_cast<int64_t>(step);
  view.rank = static_cast<int>(*values[kRank]);
  view.stage = static_cast<int>(*values[kStage]);
  view.stageMs = *values[kStageMs];
  view.medianMs = *values[kMedianMs];
  view.othersWaitMs = *values[kOthersWaitMs];
  view.costShare = values[kCostShare];
  view.confidence = values[kConfidence];
  return view;
}

std::vector<StragglerSpan> stragglerSpans(const StragglerSeries& verdicts) {
  std::vector<StragglerSpan> spans;
  const auto& ranks = verdicts.series[kRank];
  for (const SeriesPoint& point : ranks) {
    const int rank = std::isfinite(point.y) ? static_cast<int>(point.y) : -1;
    const auto step = static_cast<int64_t>(point.x);
    if (!spans.empty()) spans.back().endStep = step;
    if (spans.empty() || spans.back().rank != rank) {
      spans.push_back(StragglerSpan{step, step, rank, 0, 0, std::nullopt});
    }
    StragglerSpan& span = spans.back();
    ++span.verdicts;
    if (rank >= 0) {
      span.stage = static_cast<int>(at(verdicts.series[kStage], point.x).value_or(span.stage));
      if (const auto cost = at(verdicts.series[kCostShare], point.x)) {
        span.maxCostShare = std::max(span.maxCostShare.value_or(0.0), *cost);
      }
    }
  }
  return spans;
}

}  // namespace ringside::gui
