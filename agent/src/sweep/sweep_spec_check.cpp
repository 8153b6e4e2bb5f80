// Checking a sweep spec (sweep_spec_check.h).
#include "ringside/agent/sweep/sweep_spec_check.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "ringside/agent/sweep/early_stopping.h"
#include "ringside/agent/sweep/search_space.h"
#include "ringside/agent/sweep/trial_spec.h"
#include "ringside/common/run_spec.h"

namespace ringside::agent {
namespace {

Status checkRule(const v1::SweepSpec& spec) {
  const v1::EarlyStopping& rule = spec.early_stopping();
  if (rule.has_asha()) {
    const v1::AshaRule& asha = rule.asha();
    const double eta = asha.eta() > 0 ? asha.eta() : 3.0;
    if (!std::isfinite(asha.eta()) || eta < 2 || eta > 100) {
      return Status::invalidArgument("early_stopping.asha.eta must be 2 to 100 (0: 3)");
    }
    if (!std::isfinite(asha.grace_period()) || asha.grace_period() < 0) {
      return Status::invalidArgument("early_stopping.asha.grace_period must be above 0 (0: 1)");
    }
    if (!std::isfinite(asha.max_resource()) || asha.max_resource() < 0) {
      return Status::invalidArgument(
          "early_stopping.asha.max_resource must be above 0 (0: the base run's length)");
    }
    const std::optional<double> max = maxResourceOf(spec);
    if (!max) {
      return Status::invalidArgument(
          std::string("early_stopping.asha.max_resource is needed: how many ") +
          unitName(asha.unit()) + " a trial trains when nothing stops it (the base run does not "
          "say)");
    }
    if (ashaRungs(asha, *max).empty()) {
      return Status::invalidArgument(
          "the ASHA rule has no rung: its grace_period is not below the trials' length (" +
          std::to_string(*max) + " " + unitName(asha.unit()) + "); lower grace_period");
    }
  } else if (rule.has_median()) {
    const v1::MedianStoppingRule& median = rule.median();
    if (!std::isfinite(median.grace_period()) || median.grace_period() < 0) {
      return Status::invalidArgument("early_stopping.median.grace_period must be above 0 (0: 1)");
    }
    if (median.min_trials() > kMaxSweepTrials) {
      return Status::invalidArgument("early_stopping.median.min_trials is over " +
                                     std::to_string(kMaxSweepTrials));
    }
  }
  return Status::ok();
}

}  // namespace

Status validateSweepSpec(const v1::SweepSpec& spec) {
  RINGSIDE_RETURN_IF_ERROR(validateSearchSpace(spec));
  if (spec.metric().empty() || spec.metric().size() > 256) {
    return Status::invalidArgument(
        "the sweep names no metric (1 to 256 bytes): the global metric that ranks its trials, "
        "e.g. test/accuracy");
  }
  if (spec.goal() != v1::MAXIMIZE && spec.goal() != v1::MINIMIZE) {
    return Status::invalidArgument("goal must be MAXIMIZE or MINIMIZE");
  }
  if (spec.base().job_case() == v1::RunSpec::JOB_NOT_SET) {
    return Status::invalidArgument(
        "the sweep's base run has no job: a trainer job, a Python script or a custom command");
  }
  if (!spec.base().hosts().empty()) {
    return Status::invalidArgument(
        "the sweep's base run has a host list: trials are one-node runs of this node; give "
        "ranks_per_node instead");
  }
  if (spec.max_retries() > kMaxTrialRetries) {
    return Status::invalidArgument("max_retries " + std::to_string(spec.max_retries()) +
                                   " is over the limit of " + std::to_string(kMaxTrialRetries));
  }
  if (spec.max_concurrent() > kMaxSweepTrials) {
    return Status::invalidArgument("max_concurrent is over " + std::to_string(kMaxSweepTrials));
  }
  if (spec.name().size() > 256) {
    return Status::invalidArgument("the sweep's name is over 256 bytes");
  }
  RINGSIDE_RETURN_IF_ERROR(checkRule(spec));
  if (ashaPromotes(spec)) {
    // Each trial pauses into its own run's checkpoint folder and resumes from it.
    auto config = trainerConfigOf(spec.base().trainer());
    if (!config.isOk()) return config.status();
    const std::string dir = withTrainerDefaults(*config).checkpoint_dir();
    if (!dir.empty() && dir.front() == '/') {
      return Status::invalidArgument(
          "the base run's checkpoint_dir " + dir +
          " is absolute: every trial would write the same folder; give a relative one (each "
          "trial's run keeps its own, which ASHA resumes it from)");
    }
  }
  // Every value must fit the base run (a grid's all, a random sweep's first draws).
  const uint32_t checks = std::min<uint32_t>(trialBudget(spec), 64);
  for (uint32_t trial = 0; trial < checks; ++trial) {
    if (spec.method() == v1::MODEL_BASED && trial > 0) break;
    auto run = trialRunSpec(spec, "check", trial, 1, drawTrial(spec, trial));
    if (!run.isOk()) return run.status();
  }
  return Status::ok();
}

}  // namespace ringside::agent
