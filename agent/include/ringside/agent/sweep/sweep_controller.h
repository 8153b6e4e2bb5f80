// SweepController: the owner agent's sweeps (docs/sweeps.md; docs/design.md decision 15). It
// draws trials (search_space.h), queues each as a run of the node (trial_spec.h: the base run
// with the trial's values, RunSpec.sweep_trial), follows their journaled states and metrics,
// stops the ones the early-stopping rule judges (early_stopping.h), retries failed ones, and
// keeps every sweep in <sweepsDir>/<sweep id>.json (SweepInfo in protobuf's JSON mapping,
// replaced atomically), so that a restarted agent takes its sweeps back: the trials' runs are
// found again by their RunSpec.sweep_trial, their metrics replayed from the journal, and no
// trial is queued twice.
//
// Thread-safety: not thread-safe; the agent calls it from its main loop. TrialRunner calls may
// call back into onRunState() (a launch journals the run's first state at once).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ringside/agent/sweep/search_space.h"
#include "ringside/agent/sweep/sweep_store.h"
#include "ringside/agent/sweep/trial_progress.h"
#include "ringside/common/status.h"
#include "ringside/proto/ringside.pb.h"

namespace ringside::agent {

// What the controller needs of the node's runs: the agent's RunManager and journal (a fake in
// the unit tests).
class TrialRunner {
 public:
  virtual ~TrialRunner() = default;
  // Queues a trial's run as RunManager::launch does (it may start at once). Errors as launch's;
  // FailedPrecondition while the node drains.
  virtual Result<v1::RunInfo> launchTrial(const v1::RunSpec& spec) = 0;
  // Stops a run (a queued one is cancelled), which then ends STOPPED with `reason` (SIGKILL after
  // graceSeconds). Errors as RunManager::stop.
  virtual Status stopTrial(const std::string& runId, double graceSeconds,
                           const std::string& reason) = 0;
  // The run as journaled now; std::nullopt for an unknown run.
  virtual std::optional<v1::RunInfo> findRun(const std::string& runId) = 0;
  // Every journaled run whose spec names the sweep (RunSpec.sweep_trial.sweep_id).
  virtual std::vector<v1::RunInfo> runsOfSweep(const std::string& sweepId) = 0;
  // Calls `take` with each metric sample journaled for the run, in seq order.
  virtual Status forEachSample(const std::string& runId,
                               const std::function<void(const v1::MetricSample&)>& take) = 0;
  // True when the run's processes have ended, so its slots are free, while its final state may
  // still wait for its last samples to be journaled (a couple of seconds): the next trial need
  // not wait for that.
  virtual bool processesEnded(const std::string& runId) = 0;
  // The node's slots, in all, of the kind the spec's ranks take (its GPUs, or its CPU slots).
  virtual uint32_t slotsFor(const v1::RunSpec& spec) = 0;
};

struct SweepControllerOptions {
  std::string sweepsDir;  // created if missing
  // SIGTERM -> SIGKILL of a trial stopped by the rule (its ranks are gone within this).
  double earlyStopGraceSeconds = 5.0;
  // Unix seconds now (tests replace it).
  std::function<double()> now;
  // A sweep changed: its whole SweepInfo (the agent publishes it as a SweepEvent). Called from
  // tick() and the request handlers, at most once a second per sweep for value updates alone.
  std::function<void(const v1::SweepInfo&)> onChange;
  // "error", "warning", "info" lines (the agent's log).
  std::function<void(const char* level, const std::string& text)> log;
};

class SweepController {
 public:
  SweepController(SweepControllerOptions options, TrialRunner& runner);

  // Reads the sweeps kept in sweepsDir and takes back the running and paused ones: each trial's
  // latest run (found by its sweep_trial, also one launched just before the agent stopped), its
  // metrics replayed, its end if it ended meanwhile. A file that cannot be read is reported and
  // left in place. Errors: IOError when sweepsDir cannot be created or listed.
  Status load();

