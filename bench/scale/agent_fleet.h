// scale_bench's nodes: N real ringside-agent processes on this machine, each with its own state
// directory, on loopback with any free ports, CURVE on (the default), the bench's fake NVML (8
// GPUs whose readings change), and its own host name "node-<i>": each agent runs in a UTS
// namespace of its own (unshare, root only), so the GUI places a multi-node run on N distinct
// hosts and the owner's mpirun (node-1's) starts the other nodes' ranks through the remote
// launcher (scale-rsh, which plays ssh: it runs the command in that node's namespaces). Nodes 2
// to N also have PID and mount namespaces of their own with their own /proc, so each of their
// agents sees only its node's processes, as on a cluster (its scans of /proc cost what they cost
// on a node, not N times that); node 1 stays in this machine's PID namespace (a process can enter
// only a PID namespace below its own) and sees every process. They share this machine's network
// stack (loopback), file system and 2 cores.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "ringside/common/status.h"

namespace ringside::bench {

struct FleetOptions {
  std::string agentPath;
  std::string mpirunPath;
  std::string nvmlLibrary;  // the fake NVML (scale_nvml.c)
  std::string launcher;     // scale-rsh
  std::string rootDir;      // state directories go to rootDir/node-<i>
  int nodes = 64;
  double telemetryIntervalS = 1.0;
  bool idle = false;  // nodes 2 to N's agents at SCHED_IDLE (chrt --idle); node 1 as this process
};

struct FleetAgent {
  std::string name;  // node-<i>, its host name
  std::string stateDir;
  pid_t pid = -1;          // the agent, as this machine numbers it
  pid_t launcherPid = -1;  // unshare, this process's child: its namespaces' parent
  int controlPort = 0, eventsPort = 0;
  std::string publicKey;     // the agent's CURVE key (its ready file)
  std::string rankEndpoint;  // its CURVE tcp:// rank endpoint
};

// Thread-safety: one thread.
class AgentFleet {
 public:
  explicit AgentFleet(FleetOptions options) : options_(std::move(options)) {}
  ~AgentFleet() { terminate(); }

  // Allows `clientKey` on every node (`ringside-agent --state-dir DIR authorize KEY`, as a user
  // does on each node), then starts every agent at once and waits (at most 60 s) for all their
  // ready files. Errors: kInternal naming the agent that did not start or authorize, with its
  // log's tail.
  Status start(const std::string& clientKey);
  // SIGTERM to all, SIGKILL after 10 s (60 s with idle); returns how many did not exit 0, each
  // named on stderr with how it ended and its log's tail.
  int terminate();

  const std::vector<FleetAgent>& agents() const { return agents_; }
  // CPU seconds (user + system) of agent i, and its resident memory in MiB (VmRSS; 0 if gone).
  double cpuSeconds(size_t i) const;
  double rssMiB(size_t i) const;

 private:
  Status authorize(const FleetAgent& agent, const std::string& key);

  FleetOptions options_;
  std::vector<FleetAgent> agents_;
};

// The pid on this machine of `launcher` or its descendant (searched breadth first, at most 64
// processes) that is `namespacePid` in its own (innermost) PID namespace; -1 when none is.
pid_t hostPidOf(pid_t launcher, pid_t namespacePid);

// Resident memory of process `pid` ("self" for this one), MiB; 0 when unknown. Its peak (VmHWM)
// with peak = true.
double processRssMiB(const std::string& pid, bool peak = false);

}  // namespace ringside::bench
