// Helpers shared by the cluster tests (label `cluster`): the local cluster's script, whether the
// tests can run here, and the rank processes of a run on one node.
//
// Thread-safety: call from the test's main thread.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "test_util.h"

namespace ringside::cluster_testing {

inline const std::string kLocalCluster = std::string(RINGSIDE_SOURCE_DIR) + "/scripts/local-cluster";

// Where `scripts/local-cluster` keeps node-N's agent state directory ("<root>node-N"; its
// data_root), visible from the host's mount namespace: a run's directory is
// <root><owner>/runs/<run id>.
inline const std::string kNodeStateRoot = "/var/lib/ringside-local-cluster/";

// Why the cluster tests cannot run here (printed to stderr; the test then exits 77, ctest's
// "skipped"), or false when they can: not root, a checkout or build tree under /tmp or /dev/shm
// (which every node has its own of), or no network namespaces.
inline bool clusterTestsSkipped() {
  if (::geteuid() != 0) {
    std::fprintf(stderr, "cluster tests skipped: scripts/local-cluster needs root\n");
    return true;
  }
  for (const std::string dir : {RINGSIDE_SOURCE_DIR, RINGSIDE_BINARY_DIR}) {
    if (dir.starts_with("/tmp/") || dir.starts_with("/dev/shm/")) {
      std::fprintf(stderr,
                   "cluster tests skipped: %s is under /tmp or /dev/shm, which the local "
                   "cluster's nodes have their own of; use a checkout elsewhere\n",
                   dir.c_str());
      return true;
    }
  }
  if (std::system("ip netns list >/dev/null 2>&1 && unshare --net true 2>/dev/null") != 0) {
    std::fprintf(stderr, "cluster tests skipped: network namespaces are not available here\n");
    return true;
  }
  return false;
}

// The pids, in `node`'s own PID namespace (use them only through `local-cluster exec`), of the
// processes there whose environment names run `runId` and an Open MPI rank. Empty when there
// are none or the node cannot be entered.
inline std::vector<int> rankPidsOn(const std::string& node, const std::string& runId) {
  const trainer::ProcessResult found = trainer::runProcess(
      {kLocalCluster, "exec", node, "sh", "-c",
       "for e in /proc/[0-9]*/environ; do tr '\\0' '\\n' < $e 2>/dev/null | grep -qx "
       "'RINGSIDE_RUN_ID=" + runId + "' && tr '\\0' '\\n' < $e | grep -q "
       "'^OMPI_COMM_WORLD_RANK=' && basename $(dirname $e); done; true"},
      "/", 60);
  std::vector<int> pids;
  std::istringstream lines(found.out);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty()) pids.push_back(std::stoi(line));
  }
  return pids;
}

}  // namespace ringside::cluster_testing
