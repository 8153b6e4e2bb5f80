#include "ringside/gui/catch_up.h"

#include <algorithm>
#include <utility>

namespace ringside::gui {

CatchUp::CatchUp(bool autoTrackRuns, int maxConcurrentFetches)
    : autoTrackRuns_(autoTrackRuns), maxConcurrentFetches_(maxConcurrentFetches) {}

void CatchUp::trackRun(const std::string& runId, uint64_t lastSeq) {
  ignored_.erase(runId);
  auto [it, inserted] = runs_.try_emplace(runId);
  Run& run = it->second;
  run.followed = true;
  run.applied = std::max(run.applied, lastSeq);
  if (inserted) run.needsFetch = maybeDue_ = true;  // the list may have come before: look once
}

void CatchUp::untrackRun(const std::string& runId) { runs_.erase(runId); }

void CatchUp::ignoreRun(const std::string& runId) {
  runs_.erase(runId);
  listed_.erase(runId);
  ignored_.insert(runId);
}

void CatchUp::fetchesLost() {
  for (auto& entry : runs_) {
    Run& run = entry.second;
    if (run.fetching) run.needsFetch = maybeDue_ = true;
    run.fetching = false;
  }
}

void CatchUp::fetchLost(const std::string& runId) {
  auto it = runs_.find(runId);
  if (it == runs_.end()) return;
  it->second.fetching = false;
  it->second.needsFetch = maybeDue_ = true;
}

void CatchUp::listFailed() {
  for (auto& entry : runs_) {
    Run& run = entry.second;
    if (run.followed && !run.fetching) run.needsFetch = maybeDue_ = true;
  }
}

void CatchUp::onRunList(const v1::ListRunsReply& list) {
  for (const v1::RunInfo& info : list.runs()) {
    if (ignored_.count(info.run_id()) > 0) continue;
    auto it = runs_.find(info.run_id());
    if (it == runs_.end()) {
      if (!autoTrackRuns_ || info.last_seq() == 0) {
        listed_.insert(info.run_id());
        continue;
      }
      it = runs_.try_emplace(info.run_id()).first;
      it->second.followed = true;
    }
    Run& run = it->second;
    if (run.followed && !run.fetching && run.applied < info.last_seq())
      run.needsFetch = maybeDue_ = true;
  }
}

void CatchUp::startFetches(const SendFetch& send) {
  // Called every turn of the connection's loop: with nothing due, skip the walk over every run.
  if (!maybeDue_) return;
  int inFlight = 0;
  for (const auto& entry : runs_) inFlight += entry.second.fetching ? 1 : 0;
  bool due = false;
  for (auto& [runId, run] : runs_) {
    if (!run.needsFetch || run.fetching) continue;
    if (inFlight >= maxConcurrentFetches_) {
      due = true;
      break;
    }
    run.needsFetch = false;
    if (requestPage(runId, run, send)) ++inFlight;
    due = due || run.needsFetch;
  }
  maybeDue_ = due;
}

bool CatchUp::requestPage(const std::string& runId, Run& run, const SendFetch& send) {
  if (!send(runId, run.applied)) {
    run.fetching = false;
    run.needsFetch = maybeDue_ = true;
    return false;
  }
  run.fetching = true;
  return true;
}

CatchUp::FetchOutcome CatchUp::onFetchReply(const std::string& runId, const v1::Envelope& reply,
                                            const SendFetch& send) {
  FetchOutcome outcome;
  auto it = runs_.find(runId);
  if (it == runs_.end()) return outcome;  // untracked meanwhile
  Run& run = it->second;
  run.fetching = false;
  if (reply.has_error()) {
    if (reply.error().code() == v1::ErrorReply::NOT_FOUND) {
      runs_.erase(it);  // deleted by the agent's retention: nothing left to fetch
      outcome.kind = FetchOutcome::Kind::kForgotten;
      return outcome;
    }
    outcome.kind = FetchOutcome::Kind::kFailed;
    outcome.error = reply.error().message();
    return outcome;
  }
  if (!reply.has_fetch_run_data_reply()) return outcome;
  outcome.kind = FetchOutcome::Kind::kPage;
  outcome.page = reply.fetch_run_data_reply();
  v1::FetchRunDataReply& page = outcome.page;
  const uint64_t applied = run.applied;
  auto removeSeen = [applied](auto* entries, auto seqOf) {
    entries->erase(std::remove_if(entries->begin(), entries->end(),
                                  [&](const auto& entry) { return seqOf(entry) <= applied; }),
                   entries->end());
  };
  removeSeen(page.mutable_samples(), [](const v1::MetricSample& s) { return s.seq(); });
  removeSeen(page.mutable_log_lines(), [](const v1::LogLine& l) { return l.seq(); });
  removeSeen(page.mutable_states(), [](const v1::RunStateEvent& e) { return e.seq(); });
  run.applied = std::max(run.applied, page.last_seq());
  if (page.more()) {
    requestPage(runId, run, send);
    return outcome;
  }
  outcome.done = run.applied;
  // Live entries dropped while the page was in flight that it did not reach: fetch them next.
  if (run.seenWhileFetching > run.applied) run.needsFetch = maybeDue_ = true;
  run.seenWhileFetching = 0;
  return outcome;
}

void CatchUp::runListRequested() {
  for (const auto& [runId, count] : unknown_) unknownAtList_[runId] += count;
  unknown_.clear();
  wantsRunList_ = false;
}

std::map<std::string, uint64_t> CatchUp::runListComplete() {
  std::map<std::string, uint64_t> refused;
  for (auto& [runId, count] : unknownAtList_) {
    if (runId.empty() || (runs_.count(runId) == 0 && listed_.count(runId) == 0)) {
      refused.emplace(runId, count);
    }
  }
  unknownAtList_.clear();
  return refused;
}

bool CatchUp::acceptLive(const std::string& runId, uint64_t seq, bool introducesRun) {
  if (ignored_.count(runId) > 0) return false;
  if (!introducesRun && runs_.count(runId) == 0 && listed_.count(runId) == 0) {
    const bool named = unknown_.count(runId) > 0 || unknown_.size() < kMaxUnknownRunsNamed;
    ++unknown_[named ? runId : std::string()];
    wantsRunList_ = true;
    return false;
  }
  listed_.erase(runId);
  auto [it, inserted] = runs_.try_emplace(runId);
  Run& run = it->second;
  if (inserted) run.followed = autoTrackRuns_;
  if (run.fetching) {
    run.seenWhileFetching = std::max(run.seenWhileFetching, seq);
    return false;
  }
  if (seq <= run.applied) return false;
  if (seq == run.applied + 1 || !run.followed) {
    run.applied = seq;
    return true;
  }
  run.needsFetch = maybeDue_ = true;  // a gap: the journal has the missing entries, and this one
  return false;
}

std::optional<CatchUp::Run> CatchUp::run(const std::string& runId) const {
  auto it = runs_.find(runId);
  if (it == runs_.end()) return std::nullopt;
  return it->second;
}

}  // namespace ringside::gui
