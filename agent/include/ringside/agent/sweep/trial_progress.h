// TrialProgress: how far a trial's run has trained, from its journaled samples, in the
// early-stopping rule's unit (docs/sweeps.md, "Rungs"): a value of the sweep's metric counts at
// its step (STEPS), at step / steps per epoch once the run states run/steps_per_epoch (EPOCHS),
// or else as e + 1 epochs for a value logged in 0-based epoch e, taken once the run logs anything
// of a later epoch (or completes), so that an epoch's last value is the one that counts.
//
// Thread-safety: a plain value; one per run.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ringside/proto/ringside.pb.h"

namespace ringside::agent {

class TrialProgress {
 public:
  // A value of the metric after `resource` units of training.
  struct Report {
    double resource = 0;
    double value = 0;
  };
  // What one sample gives, in this order: the value of an epoch that ended (without steps per
  // epoch), the sample's own value of the metric, and its report when it can be placed now.
  struct Step {
    std::optional<Report> ended;
    std::optional<double> value;
    std::optional<Report> current;
  };

  // One journaled sample of the run; only global ones (rank -1) count.
  Step add(const v1::MetricSample& sample, const std::string& metric, v1::ResourceUnit unit);
  // At the run's completion: the value of its last epoch, when it was still waiting.
  std::optional<Report> finish();
  // The mean of the metric's values so far; `fallback` before the first.
  double runningMean(double fallback) const;

 private:
  double stepsPerEpoch_ = 0;   // run/steps_per_epoch; 0: unknown
  int64_t pendingEpoch_ = -1;  // without steps per epoch: the epoch of pendingValue_
  double pendingValue_ = 0;
  double sum_ = 0;
  uint64_t count_ = 0;
};

}  // namespace ringside::agent
