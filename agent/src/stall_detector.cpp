#include "ringside/agent/stall_detector.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <string_view>
#include <utility>

#include "ringside/common/protocol.h"
#include "ringside/common/run_limits.h"
#include "ringside/common/utf8.h"

namespace ringside::agent {

namespace {

// Groups of stuck ranks up to this size are told rank by rank; larger ones as a range with one
// example sentence.
constexpr size_t kDetailsPerGroup = 3;
// Groups of waiting ranks named one by one (the largest first); the rest are counted.
constexpr size_t kMaxWaitGroups = 4;
// Items (single ranks or ranges) a list of ranks names before it only counts the rest.
constexpr size_t kMaxRankItems = 8;
// Above this many ranks, a group also says how many nodes they are on.
constexpr size_t kNodesAbove = 4;

std::string seconds(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%.0f s", std::max(0.0, s));
  return text;
}

// `text` cut to at most `maxBytes` bytes at a character boundary, ending in "…" when cut.
std::string clipped(std::string_view text, size_t maxBytes) {
  if (text.size() <= maxBytes) return std::string(text);
  constexpr std::string_view kEllipsis = "\u2026";
  const size_t keep = utf8PrefixLength(text, maxBytes - kEllipsis.size());
  return std::string(text.substr(0, keep)).append(kEllipsis);
}

// Ascending distinct ranks in words: "rank 1", "ranks 0 and 2", "ranks 0-3, 5 and 7-9" (runs of
// three or more as ranges); past kMaxRankItems items, "ranks 0, 2, ... (4,096 ranks)".
std::string rankList(const std::vector<int>& ranks) {
  std::vector<std::string> items;
  for (size_t i = 0; i < ranks.size() && items.size() <= kMaxRankItems;) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (j - i >= 2) {
      items.push_back(std::to_string(ranks[i]) + "-" + std::to_string(ranks[j]));
    } else {
      for (size_t k = i; k <= j; ++k) items.push_back(std::to_string(ranks[k]));
    }
    i = j + 1;
  }
  std::string text = ranks.size() == 1 ? "rank " : "ranks ";
  if (items.size() > kMaxRankItems) {
    for (size_t k = 0; k < kMaxRankItems; ++k) text += items[k] + ", ";
    return text + "... (" + std::to_string(ranks.size()) + " ranks)";
  }
  for (size_t k = 0; k < items.size(); ++k) {
    if (k > 0) text += k + 1 == items.size() ? " and " : ", ";
    text += items[k];
  }
  return text;
}

bool notRunning(const std::string& state) {
  return state == "stopped" || state == "zombie" || state == "gone" || state == "disk wait";
}

bool isSetUpPhase(v1::RankPhase phase) { return phase == v1::SETUP || phase == v1::CHECKPOINT; }

// What a rank that is busy in `phase` is doing, for a sentence: "in set-up", "writing a
// checkpoint", "in the data phase".
std::string busyIn(v1::RankPhase phase) {
  if (phase == v1::SETUP) return "in set-up";
  if (phase == v1::CHECKPOINT) return "writing a checkpoint";
  return std::string("in the ") + protocol::rankPhaseName(phase) + " phase";
}

// Stuck ranks that share a reason: `phrase` completes "ranks 0-7 ..." ("have not reported").
struct StuckGroup {
  std::string phrase;
  std::vector<int> ranks;
  std::vector<std::string> details;  // the first kDetailsPerGroup ranks' sentences
};

void addStuck(std::vector<StuckGroup>& groups, const std::string& phrase, int rank,
              std::string detail) {
  auto it = std::find_if(groups.begin(), groups.end(),
                         [&](const StuckGroup& group) { return group.phrase == phrase; });
  if (it == groups.end()) it = groups.insert(groups.end(), StuckGroup{phrase, {}, {}});
  it->ranks.push_back(rank);
  if (it->details.size() < kDetailsPerGroup) it->details.push_back(std::move(detail));
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

void StallDetector::excludePause(double seconds) {
  if (!std::isfinite(seconds) || seconds <= 0.0) return;
  lastProgress_ += seconds;
  for (Rank& rank : ranks_) {
    if (rank.lastHeard >= 0.0) rank.lastHeard += seconds;
    if (rank.lastHeartbeat >= 0.0) rank.lastHeartbeat += seconds;
  }
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
  // A Python script's ranks send heartbeats once ringside.torch.watch() runs: from then on the
  // run is judged by them, as a trainer run is.
  heartbeats_ = true;
  rank.lastHeard = now;
  rank.lastHeartbeat = now;
  if (!nodes_[beat.rank()].empty() || beat.host().empty()) {
    // The placement's name is kept: it is the one the user gave.
  } else {
    nodes_[beat.rank()] = clipped(beat.host(), kMaxHeartbeatHostBytes);
  }
  const bool stepped = beat.step() > rank.step;
  if (stepped && beat.last_step_ms() > 0.0) {
    stepMs_.push_back(beat.last_step_ms());
    if (stepMs_.size() > rule_.window) stepMs_.pop_front();
  }
  const bool worked = beat.work_done() > rank.workDone;
  rank.workDone = std::max(rank.workDone, beat.work_done());
  // Set-up and checkpoint writes have no step time to judge them by: a live heartbeat in them is
  // progress, up to the phase timeout (a hung file system under a checkpoint write, with the
  // heartbeat thread alive, must not hide the hang).
  const bool setUp = isSetUpPhase(beat.phase()) && beat.waiting_in().empty() &&
                     !pastPhaseTimeout(beat.phase_seconds());
  rank.heartbeat = beat;
  if (rank.heartbeat->waiting_in().size() > kMaxHeartbeatWaitingInBytes) {
    rank.heartbeat->set_waiting_in(clipped(beat.waiting_in(), kMaxHeartbeatWaitingInBytes));
  }
  rank.heartbeat->clear_host();  // nodes_ holds the name the verdict uses
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

bool StallDetector::pastPhaseTimeout(double phaseSeconds) const {
  // NaN (a broken heartbeat) is past any bound.
  return rule_.phaseTimeoutSeconds > 0.0 && !(phaseSeconds < rule_.phaseTimeoutSeconds);
}

std::string StallDetector::rankGroup(const std::vector<int>& ranks) const {
  std::string text = rankList(ranks);
  if (ranks.size() <= kNodesAbove) return text;
  std::set<std::string_view> nodes;
  for (int r : ranks) {
    if (!nodes_[r].empty()) nodes.insert(nodes_[r]);
  }
  if (nodes.size() == 1) return text + " on " + std::string(*nodes.begin());
  if (nodes.size() > 1) text += " on " + std::to_string(nodes.size()) + " nodes";
  return text;
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
  std::vector<v1::RankStallState> states(ranks_.size());
  std::vector<StuckGroup> stuckGroups;
  std::map<std::string, std::vector<int>> waitingBy;  // what they wait in -> ranks
  std::vector<int> stuck;
  for (size_t r = 0; r < ranks_.size(); ++r) {
    const Rank& rank = ranks_[r];
    const int index = static_cast<int>(r);
    v1::RankStallState* out = &states[r];
    out->set_rank(index);
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
    std::string phrase;  // the group of a stuck rank
    if (heartbeats_) {
      const bool lost =
          rank.lastHeartbeat < 0.0 || now - rank.lastHeartbeat > rule_.heartbeatLostSeconds;
      if (rank.heartbeat) {
        out->set_phase(rank.heartbeat->phase());
        out->set_waiting_in(rank.heartbeat->waiting_in());
      }
      if (lost || processDown) {
        phrase = rank.lastHeartbeat < 0.0 ? "have not reported since the run started"
                                          : "have stopped reporting";
        out->set_detail(rankName(index) +
                        (rank.lastHeartbeat < 0.0
                             ? " has not reported since the run started"
                             : " has not reported for " + seconds(now - rank.lastHeartbeat)) +
                        processNote);
      } else if (rank.heartbeat->waiting_in().empty()) {
        const v1::RankPhase phase = rank.heartbeat->phase();
        phrase = "are " + busyIn(phase);
        std::string detail = rankName(index) + " has been ";
        if (isSetUpPhase(phase)) {
          detail += busyIn(phase) + " for " + seconds(rank.heartbeat->phase_seconds());
          if (pastPhaseTimeout(rank.heartbeat->phase_seconds())) {
            detail += " (the run's phase timeout is " + seconds(rule_.phaseTimeoutSeconds) + ")";
          }
        } else {
          detail += busyIn(phase) + " of step " + std::to_string(rank.heartbeat->step() + 1) +
                    " for " + seconds(rank.heartbeat->phase_seconds());
        }
        out->set_detail(detail + processNote);
      } else {
        out->set_detail(rankName(index) + " waits in " + rank.heartbeat->waiting_in() + " for " +
                        seconds(rank.heartbeat->waiting_seconds()));
        waitingBy[rank.heartbeat->waiting_in()].push_back(index);
      }
    } else {
      // A custom command: only the process and the steps it reported can tell.
      if (processDown) {
        phrase = "have their process " + rank.process->state;
        out->set_detail(rankName(index) + ": its process is " + rank.process->state);
      } else {
        std::string detail = rankName(index);
        detail +=
            rank.step >= 0 ? " reported step " + std::to_string(rank.step) : " reported no step";
        if (rank.lastHeard >= 0.0)
          detail += ", last heard " + seconds(now - rank.lastHeard) + " ago";
        detail += processNote;
        out->set_detail(detail);
      }
    }
    if (!phrase.empty()) {
      out->set_stuck(true);
      stuck.push_back(index);
      addStuck(stuckGroups, phrase, index, out->detail());
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
        states[r].set_stuck(true);
        stuck.push_back(r);
        addStuck(stuckGroups, "are behind the others' step " + std::to_string(highest), r,
                 rankName(r) + " is behind: it reported step " + std::to_string(ranks_[r].step) +
                     ", others step " + std::to_string(highest));
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
  // Every rank's state up to kMaxStallVerdictRanks: the stuck ones first, then from rank 0 up.
  std::vector<bool> listed(states.size(), !(states.size() > kMaxStallVerdictRanks));
  if (states.size() > kMaxStallVerdictRanks) {
    size_t budget = kMaxStallVerdictRanks;
    for (size_t i = 0; i < stuck.size() && budget > 0; ++i, --budget) listed[stuck[i]] = true;
    for (size_t r = 0; r < states.size() && budget > 0; ++r) {
      if (!listed[r]) {
        listed[r] = true;
        --budget;
      }
    }
  }
  for (size_t r = 0; r < states.size(); ++r) {
    if (listed[r]) *verdict.add_ranks() = std::move(states[r]);
  }

  // The summary: a sentence per stuck rank for small groups, a range and an example for large
  // ones, then what the others wait in, largest group first; bounded by kMaxStallSummaryBytes.
  std::vector<std::string> parts;
  for (const StuckGroup& group : stuckGroups) {
    if (group.ranks.size() <= kDetailsPerGroup) {
      parts.insert(parts.end(), group.details.begin(), group.details.end());
    } else {
      parts.push_back(rankGroup(group.ranks) + " " + group.phrase + "; for example, " +
                      group.details.front());
    }
  }
  std::vector<std::pair<std::string, std::vector<int>>> waiting(waitingBy.begin(), waitingBy.end());
  std::stable_sort(waiting.begin(), waiting.end(),
                   [](const auto& a, const auto& b) { return a.second.size() > b.second.size(); });
  size_t otherWaiting = 0;
  for (size_t i = 0; i < waiting.size(); ++i) {
    const auto& [what, ranks] = waiting[i];
    if (i < kMaxWaitGroups) {
      parts.push_back(rankGroup(ranks) + (ranks.size() == 1 ? " waits" : " wait") + " in " + what);
    } else {
      otherWaiting += ranks.size();
    }
  }
  if (otherWaiting > 0) {
    parts.push_back(std::to_string(otherWaiting) + " more " +
                    (otherWaiting == 1 ? "rank waits" : "ranks wait") + " in " +
                    std::to_string(waiting.size() - kMaxWaitGroups) + " other collectives");
  }
  std::string summary;
  for (const std::string& part : parts) summary += (summary.empty() ? "" : "; ") + part;
  if (stuck.empty()) {
    if (heartbeats_ && !waitingBy.empty()) {
      summary +=
          ": every rank waits, so the collective itself hung (the network, or the MPI or "
          "NCCL transport)";
    } else if (!heartbeats_) {
      summary = "no rank could be singled out";
      const size_t named = std::min(verdict.ranks_size(), static_cast<int>(kNodesAbove));
      for (size_t i = 0; i < named; ++i) summary += "; " + verdict.ranks(i).detail();
      if (ranks_.size() > named) {
        summary += "; and " + std::to_string(ranks_.size() - named) + " more ranks";
      }
    }
  }
  verdict.set_summary(clipped("no progress for " + seconds(now - lastProgress_) + " (threshold " +
                                  seconds(threshold) + "): " + summary,
                              kMaxStallSummaryBytes));
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
