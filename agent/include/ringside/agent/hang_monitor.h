// HangMonitor: watches every running run this agent owns for a stall (stall_detector.h) and for
// its hang timeout (RunSpec.hang_timeout_s), from what reaches the agent: the ranks' heartbeats,
// the metric samples it journals, the log lines it tails, and, for the ranks on its own node,
// their processes in /proc. The agent applies what poll() returns: a stall verdict to journal and
// publish (RunManager::setStall), its clearing, or a run to end (RunManager::failHung).
// docs/metrics.md, "Hangs", describes the behaviour for users.
//
// Thread-safety: not thread-safe; the agent uses it from its main loop.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ringside/agent/stall_detector.h"
#include "ringside/proto/ringside.pb.h"

namespace ringside::agent {

class HangMonitor {
 public:
  // The least time between two /proc samples of one run's ranks, s: their process state and CPU
  // time, for the verdict's "(process sleeping)"; reading /proc costs O(processes on the node).
  static constexpr double kProcessSamplePeriodSeconds = 1.0;

  struct Action {
    enum class Kind {
      kStalled,   // a new verdict, or one that names other ranks: journal it
      kCleared,   // progress resumed: clear the verdict
      kTimedOut,  // no progress for the hang timeout: fail the run with `reason`
    };
    std::string runId;
    Kind kind = Kind::kStalled;
    v1::StallVerdict verdict;  // kStalled, kTimedOut (may be empty for kTimedOut)
    std::string reason;        // kTimedOut: the run's failure reason; kCleared: a note
  };

  // `procDir`: where rank processes are looked for (tests); `rule`: the stall rule.
  explicit HangMonitor(std::string procDir = "/proc", StallRule rule = {});

  // What reached the agent for a run (ignored for runs it does not watch).
  void onHeartbeat(const v1::RankHeartbeat& heartbeat, double now);
  void onSamples(const std::string& runId, const std::vector<v1::MetricSample>& samples,
                 double now);
  void onLogLines(const std::string& runId, const std::vector<v1::LogLine>& lines, double now);

  // Call every quarter second or so with the runs this agent owns (RunManager::runs(false)):
  // starts watching those that are RUNNING, forgets the others, samples /proc for the ranks of
  // runs without progress (at most once per kProcessSamplePeriodSeconds each), and returns what
  // changed. `ownerNode`: this node's host name, the node of
  // the ranks of a run without placement.
  std::vector<Action> poll(const std::vector<v1::RunInfo>& runs, const std::string& ownerNode,
                           double now);

  // The agent did not run for `seconds` (a gap in its loop: SIGSTOP, a suspended machine, a
  // frozen cgroup): that time counts toward no run's stall or hang timeout
  // (StallDetector::excludePause). Heartbeats the ranks sent meanwhile wait in the agent's
  // sockets and arrive after it; they count from then.
  void excludePause(double seconds);

  // The verdict now in force for a run (tests, the agent's log).
  const v1::StallVerdict* verdict(const std::string& runId) const;

 private:
  struct Watched {
    StallDetector detector;
    std::optional<v1::StallVerdict> verdict;  // as last journaled
    uint32_t hangTimeoutSeconds = 0;
    std::vector<std::string> rankNodes;
    std::string ownerNode;
    bool timedOut = false;
    double lastProcessSample = -1.0;  // `now` of its last /proc sample; -1: none yet
  };
  void sampleProcesses(const std::string& runId, Watched& run, double now);

  std::string procDir_;
  StallRule rule_;
  std::map<std::string, Watched> runs_;
};

// The failure reason of a run ended by its hang timeout: "hung: no progress for 612 s (the run's
// hang timeout is 600 s); <the verdict's summary without its own "no progress" prefix>", at most
// kMaxStallSummaryBytes (common/run_limits.h) of UTF-8, cut with "…".
std::string hangReason(double quietSeconds, uint32_t hangTimeoutSeconds,
                       const std::optional<v1::StallVerdict>& verdict);

// The host of each rank of `run` in rank order: RunInfo.placement expanded (mpirun's by-slot
// mapping fills each host's ranks in turn), else world_size ranks on `ownerNode`.
std::vector<std::string> rankNodesOf(const v1::RunInfo& run, const std::string& ownerNode);

}  // namespace ringside::agent
