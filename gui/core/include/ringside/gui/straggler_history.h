// The owner agent's straggler verdicts over a run, read back from the global series it journals
// (metric_names.h kStraggler*, docs/metrics.md "The straggler"): the latest verdict for the
// dashboard's sentence, and the spans of steps during which it named the same rank (or none), for
// the per-rank view's timeline of when which rank held the group back. A live run and a finished
// one (History) read the same stored samples. Pure functions; thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "ringside/common/metric_names.h"
#include "ringside/gui/decimation.h"
#include "ringside/gui/straggler_text.h"

namespace ringside::gui {

// The verdict's series, each as MetricsStore::series gives it (x = step, ascending).
struct StragglerSeries {
  // The names, in the order of `series` below.
  static constexpr std::array<const char*, 7> kNames = {
      metric::kStragglerRank,      metric::kStragglerStage,        metric::kStragglerStageMs,
      metric::kStragglerMedianMs,  metric::kStragglerOthersWaitMs, metric::kStragglerCostShare,
      metric::kStragglerConfidence};
  // rank, stage, stage_ms, median_ms, others_wait_ms: every verdict has them; cost_share and
  // confidence: empty for a run recorded before the agent sent them.
  std::array<std::vector<SeriesPoint>, 7> series;
};

// The last verdict (the last point of each series at the last rank point's step); nullopt when
// the run has no verdict (one rank, or recorded before the agent judged stragglers).
std::optional<StragglerView> latestStraggler(const StragglerSeries& verdicts);

// Steps [firstStep, endStep) during which the verdict stayed the same rank, or none.
struct StragglerSpan {
  int64_t firstStep = 0;  // the step of the span's first verdict
  int64_t endStep = 0;    // the step of the next span's first verdict (or of the last verdict)
  int rank = -1;          // -1: none
  int stage = 0;          // 1 data, 2 compute, 3 waiting for a CPU: the stage of the span's last verdict; 0 none
  int verdicts = 0;       // verdicts in the span
  std::optional<double> maxCostShare;  // the largest cost (0-1) of its verdicts, when journaled
};

// The spans of the verdicts in step order; adjacent verdicts with the same rank form one span.
// Empty without verdicts.
std::vector<StragglerSpan> stragglerSpans(const StragglerSeries& verdicts);

}  // namespace ringside::gui
