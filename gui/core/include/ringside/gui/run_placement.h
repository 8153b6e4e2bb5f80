// Which GPUs of a node a run uses, from where its owner placed it (RunInfo.placement), for the
// run's dashboard: its GPU charts show exactly the run's GPUs, on every node of the run.
// Pure functions, thread-safe.
#pragma once

#include <QString>

#include <cstdint>
#include <set>
#include <vector>

#include "ringside/proto/ringside.pb.h"

namespace ringside::gui {

struct NodeGpus {
  bool ofRun = false;    // the node runs ranks of the run
  bool allGpus = false;  // placement unknown: chart every GPU of the (owner's) node
  std::set<uint32_t> gpus;  // NVML indices the run holds there; empty: none (e.g. mpi backend)
};

// The run's GPUs on the node whose host name (NodeChoice.hostName) is `hostName`; `owner`: the
// node owns the run. The placement's hosts are matched case-insensitively; the owner also
// matches the first entry when no entry names it (the owner runs the first ranks, whatever host
// name the spec gave it). An empty placement (an agent that predates RunInfo.placement, or a run
// not reported yet) means: the owner's node, every GPU; no other node.
NodeGpus runGpusOnNode(const std::vector<v1::HostSlots>& placement, const QString& hostName,
                       bool owner);

// True when the placement is known and lists no GPU on any host (a CPU run).
bool runUsesNoGpus(const std::vector<v1::HostSlots>& placement);

}  // namespace ringside::gui
