// ASHA (stopping form) and the median stopping rule over a sweep's records (early_stopping.h).
#include "ringside/agent/sweep/early_stopping.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "ringside/common/run_spec.h"

namespace ringside::agent {
namespace {

// Resource comparisons allow for the rounding of step / steps_per_epoch.
constexpr double kResourceSlack = 1e-9;

std::string shortNumber(double x) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.4g", x);
  return buffer;
}

std::string amount(double resource, v1::ResourceUnit unit) {
  const std::string number = shortNumber(resource);
  const bool one = number == "1";
  if (unit == v1::STEPS) return number + (one ? " step" : " steps");
  return number + (one ? " epoch" : " epochs");
}

const v1::RungValue* recordAt(const v1::SweepTrial& trial, uint32_t rung) {
  for (const v1::RungValue& record : trial.rungs()) {
    if (record.rung() == rung) return &record;
  }
  return nullptr;
}

double ashaEta(const v1::AshaRule& rule) { return rule.eta() > 0 ? rule.eta() : 3.0; }
double ashaGrace(const v1::AshaRule& rule) {
  return rule.grace_period() > 0 ? rule.grace_period() : 1.0;
}

StopVerdict judgeAsha(v1::SweepInfo* sweep, uint32_t trial, double resource, double value) {
  const v1::SweepSpec& spec = sweep->spec();
  const v1::AshaRule& rule = spec.early_stopping().asha();
  const std::optional<double> maxResource = maxResourceOf(spec);
  if (!maxResource) return {};
  const std::vector<double> rungs = ashaRungs(rule, *maxResource);
  const double eta = ashaEta(rule);
  const v1::MetricGoal goal = spec.goal();
  for (uint32_t k = 0; k < rungs.size(); ++k) {
    if (resource + kResourceSlack < rungs[k]) break;
    if (recordAt(sweep->trials(static_cast<int>(trial)), k) != nullptr) continue;
    std::vector<double> recorded = {value};
    for (const v1::SweepTrial& other : sweep->trials()) {
      if (other.trial() == trial) continue;
      if (const v1::RungValue* at = recordAt(other, k)) recorded.push_back(at->value());
    }
    const size_t n = recorded.size();
    const size_t keep = static_cast<size_t>(std::floor(static_cast<double>(n) / eta));
    v1::RungValue* record = sweep->mutable_trials(static_cast<int>(trial))->add_rungs();
    record->set_rung(k);
    record->set_resource(rungs[k]);
    record->set_value(value);
    if (n < static_cast<size_t>(std::ceil(eta)) || keep == 0) {
      record->set_promoted(true);
      continue;
    }
    std::sort(recorded.begin(), recorded.end(),
              [goal](double a, double b) { return isBetter(goal, a, b); });
    const double cutoff = recorded[keep - 1];
    if (!isBetter(goal, cutoff, value)) {
      record->set_promoted(true);
      continue;
    }
    StopVerdict verdict;
    verdict.stop = true;
    verdict.reason = "stopped at rung " + std::to_string(k) + " (" +
                     amount(rungs[k], ruleUnit(spec)) + "): " + spec.metric() + " " +
                     shortNumber(value) + (goal == v1::MAXIMIZE ? ", below" : ", above") +
                     " the cutoff " + shortNumber(cutoff) + " (the best " +
                     std::to_string(keep) + " of " + std::to_string(n) +
                     " trials at that rung go on)";
    return verdict;
  }
  return {};
}

StopVerdict judgeMedian(v1::SweepInfo* sweep, uint32_t trial, double resource,
                        double runningMean, double bestSoFar) {
  const v1::SweepSpec& spec = sweep->spec();
  const v1::MedianStoppingRule& rule = spec.early_stopping().median();
  const double grace = rule.grace_period() > 0 ? rule.grace_period() : 1.0;
  const uint32_t minTrials = rule.min_trials() > 0 ? rule.min_trials() : 3;
  const v1::MetricGoal goal = spec.goal();
  const std::optional<double> maxResource = maxResourceOf(spec);
  const auto points = static_cast<uint32_t>(std::floor(resource / grace + kResourceSlack));
  StopVerdict verdict;
  for (uint32_t j = 1; j <= points; ++j) {
    const double at = grace * j;
    if (maxResource && at >= *maxResource - kResourceSlack) break;  // the end: nothing to save
    if (recordAt(sweep->trials(static_cast<int>(trial)), j - 1) != nullptr) continue;
    v1::RungValue* record = sweep->mutable_trials(static_cast<int>(trial))->add_rungs();
    record->set_rung(j - 1);
    record->set_resource(at);
    record->set_value(runningMean);
    record->set_promoted(true);
    if (verdict.stop) continue;
    std::vector<double> means;
    for (const v1::SweepTrial& other : sweep->trials()) {
      if (other.trial() == trial) continue;
      if (const v1::RungValue* r = recordAt(other, j - 1)) means.push_back(r->value());
    }
    if (means.size() < minTrials) continue;
    std::sort(means.begin(), means.end());
    const size_t m = means.size();
    const double median = m % 2 == 1 ? means[m / 2] : (means[m / 2 - 1] + means[m / 2]) / 2;
    if (!isBetter(goal, median, bestSoFar)) continue;
    record->set_promoted(false);
    verdict.stop = true;
    verdict.reason = "stopped at " + amount(at, ruleUnit(spec)) + " by the median rule: best " +
                     spec.metric() + " " + shortNumber(bestSoFar) +
                     (goal == v1::MAXIMIZE ? ", below" : ", above") + " the median " +
                     shortNumber(median) + " of " + std::to_string(m) +
                     " other trials' running averages there";
  }
  return verdict;
}

}  // namespace

