// Early stopping of a sweep's trials (SweepSpec.early_stopping, docs/sweeps.md): the stopping
// form of ASHA and the median stopping rule, as functions of the sweep's own records
// (SweepTrial.rungs), so that a restarted agent judges exactly as before.
//
// Thread-safety: free functions without shared state.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ringside/proto/ringside.pb.h"

namespace ringside::agent {

// The rule's verdict on one report of a trial.
struct StopVerdict {
  bool stop = false;
  std::string reason;  // when stop: the rung, the trial's value and the cutoff, in words
};

// The resource a trial trains for when nothing stops it, in the rule's unit: the rule's
// max_resource, else the base run's length (a trainer job: its epochs, or max_steps with the
// STEPS unit; std::nullopt when neither is known, e.g. a script).
std::optional<double> maxResourceOf(const v1::SweepSpec& spec);

// ASHA's rungs: grace_period * eta^k for k = 0, 1, ... below `maxResource`, ascending (eta and
// grace_period with their defaults, 3 and 1, for 0).
std::vector<double> ashaRungs(const v1::AshaRule& rule, double maxResource);

// The stopping form of ASHA (scripts and commands, which cannot resume) and the median rule.
// Records trial `trial`'s report (its metric `value` after `resource` units of training; for the
// median rule also `runningMean`, the mean of all its values up to there, and `bestSoFar`) in
// sweep->trials(trial).rungs where the report passes a rung (ASHA) or a multiple of the grace
// period (median) not yet recorded, and judges it there:
//  - ASHA, the stopping form of Li et al., "A System for Massively Parallel Hyperparameter
//    Tuning" (MLSys 2020), Algorithm 2: where the paper's get_job promotes a configuration in the
//    top 1/eta of its rung, here a trial that reaches rung k goes on when fewer than eta trials
//    were recorded at rung k, or when its value is among the best floor(n / eta) of the n
//    recorded there (itself included; ties go on), and is stopped otherwise.
//  - Median (Golovin et al., "Google Vizier", KDD 2017, 3.2.2): at each multiple s of the grace
//    period, stopped when `bestSoFar` is worse than the median of the running means the other
//    trials recorded at s, once at least min_trials of them did.
// A trial already judged at a rung is not judged there again (a replayed report changes nothing).
// `metric` and the unit name the reason's words. The sweep must have a rule; `trial` must exist.
StopVerdict judgeReport(v1::SweepInfo* sweep, uint32_t trial, double resource, double value,
                        double runningMean, double bestSoFar);

// ASHA's promotion form, the paper's Algorithm 2 as published: a trial pauses at every rung it
// reaches (its run is stopped after a checkpoint), and get_job, whenever a slot is free, promotes
// a paused trial (resumes it from its checkpoint towards the next rung) before it starts a new
// one. Used for trials that can resume from a checkpoint: the trainer's. Scripts and commands get
// the stopping form of judgeReport() instead.
bool ashaPromotes(const v1::SweepSpec& spec);

// Promotion form: records trial `trial`'s report in the rungs it passes that it has no record of
// yet (value, promoted false) and returns the lowest of them, where the trial pauses; std::nullopt
// when it passed no new rung (below rung 0, between rungs, or past the last).
std::optional<uint32_t> ashaPauseRung(v1::SweepInfo* sweep, uint32_t trial, double resource,
                                      double value);

// True when the trial waits at a rung for a promotion: its run was stopped by the pause (STOPPED,
// not stopped_early) and its last rung record is not promoted.
bool isPausedAtRung(const v1::SweepTrial& trial);

// get_job's promotion (Li et al., Algorithm 2): from the highest rung down, the best trial paused
// at rung k among the best floor(n / eta) of the n values recorded there that has not been
// promoted from it; std::nullopt when there is none. Marks nothing (the caller records the
// promotion when it resumes the trial).
std::optional<uint32_t> ashaPromotion(const v1::SweepInfo& sweep);

// The end of a promotion-form sweep whose budget is spent, with nothing running and no trial that
// the floor(n / eta) rule promotes: when no trial has trained to the end, the best trial paused
// at the highest rung goes on (so that the sweep's best configuration trains to the end, which
// a finite budget of fewer than eta^rungs trials cannot give); std::nullopt otherwise.
std::optional<uint32_t> ashaFinalPromotion(const v1::SweepInfo& sweep);

// Why a paused trial's run was stopped, e.g. "paused at rung 0 (1 epoch): test/accuracy 0.81; it
// goes on when it is among the best of its rung".
std::string ashaPauseReason(const v1::SweepInfo& sweep, const v1::SweepTrial& trial);

// Why a trial left paused at its rung when the sweep ended was not promoted, e.g. "stopped at rung
// 0 (1 epoch): test/accuracy 0.62, below the cutoff 0.65 (the best 4 of 16 trials at that rung
// went on)".
std::string ashaLeftReason(const v1::SweepInfo& sweep, const v1::SweepTrial& trial);

// True when `a` is a better value than `b` for `goal`.
bool isBetter(v1::MetricGoal goal, double a, double b);

// "epochs" or "steps".
const char* unitName(v1::ResourceUnit unit);

// The rule's unit (EPOCHS without a rule).
v1::ResourceUnit ruleUnit(const v1::SweepSpec& spec);

}  // namespace ringside::agent
