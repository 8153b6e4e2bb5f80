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

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ringside/agent/gpu_probe.h"
#include "ringside/agent/launch_command.h"
#include "ringside/agent/rank_processes.h"
#include "ringside/agent/slot_reservations.h"
#include "ringside/common/allowlist.h"
#include "ringside/common/curve.h"
#include "ringside/common/status.h"
#include "ringside/proto/ringside.pb.h"

namespace ringside::agent {

namespace slurm {
class SlurmTracker;
}  // namespace slurm

// Longest grace period of a stop, from SIGTERM to SIGKILL: 1 hour. The ranks checkpoint and exit
// on SIGTERM, which takes seconds to minutes; a stop that may wait longer than an hour is a
// mistake (or "inf", which would never escalate). StopRunRequest.grace_seconds and --stop-grace.
inline constexpr double kMaxStopGraceSeconds = 3600.0;
// SIGTERM -> SIGKILL of a run ended by its hang timeout: short, since hung ranks cannot
// checkpoint; enough for the ranks that only wait to exit on SIGTERM.
inline constexpr double kHangStopGraceSeconds = 10.0;

// OK for StopRunRequest.grace_seconds: 0 (the agent's default) or a finite number of seconds
// above 0 and at most kMaxStopGraceSeconds. Errors: InvalidArgument naming the value (inf, nan,
// negative, too long) and the allowed range.
Status validateGraceSeconds(double graceSeconds);

struct RunManagerOptions {
  std::string runsDir;  // parent of the per-run directories (created if missing)
  std::string mpirunPath = "mpirun";
  std::string trainerPath;   // the default ringside-trainer for TrainerJob runs
  // Appended to PYTHONPATH of PythonScript runs (the run's env's, else the agent's): the
  // directory of the `ringside` package the agent ships. "" = none.
  std::string pythonPackageDir;
  std::string rankEndpoint;  // RINGSIDE_AGENT_ENDPOINT given to the ranks of a one-node run
  // rankEndpoint is a CURVE server of the rank ZAP domain too: every run, not only a multi-node
  // one, gets its own keypair (in runKeys while it runs), so that a message naming a run is taken
  // only from that run's ranks. False with --insecure (plaintext everywhere) and in unit tests.
  bool curveRankEndpoint = false;
  std::vector<std::string> mpirunArgs = {"--bind-to", "none"};  // before the spec's own options
  double defaultGraceSeconds = 30.0;  // SIGTERM -> SIGKILL when a stop names none

  // Multi-node runs (docs/multi-node.md). The CURVE tcp:// rank endpoint as other nodes reach it
  // (empty: multi-node runs are refused, e.g. with --insecure), the agent's public key, and the
  // allowlist of per-run keys that the rank endpoint's ZAP domain (curve::kRankZapDomain) checks:
  // a run's key is added at launch (and adoption) and removed when the run ends.
  std::string rankTcpEndpoint;
  std::string agentPublicKey;
  curve::Allowlist* runKeys = nullptr;
  // The Slurm engine (docs/slurm.md; the agent's --engine slurm): every run is a Slurm job,
  // submitted with sbatch and followed through this tracker's squeue snapshots; the agent queues
  // and starts nothing itself (Slurm's queue is the queue). nullptr: the local engine, which
  // refuses a spec with slurm options. Not owned; outlives the RunManager.
  slurm::SlurmTracker* slurm = nullptr;
  std::string launcher;          // Open MPI's plm_rsh_agent (--launcher); empty: ssh
  std::string networkInterface;  // for nodes whose HostSlots entry names none
  // Names of this node in a run's host list: its host name, its addresses.
  std::vector<std::string> localNames;
  std::chrono::milliseconds launcherTimeout{10000};  // the reachability check at launch

