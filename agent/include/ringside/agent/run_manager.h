// RunManager: launches runs under mpirun, tracks their states, stops them, and re-adopts them
// after an agent restart.
//
// Each run gets a directory <runsDir>/<run id>/ holding spec.json (a trainer run's run spec, in
// protobuf's JSON mapping, passed as ringside-trainer --config spec.json),
// stdout.log and stderr.log (mpirun's output: the ranks' and its own), and exit_status, written
// by the run's shim when mpirun ends. The shim is a /bin/sh that the agent starts in a new
// session (its own process group, surviving the agent); it runs mpirun and records its exit
// status in the file. The agent never needs to be mpirun's parent to learn how a run ended, so a
// restarted agent adopts running runs from their records (shim pid and process group).
//
// Stop: SIGTERM goes to the ranks only (mpirun would kill them at once on SIGTERM, before they
// checkpoint); after the grace period the whole process group gets SIGKILL.
//
// Thread-safety: not thread-safe; the agent calls it from its main loop.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ringside/common/status.h"
#include "ringside/proto/ringside.pb.h"

namespace ringside::agent {

struct RunManagerOptions {
  std::string runsDir;  // parent of the per-run directories (created if missing)
  std::string mpirunPath = "mpirun";
  std::string trainerPath;   // the default ringside-trainer for TrainerJob runs
  std::string rankEndpoint;  // RINGSIDE_AGENT_ENDPOINT given to the ranks
  std::vector<std::string> mpirunArgs = {"--bind-to", "none"};  // before -np
  double defaultGraceSeconds = 30.0;  // SIGTERM -> SIGKILL when a stop names none
};

// A run's shim process, also written to <run dir>/shim ("<pid> <start ticks>") so that a
// restarted agent can adopt the run from its directory.
struct RunProcessIds {
  pid_t shimPid = 0;           // leader of the run's process group (pgid == shimPid)
  int64_t shimStartTicks = 0;  // field 22 of /proc/<pid>/stat: guards against pid reuse
};

// A state change to journal and publish. Called synchronously from launch(), stop() and poll().
using RunStateCallback = std::function<void(const v1::RunInfo& run, const RunProcessIds& ids)>;

class RunManager {
 public:
  RunManager(RunManagerOptions options, RunStateCallback onStateChange);

  // Validates `spec` and starts it: QUEUED, then STARTING once the processes exist. A trainer
  // job's run spec is TrainerJob.config, or the deprecated config_json of an older client
  // converted to it (trainerConfigOf); the returned RunInfo's spec carries it as `config` only.
  // Errors: InvalidArgument naming the field (no job, no argv, trainer binary missing or not
  // executable, a run spec that is not valid JSON or out of range (validateTrainerConfig), dataset
  // directory missing, ranks 0), ResourceExhausted when more ranks than `freeSlots` are asked for,
  // Internal when the run directory or the processes cannot be created.
  Result<v1::RunInfo> launch(const v1::RunSpec& spec, uint32_t freeSlots);

  // Starts stopping a run: SIGTERM to its ranks now, SIGKILL to its process group after
  // graceSeconds (<= 0: the default). Errors: NotFound for an unknown run id,
  // FailedPrecondition (Status::aborted) for a run that already ended.
  Result<v1::RunInfo> stop(const std::string& runId, double graceSeconds);

  // Advances every active run: notices rank processes (STARTING -> RUNNING), escalates stops
  // past their grace period, and ends runs whose exit_status appeared or whose processes are
  // gone. Call every ~100 ms.
  void poll();

  // Takes over a run recorded by an earlier agent (same runsDir; the shim's pid comes from the
  // run directory). Ended runs are kept as they are; active ones are tracked again, and the next
  // poll() ends those that finished meanwhile.
  void adopt(const v1::RunInfo& run);

  const v1::RunInfo* find(const std::string& runId) const;
  std::vector<v1::RunInfo> runs(bool includeEnded) const;
  // Ranks of this node taken by active runs.
  uint32_t usedSlots() const;
  std::string runDir(const std::string& runId) const;

 private:
  struct Tracked {
    v1::RunInfo info;
    RunProcessIds ids;
    bool stopRequested = false;
    double killDeadline = 0.0;  // steady seconds; 0 = none
    bool killed = false;        // SIGKILL sent after the grace period
  };
  void setState(Tracked& run, v1::RunState state, const std::string& reason);
  void finish(Tracked& run, int exitCode, bool statusKnown);
  std::vector<pid_t> rankPids(const std::string& runId) const;
  bool shimAlive(const RunProcessIds& ids) const;

  RunManagerOptions options_;
  RunStateCallback onStateChange_;
  std::map<std::string, Tracked> runs_;
};

// "ended" states: COMPLETED, FAILED, STOPPED.
bool isEnded(v1::RunState state);

// The reason for a failed mpirun job from its stderr, e.g. "rank 1 (pid 0 on node vm) exited on
// signal 9 (Killed)"; empty when stderr names no rank.
std::string failureReasonFromMpirunStderr(const std::string& stderrText);

}  // namespace ringside::agent
