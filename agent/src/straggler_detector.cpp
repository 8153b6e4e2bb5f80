#include "ringside/agent/straggler_detector.h"

#include <algorithm>

#include "ringside/common/metric_names.h"

namespace ringside::agent {

namespace {

double median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2.0;
}

}  // namespace

StragglerDetector::StragglerDetector(int worldSize, StragglerRule rule)
    : worldSize_(std::max(worldSize, 1)), rule_(rule) {}

std::optional<StragglerVerdict> StragglerDetector::onSample(int rank, int64_t step,
                                                            const std::string& name, double value) {
  if (rank < 0 || rank >= worldSize_ || worldSize_ < 2) return std::nullopt;
  int bit = 0;
  if (name == metric::kDataMs) bit = 1;
  if (name == metric::kComputeMs) bit = 2;
  if (name == metric::kWaitMs) bit = 4;
  if (bit == 0) return std::nullopt;
  std::vector<Timings>& record = pending_[step];
  if (record.empty()) record.resize(worldSize_);
  Timings& t = record[rank];
  (bit == 1 ? t.data : bit == 2 ? t.compute : t.wait) = value;
  t.have |= bit;
  for (const Timings& r : record) {
    if (r.have != 7) return std::nullopt;
  }
  window_.push_back(std::move(record));
  if (window_.size() > rule_.window) window_.pop_front();
  // Records of earlier steps that never completed (a rank's batch lost) are dropped.
  pending_.erase(pending_.begin(), pending_.upper_bound(step));
  return judge(step);
}

StragglerVerdict StragglerDetector::judge(int64_t step) const {
  StragglerVerdict verdict;
  verdict.step = step;
  if (window_.empty()) return verdict;
  std::vector<Timings> mean(worldSize_);
  for (const std::vector<Timings>& record : window_) {
    for (int r = 0; r < worldSize_; ++r) {
      mean[r].data += record[r].data / window_.size();
      mean[r].compute += record[r].compute / window_.size();
      mean[r].wait += record[r].wait / window_.size();
    }
  }
  double bestExcess = 0.0;
  for (int r = 0; r < worldSize_; ++r) {
    for (const StragglerVerdict::Stage stage :
         {StragglerVerdict::kData, StragglerVerdict::kCompute}) {
      std::vector<double> others, othersWait;
      for (int o = 0; o < worldSize_; ++o) {
        if (o == r) continue;
        others.push_back(stage == StragglerVerdict::kData ? mean[o].data : mean[o].compute);
        othersWait.push_back(mean[o].wait);
      }
      const double mine = stage == StragglerVerdict::kData ? mean[r].data : mean[r].compute;
      const double reference = median(others);
      const double excess = mine - reference;
      const double waited = median(othersWait) - mean[r].wait;
      const bool significant =
          excess >= std::max(rule_.minExcessMs, rule_.minExcessFraction * reference) &&
          waited >= rule_.waitShare * excess;
      if (significant && excess > bestExcess) {
        bestExcess = excess;
        verdict.rank = r;
        verdict.stage = stage;
        verdict.stageMs = mine;
        verdict.medianMs = reference;
        verdict.othersWaitMs = median(othersWait);
      }
    }
  }
  return verdict;
}

std::vector<v1::MetricSample> StragglerDetector::toSamples(const StragglerVerdict& verdict,
                                                           int64_t epoch, double wallTime) {
  std::vector<v1::MetricSample> samples;
  const auto add = [&](const char* name, double value) {
    v1::MetricSample sample;
    sample.set_step(verdict.step);
    sample.set_epoch(epoch);
    sample.set_wall_time(wallTime);
    sample.set_rank(-1);
    sample.set_name(name);
    sample.set_value(value);
    samples.push_back(std::move(sample));
  };
  add(metric::kStragglerRank, verdict.rank);
  add(metric::kStragglerStage, verdict.stage);
  add(metric::kStragglerStageMs, verdict.stageMs);
  add(metric::kStragglerMedianMs, verdict.medianMs);
  add(metric::kStragglerOthersWaitMs, verdict.othersWaitMs);
  return samples;
}

}  // namespace ringside::agent
