// What the runs report to the agent and what it concludes from it: run state changes, the rank
// metrics and heartbeats on the ranks sockets, the runs' log files, the recovery of metrics the
// ranks could not send, and the hang checks. Each is journaled before it is published. Agent::Impl
// in agent_impl.h.
#include <zmq.h>

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iterator>
#include <string>
#include <tuple>
#include <utility>
#include <vector>
#include <zmq.hpp>

#include "agent_impl.h"
#include "ringside/agent/metrics_recovery.h"
#include "ringside/common/protocol.h"

namespace ringside::agent {

void Agent::Impl::onRunState(const v1::RunInfo& run, const RunProcessIds& ids) {
  // The final state comes after the run's last samples (agent_run_end.cpp).
  if (isEnded(run.state()) && holdFinalState(run, ids)) return;
  ProcessIds process;
  if (ids.shimPid > 0) {
    process.pid = ids.shimPid;
    process.pgid = ids.shimPid;
  }
  if (Status s = journal->upsertRun(run, process); !s.isOk()) {
    logLine("error", "journal: " + s.toString());
  }
  auto event = journal->appendStateEvent(run);
  if (!event.isOk()) {
    logLine("error", "journal: " + event.status().toString());
    return;
  }
  v1::Envelope envelope = protocol::newEnvelope(0);
  *envelope.mutable_run_state() = *event;
  publish(envelope);
  if (sweeps) sweeps->onRunState(run);
  if (isEnded(run.state())) {
    stragglers.erase(run.run_id());
    etas.forget(run.run_id());
    logLine("info", "run " + run.run_id() + " " + v1::RunState_Name(run.state()) +
                        (run.reason().empty() ? "" : ": " + run.reason()));
  } else if (!tailers.contains(run.run_id()) && !run.run_dir().empty()) {
    tailers.emplace(run.run_id(), LogTailer(run.run_dir(), stdoutRecordsOf(run.spec())));
  }
}

bool Agent::Impl::mayHaveLostMetrics(const std::string& runId) {
  if (adoptedActive.contains(runId)) return true;
  auto deliveries = journal->rankDeliveries(runId);
  if (!deliveries.isOk()) return false;
  for (const RankDelivery& rank : *deliveries) {
    if (rank.missingBatches > 0 || rank.droppedTotal > 0) return true;
  }
  return false;
}

void Agent::Impl::recoverMetrics(const std::string& runId) {
  adoptedActive.erase(runId);
  auto stored = journal->findRun(runId);
  if (!stored.isOk()) return;
  auto report = recoverMetricsFromStdout(*journal, runId, stored->info.run_dir() + "/stdout.log");
  if (!report.isOk()) {
    logLine("warning", "run " + runId + ": could not recover metrics from its stdout.log: " +
                           report.status().toString());
    return;
  }
  if (report->samplesMissing == 0) return;
  const std::string note =
      "[ringside-agent: recovered " + std::to_string(report->samplesMissing) + " of " +
      std::to_string(report->samplesInLog) +
      " metric samples from this run's stdout.log: its ranks could not send them to the agent "
      "(the agent was away or their queue was full)]";
  logLine("info", "run " + runId + ": " + note);
  publishSamples(runId, std::move(report->recovered));
  appendAgentNote(runId, note);
}

void Agent::Impl::appendAgentNote(const std::string& runId, const std::string& note) {
  v1::LogLine line;
  line.set_wall_time(wallSeconds());
  line.set_stream("stderr");
  line.set_text(note);
  if (auto lines = journal->appendLogLines(runId, {line}); lines.isOk()) {
    v1::Envelope envelope = protocol::newEnvelope(0);
    envelope.mutable_log_batch()->set_run_id(runId);
    for (const auto& journaled : *lines) *envelope.mutable_log_batch()->add_lines() = journaled;
    publish(envelope);
  }
}

void Agent::Impl::checkHangs() {
  // Time the agent itself did not run (SIGSTOP, a suspended machine, a frozen cgroup, a starved
  // loop) is not silence of the ranks: their heartbeats wait in its sockets meanwhile.
  timespec boot{};
  ::clock_gettime(CLOCK_BOOTTIME, &boot);
  const double bootNow = static_cast<double>(boot.tv_sec) + static_cast<double>(boot.tv_nsec) * 1e-9;
  if (lastHangCheckBoot >= 0.0 && bootNow - lastHangCheckBoot > kAgentPauseSeconds) {
    const double paused = bootNow - lastHangCheckBoot -
                         std::chrono::duration<double>(kHangCheckInterval).count();
    char text[160];
    std::snprintf(text, sizeof text,
                  "the agent did not run for %.1f s (stopped, suspended or starved): that time "
                  "counts toward no run's hang timeout",
                  paused);
    logLine("warning", text);
    hangs.excludePause(paused);
  }
  lastHangCheckBoot = bootNow;
  for (const HangMonitor::Action& action :
       hangs.poll(runs->runs(/*includeEnded=*/false), node.hostname(), wallSeconds())) {
    switch (action.kind) {
      case HangMonitor::Action::Kind::kStalled:
        logLine("warning", "run " + action.runId + " stalled: " + action.verdict.summary());
        runs->setStall(action.runId, &action.verdict);
        appendAgentNote(action.runId,
                        "[ringside-agent: the run stalled: " + action.verdict.summary() + "]");
        break;
      case HangMonitor::Action::Kind::kCleared:
        logLine("info", "run " + action.runId + ": " + action.reason);
        runs->setStall(action.runId, nullptr);
        appendAgentNote(action.runId, "[ringside-agent: " + action.reason + "]");
        break;
      case HangMonitor::Action::Kind::kTimedOut:
        logLine("warning", "run " + action.runId + " " + action.reason + ": stopping it");
        appendAgentNote(action.runId, "[ringside-agent: " + action.reason +
                                          "; the agent stops the run and fails it]");
        if (Status s = runs->failHung(action.runId, action.reason); !s.isOk()) {
          logLine("error", "run " + action.runId + ": " + s.toString());
        }
        break;
    }
  }
}

void Agent::Impl::publishSamples(const std::string& runId, std::vector<v1::MetricSample> samples) {
  if (samples.empty()) return;
  hangs.onSamples(runId, samples, wallSeconds());
  etas.onSamples(runId, samples, wallSeconds());
  if (sweeps) sweeps->onSamples(runId, samples);
  v1::Envelope envelope = protocol::newEnvelope(0);
  envelope.mutable_metric_batch()->set_run_id(runId);
  auto* out = envelope.mutable_metric_batch()->mutable_samples();
  out->Reserve(static_cast<int>(samples.size()));
  std::vector<v1::MetricSample> verdicts = judgeStragglers(runId, samples);
  for (auto& sample : samples) *out->Add() = std::move(sample);
  publish(envelope);
  if (verdicts.empty()) return;
  auto journaled = journal->appendMetricSamples(runId, verdicts);
  if (!journaled.isOk()) {
    logLine("error", "journal: " + journaled.status().toString());
    return;
  }
  publishSamples(runId, std::move(journaled).value());  // global samples: not judged again
}

std::vector<v1::MetricSample> Agent::Impl::judgeStragglers(
    const std::string& runId, const std::vector<v1::MetricSample>& samples) {
  std::vector<v1::MetricSample> verdicts;
  StragglerDetector* detector = nullptr;
  for (const v1::MetricSample& sample : samples) {
    if (sample.rank() < 0) continue;
    if (detector == nullptr) {
      auto it = stragglers.find(runId);
      if (it == stragglers.end()) {
        const v1::RunInfo* run = runs->find(runId);
        if (run == nullptr || isEnded(run->state()) || run->world_size() < 2) {
          return verdicts;
        }
        it =
            stragglers.emplace(runId, StragglerDetector(static_cast<int>(run->world_size()))).first;
      }
      detector = &it->second;
    }
    // A verdict comes at most once per slice of the detector's window (about twice a second):
    // each is journaled, so History holds the verdict over the whole run.
    if (auto verdict = detector->onSample(sample.rank(), sample.step(), sample.name(),
                                          sample.value(), sample.wall_time())) {
      auto more = StragglerDetector::toSamples(*verdict, sample.epoch(), verdict->wallTime);
      verdicts.insert(verdicts.end(), more.begin(), more.end());
    }
  }
  return verdicts;
}

void Agent::Impl::ingestRankMessages(const std::vector<zmq::message_t>& messages, bool remote) {
  std::vector<v1::RankMetrics> batches;
  batches.reserve(messages.size());
  for (const zmq::message_t& message : messages) {
    auto decoded = protocol::decodeEnvelope(message.data(), message.size());
    if (!decoded.isOk() || (!decoded->has_rank_metrics() && !decoded->has_rank_heartbeat() &&
                            !decoded->has_run_params())) {
      logLine("warning", "dropped a malformed message on the ranks socket");
      continue;
    }
    const std::string& runId = decoded->has_rank_heartbeat() ? decoded->rank_heartbeat().run_id()
                               : decoded->has_run_params()   ? decoded->run_params().run_id()
                                                             : decoded->rank_metrics().run_id();
    // Every rank socket but --insecure's plaintext ipc:// one is CURVE with per-run keys: a
    // message counts only for the run whose key its connection was made with.
    if (remote || !config.insecure) {
      const char* userId = zmq_msg_gets(const_cast<zmq_msg_t*>(message.handle()), "User-Id");
      const std::string runKey = runs->runPublicKey(runId);
      if (userId == nullptr || runKey.empty() || runKey != userId) {
        refuseForeignMessage(runId);
        continue;
      }
    }
    if (decoded->has_rank_heartbeat()) {
      hangs.onHeartbeat(decoded->rank_heartbeat(), wallSeconds());
      continue;
    }
    if (decoded->has_run_params()) {
      if (Status merged = runs->mergeParams(runId, decoded->run_params().params());
          !merged.isOk()) {
        logLine("warning", "run parameters for run " + runId + ": " + merged.toString());
      }
      continue;
    }
    batches.push_back(std::move(*decoded->mutable_rank_metrics()));
  }
  std::vector<std::pair<std::string, std::vector<v1::MetricSample>>> journaled;
  // What the journal refused (an ended run, a rank outside the world size, a bad step): reported
  // after the commit, at a bounded rate (agent_run_end.cpp).
  std::vector<std::tuple<std::string, uint64_t, Status>> refused;
  Status committed = journal->inTransaction([&] {
    for (const v1::RankMetrics& batch : batches) {
      auto appended = journal->appendRankMetrics(batch);
      const Status::Code code = appended.status().code();
      if (code == Status::Code::kFailedPrecondition || code == Status::Code::kInvalidArgument ||
          code == Status::Code::kNotFound) {
        refused.emplace_back(batch.run_id(), batch.points_size(), appended.status());
        continue;
      }
      if (!appended.isOk()) {
        logLine("warning",
                "rank metrics for run " + batch.run_id() + ": " + appended.status().toString());
        continue;
      }
      if (appended->refused.samples > 0) {
        refused.emplace_back(batch.run_id(), appended->refused.samples,
                             Status::invalidArgument(appended->refused.reason));
      }
      if (!appended->samples.empty()) {
        journaled.emplace_back(batch.run_id(), std::move(appended->samples));
      }
    }
  });
  if (!committed.isOk()) {
    logLine("error", "journal commit of rank metrics failed: " + committed.toString());
    return;
  }
  // A run's batches of the burst as one published batch (fewer events for the subscribers to
  // decode and store), in journal order, at most kMaxPublishedSamples each.
  std::vector<std::pair<std::string, std::vector<v1::MetricSample>>> merged;
  for (auto& entry : journaled) {
    // Not a structured binding: clang 14 cannot capture one in the lambda.
    std::string& runId = entry.first;
    std::vector<v1::MetricSample>& samples = entry.second;
    auto into = std::find_if(merged.rbegin(), merged.rend(),
                             [&runId](const auto& other) { return other.first == runId; });
    if (into == merged.rend() || into->second.size() + samples.size() > kMaxPublishedSamples) {
      merged.emplace_back(std::move(runId), std::move(samples));
      continue;
    }
    into->second.insert(into->second.end(), std::make_move_iterator(samples.begin()),
                        std::make_move_iterator(samples.end()));
  }
  for (auto& [runId, samples] : merged) publishSamples(runId, std::move(samples));
  for (const auto& [runId, samples, why] : refused) refuseSamples(runId, samples, why);
}

void Agent::Impl::tailLogs() {
  for (auto it = tailers.begin(); it != tailers.end();) {
    const std::string& runId = it->first;
    LogTailer::Chunk chunk = it->second.poll();
    if (!chunk.lines.empty()) {
      auto lines = journal->appendLogLines(runId, chunk.lines);
      if (lines.isOk()) {
        hangs.onLogLines(runId, *lines, wallSeconds());
        v1::Envelope envelope = protocol::newEnvelope(0);
        envelope.mutable_log_batch()->set_run_id(runId);
        for (const auto& line : *lines) *envelope.mutable_log_batch()->add_lines() = line;
        publish(envelope);
        it->second.commit();
      }
    }
    if (!chunk.samples.empty()) {
      SampleRefusal refusal;
      auto samples = journal->appendMetricSamples(runId, chunk.samples, &refusal);
      if (samples.isOk()) publishSamples(runId, *samples);
      if (refusal.samples > 0) {
        refuseSamples(runId, refusal.samples, Status::invalidArgument(refusal.reason));
      }
    }
    if (!chunk.params.empty()) {
      google::protobuf::Map<std::string, std::string> params(chunk.params.begin(),
                                                             chunk.params.end());
      if (Status merged = runs->mergeParams(runId, params); !merged.isOk()) {
        logLine("warning", "config record of run " + runId + ": " + merged.toString());
      }
    }
    const v1::RunInfo* run = runs->find(runId);
    if (run == nullptr || isEnded(run->state())) {
      if (chunk.lines.empty() && !chunk.more) {
        it = tailers.erase(it);  // ended and fully read
        continue;
      }
    }
    ++it;
  }
}

}  // namespace ringside::agent
