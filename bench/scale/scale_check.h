// scale_bench's check (nccl-tests' -c): reads the run's rows back from the GUI's SQLite file
// (docs/gui-database.md, table metrics), read-only beside the store, and compares them with what
// the simulated ranks sent: every sample exactly once, every field as sent. The owner agent's own
// samples (the straggler verdict, metric::isAgentVerdict) are not the ranks': they are counted
// apart, and the verdict's straggler/rank rows are returned for the time to detect.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pipeline/gui_harness.h"
#include "ringside/common/status.h"
#include "scale_ranks.h"

namespace ringside::bench {

struct VerdictRow {
  int64_t step = 0;
  double rank = -1;        // straggler/rank's value: the rank named, -1 none
  double agentTime = 0;    // its wall_time: when the agent judged (the agent's clock)
  double storedTime = -1;  // Unix time of the first store commit that covered its seq; -1 none
};

struct ScaleCheck {
  uint64_t rows = 0, expected = 0, matched = 0, duplicates = 0, wrong = 0, missing = 0;
  uint64_t agentRows = 0;      // the agent's verdict samples
  uint64_t telemetryRows = 0;  // GPU and node telemetry the GUI stores with the run
  struct Slowest {
    double latency = 0;
    std::string what;
    uint64_t seq = 0;
  } slowest;  // the row with the largest latency
  std::string firstError;
  // Per phase: seconds from each matched row's wall_time to the commit that covered it, sorted.
  std::vector<std::vector<double>> latencies;
  std::vector<VerdictRow> verdicts;  // straggler/rank rows in step order
  bool ok() const { return matched == expected && duplicates == 0 && wrong == 0 && missing == 0; }
};

// Errors: kIOError naming the SQLite call that failed.
Result<ScaleCheck> checkScaleStore(const std::string& databasePath, const std::string& runId,
                                   const ScaleRanks& ranks, const std::vector<IngestEvent>& events);

}  // namespace ringside::bench
