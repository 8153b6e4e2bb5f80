// StallDetector: the owner agent's judgement of whether a running run still makes progress, and
// when it does not, which rank the others wait for (docs/metrics.md, "Hangs", states the rule and
// its reasoning). One detector per running run; pure logic on what the agent receives, so that it
// is unit-tested on recorded heartbeats. Times are the agent's own clock (Unix seconds), never a
// rank's: ranks on other nodes may have clocks that differ.
//
// The rule: a run is stalled when no rank has made progress for
//   threshold = max(minSeconds, stepTimeMultiple x median step time, gapMultiple x median gap
//               between progress reports)
// where progress is a completed training step on any rank (a heartbeat's step or work_done
// growing, or a metric sample at a higher step), an evaluation batch or a checkpoint done
// (work_done), or a heartbeat from a rank in set-up or writing a checkpoint that is not waiting in
// a collective, for at most the run's phase timeout (RunSpec.phase_timeout_s; those phases have no
// step time to judge them by; past the bound the rank counts as stalled in that phase). Custom
// commands, which send no heartbeats, are judged from their metric steps only, from their first
// step on.
//
// The verdict is bounded whatever the world size (common/run_limits.h): its summary at
// kMaxStallSummaryBytes (groups of ranks as ranges, "ranks 0-8191 on 64 nodes wait in ..."), its
// per-rank states at kMaxStallVerdictRanks, and the heartbeat text it quotes (host, collective).
//
// Thread-safety: not thread-safe; the agent uses it from its main loop.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "ringside/proto/ringside.pb.h"

namespace ringside::agent {

struct StallRule {
  // The threshold's floor, s: steps of milliseconds must not make a garbage-collection pause or
  // a page-cache miss a stall, and the flag must reach a user within 10 s of the last progress
  // (the agent judges four times a second, kHangCheckInterval, and the verdict reaches the GUI
  // in well under a second).
  double minSeconds = 8.0;
  double stepTimeMultiple = 20.0;  // x the median step time
  // x the median gap between progress reports: a custom command that logs every 100 steps is
  // seen to progress only every 100 steps.
  double gapMultiple = 3.0;
  // A rank whose last heartbeat is older than this "has not reported" (heartbeats come about
  // once a second, from a thread that runs while the training loop is blocked).
  double heartbeatLostSeconds = 5.0;
  size_t window = 101;  // recent step times and gaps the medians are taken over
  // How long a heartbeat in set-up or in a checkpoint write counts as progress, in seconds
  // (RunSpec.phase_timeout_s; common/run_spec.h phaseTimeoutSeconds); 0: no bound.
  double phaseTimeoutSeconds = 600.0;
};

// A rank process as the owner agent sees it in /proc (ranks on its own node only).
struct RankProcessView {
  int rank = -1;
  // "running", "sleeping", "stopped", "disk wait", "zombie", or "gone" (no longer in /proc).
  std::string state;
  double cpuSeconds = 0.0;  // user + system time so far
};

class StallDetector {
 public:
  // `rankNodes[r]`: the host of rank r (RunInfo.placement expanded); `heartbeats`: the run's ranks
  // send heartbeats (a ringside-trainer job). `now`: the run's start, when the clock of the
  // first progress starts for trainer jobs.
  StallDetector(std::vector<std::string> rankNodes, bool heartbeats, double now,
                StallRule rule = {});

  void onHeartbeat(const v1::RankHeartbeat& heartbeat, double now);
  // A metric sample from rank `rank` (-1: a global one) at `step`.
  void onMetricStep(int rank, int64_t step, double now);
  // A line of output from rank `rank` (-1: not tagged with a rank).
  void onOutput(int rank, double now);
  // The run's rank processes on the owner's node, sampled now (others are left as they were).
  void onProcesses(const std::vector<RankProcessView>& processes, double now);

  // `seconds` of the agent's own clock in which the agent did not run (stopped, suspended, or
  // starved for longer than its loop allows): every time the detector remembers moves forward by
  // them, so that they count neither as silence of a rank nor toward the threshold. A verdict's
  // `since` moves with them. Negative or non-finite values are ignored.
  void excludePause(double seconds);
  // Seconds since the last progress, and the threshold the rule uses now.
  double secondsWithoutProgress(double now) const;
  double thresholdSeconds() const;
  // True when the judgement can start: a trainer job always, a custom command after its first
  // reported step.
  bool armed() const { return heartbeats_ || lastStep_ >= 0; }

  // The verdict when the run is stalled at `now` (armed and no progress for the threshold);
  // nullopt while it makes progress.
  std::optional<v1::StallVerdict> evaluate(double now) const;

  // True when the verdict names other ranks than `before` (or one of the two is absent), so
  // that the agent journals a new state event only when the judgement changes, not every second.
  static bool differs(const std::optional<v1::StallVerdict>& before,
                      const std::optional<v1::StallVerdict>& after);

 private:
  struct Rank {
    double lastHeard = -1.0;  // heartbeat, metric or output; -1: never
    double lastHeartbeat = -1.0;
    std::optional<v1::RankHeartbeat> heartbeat;
    int64_t step = -1;  // steps completed, as last reported
    uint64_t workDone = 0;
    std::optional<RankProcessView> process;
    double stallCpuBase = -1.0;  // cpuSeconds at the first sample after the last progress
  };
  void progressed(double now);
  void noteStep(Rank& rank, int64_t step, double now);
  static double median(const std::deque<double>& values);
  std::string rankName(int rank) const;
  // "ranks 0-8191 on 64 nodes": the ranks as rankList words, with their nodes when many.
  std::string rankGroup(const std::vector<int>& ranks) const;
  // True when a set-up or checkpoint phase of `phaseSeconds` no longer counts as progress.
  bool pastPhaseTimeout(double phaseSeconds) const;

  std::vector<std::string> nodes_;
  bool heartbeats_;
  StallRule rule_;
  std::vector<Rank> ranks_;
  double lastProgress_;
  int64_t lastStep_ = -1;  // highest step any rank completed
  std::deque<double> stepMs_;
  std::deque<double> gaps_;  // seconds between progress reports
};

// The process state letter of /proc/<pid>/stat in words (RankProcessView::state).
std::string processStateName(char state);

}  // namespace ringside::agent
