// Progress and ETA of a run from the facts its samples carry (docs/metrics.md): the run's size,
// which the trainer reports once at its start (run/total_steps, run/steps_per_epoch, the same
// values as its "start" record), the last step trained, and the throughput. The dashboard shows
// these (the GUI's run_progress.h), and the agent's queue estimates when a run's slots free up
// from the same ETA (docs/queue.md).
//
// Thread-safety: pure functions; safe from any thread.
#pragma once

#include <cstdint>
#include <optional>

namespace ringside {

// What is known about a run; std::nullopt (or 0 where stated) when it is not.
struct ProgressFacts {
  int64_t stepsDone = 0;  // step of the last global train/loss sample; 0 before the first
  int64_t firstStep = 0;  // step of the run/total_steps sample: > 0 for a resumed run
  std::optional<int64_t> totalSteps;       // last run/total_steps sample, global steps
  std::optional<int64_t> stepsPerEpoch;    // last run/steps_per_epoch sample, global steps
  std::optional<double> samplesPerSecond;  // last train/samples_per_s sample, samples/s
  int64_t globalBatch = 0;  // the run spec's global_batch, samples per step; 0 when unknown
  std::optional<double> runningSeconds;  // since the run started, up to now or its end, s
};

struct RunProgress {
  std::optional<double> fraction;  // stepsDone / totalSteps, clamped to [0, 1]
  std::optional<double> epochs;    // epochs done, fractional: stepsDone / stepsPerEpoch
  // samplesPerSecond / globalBatch when both are known and positive, else the mean rate since
  // the start: (stepsDone - firstStep) / runningSeconds.
  std::optional<double> stepsPerSecond;
  std::optional<double> etaSeconds;  // etaSeconds(stepsDone, totalSteps, stepsPerSecond)
};

// Everything above from `facts`; each value is std::nullopt when what it needs is unknown, not
// positive or not finite.
RunProgress runProgress(const ProgressFacts& facts);

// Seconds left at `stepsPerSecond`: (totalSteps - stepsDone) / stepsPerSecond. std::nullopt when
// the total or the rate is unknown or not positive; 0 once stepsDone >= totalSteps.
std::optional<double> etaSeconds(int64_t stepsDone, std::optional<int64_t> totalSteps,
                                 std::optional<double> stepsPerSecond);

}  // namespace ringside
