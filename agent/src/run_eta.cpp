#include "ringside/agent/run_eta.h"

#include <algorithm>
#include <cmath>

#include "ringside/common/metric_names.h"

namespace ringside::agent {

void RunEtas::onSamples(const std::string& runId, const std::vector<v1::MetricSample>& samples,
                        double now) {
  if (samples.empty()) return;
  auto [it, fresh] = runs_.try_emplace(runId);
  Tracked& run = it->second;
  if (fresh) run.firstSample = now;
  for (const v1::MetricSample& sample : samples) {
    if (sample.rank() >= 0 || !std::isfinite(sample.value())) continue;
    const std::string& name = sample.name();
    if (name == metric::kTrainLoss) {
      run.facts.stepsDone = std::max(run.facts.stepsDone, sample.step());
    } else if (name == metric::kRunTotalSteps && sample.value() > 0 && sample.value() < 1e15) {
      run.facts.totalSteps = static_cast<int64_t>(sample.value());
      run.facts.firstStep = std::max<int64_t>(0, sample.step());
    } else if (name == metric::kTrainSamplesPerS) {
      run.facts.samplesPerSecond = sample.value();
    }
  }
}

void RunEtas::forget(const std::string& runId) { runs_.erase(runId); }

std::optional<double> RunEtas::remainingSeconds(const std::string& runId, int64_t globalBatch,
                                                double now) const {
  auto it = runs_.find(runId);
  if (it == runs_.end()) return std::nullopt;
  ProgressFacts facts = it->second.facts;
  facts.globalBatch = globalBatch;
  facts.runningSeconds = now - it->second.firstSample;
  return runProgress(facts).etaSeconds;
}

}  // namespace ringside::agent
