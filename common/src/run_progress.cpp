#include "ringside/common/run_progress.h"

#include <algorithm>
#include <cmath>

namespace ringside {

namespace {

bool positive(std::optional<double> value) {
  return value.has_value() && std::isfinite(*value) && *value > 0;
}

}  // namespace

std::optional<double> etaSeconds(int64_t stepsDone, std::optional<int64_t> totalSteps,
                                 std::optional<double> stepsPerSecond) {
  if (!totalSteps || *totalSteps <= 0) return std::nullopt;
  if (stepsDone >= *totalSteps) return 0.0;
  if (!positive(stepsPerSecond)) return std::nullopt;
  return static_cast<double>(*totalSteps - stepsDone) / *stepsPerSecond;
}

RunProgress runProgress(const ProgressFacts& facts) {
  RunProgress progress;
  if (facts.totalSteps && *facts.totalSteps > 0) {
    progress.fraction =
        std::clamp(static_cast<double>(facts.stepsDone) / *facts.totalSteps, 0.0, 1.0);
  }
  if (facts.stepsPerEpoch && *facts.stepsPerEpoch > 0) {
    progress.epochs = static_cast<double>(facts.stepsDone) / *facts.stepsPerEpoch;
  }
  if (positive(facts.samplesPerSecond) && facts.globalBatch > 0) {
    progress.stepsPerSecond = *facts.samplesPerSecond / facts.globalBatch;
  } else if (positive(facts.runningSeconds) && facts.stepsDone > facts.firstStep) {
    progress.stepsPerSecond = (facts.stepsDone - facts.firstStep) / *facts.runningSeconds;
  }
  progress.etaSeconds = etaSeconds(facts.stepsDone, facts.totalSteps, progress.stepsPerSecond);
  return progress;
}

}  // namespace ringside
