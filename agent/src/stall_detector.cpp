#include "ringside/agent/stall_detector.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <utility>

#include "ringside/common/protocol.h"

namespace ringside::agent {

namespace {

std::string seconds(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%.0f s", std::max(0.0, s));
  return text;
}

// "ranks 0, 2 and 3" / "rank 1".
std::string rankList(const std::vector<int>& ranks) {
  std::string text = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (i > 0) text += i + 1 == ranks.size() ? " and " : ", ";
    text += std::to_string(ranks[i]);
  }
  return text;
}

bool notRunning(const std::string& state) {
  return state == "stopped" || state == "zombie" || state == "gone" || state == "disk wait";
}

}  // namespace

std::string processStateName(char state) {
  switch (state) {
    case 'R':
      return "running";
    case 'S':
      return "sleeping";
    case 'D':
      return "disk wait";
    case 'T':
    case 't':
      return "stopped";
    case 'Z':
      return "zombie";
    case 'X':
      return "gone";
    case 'I':
      return "idle";
    default:
      return std::string("state ") + state;
  }
}

StallDetector::StallDetector(std::vector<std::string> rankNodes, bool heartbeats, double now,
                             StallRule rule)
    : nodes_(std::move(rankNodes)),
      heartbeats_(heartbeats),
      rule_(rule),
      ranks_(nodes_.size()),
      lastProgress_(now) {}

std::string StallDetector::rankName(int rank) const {
  std::string text = "rank " + std::to_string(rank);
  if (rank >= 0 && static_cast<size_t>(rank) < nodes_.size() && !nodes_[rank].empty()) {
    text += " on " + nodes_[rank];
  }
  return text;
}

void StallDetector::progressed(double now) {
  const double gap = now - lastProgress_;
  if (gap > 0.0) {
    gaps_.push_back(gap);
    if (gaps_.size() > rule_.window) gaps_.pop_front();
  }
  lastProgress_ = now;
  for (Rank& rank : ranks_) rank.stallCpuBase = -1.0;
}

void StallDetector::noteStep(Rank& rank, int64_t step, double now) {
  if (step > rank.step) rank.step = step;
  if (step > lastStep_) {
    // Without heartbeats, the step time is the time between reports over the steps between them.
    if (!heartbeats_ && lastStep_ >= 0) {
      stepMs_.push_back((now - lastProgress_) * 1e3 / static_cast<double>(step - lastStep_));
      if (stepMs_.size() > rule_.window) stepMs_.pop_front();
    }
    lastStep_ = step;
    progressed(now);
  }
}

void StallDetector::onHeartbeat(const v1::RankHeartbeat& beat, double now) {
  if (beat.rank() < 0 || static_cast<size_t>(beat.rank()) >= ranks_.size()) return;
  Rank& rank = ranks_[beat.rank()];
  rank.lastHeard = now;
  rank.lastHeartbeat = now;
  if (!nodes_[beat.rank()].empty() || beat.host().empty()) {
    // The placement's name is kept: it is the one the user gave.
  } else {
    nodes_[beat.rank()] = beat.host();
  }
  const bool stepped = beat.step() > rank.step;
  if (stepped && beat.last_step_ms() > 0.0) {
    stepMs_.push_back(beat.last_step_ms());
    if (stepMs_.size() > rule_.window) stepMs_.pop_front();
  }
  const bool worked = beat.work_done() > rank.workDone;
  rank.workDone = std::max(rank.workDone, beat.work_done());
  const bool setUp =
      (beat.phase() == v1::SETUP || beat.phase() == v1::CHECKPOINT) && beat.waiting_in().empty();
  rank.heartbeat = beat;
  if (stepped) {
    noteStep(rank, beat.step(), now);
  } else if (worked || setUp) {
    progressed(now);
  }
}