  // Starts a sweep: checks it (validateSweepSpec, sweep_spec_check.h), keeps it, and queues
  // its first trials. The first trial's launch also checks the base run as the node does (the
  // program, the data, the trial's values): when it is refused, so is the sweep. Errors:
  // InvalidArgument naming what to change, FailedPrecondition while `canLaunch` is false (the
  // node drains), IOError when the sweep cannot be kept.
  Result<v1::SweepInfo> launch(v1::SweepSpec spec, bool canLaunch);

  // ControlSweepRequest (ringside.proto's SweepAction). Errors: NotFound (sweep or trial),
  // FailedPrecondition (the action does not apply in the sweep's or trial's state),
  // InvalidArgument (no action, 0 trials, past kMaxSweepTrials).
  Result<v1::SweepInfo> control(const v1::ControlSweepRequest& request);

  // Sweeps, oldest first; `includeEnded` false: running and paused ones only.
  std::vector<v1::SweepInfo> list(bool includeEnded) const;
  const v1::SweepInfo* find(const std::string& sweepId) const;

  // A run's state as journaled (the agent calls it after journaling every state change).
  // Runs of no sweep are ignored.
  void onRunState(const v1::RunInfo& run);
  // A run's samples as journaled (in seq order). Judges the sweep's metric at the rungs.
  void onSamples(const std::string& runId, const std::vector<v1::MetricSample>& samples);

  // Queues trials up to each running sweep's concurrency and budget (retries first), stops the
  // trials of a sweep whose wall-time budget ran out, ends the sweeps whose trials all ended,
  // and keeps and reports what changed. `canLaunch` false (the node drains): nothing is queued.
  // Call it from the main loop (every ~100 ms).
  void tick(bool canLaunch);

 private:
  // What the controller follows of a trial's run between reports (not kept: replayed).
  struct Progress {
    std::string sweepId;
    uint32_t trial = 0;
    TrialProgress metric;       // how far it trained, in the rule's unit
    bool stopIssued = false;    // the rule, the sweep's stop or its wall budget stopped it
    bool unqueue = false;       // cancelled while queued by a pause: queued again on resume
  };
  struct Kept {
    v1::SweepInfo info;
    bool dirty = false;         // to write: a state, a rung record, a trial's run
    bool changed = false;       // to report
    bool urgent = false;        // a kept change: reported at once
    double lastReport = 0;      // Unix seconds of the last onChange
  };

  uint32_t concurrency(const v1::SweepInfo& info);
  // Queues attempt earlier_run_ids+1 of `trial` (its values drawn when it has none). Errors: the
  // launch's (the caller decides what a refusal means for the trial).
  Status launchTrial(Kept& kept, uint32_t trial, const std::string& resumeFrom = {});
  // ASHA's promotion: trial `trial`, paused at its rung, goes on as a new run that resumes from
  // the paused run's checkpoint. Errors: NotFound when that run is gone; the launch's.
  Status promoteTrial(Kept& kept, uint32_t trial);
  // A trial whose launch or promotion (`what`) the node refused: FAILED with the reason.
  void refuseTrial(Kept& kept, uint32_t trial, const std::string& what, const Status& why);
  void report(Kept& kept, Progress& progress, double resource, double value);
  void endTrial(Kept& kept, v1::SweepTrial& trial, const v1::RunInfo& run);
  void stopActive(Kept& kept, const std::string& reason);
  void finishSweep(Kept& kept, v1::SweepState state, const std::string& reason);
  void updateBest(v1::SweepInfo& info) const;
  void save(Kept& kept);
  void notify(Kept& kept, bool force);
  std::vector<FinishedTrial> finishedTrials(const v1::SweepInfo& info) const;
  double now() const;
  void log(const char* level, const std::string& text) const;

  SweepControllerOptions options_;
  TrialRunner& runner_;
  SweepStore store_;
  std::map<std::string, Kept> sweeps_;             // by sweep id
  std::map<std::string, Progress> progress_;       // by run id, the current attempts
  std::vector<std::string> order_;                 // sweep ids, oldest first
  // Model-based sweeps' searches, made at their first draw (after a restart: from the trials
  // that ended).
  std::map<std::string, std::unique_ptr<ModelBasedSearch>> searches_;
};

// "active": a trial whose current run is queued, starting or running.
bool isTrialActive(const v1::SweepTrial& trial);

}  // namespace ringside::agent
