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

bool ashaPromotes(const v1::SweepSpec& spec) {
  return spec.early_stopping().has_asha() && spec.base().has_trainer();
}

std::optional<uint32_t> ashaPauseRung(v1::SweepInfo* sweep, uint32_t trial, double resource,
                                      double value) {
  const v1::SweepSpec& spec = sweep->spec();
  const std::optional<double> maxResource = maxResourceOf(spec);
  if (!maxResource) return std::nullopt;
  const std::vector<double> rungs = ashaRungs(spec.early_stopping().asha(), *maxResource);
  std::optional<uint32_t> pause;
  for (uint32_t k = 0; k < rungs.size(); ++k) {
    if (resource + kResourceSlack < rungs[k]) break;
    if (recordAt(sweep->trials(static_cast<int>(trial)), k) != nullptr) continue;
    v1::RungValue* record = sweep->mutable_trials(static_cast<int>(trial))->add_rungs();
    record->set_rung(k);
    record->set_resource(rungs[k]);
    record->set_value(value);
    if (!pause) pause = k;
  }
  return pause;
}

bool isPausedAtRung(const v1::SweepTrial& trial) {
  return trial.state() == v1::STOPPED && !trial.stopped_early() && trial.rungs_size() > 0 &&
         !trial.rungs(trial.rungs_size() - 1).promoted();
}

namespace {

// The values recorded at rung k, best first, and how many of them go on (floor(n / eta)).
std::vector<std::pair<double, uint32_t>> rungRanking(const v1::SweepInfo& sweep, uint32_t k,
                                                     size_t* keep) {
  std::vector<std::pair<double, uint32_t>> ranked;
  for (const v1::SweepTrial& trial : sweep.trials()) {
    if (const v1::RungValue* at = recordAt(trial, k)) ranked.emplace_back(at->value(), trial.trial());
  }
  const v1::MetricGoal goal = sweep.spec().goal();
  std::stable_sort(ranked.begin(), ranked.end(), [goal](const auto& a, const auto& b) {
    return isBetter(goal, a.first, b.first);
  });
  *keep = static_cast<size_t>(std::floor(static_cast<double>(ranked.size()) /
                                         ashaEta(sweep.spec().early_stopping().asha())));
  return ranked;
}

}  // namespace

std::optional<uint32_t> ashaPromotion(const v1::SweepInfo& sweep) {
  const std::optional<double> maxResource = maxResourceOf(sweep.spec());
  if (!maxResource) return std::nullopt;
  const auto rungs =
      static_cast<uint32_t>(ashaRungs(sweep.spec().early_stopping().asha(), *maxResource).size());
  for (uint32_t k = rungs; k-- > 0;) {
    size_t keep = 0;
    const auto ranked = rungRanking(sweep, k, &keep);
    for (size_t i = 0; i < keep && i < ranked.size(); ++i) {
      const v1::SweepTrial& trial = sweep.trials(static_cast<int>(ranked[i].second));
      const v1::RungValue* at = recordAt(trial, k);
      if (at != nullptr && !at->promoted() && isPausedAtRung(trial) &&
          trial.rungs(trial.rungs_size() - 1).rung() == k) {
        return trial.trial();
      }
    }
  }
  return std::nullopt;
}

std::optional<uint32_t> ashaFinalPromotion(const v1::SweepInfo& sweep) {
  for (const v1::SweepTrial& trial : sweep.trials()) {
    if (trial.state() == v1::COMPLETED) return std::nullopt;
  }
  std::optional<uint32_t> best;
  uint32_t bestRung = 0;
  double bestValue = 0;
  for (const v1::SweepTrial& trial : sweep.trials()) {
    if (!isPausedAtRung(trial)) continue;
    const v1::RungValue& last = trial.rungs(trial.rungs_size() - 1);
    if (!best || last.rung() > bestRung ||
        (last.rung() == bestRung && isBetter(sweep.spec().goal(), last.value(), bestValue))) {
      best = trial.trial();
      bestRung = last.rung();
      bestValue = last.value();
    }
  }
  return best;
}

std::string ashaPauseReason(const v1::SweepInfo& sweep, const v1::SweepTrial& trial) {
  if (trial.rungs_size() == 0) return "paused";
  const v1::RungValue& last = trial.rungs(trial.rungs_size() - 1);
  const v1::SweepSpec& spec = sweep.spec();
  return "paused at rung " + std::to_string(last.rung()) + " (" +
         amount(last.resource(), ruleUnit(spec)) + "): " + spec.metric() + " " +
         shortNumber(last.value()) + "; it goes on when it is among the best 1/" +
         shortNumber(ashaEta(spec.early_stopping().asha())) + " of its rung";
}

std::string ashaLeftReason(const v1::SweepInfo& sweep, const v1::SweepTrial& trial) {
  if (trial.rungs_size() == 0) return "stopped";
  const v1::RungValue& last = trial.rungs(trial.rungs_size() - 1);
  size_t keep = 0;
  const auto ranked = rungRanking(sweep, last.rung(), &keep);
  const v1::SweepSpec& spec = sweep.spec();
  std::string text = "stopped at rung " + std::to_string(last.rung()) + " (" +
                     amount(last.resource(), ruleUnit(spec)) + "): " + spec.metric() + " " +
                     shortNumber(last.value());
  if (keep == 0) {
    return text + ", not promoted: fewer than eta (" +
           shortNumber(ashaEta(spec.early_stopping().asha())) + ") trials reached that rung";
  }
  return text + (spec.goal() == v1::MAXIMIZE ? ", below" : ", above") + " the cutoff " +
         shortNumber(ranked[keep - 1].first) + " (the best " + std::to_string(keep) + " of " +
         std::to_string(ranked.size()) + " trials at that rung went on)";
}

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