void StallDetector::onMetricStep(int rankIndex, int64_t step, double now) {
  if (rankIndex >= 0 && static_cast<size_t>(rankIndex) < ranks_.size()) {
    Rank& rank = ranks_[rankIndex];
    rank.lastHeard = now;
    noteStep(rank, step, now);
  } else if (step > lastStep_) {
    // A global sample (rank 0 writes them): the run as a whole reached `step`.
    if (!ranks_.empty()) ranks_[0].lastHeard = now;
    Rank scratch;
    noteStep(ranks_.empty() ? scratch : ranks_[0], step, now);
  }
}

void StallDetector::onOutput(int rank, double now) {
  if (rank >= 0 && static_cast<size_t>(rank) < ranks_.size()) ranks_[rank].lastHeard = now;
}

void StallDetector::onProcesses(const std::vector<RankProcessView>& processes, double /*now*/) {
  for (const RankProcessView& view : processes) {
    if (view.rank < 0 || static_cast<size_t>(view.rank) >= ranks_.size()) continue;
    Rank& rank = ranks_[view.rank];
    rank.process = view;
    if (rank.stallCpuBase < 0.0) rank.stallCpuBase = view.cpuSeconds;
  }
}

double StallDetector::median(const std::deque<double>& values) {
  if (values.empty()) return 0.0;
  std::vector<double> sorted(values.begin(), values.end());
  const size_t mid = sorted.size() / 2;
  std::nth_element(sorted.begin(), sorted.begin() + mid, sorted.end());
  return sorted[mid];
}

double StallDetector::secondsWithoutProgress(double now) const { return now - lastProgress_; }

double StallDetector::thresholdSeconds() const {
  return std::max({rule_.minSeconds, rule_.stepTimeMultiple * median(stepMs_) * 1e-3,
                   rule_.gapMultiple * median(gaps_)});
}