bool isBetter(v1::MetricGoal goal, double a, double b) {
  return goal == v1::MINIMIZE ? a < b : a > b;
}

const char* unitName(v1::ResourceUnit unit) { return unit == v1::STEPS ? "steps" : "epochs"; }

v1::ResourceUnit ruleUnit(const v1::SweepSpec& spec) {
  if (spec.early_stopping().has_asha()) return spec.early_stopping().asha().unit();
  if (spec.early_stopping().has_median()) return spec.early_stopping().median().unit();
  return v1::EPOCHS;
}

std::optional<double> maxResourceOf(const v1::SweepSpec& spec) {
  if (spec.early_stopping().has_asha() && spec.early_stopping().asha().max_resource() > 0) {
    return spec.early_stopping().asha().max_resource();
  }
  if (!spec.base().has_trainer()) return std::nullopt;
  auto typed = trainerConfigOf(spec.base().trainer());
  if (!typed.isOk()) return std::nullopt;
  const v1::TrainerConfig config = withTrainerDefaults(*typed);
  if (ruleUnit(spec) == v1::STEPS) {
    if (config.max_steps() > 0) return static_cast<double>(config.max_steps());
    return std::nullopt;  // steps per epoch depend on the dataset: the rule must state it
  }
  return static_cast<double>(config.epochs());
}

std::vector<double> ashaRungs(const v1::AshaRule& rule, double maxResource) {
  std::vector<double> rungs;
  const double eta = ashaEta(rule);
  for (double r = ashaGrace(rule); r < maxResource - kResourceSlack && rungs.size() < 64;
       r *= eta) {
    rungs.push_back(r);
  }
  return rungs;
}

StopVerdict judgeReport(v1::SweepInfo* sweep, uint32_t trial, double resource, double value,
                        double runningMean, double bestSoFar) {
  if (sweep->spec().early_stopping().has_asha()) return judgeAsha(sweep, trial, resource, value);
  if (sweep->spec().early_stopping().has_median()) {
    return judgeMedian(sweep, trial, resource, runningMean, bestSoFar);
  }
  return {};
}

}  // namespace ringside::agent
