#include "ringside/agent/hang_monitor.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string_view>

#include "ringside/agent/rank_processes.h"
#include "ringside/common/run_limits.h"
#include "ringside/common/run_spec.h"
#include "ringside/common/utf8.h"

namespace ringside::agent {

namespace {

// State letter and user + system CPU seconds of /proc/<pid>/stat (proc(5): fields 3, 14, 15,
// counted after the parenthesised command name, which may hold spaces).
std::optional<RankProcessView> readProcessStat(const std::string& procDir, pid_t pid) {
  std::ifstream in(procDir + "/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!in || !std::getline(in, text)) return std::nullopt;
  const size_t close = text.rfind(')');
  if (close == std::string::npos || close + 2 >= text.size()) return std::nullopt;
  std::istringstream fields(text.substr(close + 2));
  std::string state;
  fields >> state;  // field 3
  std::string skip;
  for (int field = 4; field < 14; ++field) fields >> skip;
  unsigned long long utime = 0, stime = 0;
  fields >> utime >> stime;  // fields 14 and 15, clock ticks
  if (!fields || state.empty()) return std::nullopt;
  static const double ticksPerSecond = static_cast<double>(sysconf(_SC_CLK_TCK));
  RankProcessView view;
  view.state = processStateName(state[0]);
  view.cpuSeconds = static_cast<double>(utime + stime) / ticksPerSecond;
  return view;
}

// "[rank 3] text" -> 3; -1 for a line without the tag (mpirun's own lines).
int rankOfLine(const std::string& text) {
  constexpr std::string_view kTag = "[rank ";
  if (text.compare(0, kTag.size(), kTag) != 0) return -1;
  return std::atoi(text.c_str() + kTag.size());
}

std::string secondsText(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%.0f s", s);
  return text;
}

}  // namespace

std::string hangReason(double quietSeconds, uint32_t hangTimeoutSeconds,
                       const std::optional<v1::StallVerdict>& verdict) {
  std::string reason = "hung: no progress for " + secondsText(quietSeconds) +
                       " (the run's hang timeout is " + secondsText(hangTimeoutSeconds) + ")";
  if (!verdict) return reason;
  // The summary says "no progress for ..." itself: the reason quotes what follows, and keeps
  // within the summary's own bound.
  std::string_view summary = verdict->summary();
  if (const size_t colon = summary.find("): "); colon != std::string_view::npos) {
    summary.remove_prefix(colon + 3);
  }
  reason += "; ";
  if (reason.size() + summary.size() <= kMaxStallSummaryBytes) return reason.append(summary);
  constexpr std::string_view kEllipsis = "\u2026";
  const size_t budget = kMaxStallSummaryBytes - reason.size() - kEllipsis.size();
  return reason.append(summary.substr(0, utf8PrefixLength(summary, budget))).append(kEllipsis);
}

std::vector<std::string> rankNodesOf(const v1::RunInfo& run, const std::string& ownerNode) {
  std::vector<std::string> nodes;
  for (const v1::HostSlots& host : run.placement()) {
    for (uint32_t i = 0; i < host.ranks(); ++i) nodes.push_back(host.host());
  }
  if (nodes.empty()) nodes.assign(std::max<uint32_t>(run.world_size(), 1), ownerNode);
  return nodes;
}

HangMonitor::HangMonitor(std::string procDir, StallRule rule)
    : procDir_(std::move(procDir)), rule_(rule) {}

void HangMonitor::onHeartbeat(const v1::RankHeartbeat& heartbeat, double now) {
  auto it = runs_.find(heartbeat.run_id());
  if (it != runs_.end()) it->second.detector.onHeartbeat(heartbeat, now);
}

void HangMonitor::onSamples(const std::string& runId, const std::vector<v1::MetricSample>& samples,
                            double now) {
  auto it = runs_.find(runId);
  if (it == runs_.end()) return;
  for (const v1::MetricSample& sample : samples) {
    it->second.detector.onMetricStep(sample.rank(), sample.step(), now);
  }
}

void HangMonitor::onLogLines(const std::string& runId, const std::vector<v1::LogLine>& lines,
                             double now) {
  auto it = runs_.find(runId);
  if (it == runs_.end()) return;
  for (const v1::LogLine& line : lines) it->second.detector.onOutput(rankOfLine(line.text()), now);
}

const v1::StallVerdict* HangMonitor::verdict(const std::string& runId) const {
  auto it = runs_.find(runId);
  if (it == runs_.end() || !it->second.verdict) return nullptr;
  return &*it->second.verdict;
}

void HangMonitor::sampleProcesses(const std::string& runId, Watched& run, double now) {
  std::vector<RankProcessView> views;
  std::vector<bool> seen(run.rankNodes.size(), false);
  for (const RankProcess& process : scanRankProcesses(procDir_)) {
    if (process.runId != runId || process.rank < 0 ||
        static_cast<size_t>(process.rank) >= seen.size()) {
      continue;
    }
    auto view = readProcessStat(procDir_, process.pid);
    if (!view) continue;
    view->rank = process.rank;
    seen[process.rank] = true;
    views.push_back(*view);
  }
  // A rank placed on this node that is no longer among its processes has gone.
  for (size_t r = 0; r < seen.size(); ++r) {
    if (!seen[r] && run.rankNodes[r] == run.ownerNode) {
      views.push_back(RankProcessView{static_cast<int>(r), "gone", 0.0});
    }
  }
  run.detector.onProcesses(views, now);
}

void HangMonitor::excludePause(double seconds) {
  if (!std::isfinite(seconds) || seconds <= 0.0) return;
  for (auto& [runId, watched] : runs_) {
    watched.detector.excludePause(seconds);
    if (watched.lastProcessSample >= 0.0) watched.lastProcessSample += seconds;
  }
}

std::vector<HangMonitor::Action> HangMonitor::poll(const std::vector<v1::RunInfo>& runs,
                                                   const std::string& ownerNode, double now) {
  std::vector<Action> actions;
  std::map<std::string, const v1::RunInfo*> running;
  for (const v1::RunInfo& run : runs) {
    if (run.state() == v1::RUNNING) running[run.run_id()] = &run;
  }
  for (auto it = runs_.begin(); it != runs_.end();) {
    it = running.contains(it->first) ? std::next(it) : runs_.erase(it);
  }
  for (const auto& [runId, run] : running) {
    auto it = runs_.find(runId);
    if (it == runs_.end()) {
      // The placement's first host is this node as the GUI named it: its ranks are "ours".
      std::vector<std::string> nodes = rankNodesOf(*run, ownerNode);
      const std::string owner = run->placement_size() > 0 ? run->placement(0).host() : ownerNode;
      StallRule rule = rule_;
      rule.phaseTimeoutSeconds = phaseTimeoutSeconds(run->spec());
      it = runs_
               .emplace(runId,
                        Watched{StallDetector(nodes, run->spec().has_trainer(), now, rule),
                                std::nullopt, hangTimeoutSeconds(run->spec()), nodes, owner, false})
               .first;
    }
    Watched& watched = it->second;
    if (watched.timedOut) continue;
    const double quiet = watched.detector.secondsWithoutProgress(now);
    const double threshold = watched.detector.thresholdSeconds();
    // /proc is read only for a run that looks stuck: from half its threshold on.
    if (watched.detector.armed() && quiet >= threshold / 2 &&
        (watched.lastProcessSample < 0 ||
         now - watched.lastProcessSample >= kProcessSamplePeriodSeconds)) {
      sampleProcesses(runId, watched, now);
      watched.lastProcessSample = now;
    }
    std::optional<v1::StallVerdict> verdict = watched.detector.evaluate(now);
    if (watched.hangTimeoutSeconds > 0 && watched.detector.armed() &&
        quiet >= std::max<double>(watched.hangTimeoutSeconds, threshold)) {
      watched.timedOut = true;
      Action action;
      action.runId = runId;
      action.kind = Action::Kind::kTimedOut;
      if (verdict) action.verdict = *verdict;
      action.reason = hangReason(quiet, watched.hangTimeoutSeconds, verdict);
      actions.push_back(std::move(action));
      continue;
    }
    if (StallDetector::differs(watched.verdict, verdict)) {
      Action action;
      action.runId = runId;
      if (verdict) {
        action.kind = Action::Kind::kStalled;
        action.verdict = *verdict;
      } else {
        action.kind = Action::Kind::kCleared;
        action.reason = "progress resumed after " +
                        secondsText(watched.verdict ? now - watched.verdict->since() : 0.0) +
                        " without progress";
      }
      watched.verdict = verdict;
      actions.push_back(std::move(action));
    }
  }
  return actions;
}

}  // namespace ringside::agent
