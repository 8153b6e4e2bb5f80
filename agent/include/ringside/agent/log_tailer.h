// LogTailer: follows a run's stdout.log and stderr.log (written by its mpirun, see
// run_manager.h) and turns new complete lines into log lines; for custom commands it also parses
// the JSON Lines metrics and start records on stdout (docs/metrics.md) into samples.
//
// Read offsets are kept in <run dir>/tail_offsets once the caller has journaled a chunk
// (commit()), so a restarted agent continues where the journal ends. Not thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ringside/proto/ringside.pb.h"

namespace ringside::agent {

class LogTailer {
 public:
  struct Chunk {
    std::vector<v1::LogLine> lines;         // seq unset: the journal assigns it
    std::vector<v1::MetricSample> samples;  // parsed metrics (parseMetrics only), seq unset
  };

  LogTailer(std::string runDir, bool parseMetrics);

  // New complete lines since the last commit() (at most ~1 MiB per stream per call).
  Chunk poll();
  // Marks what the last poll() returned as journaled.
  void commit();

 private:
  std::string runDir_;
  bool parseMetrics_;
  uint64_t committed_[2] = {0, 0};  // stdout, stderr byte offsets
  uint64_t pending_[2] = {0, 0};
};

// Parses one JSON Lines record of docs/metrics.md into samples: a "metrics" record's values, or a
// "start" record's total_steps and steps_per_epoch as the global samples metric::kRunTotalSteps
// and kRunStepsPerEpoch at its first_step (0 when absent), as the trainer sends them to the agent.
// Returns nothing for other lines. Non-numeric values are skipped.
std::vector<v1::MetricSample> parseMetricsLine(const std::string& line);

}  // namespace ringside::agent