  // The node's GPUs (NVML indices). When not empty, a slot is a GPU: every run gets one GPU per
  // rank on this node, handed to it as CUDA_VISIBLE_DEVICES, never one another run uses.
  std::vector<uint32_t> gpuIndices;
  // The node's CPU slots (NodeInfo.cpu_slots_total), which queued CPU runs fill. A one-node run
  // asking for more is refused at launch, as it could never start. 0: unknown (no such check,
  // and queued CPU runs never start).
  uint32_t cpuSlots = 0;
  // Seconds until an active run ends (RunEtas::remainingSeconds), std::nullopt when unknown: a
  // queued run's estimated_start comes from these. Empty: no estimates.
  std::function<std::optional<double>(const v1::RunInfo& run)> remainingSeconds;
  // The wall clock of RunInfo's times (Unix seconds); empty: the system clock (tests step it).
  // A clock stepped back never makes a run end before it started, nor start before it was made.
  std::function<double()> wallClock;
  std::string procDir = "/proc";  // where rank processes are looked for (tests)
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

  // Validates `spec` and starts it: QUEUED, then STARTING once the processes exist. A one-node
  // run whose slots are busy, or that would overtake a queued run of its slot kind and at least
  // its priority, stays QUEUED (docs/queue.md): the returned RunInfo has its queue_position and
  // waiting_reason, and dispatchQueue() starts it once its slots are free. A run with a
  // host list (multi-node) must name this node (localNames) and reaches the other nodes through
  // mpirun's launcher, checked first (checkLauncherReaches); its ranks push metrics to
  // rankTcpEndpoint with a keypair made for the run (kept as rank.key_secret in the run
  // directory); a one-node run's ranks push to rankEndpoint, with a keypair of their own too
  // when curveRankEndpoint. The run spec reaches every rank on the command line (--config-json). A trainer
  // job's run spec is TrainerJob.config, or the deprecated config_json of an older client
  // converted to it (trainerConfigOf); the returned RunInfo's spec carries it as `config` only.
  // Errors: InvalidArgument naming the field (no job, no argv, trainer binary missing or not
  // executable, a run spec that is not valid JSON or out of range (validateTrainerConfig), dataset
  // directory missing, ranks 0 or more than kMaxWorldSize, an env variable, host name, interface
  // or mpirun option refused by launch_command.h, a run that could never start here: more ranks
  // than the node's CPU slots or GPUs, a GPU run on a node without GPUs), ResourceExhausted when
  // a multi-node run asks for more ranks than `freeCpuSlots` (or free GPUs) (multi-node runs are
  // not queued), FailedPrecondition when a node cannot be reached,
  // Internal when the run directory or the processes cannot be created.
  // `freeCpuSlots` comes from usedCpuSlots(/*fresh=*/true) just before; the GPU check uses that
  // scan. A job that usesGpus() takes one free GPU per rank here; any other one CPU slot per rank.
  Result<v1::RunInfo> launch(const v1::RunSpec& spec, uint32_t freeCpuSlots);

