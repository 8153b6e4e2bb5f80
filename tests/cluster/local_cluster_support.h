// Helpers shared by the cluster tests (label `cluster`): the local cluster's script, whether the
// tests can run here, and the rank processes of a run on one node.
//
// Thread-safety: call from the test's main thread.
#pragma once

#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "build_paths.h"
#include "test_util.h"

namespace ringside::cluster_testing {

inline const std::string kLocalCluster =
    std::string(ringside::test::sourceDir()) + "/scripts/local-cluster";

// Where `scripts/local-cluster` keeps node-N's agent state directory ("<root>node-N"; its
// data_root), visible from the host's mount namespace: a run's directory is
// <root><owner>/runs/<run id>.
inline const std::string kNodeStateRoot = "/var/lib/ringside-local-cluster/";

// Why the cluster tests cannot run here (printed to stderr; the test then exits 77, ctest's
// "skipped"), or false when they can: a checkout or build tree under /tmp or /dev/shm (which
// every node has its own of), or what `scripts/local-cluster check` finds missing: root,
// namespaces, bridges and veth pairs, a / whose mounts a node can make private (a chroot whose
// mount is shared with the machine's cannot), and with `ssh` also sshd and the ssh client.
inline bool clusterTestsSkipped(bool ssh = false) {
  if (::geteuid() != 0) {
    std::fprintf(stderr, "cluster tests skipped: scripts/local-cluster needs root\n");
    return true;
  }
  for (const std::string dir : {ringside::test::sourceDir(), ringside::test::binaryDir()}) {
    if (dir.starts_with("/tmp/") || dir.starts_with("/dev/shm/")) {
      std::fprintf(stderr,
                   "cluster tests skipped: %s is under /tmp or /dev/shm, which the local "
                   "cluster's nodes have their own of; use a checkout elsewhere\n",
                   dir.c_str());
      return true;
    }
  }
  std::vector<std::string> check{kLocalCluster, "check"};
  if (ssh) check.push_back("--ssh");
  const trainer::ProcessResult result = trainer::runProcess(check, "/", 60);
  if (result.exitCode != 0) {
    std::fprintf(stderr, "cluster tests skipped: %s%s", result.out.c_str(), result.err.c_str());
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
       "'RINGSIDE_RUN_ID=" +
           runId +
           "' && tr '\\0' '\\n' < $e | grep -q "
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