std::optional<v1::StallVerdict> StallDetector::evaluate(double now) const {
  const double threshold = thresholdSeconds();
  if (!armed() || now - lastProgress_ < threshold) return std::nullopt;

  v1::StallVerdict verdict;
  verdict.set_since(lastProgress_);
  verdict.set_detected_time(lastProgress_ + threshold);
  verdict.set_threshold_seconds(threshold);
  verdict.set_median_step_ms(median(stepMs_));
  verdict.set_step(std::max<int64_t>(lastStep_, 0));

  // Each rank: silent (no heartbeat), stopped or gone, busy outside a collective, or waiting.
  std::vector<std::string> stuckDetails;
  std::map<std::string, std::vector<int>> waitingBy;  // what they wait in -> ranks
  std::vector<int> stuck;
  for (size_t r = 0; r < ranks_.size(); ++r) {
    const Rank& rank = ranks_[r];
    v1::RankStallState* out = verdict.add_ranks();
    out->set_rank(static_cast<int>(r));
    out->set_node(nodes_[r]);
    out->set_silent_seconds(rank.lastHeard < 0.0 ? -1.0 : now - rank.lastHeard);
    out->set_step(rank.step);
    out->set_cpu_seconds_in_stall(-1.0);
    if (rank.process) {
      out->set_process_state(rank.process->state);
      if (rank.stallCpuBase >= 0.0) {
        out->set_cpu_seconds_in_stall(std::max(0.0, rank.process->cpuSeconds - rank.stallCpuBase));
      }
    }
    const std::string processNote =
        rank.process ? " (process " + rank.process->state + ")" : std::string();
    const bool processDown = rank.process && notRunning(rank.process->state);
    if (heartbeats_) {
      const bool lost =
          rank.lastHeartbeat < 0.0 || now - rank.lastHeartbeat > rule_.heartbeatLostSeconds;
      if (rank.heartbeat) {
        out->set_phase(rank.heartbeat->phase());
        out->set_waiting_in(rank.heartbeat->waiting_in());
      }
      if (lost || processDown) {
        out->set_stuck(true);
        out->set_detail(rankName(static_cast<int>(r)) +
                        (rank.lastHeartbeat < 0.0
                             ? " has not reported since the run started"
                             : " has not reported for " + seconds(now - rank.lastHeartbeat)) +
                        processNote);
      } else if (rank.heartbeat->waiting_in().empty()) {
        out->set_stuck(true);
        out->set_detail(rankName(static_cast<int>(r)) + " has been in the " +
                        protocol::rankPhaseName(rank.heartbeat->phase()) + " phase of step " +
                        std::to_string(rank.heartbeat->step() + 1) + " for " +
                        seconds(rank.heartbeat->phase_seconds()) + processNote);
      } else {
        out->set_detail(rankName(static_cast<int>(r)) + " waits in " +
                        rank.heartbeat->waiting_in() + " for " +
                        seconds(rank.heartbeat->waiting_seconds()));
        waitingBy[rank.heartbeat->waiting_in()].push_back(static_cast<int>(r));
      }
    } else {
      // A custom command: only the process and the steps it reported can tell.
      if (processDown) {
        out->set_stuck(true);
        out->set_detail(rankName(static_cast<int>(r)) + ": its process is " + rank.process->state);
      } else {
        std::string detail = rankName(static_cast<int>(r));
        detail +=
            rank.step >= 0 ? " reported step " + std::to_string(rank.step) : " reported no step";
        if (rank.lastHeard >= 0.0)
          detail += ", last heard " + seconds(now - rank.lastHeard) + " ago";
        detail += processNote;
        out->set_detail(detail);
      }
    }
    if (out->stuck()) {
      stuck.push_back(static_cast<int>(r));
      stuckDetails.push_back(out->detail());
    }
  }
  if (!heartbeats_ && stuck.empty() && ranks_.size() > 1) {
    // No process is down: the ranks behind the others' step are the ones they wait for.
    int64_t highest = -1;
    for (const Rank& rank : ranks_) highest = std::max(highest, rank.step);
    std::vector<int> behind;
    for (size_t r = 0; r < ranks_.size(); ++r) {
      if (ranks_[r].step >= 0 && ranks_[r].step < highest) behind.push_back(static_cast<int>(r));
    }
    if (!behind.empty() && behind.size() < ranks_.size()) {
      for (int r : behind) {
        v1::RankStallState* out = verdict.mutable_ranks(r);
        out->set_stuck(true);
        stuck.push_back(r);
        stuckDetails.push_back(rankName(r) + " is behind: it reported step " +
                               std::to_string(ranks_[r].step) + ", others step " +
                               std::to_string(highest));
      }
    }
  }
  for (int r : stuck) {
    verdict.add_stuck_ranks(r);
    const std::string& node = nodes_[r];
    if (!node.empty() && std::find(verdict.stuck_nodes().begin(), verdict.stuck_nodes().end(),
                                   node) == verdict.stuck_nodes().end()) {
      verdict.add_stuck_nodes(node);
    }
  }

  std::string summary;
  for (const std::string& detail : stuckDetails) {
    summary += (summary.empty() ? "" : "; ") + detail;
  }
  for (const auto& [what, ranks] : waitingBy) {
    summary += (summary.empty() ? "" : "; ") + rankList(ranks) +
               (ranks.size() == 1 ? " waits" : " wait") + " in " + what;
  }
  if (stuck.empty()) {
    if (heartbeats_ && !waitingBy.empty()) {
      summary +=
          ": every rank waits, so the collective itself hung (the network, or the MPI or "
          "NCCL transport)";
    } else if (!heartbeats_) {
      summary = "no rank could be singled out";
      for (const v1::RankStallState& rank : verdict.ranks()) summary += "; " + rank.detail();
    }
  }
  verdict.set_summary("no progress for " + seconds(now - lastProgress_) + " (threshold " +
                      seconds(threshold) + "): " + summary);
  return verdict;
}

bool StallDetector::differs(const std::optional<v1::StallVerdict>& before,
                            const std::optional<v1::StallVerdict>& after) {
  if (before.has_value() != after.has_value()) return true;
  if (!before) return false;
  if (before->stuck_ranks_size() != after->stuck_ranks_size()) return true;
  for (int i = 0; i < before->stuck_ranks_size(); ++i) {
    if (before->stuck_ranks(i) != after->stuck_ranks(i)) return true;
  }
  return false;
}

}  // namespace ringside::agent