  // Starts the queued runs whose slots are free, in queue order (priority, then submission):
  // the first queued run of a slot kind (CPU slots, GPUs) that does not fit holds back the later
  // ones of that kind, so that none starts ahead of it on the slots it waits for, except where
  // it delays no waiting run ahead of it (backfill: at each one's estimated start, enough slots
  // are left over for it too; never past a run without an estimate); a run of the other kind
  // may start (it cannot delay it). A queued run whose program or data went missing
  // meanwhile fails with the reason instead. Each queued run's queue_position and
  // waiting_reason are updated, and reported through the state callback when they change; so is
  // its estimated_start (when it moves by more than 30 s and 5 % of the wait): the slots of the
  // runs that hold them free at those runs' ETAs (options' remainingSeconds), in queue order,
  // and a queued run once started keeps its slots for good (its length is not known), so a run
  // that needs them has no estimate (0).
  // Looks at the processes (a fresh scan) at most every 0.5 s unless `force` or a run ended
  // since; `quiet`: a run whose change is not reported (enqueue() reports it itself). Call it
  // from the main loop, except while the node drains.
  void dispatchQueue(bool force = false, const std::string& quiet = {});
  // ReorderQueuedRunRequest: gives a queued run `priority` (when not null; it then takes its
  // submission order among that priority's runs), then moves it `places` among the queued runs
  // of its priority (negative: towards the head; clamped to the ends). Its new place is
  // journaled through the state callback, with the places of the runs it passed. Errors:
  // NotFound (no run of that id), FailedPrecondition (the run is not QUEUED).
  Result<v1::RunInfo> reorderQueued(const std::string& runId, int places,
                                    const v1::RunPriority* priority);
  // Starts stopping a run; a QUEUED one is cancelled (STOPPED at once: nothing ran). SIGTERM to its ranks now, SIGKILL to its process group after
  // graceSeconds (0: the default). A run this node does not own but has ranks of (a
  // multi-node run owned by another node): SIGTERM to those ranks now, SIGKILL to the ones left
  // after the grace period; the reply is a RunInfo with the run id, RUNNING and a reason saying
  // so. Errors: InvalidArgument for a grace period validateGraceSeconds refuses (inf, nan,
  // negative, over kMaxStopGraceSeconds; nothing is signalled), NotFound for a run id with
  // neither, FailedPrecondition (Status::aborted) for a run that already ended.
  // `reason`, when not empty, is what the run ends STOPPED with (a sweep's early-stopping verdict),
  // followed by how its ranks exited; kept in the run directory (stop_reason) for an adopting agent.
  Result<v1::RunInfo> stop(const std::string& runId, double graceSeconds,
                           const std::string& reason = {});

  // Ends a hung run (the hang timeout, docs/metrics.md "Hangs"): SIGTERM to its ranks now,
  // SIGKILL to its process group after kHangStopGraceSeconds; the run then ends FAILED with
  // `reason` (the stall verdict), whatever its exit status. Remembered in the run directory
  // (hang_failure), so that an agent that adopts the run meanwhile ends it the same way.
  // Errors: NotFound for a run this node does not own, FailedPrecondition for an ended one.
  Status failHung(const std::string& runId, const std::string& reason);

  // Sets (or, with null, clears) the stall verdict of a running run it owns (RunInfo.stall)
  // and reports the change through the state callback (journaled and published as a state
  // event). Does nothing for an unknown or ended run.
  void setStall(const std::string& runId, const v1::StallVerdict* verdict);

  // Adds a script's hyperparameters to a running run it owns (RunInfo.params: later values
  // replace earlier ones; at most kMaxRunParams keys) and reports the change through the state
  // callback. Errors: NotFound (no such run), FailedPrecondition (ended), InvalidArgument (over
  // validateRunParams' bounds; nothing is added), ResourceExhausted (some new keys past the
  // bound were refused; the others were added).
  Status mergeParams(const std::string& runId,
                     const google::protobuf::Map<std::string, std::string>& params);

  // What would stop `ranks` ranks of `spec` on this node (PreflightRequest): the job's program
  // and the dataset missing here, too few free slots or GPUs; each a sentence that says what to
  // do. Empty: ready. (Draining is the agent's to check.)
  // `freeCpuSlots` as for launch().
  std::vector<std::string> preflight(const v1::RunSpec& spec, uint32_t ranks,
                                     uint32_t freeCpuSlots);
  // After a pre-flight without problems (PreflightRequest.reserve_seconds > 0): holds, for at
  // most `seconds` (slot_reservations.h), the first `ranks` free GPUs for a job that usesGpus(),
  // else `ranks` CPU slots; counted as used until the run's ranks appear here or the owner's
  // launch names the hold in its HostSlots.reservation_id.
  Reservation reserve(const v1::RunSpec& spec, uint32_t ranks, double seconds);

