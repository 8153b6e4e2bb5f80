// The end of a run as the agent journals it (docs/journal.md): a run's final state
// (COMPLETED, FAILED, STOPPED) is the last thing journaled about its metrics. When its processes
// end, the agent holds the final state back until what the ranks sent before they exited has been
// journaled, the run's log is read to its end and, when the ranks may have lost samples, those
// are recovered from stdout.log; then it journals and publishes the final state, and from then on
// the journal refuses the run's samples. A client that reads a run up to its final state has
// every sample of it. Agent::Impl in agent_impl.h.
#include <chrono>
#include <string>
#include <vector>

#include "agent_impl.h"

namespace ringside::agent {

namespace {

// From a run's end to its final state: its ranks have exited, so what they sent is already on
// the agent's sockets or in its queues; two seconds of the main loop journal it.
constexpr auto kSettleDelay = std::chrono::seconds(2);
// The same for a trainer run whose ranks may have lost metrics, which are then recovered from
// stdout.log: its ranks wait up to 2 s for their queues to be sent and linger 1 s
// (zmq_metrics_sink.h) before mpirun ends.
constexpr auto kRecoveryDelay = std::chrono::seconds(5);
// The final state waits for the run's log to be read to its end, but not longer than this.
constexpr auto kMaxFinalStateDelay = std::chrono::seconds(60);

double steadySeconds() {
  return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
}

}  // namespace

bool Agent::Impl::holdFinalState(const v1::RunInfo& run, const RunProcessIds& ids) {
  auto it = pendingEnds.find(run.run_id());
  if (it != pendingEnds.end() && it->second.releasing) return false;  // finishEndedRuns' turn
  const bool recover = run.spec().has_trainer() && mayHaveLostMetrics(run.run_id());
  const auto now = Clock::now();
  PendingEnd& end = pendingEnds[run.run_id()];
  end.run = run;
  end.ids = ids;
  end.due = now + (recover ? kRecoveryDelay : kSettleDelay);
  end.giveUp = now + kMaxFinalStateDelay;
  return true;
}

void Agent::Impl::finishEndedRuns(bool all) {
  for (const SampleRefusals::Report& report : refusedSamples.due(steadySeconds())) {
    logLine("warning", report.text);
  }
  const auto now = Clock::now();
  std::vector<std::string> due;
  for (const auto& [runId, end] : pendingEnds) {
    // The log tailer lets go of an ended run once it has read its log to the end.
    const bool logRead = !tailers.contains(runId) || now >= end.giveUp;
    if (all || (now >= end.due && logRead)) due.push_back(runId);
  }
  for (const std::string& runId : due) {
    PendingEnd& end = pendingEnds.at(runId);
    if (end.run.spec().has_trainer() && mayHaveLostMetrics(runId)) recoverMetrics(runId);
    adoptedActive.erase(runId);
    end.releasing = true;
    onRunState(end.run, end.ids);  // journals and publishes the final state
    pendingEnds.erase(runId);
  }
}

void Agent::Impl::refuseSamples(const std::string& runId, uint64_t samples, const Status& why) {
  const std::string reason =
      why.code() == Status::Code::kNotFound ? "the journal holds no run " + runId : why.message();
  auto report =
      refusedSamples.add(runId, static_cast<int>(why.code()), samples, reason, steadySeconds());
  if (!report) return;
  logLine("warning", report->text);
  // A run that has not ended also hears of it in its own log (an ended run's log is closed, and
  // an unknown run has none).
  if (why.code() != Status::Code::kFailedPrecondition && why.code() != Status::Code::kNotFound &&
      !report->runId.empty()) {
    appendAgentNote(runId, "[ringside-agent: " + report->text + "]");
  }
}

void Agent::Impl::refuseForeignMessage(const std::string& runId) {
  // Kind: past every Status::Code, so that these are reported apart from the journal's refusals.
  constexpr int kForeignKeyKind = 1000;
  auto report = refusedSamples.add(
      runId, kForeignKeyKind, 1,
      "sent on a connection not made with that run's key: a rank writes to its own run only "
      "(its RINGSIDE_RUN_ID and the keys the agent gave it)",
      steadySeconds(), "message");
  if (report) logLine("warning", report->text);
}

}  // namespace ringside::agent
