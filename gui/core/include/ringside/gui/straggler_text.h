// The owner agent's straggler verdict as the dashboard shows it (docs/metrics.md, "The
// straggler"): read back from the global samples the agent journals with the run
// (metric_names.h kStraggler*), so a live run, a finished one and any other client of the
// protocol see the same verdict. Thread-safe (uses the installed translators and QLocale).
#pragma once

#include <QString>

#include <cstdint>
#include <optional>

namespace ringside::gui {

struct StragglerView {
  int64_t step = 0;
  int rank = -1;              // -1: none
  int stage = 0;              // 1 data, 2 compute, 3 waiting for a CPU; 0 none
  double stageMs = 0.0;       // the rank's mean time in that stage per step, ms
  double medianMs = 0.0;      // the other ranks' median of theirs, ms
  double othersWaitMs = 0.0;  // the other ranks' median wait per step, ms
  // Share 0-1 of the group's step time lost waiting for the rank, and the share 0-1 of the
  // verdict's window that agrees with it; absent in runs recorded before the agent sent them.
  std::optional<double> costShare;
  std::optional<double> confidence;
};

// "straggler: rank 3 on node-2, compute: 14.10 ms vs median 9.80 ms; the other ranks wait
// 4.20 ms for it: 12 % of the step time (confidence 90 %, step 1750)", or "straggler: none
// (confidence 100 %, step 1750): no rank's data or compute time keeps the others waiting". Without
// a cost or confidence (an older run) the parts that need them are left out. `node`: where the
// rank runs ("" when unknown).
QString stragglerText(const StragglerView& verdict, const QString& node);

}  // namespace ringside::gui