  // Whether `spec`'s ranks take GPU slots here (DESIGN decision 5, slots by kind): a trainer job
  // with the nccl backend, or `auto` (absent) on a node with GPUs (the trainer then picks nccl);
  // a Python script with use_gpus. mpi trainer runs, CPU scripts and custom commands take CPU
  // slots (cores).
  bool usesGpus(const v1::RunSpec& spec) const;

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
  // CPU slots of this node taken: the ranks here of the runs it owns that do not use GPUs (from
  // their specs, so a run holds its slots from launch on), the ranks here without GPUs of
  // multi-node runs other nodes own, and the CPU pre-flight holds not yet ended. GPU slots taken
  // are gpusInUse().
  // `fresh`: look at the processes now (for a launch or a pre-flight) rather than use the list
  // of at most a second ago (telemetry).
  uint32_t usedCpuSlots(bool fresh = false) const;
  // GPUs (NVML indices, ascending) handed to runs on this node, whichever node owns them, or
  // held for a run by a pre-flight.
  // Also the GPUs another process computes on (foreignGpus()): a GPU busy with a process that is
  // not a Ringside run counts as taken.
  std::vector<uint32_t> gpusInUse() const;
  std::vector<uint32_t> freeGpus() const;

  // The compute processes the GPU backend listed in its latest sample (GpuSample's
  // computeProcesses), by GPU index; the agent calls it after every telemetry sample. A GPU
  // missing from the map has no list this time: an old driver (nothing known) or a failed read
  // (what was known stands). Works out foreignGpus() at once, scanning the processes afresh
  // when a listed pid is neither a known rank nor a stranger of the last call.
  void setGpuProcesses(const std::map<uint32_t, std::vector<GpuProcess>>& processes);
  // A GPU of this node's (options' gpuIndices) that a process computes on which is none of the
  // Ringside ranks here (RINGSIDE_RUN_ID in its environment: the runs of this node and ranks
  // here of multi-node runs other nodes own), e.g. someone's notebook or a job started by hand.
  struct ForeignGpuUse {
    uint32_t gpu = 0;
    uint32_t pid = 0;                // the first such process
    std::string command;             // its /proc/PID/comm, "" when it cannot be read
    std::optional<double> usedMiB;   // its device memory, when the driver says
    uint32_t otherProcesses = 0;     // more foreign processes on the same GPU
  };
  // As of the last setGpuProcesses, by GPU index.
  const std::vector<ForeignGpuUse>& foreignGpus() const { return foreignGpus_; }
  // "GPU 0 used by PID 4123 (python3, 1536 MiB), not a Ringside run": one line per foreign
  // GPU, joined with "; " ("" when none).
  std::string foreignGpuText() const;
  // The public key of a run's rank keypair ("" for a one-node run or an unknown id): the only
  // key whose metrics the rank endpoint journals for that run.
  std::string runPublicKey(const std::string& runId) const;
  std::string runDir(const std::string& runId) const;

