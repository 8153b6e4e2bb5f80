// RunEtas: each run's progress as the agent sees it in the samples it journals, and the time
// left to it, by the arithmetic the dashboard's ETA uses (ringside/common/run_progress.h). The
// queue estimates when a queued run starts from the ETAs of the runs that hold its slots
// (docs/queue.md).
//
// A run's facts: the step of its last global train/loss sample, its run/total_steps (and the
// step that sample came at: a resumed run's first step), its last global train/samples_per_s,
// and the time of its first sample (the mean rate runs from there). Samples of other names are
// ignored.
//
// Thread-safety: not thread-safe; the agent calls it from its main loop.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ringside/common/run_progress.h"
#include "ringside/proto/ringside.pb.h"

namespace ringside::agent {

class RunEtas {
 public:
  // Samples journaled for `runId`, received at `now` (Unix seconds).
  void onSamples(const std::string& runId, const std::vector<v1::MetricSample>& samples,
                 double now);
  // Drops an ended run's facts.
  void forget(const std::string& runId);
  // Seconds until `runId` ends, as of `now`: ringside::runProgress's etaSeconds, with the run
  // spec's `globalBatch` (samples per step; 0 when unknown) for the throughput. std::nullopt
  // while the total or the rate is unknown (before the first steps; a script that logs no
  // run/total_steps).
  std::optional<double> remainingSeconds(const std::string& runId, int64_t globalBatch,
                                         double now) const;

 private:
  struct Tracked {
    ProgressFacts facts;
    double firstSample = 0;  // Unix seconds
  };
  std::map<std::string, Tracked> runs_;
};

}  // namespace ringside::agent
