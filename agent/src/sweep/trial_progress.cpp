// A trial run's metric values placed in the rule's unit (trial_progress.h).
#include "ringside/agent/sweep/trial_progress.h"

#include <cmath>

namespace ringside::agent {

namespace {

constexpr const char* kMetricStepsPerEpoch = "run/steps_per_epoch";

}  // namespace

TrialProgress::Step TrialProgress::add(const v1::MetricSample& sample, const std::string& metric,
                                       v1::ResourceUnit unit) {
  Step step;
  if (sample.rank() != -1) return step;
  if (sample.name() == kMetricStepsPerEpoch && sample.value() > 0) {
    stepsPerEpoch_ = sample.value();
    return step;
  }
  if (unit == v1::EPOCHS && stepsPerEpoch_ <= 0 && pendingEpoch_ >= 0 &&
      sample.epoch() > pendingEpoch_) {
    // Epoch pendingEpoch_ ended: its last value counts as pendingEpoch_ + 1 epochs.
    step.ended = Report{static_cast<double>(pendingEpoch_ + 1), pendingValue_};
    pendingEpoch_ = -1;
  }
  if (sample.name() != metric || !std::isfinite(sample.value())) return step;
  const double value = sample.value();
  step.value = value;
  sum_ += value;
  count_ += 1;
  if (unit == v1::STEPS) {
    step.current = Report{static_cast<double>(sample.step()), value};
  } else if (stepsPerEpoch_ > 0) {
    step.current = Report{static_cast<double>(sample.step()) / stepsPerEpoch_, value};
  } else {
    pendingEpoch_ = sample.epoch();
    pendingValue_ = value;
  }
  return step;
}

std::optional<TrialProgress::Report> TrialProgress::finish() {
  if (pendingEpoch_ < 0) return std::nullopt;
  const Report last{static_cast<double>(pendingEpoch_ + 1), pendingValue_};
  pendingEpoch_ = -1;
  return last;
}

double TrialProgress::runningMean(double fallback) const {
  return count_ > 0 ? sum_ / static_cast<double>(count_) : fallback;
}

}  // namespace ringside::agent