 private:
  struct Tracked {
    v1::RunInfo info;
    RunProcessIds ids;
    bool stopRequested = false;
    double killDeadline = 0.0;   // steady seconds; 0 = none
    bool killed = false;         // SIGKILL sent after the grace period
    // Ranks SIGTERM was sent to since the stop: a rank that appears later (a stop right after
    // the launch, while mpirun still starts them) gets it at the next poll, not only SIGKILL.
    std::set<pid_t> terminated;
    std::string hangFailure;     // failHung(): the run ends FAILED with this reason
    std::string stopReason;      // stop() with a reason: the run ends STOPPED with it
    std::vector<uint32_t> gpus;  // handed to the ranks on this node
    std::string runPublicKey;    // the ranks' CURVE key (empty: plaintext ranks, --insecure)
    // poll() could not read its state (out of descriptors, say) and logged so; cleared when it
    // can again: logged once per spell, never a verdict on the run.
    bool unreadableNoted = false;
    std::string slurmJobId;      // the Slurm engine: sbatch's job id ("" before it answered)
    // The Slurm engine: the first tracker generation whose squeue surely began after the job
    // was submitted; a job missing from an older snapshot is not yet listed, not gone.
    uint64_t slurmSeenFrom = 0;
  };
  // A stop of ranks here of a run another node owns.
  struct ForeignStop {
    double killDeadline = 0.0;  // steady seconds
  };
  void setState(Tracked& run, v1::RunState state, const std::string& reason);
  void finish(Tracked& run, int exitCode, bool statusKnown);
  std::vector<pid_t> rankPids(const std::string& runId) const;
  // SIGTERM to the run's ranks here that have not had it since its stop (Tracked::terminated).
  void terminateRanks(Tracked& run);
  // The Slurm engine (run_manager_slurm.cpp): submit a checked spec; follow a run's job;
  // scancel it, with `signal` (SIGTERM's name "TERM") to its ranks while it runs, or outright
  // (nullptr), true when scancel succeeded; a restarted agent's run, from its slurm_job file.
  Result<v1::RunInfo> launchSlurm(v1::RunSpec spec, const std::vector<std::string>& argv);
  void pollSlurm(Tracked& run);
  bool signalSlurm(Tracked& run, const char* signal);
  void adoptSlurm(Tracked& run);
  // options_.wallClock(), else the system clock.
  double now() const;
  // Logs once per spell that poll() could not read `what` of a run and left it as it was.
  void noteUnreadable(Tracked& run, const std::string& what);
  bool isLocalHost(const std::string& host) const;
  uint32_t localRanks(const v1::RunSpec& spec) const;
  // The job's program and data exist here; InvalidArgument saying what is missing otherwise.
  // Sets *argv to the job's command (a trainer: with --config-json) and *spec's config typed.
  Status checkJob(v1::RunSpec* spec, std::vector<std::string>* argv) const;
  // The rank processes on this node, re-read at most once a second (or now with `fresh`).
  const std::vector<RankProcess>& rankProcesses(bool fresh = false) const;
  void loadRunKey(Tracked& run);
  // InvalidArgument when `local` ranks of that kind could never run on this node.
  Status checkFitsNode(uint32_t local, bool gpuJob) const;
  // A QUEUED run of this slot kind whose priority is `priority` or higher.
  bool queuedAhead(v1::RunPriority priority, bool gpuJob) const;
  Result<v1::RunInfo> enqueue(v1::RunSpec spec, uint32_t world);
  // Starts `run` (its spec checked by checkJob into `argv`): the shim, then STARTING.
  // `journalQueued`: report a QUEUED state first (a run that never waited).
  Status spawn(Tracked& run, const std::vector<std::string>& argv,
               const std::vector<uint32_t>& ownGpus, bool journalQueued);
  // "; 2 slots held by run r-... (name), ..." (GPUs: "; GPUs 0, 1 held by run ..."): the
  // running runs that hold this node's slots of that kind, the first few named, the GPUs other
  // processes compute on (foreignGpuText) and any pre-flight holds; the end of a queued run's
  // waiting reason.
  std::string slotHolders(bool gpuJob) const;
  // QUEUED runs in queue order.
  std::vector<Tracked*> queueOrder();

  std::vector<ForeignGpuUse> foreignGpus_;
  std::set<uint32_t> foreignPids_;  // the foreign pids of the last setGpuProcesses
  mutable std::vector<RankProcess> rankScan_;
  // Pre-flight holds; the scans end those whose ranks appeared (mutable: counting slots scans).
  mutable SlotReservations reservations_;
  mutable double rankScanTime_ = -1.0;  // steady seconds
  std::map<std::string, ForeignStop> foreignStops_;

  RunManagerOptions options_;
  RunStateCallback onStateChange_;
  std::map<std::string, Tracked> runs_;
  double lastDispatch_ = -1.0;  // steady seconds
  bool queueDirty_ = true;      // a run ended or was queued: dispatch without waiting
};

// "ended" states: COMPLETED, FAILED, STOPPED.
bool isEnded(v1::RunState state);

}  // namespace ringside::agent
