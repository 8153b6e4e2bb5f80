// The owner agent's sweeps: trials queued as runs, judged at their rungs, kept on disk
// (sweep_controller.h).
#include "ringside/agent/sweep/sweep_controller.h"

#include <algorithm>
#include <cmath>

#include "ringside/agent/sweep/early_stopping.h"
#include "ringside/agent/sweep/search_space.h"
#include "ringside/agent/sweep/sweep_spec_check.h"
#include "ringside/agent/sweep/trial_spec.h"
#include "ringside/common/run_spec.h"

namespace ringside::agent {
namespace {

// Value updates alone are reported at most this often per sweep.
constexpr double kReportIntervalSeconds = 1.0;

bool isEndedState(v1::RunState state) {
  return state == v1::COMPLETED || state == v1::FAILED || state == v1::STOPPED;
}

}  // namespace

bool isTrialActive(const v1::SweepTrial& trial) {
  return !trial.run_id().empty() && !isEndedState(trial.state());
}

SweepController::SweepController(SweepControllerOptions options, TrialRunner& runner)
    : options_(std::move(options)), runner_(runner), store_(options_.sweepsDir) {}

double SweepController::now() const {
  if (options_.now) return options_.now();
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void SweepController::log(const char* level, const std::string& text) const {
  if (options_.log) options_.log(level, text);
}


Status SweepController::load() {
  auto found = store_.readAll([this](const std::string& problem) { log("error", problem); });
  if (!found.isOk()) return found.status();
  for (v1::SweepInfo& info : *found) {
    const std::string id = info.sweep_id();
    Kept& kept = sweeps_[id];
    kept.info = std::move(info);
    order_.push_back(id);
    if (kept.info.state() != v1::SWEEP_RUNNING && kept.info.state() != v1::SWEEP_PAUSED) continue;
    // Each trial's newest run: also one queued just before the earlier agent kept the sweep.
    std::map<uint32_t, v1::RunInfo> newest;
    for (const v1::RunInfo& run : runner_.runsOfSweep(id)) {
      const v1::SweepTrialRef& ref = run.spec().sweep_trial();
      if (ref.trial() >= static_cast<uint32_t>(kept.info.trials_size())) continue;
      auto [at, added] = newest.emplace(ref.trial(), run);
      if (!added && ref.attempt() > at->second.spec().sweep_trial().attempt()) at->second = run;
    }
    for (const auto& [index, run] : newest) {
      v1::SweepTrial& trial = *kept.info.mutable_trials(static_cast<int>(index));
      if (trial.run_id() == run.run_id()) continue;
      const auto& earlier = trial.earlier_run_ids();
      if (std::find(earlier.begin(), earlier.end(), run.run_id()) != earlier.end()) continue;
      const uint32_t current = static_cast<uint32_t>(trial.earlier_run_ids_size()) + 1;
      if (run.spec().sweep_trial().attempt() < current) continue;
      if (!trial.run_id().empty()) trial.add_earlier_run_ids(trial.run_id());
      trial.set_run_id(run.run_id());
      trial.set_state(v1::QUEUED);  // its journaled state follows below
      trial.set_attempts(trial.attempts() + 1);
      kept.dirty = true;
    }
    for (v1::SweepTrial& trial : *kept.info.mutable_trials()) {
      if (trial.run_id().empty() || isEndedState(trial.state())) continue;
      Progress& progress = progress_[trial.run_id()];
      progress.sweepId = id;
      progress.trial = trial.trial();
      // Its values and rungs again from the journal; recorded rungs are not judged twice.
      trial.clear_best_value();
      trial.clear_last_value();
      std::vector<v1::MetricSample> samples;
      Status read = runner_.forEachSample(
          trial.run_id(), [&samples](const v1::MetricSample& s) { samples.push_back(s); });
      if (!read.isOk()) log("warning", "sweep " + id + ": " + read.toString());
      onSamples(trial.run_id(), samples);
      if (auto run = runner_.findRun(trial.run_id())) onRunState(*run);
    }
    log("info", "took back sweep " + id + " (" + v1::SweepState_Name(kept.info.state()) + ", " +
                    std::to_string(kept.info.trials_size()) + " trials drawn)");
  }
  return Status::ok();
}

Result<v1::SweepInfo> SweepController::launch(v1::SweepSpec spec, bool canLaunch) {
  RINGSIDE_RETURN_IF_ERROR(validateSweepSpec(spec));
  if (!canLaunch) {
    return Status::failedPrecondition(
        "the node is draining: it starts no sweep; undrain it or choose another node");
  }
  const std::string id = SweepStore::newSweepId();
  Kept& kept = sweeps_[id];
  kept.info.set_sweep_id(id);
  *kept.info.mutable_spec() = std::move(spec);
  kept.info.set_state(v1::SWEEP_RUNNING);
  kept.info.set_created_time(now());
  kept.info.set_best_trial(-1);
  Status first = launchTrial(kept, 0);
  if (!first.isOk()) {
    sweeps_.erase(id);
    return first.withContext("the sweep's first trial was refused");
  }
  order_.push_back(id);
  kept.dirty = true;
  save(kept);
  log("info", "sweep " + id + " started (" + v1::SweepMethod_Name(kept.info.spec().method()) +
                  ", " + std::to_string(trialBudget(kept.info.spec())) + " trials at most)");
  tick(canLaunch);
  return sweeps_.at(id).info;
}

uint32_t SweepController::concurrency(const v1::SweepInfo& info) {
  if (info.spec().max_concurrent() > 0) return info.spec().max_concurrent();
  const uint32_t ranks = std::max<uint32_t>(1, info.spec().base().ranks_per_node());
  return std::max<uint32_t>(1, runner_.slotsFor(info.spec().base()) / ranks);
}

std::vector<FinishedTrial> SweepController::finishedTrials(const v1::SweepInfo& info) const {
  std::vector<FinishedTrial> finished;
  for (const v1::SweepTrial& trial : info.trials()) {
    if (!isEndedState(trial.state()) || !trial.has_best_value()) continue;
    auto values = valuesFromJsonMap(trial.params());
    if (!values.isOk()) continue;
    finished.push_back({*values, trial.best_value()});
  }
  return finished;
}

void SweepController::refuseTrial(Kept& kept, uint32_t index, const std::string& what,
                                  const Status& why) {
  v1::SweepTrial& refused = *kept.info.mutable_trials(static_cast<int>(index));
  refused.set_state(v1::FAILED);
  refused.set_reason(what + ": " + why.message());
  refused.set_end_time(now());
  kept.dirty = true;
  log("warning", "sweep " + kept.info.sweep_id() + ": trial " + std::to_string(index) + ": " +
                     what + ": " + why.toString());
}

Status SweepController::promoteTrial(Kept& kept, uint32_t index) {
  v1::SweepTrial& trial = *kept.info.mutable_trials(static_cast<int>(index));
  const std::optional<v1::RunInfo> paused = runner_.findRun(trial.run_id());
  if (!paused || paused->run_dir().empty()) {
    return Status::notFound("the run of trial " + std::to_string(index) + " (" + trial.run_id() +
                            ") is gone, and its checkpoint with it");
  }
  auto config = trainerConfigOf(paused->spec().trainer());
  if (!config.isOk()) return config.status();
  const std::string dir = withTrainerDefaults(*config).checkpoint_dir();
  const std::string resume =
      !dir.empty() && dir.front() == '/' ? dir : paused->run_dir() + "/" + dir;
  trial.mutable_rungs(trial.rungs_size() - 1)->set_promoted(true);
  trial.add_earlier_run_ids(trial.run_id());
  trial.clear_run_id();
  trial.set_state(v1::RUN_STATE_UNSPECIFIED);
  trial.set_attempts(0);  // retries count from the promotion on
  log("info", "sweep " + kept.info.sweep_id() + ": trial " + std::to_string(index) +
                  " promoted from rung " + std::to_string(trial.rungs(trial.rungs_size() - 1).rung()));
  return launchTrial(kept, index, resume);
}

Status SweepController::launchTrial(Kept& kept, uint32_t index, const std::string& resumeFrom) {
  v1::SweepInfo& info = kept.info;
  while (static_cast<uint32_t>(info.trials_size()) <= index) {
    v1::SweepTrial* added = info.add_trials();
    added->set_trial(static_cast<uint32_t>(info.trials_size() - 1));
  }
  v1::SweepTrial& trial = *info.mutable_trials(static_cast<int>(index));
  if (trial.params().empty()) {
    TrialValues drawn;
    if (info.spec().method() == v1::MODEL_BASED) {
      auto& search = searches_[info.sweep_id()];
      if (!search) {
        auto created = ModelBasedSearch::create(info.spec(), finishedTrials(info));
        if (!created.isOk()) return created.status();
        search = std::move(created).value();
      }
      drawn = search->next(index);
    } else {
      drawn = drawTrial(info.spec(), index);
    }
    for (const auto& [name, text] : valuesJsonMap(drawn)) (*trial.mutable_params())[name] = text;
  }
  auto values = valuesFromJsonMap(trial.params());
  if (!values.isOk()) return values.status();
  const uint32_t attempt = static_cast<uint32_t>(trial.earlier_run_ids_size()) + 1;
  auto spec = trialRunSpec(info.spec(), info.sweep_id(), index, attempt, *values);
  if (!spec.isOk()) return spec.status();
  // A promoted trial goes on from the checkpoint its pause wrote (the same run spec otherwise, so
  // the same schedule).
  if (!resumeFrom.empty()) spec->mutable_trainer()->mutable_config()->set_resume(resumeFrom);
  kept.dirty = true;
  kept.changed = true;
  // The run's first state comes back through onRunState() during the launch.
  auto run = runner_.launchTrial(*spec);
  if (!run.isOk()) return run.status();
  v1::SweepTrial& launched = *info.mutable_trials(static_cast<int>(index));
  if (launched.run_id() != run->run_id()) {
    launched.set_run_id(run->run_id());
    launched.set_state(run->state());
  }
  launched.set_attempts(launched.attempts() + 1);
  Progress& progress = progress_[run->run_id()];
  progress.sweepId = info.sweep_id();
  progress.trial = index;
  save(kept);  // the trial's run is kept before anything else happens to it
  return Status::ok();
}

void SweepController::onRunState(const v1::RunInfo& run) {
  if (!run.spec().has_sweep_trial()) return;
  const v1::SweepTrialRef& ref = run.spec().sweep_trial();
  auto it = sweeps_.find(ref.sweep_id());
  if (it == sweeps_.end()) return;
  Kept& kept = it->second;
  if (ref.trial() >= static_cast<uint32_t>(kept.info.trials_size())) return;
  v1::SweepTrial& trial = *kept.info.mutable_trials(static_cast<int>(ref.trial()));
  if (trial.run_id() != run.run_id()) {
    // A run being launched now (its first state), or an earlier attempt's late state.
    if (!trial.run_id().empty() ||
        ref.attempt() != static_cast<uint32_t>(trial.earlier_run_ids_size()) + 1) {
      return;
    }
    trial.set_run_id(run.run_id());
    Progress& progress = progress_[run.run_id()];
    progress.sweepId = ref.sweep_id();
    progress.trial = ref.trial();
  }
  if (isEndedState(trial.state())) return;  // its end was handled (a replay, a repeat)
  if (trial.state() != run.state()) {
    trial.set_state(run.state());
    kept.dirty = true;
    kept.changed = true;
  }
  if (run.start_time() > 0 && trial.start_time() != run.start_time()) {
    trial.set_start_time(run.start_time());
    kept.changed = true;
  }
  if (isEndedState(run.state())) endTrial(kept, trial, run);
}

void SweepController::endTrial(Kept& kept, v1::SweepTrial& trial, const v1::RunInfo& run) {
  auto found = progress_.find(run.run_id());
  Progress progress = found != progress_.end() ? found->second : Progress{};
  if (found != progress_.end()) {
    // The last epoch's value, when steps per epoch were never known.
    if (run.state() == v1::COMPLETED) {
      if (auto last = found->second.metric.finish()) {
        report(kept, found->second, last->resource, last->value);
      }
    }
    progress_.erase(found);
  }
  trial.set_end_time(run.end_time() > 0 ? run.end_time() : now());
  kept.dirty = true;
  kept.changed = true;
  const bool judgedOut = std::any_of(trial.rungs().begin(), trial.rungs().end(),
                                     [](const v1::RungValue& r) { return !r.promoted(); });
  if (progress.unqueue && run.state() == v1::STOPPED) {
    // Cancelled while queued by a pause: queued again on resume, as the same attempt.
    trial.add_earlier_run_ids(run.run_id());
    trial.clear_run_id();
    trial.set_state(v1::RUN_STATE_UNSPECIFIED);
    trial.set_attempts(trial.attempts() > 0 ? trial.attempts() - 1 : 0);
    trial.set_end_time(0);
    trial.set_reason("unqueued while the sweep is paused");
    return;
  }
  if (run.state() == v1::STOPPED && judgedOut && ashaPromotes(kept.info.spec())) {
    // Paused at its rung: it waits for a promotion (tick()), or is left there at the end.
    trial.set_stopped_early(false);
    trial.set_reason(ashaPauseReason(kept.info, trial));
  } else if (run.state() == v1::COMPLETED) {
    trial.clear_reason();
  } else if (run.state() == v1::STOPPED && judgedOut) {
    trial.set_stopped_early(true);
    // The rule's words, without the run's note on how its ranks exited.
    if (trial.reason().empty()) {
      const std::string& reason = run.reason();
      trial.set_reason(reason.substr(0, reason.find("; ")));
    }
  } else if (run.state() == v1::FAILED &&
             trial.attempts() <= kept.info.spec().max_retries() &&
             kept.info.state() == v1::SWEEP_RUNNING) {
    const std::string why = run.reason().empty() ? "it failed" : run.reason();
    log("warning", "sweep " + kept.info.sweep_id() + ": trial " + std::to_string(trial.trial()) +
                       " failed (" + why + "); it is queued again");
    trial.add_earlier_run_ids(run.run_id());
    trial.clear_run_id();
    trial.set_state(v1::RUN_STATE_UNSPECIFIED);
    trial.set_reason("attempt " + std::to_string(trial.attempts()) + " failed: " + why +
                     "; queued again");
    trial.clear_rungs();
    trial.clear_best_value();
    trial.clear_last_value();
    trial.set_resource(0);
    trial.set_start_time(0);
    trial.set_end_time(0);
    return;
  } else {
    trial.set_reason(run.reason());
  }
  updateBest(kept.info);
  // The model-based search learns the trial's best value (a failed trial without one: nothing).
  auto search = searches_.find(kept.info.sweep_id());
  if (search != searches_.end() && trial.has_best_value()) {
    search->second->finished(trial.trial(), trial.best_value());
  }
}

void SweepController::updateBest(v1::SweepInfo& info) const {
  int best = -1;
  for (const v1::SweepTrial& trial : info.trials()) {
    if (!trial.has_best_value()) continue;
    if (best < 0 || isBetter(info.spec().goal(), trial.best_value(),
                             info.trials(best).best_value())) {
      best = static_cast<int>(trial.trial());
    }
  }
  info.set_best_trial(best);
}

void SweepController::onSamples(const std::string& runId,
                                const std::vector<v1::MetricSample>& samples) {
  auto found = progress_.find(runId);
  if (found == progress_.end()) return;
  Progress& progress = found->second;
  auto it = sweeps_.find(progress.sweepId);
  if (it == sweeps_.end()) return;
  Kept& kept = it->second;
  const v1::SweepSpec& spec = kept.info.spec();
  const v1::ResourceUnit unit = ruleUnit(spec);
  for (const v1::MetricSample& sample : samples) {
    if (progress_.find(runId) == progress_.end()) return;  // ended meanwhile
    const TrialProgress::Step step = progress.metric.add(sample, spec.metric(), unit);
    if (step.ended) report(kept, progress, step.ended->resource, step.ended->value);
    if (!step.value) continue;
    v1::SweepTrial& trial = *kept.info.mutable_trials(static_cast<int>(progress.trial));
    trial.set_last_value(*step.value);
    if (!trial.has_best_value() || isBetter(spec.goal(), *step.value, trial.best_value())) {
      trial.set_best_value(*step.value);
      updateBest(kept.info);
    }
    kept.changed = true;
    if (step.current) report(kept, progress, step.current->resource, step.current->value);
  }
}

void SweepController::report(Kept& kept, Progress& progress, double resource, double value) {
  v1::SweepTrial& trial = *kept.info.mutable_trials(static_cast<int>(progress.trial));
  if (resource > trial.resource()) trial.set_resource(resource);
  if (progress.stopIssued || !kept.info.spec().has_early_stopping()) return;
  const int before = trial.rungs_size();
  if (ashaPromotes(kept.info.spec())) {
    const std::optional<uint32_t> rung = ashaPauseRung(&kept.info, progress.trial, resource, value);
    v1::SweepTrial& paused = *kept.info.mutable_trials(static_cast<int>(progress.trial));
    if (paused.rungs_size() != before) {
      kept.dirty = true;
      kept.changed = true;
    }
    if (!rung) return;
    progress.stopIssued = true;
    const std::string reason = ashaPauseReason(kept.info, paused);
    paused.set_reason(reason);
    Status stopped = runner_.stopTrial(paused.run_id(), options_.earlyStopGraceSeconds, reason);
    if (!stopped.isOk()) {
      log("warning", "sweep " + kept.info.sweep_id() + ": pausing trial " +
                         std::to_string(progress.trial) + ": " + stopped.toString());
    }
    save(kept);
    return;
  }
  const double mean = progress.metric.runningMean(value);
  const double best = trial.has_best_value() ? trial.best_value() : value;
  StopVerdict verdict = judgeReport(&kept.info, progress.trial, resource, value, mean, best);
  v1::SweepTrial& judged = *kept.info.mutable_trials(static_cast<int>(progress.trial));
  if (judged.rungs_size() != before) {
    kept.dirty = true;
    kept.changed = true;
  }
  if (!verdict.stop) return;
  progress.stopIssued = true;
  judged.set_reason(verdict.reason);
  log("info", "sweep " + kept.info.sweep_id() + ": trial " + std::to_string(progress.trial) +
                  " " + verdict.reason);
  Status stopped =
      runner_.stopTrial(judged.run_id(), options_.earlyStopGraceSeconds, verdict.reason);
  if (!stopped.isOk()) {
    log("warning", "sweep " + kept.info.sweep_id() + ": stopping trial " +
                       std::to_string(progress.trial) + ": " + stopped.toString());
  }
  save(kept);
}

void SweepController::stopActive(Kept& kept, const std::string& reason) {
  for (v1::SweepTrial& trial : *kept.info.mutable_trials()) {
    if (!isTrialActive(trial)) continue;
    auto progress = progress_.find(trial.run_id());
    if (progress != progress_.end()) {
      if (progress->second.stopIssued) continue;
      progress->second.stopIssued = true;
    }
    if (trial.reason().empty()) trial.set_reason(reason);
    Status stopped = runner_.stopTrial(trial.run_id(), 0, reason);
    if (!stopped.isOk()) {
      log("warning", "sweep " + kept.info.sweep_id() + ": stopping trial " +
                         std::to_string(trial.trial()) + ": " + stopped.toString());
    }
  }
}

void SweepController::finishSweep(Kept& kept, v1::SweepState state, const std::string& reason) {
  for (v1::SweepTrial& trial : *kept.info.mutable_trials()) {
    if (!isPausedAtRung(trial)) continue;
    trial.set_stopped_early(true);  // never promoted: the rule's loser
    trial.set_reason(ashaLeftReason(kept.info, trial));
  }
  kept.info.set_state(state);
  kept.info.set_reason(reason);
  kept.info.set_end_time(now());
  updateBest(kept.info);
  kept.dirty = true;
  kept.changed = true;
  std::string best;
  if (kept.info.best_trial() >= 0) {
    const v1::SweepTrial& trial = kept.info.trials(kept.info.best_trial());
    best = "; best: trial " + std::to_string(trial.trial()) + " with " + kept.info.spec().metric() +
           " " + std::to_string(trial.best_value());
  }
  log("info", "sweep " + kept.info.sweep_id() + " " + v1::SweepState_Name(state) + ": " + reason +
                  best);
}

Result<v1::SweepInfo> SweepController::control(const v1::ControlSweepRequest& request) {
  auto it = sweeps_.find(request.sweep_id());
  if (it == sweeps_.end()) return Status::notFound("no sweep " + request.sweep_id() + " here");
  Kept& kept = it->second;
  v1::SweepInfo& info = kept.info;
  const v1::SweepState state = info.state();
  const bool ended = state == v1::SWEEP_COMPLETED || state == v1::SWEEP_STOPPED;
  switch (request.action()) {
    case v1::PAUSE_SWEEP:
      if (state != v1::SWEEP_RUNNING) {
        return Status::failedPrecondition("sweep " + info.sweep_id() + " is " +
                                          v1::SweepState_Name(state) + ", not running");
      }
      info.set_state(v1::SWEEP_PAUSED);
      info.set_reason("paused");
      for (v1::SweepTrial& trial : *info.mutable_trials()) {
        // A promoted trial stays queued: it resumes from its checkpoint when it starts.
        if (trial.run_id().empty() || trial.state() != v1::QUEUED || trial.rungs_size() > 0) {
          continue;
        }
        auto progress = progress_.find(trial.run_id());
        if (progress != progress_.end()) progress->second.unqueue = true;
        Status cancelled = runner_.stopTrial(trial.run_id(), 0, "unqueued: the sweep is paused");
        if (!cancelled.isOk()) log("warning", cancelled.toString());
      }
      break;
    case v1::RESUME_SWEEP:
      if (state != v1::SWEEP_PAUSED) {
        return Status::failedPrecondition("sweep " + info.sweep_id() + " is " +
                                          v1::SweepState_Name(state) + ", not paused");
      }
      info.set_state(v1::SWEEP_RUNNING);
      info.clear_reason();
      break;
    case v1::STOP_SWEEP:
      if (ended) {
        return Status::failedPrecondition("sweep " + info.sweep_id() + " already ended (" +
                                          v1::SweepState_Name(state) + ")");
      }
      stopActive(kept, "the sweep was stopped");
      finishSweep(kept, v1::SWEEP_STOPPED, "stopped on request");
      break;
    case v1::EXTEND_SWEEP: {
      if (request.trials() == 0) return Status::invalidArgument("extend by 0 trials: give 1 or more");
      if (state == v1::SWEEP_STOPPED) {
        return Status::failedPrecondition("sweep " + info.sweep_id() +
                                          " was stopped: start a new sweep instead");
      }
      const uint64_t total = uint64_t{trialBudget(info.spec())} + request.trials();
      if (total > kMaxSweepTrials) {
        return Status::invalidArgument("the sweep would have " + std::to_string(total) +
                                       " trials, over the limit of " +
                                       std::to_string(kMaxSweepTrials));
      }
      if (info.spec().method() == v1::GRID) {
        v1::SweepSpec unbounded = info.spec();
        unbounded.set_max_trials(0);
        if (total > trialBudget(unbounded)) {
          return Status::failedPrecondition(
              "the grid has " + std::to_string(trialBudget(unbounded)) +
              " combinations and the sweep already has " +
              std::to_string(trialBudget(info.spec())) + ": add values to a new sweep instead");
        }
      }
      info.mutable_spec()->set_max_trials(static_cast<uint32_t>(total));
      if (state == v1::SWEEP_COMPLETED) {
        info.set_state(v1::SWEEP_RUNNING);
        info.clear_reason();
        info.set_end_time(0);
      }
      break;
    }
    case v1::RERUN_TRIAL: {
      if (request.trial() >= static_cast<uint32_t>(info.trials_size())) {
        return Status::notFound("sweep " + info.sweep_id() + " has no trial " +
                                std::to_string(request.trial()));
      }
      if (state == v1::SWEEP_STOPPED) {
        return Status::failedPrecondition("sweep " + info.sweep_id() + " was stopped");
      }
      v1::SweepTrial& trial = *info.mutable_trials(static_cast<int>(request.trial()));
      if (!isEndedState(trial.state())) {
        return Status::failedPrecondition("trial " + std::to_string(trial.trial()) +
                                          " has not ended: stop it first, or wait");
      }
      trial.add_earlier_run_ids(trial.run_id());
      trial.clear_run_id();
      trial.set_state(v1::RUN_STATE_UNSPECIFIED);
      trial.set_attempts(0);
      trial.set_stopped_early(false);
      trial.set_reason("rerun on request");
      trial.clear_rungs();
      trial.clear_best_value();
      trial.clear_last_value();
      trial.set_resource(0);
      trial.set_start_time(0);
      trial.set_end_time(0);
      if (state == v1::SWEEP_COMPLETED) {
        info.set_state(v1::SWEEP_RUNNING);
        info.clear_reason();
        info.set_end_time(0);
      }
      updateBest(info);
      break;
    }
    default:
      return Status::invalidArgument(
          "control_sweep names no action: PAUSE_SWEEP, RESUME_SWEEP, STOP_SWEEP, EXTEND_SWEEP or "
          "RERUN_TRIAL");
  }
  kept.dirty = true;
  kept.changed = true;
  save(kept);
  notify(kept, /*force=*/true);
  return kept.info;
}

void SweepController::tick(bool canLaunch) {
  for (const std::string& id : order_) {
    Kept& kept = sweeps_.at(id);
    v1::SweepInfo& info = kept.info;
    if (info.state() == v1::SWEEP_RUNNING) {
      const double wall = info.spec().max_wall_seconds();
      const bool wallSpent = wall > 0 && now() >= info.created_time() + wall;
      if (wallSpent) stopActive(kept, "the sweep's wall-time budget ran out");
      const uint32_t budget = trialBudget(info.spec());
      const uint32_t limit = concurrency(info);
      // Trials whose runs still hold slots (one whose processes ended waits only for its last
      // samples to be journaled).
      uint32_t active = static_cast<uint32_t>(
          std::count_if(info.trials().begin(), info.trials().end(), [this](const auto& trial) {
            return isTrialActive(trial) && !runner_.processesEnded(trial.run_id());
          }));
      // Retries and reruns first, then new trials.
      for (int i = 0; canLaunch && !wallSpent && active < limit && i < info.trials_size(); ++i) {
        const v1::SweepTrial& trial = info.trials(i);
        if (!trial.run_id().empty() || trial.state() != v1::RUN_STATE_UNSPECIFIED) continue;
        if (Status s = launchTrial(kept, static_cast<uint32_t>(i)); !s.isOk()) {
          refuseTrial(kept, static_cast<uint32_t>(i), "its run was refused", s);
          continue;
        }
        ++active;
      }
      // ASHA's get_job: a promotion before a new trial.
      while (canLaunch && !wallSpent && active < limit && ashaPromotes(info.spec())) {
        const std::optional<uint32_t> promoted = ashaPromotion(info);
        if (!promoted) break;
        if (Status s = promoteTrial(kept, *promoted); !s.isOk()) {
          refuseTrial(kept, *promoted, "its promotion was refused", s);
          continue;
        }
        ++active;
      }
      while (canLaunch && !wallSpent && active < limit &&
             static_cast<uint32_t>(info.trials_size()) < budget) {
        const uint32_t next = static_cast<uint32_t>(info.trials_size());
        if (Status s = launchTrial(kept, next); !s.isOk()) {
          refuseTrial(kept, next, "its run was refused", s);
          continue;
        }
        ++active;
      }
      const bool waiting = std::any_of(info.trials().begin(), info.trials().end(),
                                       [](const v1::SweepTrial& t) {
                                         return t.run_id().empty() &&
                                                t.state() == v1::RUN_STATE_UNSPECIFIED;
                                       });
      const bool anyActive =
          std::any_of(info.trials().begin(), info.trials().end(), isTrialActive);
      bool promotable = ashaPromotes(info.spec()) && ashaPromotion(info).has_value();
      if (canLaunch && !wallSpent && !anyActive && !waiting && !promotable &&
          ashaPromotes(info.spec()) && static_cast<uint32_t>(info.trials_size()) >= budget) {
        if (const std::optional<uint32_t> last = ashaFinalPromotion(info)) {
          promotable = true;
          if (Status s = promoteTrial(kept, *last); !s.isOk()) {
            refuseTrial(kept, *last, "its promotion was refused", s);
          }
        }
      }
      if (!anyActive && !waiting && (!promotable || wallSpent) &&
          (wallSpent || static_cast<uint32_t>(info.trials_size()) >= budget)) {
        finishSweep(kept, v1::SWEEP_COMPLETED,
                    wallSpent ? "the wall-time budget ran out"
                              : "all " + std::to_string(info.trials_size()) + " trials ended");
      }
    }
    save(kept);
    notify(kept, /*force=*/false);
  }
}

void SweepController::save(Kept& kept) {
  if (!kept.dirty) return;
  if (Status written = store_.write(kept.info); !written.isOk()) {
    log("error", "sweep " + kept.info.sweep_id() + ": " + written.toString() +
                     " (kept in memory; written again at the next change)");
    return;
  }
  kept.dirty = false;
  kept.changed = true;
  kept.urgent = true;
}

void SweepController::notify(Kept& kept, bool force) {
  if (!kept.changed || !options_.onChange) return;
  const double t = now();
  // States, runs and rungs (urgent) go at once; value updates alone at most once an interval.
  if (!force && !kept.urgent && t - kept.lastReport < kReportIntervalSeconds) return;
  kept.changed = false;
  kept.urgent = false;
  kept.lastReport = t;
  options_.onChange(kept.info);
}

std::vector<v1::SweepInfo> SweepController::list(bool includeEnded) const {
  std::vector<v1::SweepInfo> out;
  for (const std::string& id : order_) {
    const v1::SweepInfo& info = sweeps_.at(id).info;
    if (!includeEnded && info.state() != v1::SWEEP_RUNNING && info.state() != v1::SWEEP_PAUSED) {
      continue;
    }
    out.push_back(info);
  }
  return out;
}

const v1::SweepInfo* SweepController::find(const std::string& sweepId) const {
  auto it = sweeps_.find(sweepId);
  return it == sweeps_.end() ? nullptr : &it->second.info;
}

}  // namespace ringside::agent
