// Agent: the ringside-agent daemon's core. Binds the control ROUTER and the events PUB (CURVE
// on both unless --insecure on loopback) and the ranks' PULL (ipc:// in a 0700 runtime dir),
// answers control requests, journals every metric sample, state change and log line before
// publishing it, samples node telemetry, and re-adopts the runs an earlier agent left running.
//
// Thread-safety: run() is the agent's one loop; requestStop() may be called from any thread or
// a signal handler (it sets an atomic flag the loop polls every <= 100 ms).
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "ringside/common/status.h"

namespace ringside::agent {

inline constexpr const char* kAgentVersion = "0.1.0";

struct AgentConfig {
  std::string stateDir;    // keys, allowlist, journal, run directories
  std::string runtimeDir;  // the ranks' ipc socket (created 0700); default <stateDir>/run
  std::string listenAddress = "127.0.0.1";
  int controlPort = 47600;  // 0: an ephemeral port (tests), reported by controlEndpoint()
  int eventsPort = 47601;
  // The CURVE tcp:// PULL endpoint for ranks of multi-node runs on other nodes (per-run keys,
  // curve::kRankZapDomain); not bound with --insecure. -1: controlPort + 2 (47602 by default),
  // or any free port when controlPort is 0.
  int rankPort = -1;
  // The address other nodes reach this agent's rank endpoint at; empty: listenAddress, or the
  // host name when listenAddress is a wildcard (0.0.0.0, ::, *).
  std::string advertiseAddress;
  std::string launcher;                 // Open MPI's plm_rsh_agent for multi-node runs; empty: ssh
  std::string networkInterface;         // MPI/NCCL interface or subnet for nodes that name none
  std::vector<std::string> mpirunArgs;  // extra mpirun options (after --bind-to none)
  bool insecure = false;                // plaintext; refused unless listenAddress is loopback
  double telemetryIntervalS = 1.0;
  // The telemetry journal's bounds (<stateDir>/telemetry.sqlite, telemetry_journal.h): readings
  // older than this many days, and the oldest past this many MiB, are deleted (hourly). <= 0: no
  // bound of that kind.
  double telemetryRetentionDays = 7.0;
  double telemetryMaxMiB = 512.0;
  std::string trainerPath;  // default ringside-trainer for trainer jobs
  // The directory holding the `ringside` Python package, appended to PYTHONPATH of PyTorch
  // script runs (a user's own copy earlier on the path wins); "" = none.
  std::string pythonPackageDir;
  std::string mpirunPath = "mpirun";
  // How runs run (docs/design.md decision 16): "local" (the agent's queue, mpirun) or "slurm"
  // (the agent of a Slurm login node: every run is a Slurm job; docs/slurm.md).
  std::string engine = "local";
  std::vector<std::string> labels;
  double retentionDays = 0.0;  // > 0: delete runs that ended longer ago
  // > 0: keep at most this many ended runs in the journal, deleting the earliest ended first
  // (at start and hourly, with retentionDays); runs that have not ended are never deleted.
  uint32_t retentionMaxRuns = 0;
  double stopGraceS = 30.0;  // SIGTERM -> SIGKILL for stops that name none
  std::string nvmlLibrary = "libnvidia-ml.so.1";
  // --share-gpus: a GPU that a process other than Ringside's ranks computes on stays free for
  // runs. By default it counts as taken (docs/queue.md, "GPUs used outside Ringside").
  bool shareGpus = false;
  // When set, start() writes the AgentReady JSON here once the agent serves (agent_ready.h),
  // and a clean stop removes it.
  std::string readyFile;
};

// Sets the level below which the agent's log lines on stderr are dropped: "error", "warning",
// "info" (default) or "debug". Errors: InvalidArgument for another name. Thread-safe.
Status setLogLevel(const std::string& level);

// The default state directory: /var/lib/ringside-agent for root, else
// $XDG_STATE_HOME/ringside-agent (~/.local/state/ringside-agent).
std::string defaultStateDir();

class Agent {
 public:
  explicit Agent(AgentConfig config);
  ~Agent();
  Agent(const Agent&) = delete;
  Agent& operator=(const Agent&) = delete;

  // Creates the state and runtime directories, keys, journal and sockets, and adopts running
  // runs. Errors: InvalidArgument for --insecure on a non-loopback address; IOError for
  // directories or key files; Internal when a socket cannot bind (the message names the address).
  Status start();
  // Serves until requestStop(). Returns an error only when the loop cannot go on.
  Status run();
  void requestStop() { stopRequested_.store(true); }

  // The bound addresses (after start()), e.g. "tcp://127.0.0.1:47600".
  std::string controlEndpoint() const;
  std::string eventsEndpoint() const;
  std::string publicKey() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::atomic<bool> stopRequested_{false};
};

}  // namespace ringside::agent
