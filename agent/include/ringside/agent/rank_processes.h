// The rank processes of Ringside runs on this node, found in /proc, whichever node's agent owns
// their run: how a node counts the slots and GPUs that runs use on it (docs/design.md decision 5),
// also for a multi-node run owned by another node, and how a stop reaches ranks on every node.
//
// Thread-safety: free functions; scanRankProcesses keeps a cache shared by all its callers,
// under its own mutex.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ringside::agent {

struct RankProcess {
  pid_t pid = 0;
  std::string runId;           // RINGSIDE_RUN_ID
  int rank = -1;               // OMPI_COMM_WORLD_RANK (or PMIX_RANK)
  std::vector<uint32_t> gpus;  // CUDA_VISIBLE_DEVICES, when it lists GPU indices
  bool multiNode = false;      // a rank of a multi-node run (RINGSIDE_AGENT_ENDPOINT is tcp://)
  std::string reservationId;   // RINGSIDE_RESERVATION_ID: the pre-flight hold it ends here
};

// Every process under `procDir` whose environment has RINGSIDE_RUN_ID and a rank variable set by
// mpirun (mpirun itself and the agent's shim have no rank), in the caller's PID namespace:
// processes of nested PID namespaces (containers, the nodes of scripts/local-cluster) belong to
// other nodes. Processes that vanish or whose environment cannot be read (another user's,
// zombies) are skipped. Reads each process's environ the first time it sees the process, and
// afterwards only its /proc/PID/stat: a process's environ and PID namespace do not change while
// its pid keeps its start time and its environment's place in memory (an exec moves it), so the
// scan remembers (per `procDir`, until the process is gone) what it found. A process without a
// readable stat (a test's directory) is read whole every time. O(processes) small reads; at 800
// processes a whole read of every environ took 64 agents on one machine about a core (bench/scale).
std::vector<RankProcess> scanRankProcesses(const std::string& procDir = "/proc");

// The GPU indices of a CUDA_VISIBLE_DEVICES value ("0,2"); empty for an empty value or one that
// names GPUs by UUID ("GPU-..."), which a node cannot map to its NVML indices here.
std::vector<uint32_t> parseVisibleDevices(std::string_view value);

}  // namespace ringside::agent
