#include "ringside/agent/agent.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>
#include <zmq.hpp>
#include <zmq_addon.hpp>

#include "ringside/agent/hang_monitor.h"
#include "ringside/agent/inventory.h"
#include "ringside/agent/journal.h"
#include "ringside/agent/log_tailer.h"
#include "ringside/agent/metrics_recovery.h"
#include "ringside/agent/nvml_probe.h"
#include "ringside/agent/reply_pages.h"
#include "ringside/agent/run_manager.h"
#include "ringside/agent/telemetry.h"
#include "ringside/common/agent_ready.h"
#include "ringside/common/curve.h"
#include "ringside/common/private_dir.h"
#include "ringside/common/protocol.h"
#include "ringside/common/zap_handler.h"

namespace ringside::agent {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

constexpr std::chrono::milliseconds kPollInterval{100};
// From a trainer run's end to the recovery of its metrics from stdout.log: its ranks wait up to
// 2 s for their queues to be sent and linger 1 s (zmq_metrics_sink.h) before mpirun ends.
constexpr auto kRecoveryDelay = std::chrono::seconds(5);
constexpr size_t kMaxRankBurst = 256;  // rank batches journaled per commit
constexpr auto kRetentionInterval = std::chrono::hours(1);
// How often the allowlist file is checked for changes (`ringside-agent authorize` / `revoke`).
constexpr std::chrono::milliseconds kAllowlistReloadInterval{1000};
// How often running runs are judged for a stall (hang_monitor.h): heartbeats come once a second.
constexpr std::chrono::milliseconds kHangCheckInterval{1000};
// How long a re-bind after a revocation retries while libzmq releases the old listener.
constexpr std::chrono::seconds kRebindTimeout{5};

double wallSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Messages below this level are not written (0 error, 1 warning, 2 info, 3 debug).
std::atomic<int> gLogThreshold{2};

int levelOf(const char* level) {
  const std::string name(level);
  return name == "error" ? 0 : name == "warning" ? 1 : name == "info" ? 2 : 3;
}

void logLine(const char* level, const std::string& text) {
  if (levelOf(level) > gLogThreshold.load(std::memory_order_relaxed)) return;
  std::fprintf(stderr, "ringside-agent %s: %s\n", level, text.c_str());
}

// Where other nodes reach this agent: --advertise-address, else the listen address unless it is
// a wildcard, else the host name.
std::string advertiseAddress(const AgentConfig& config) {
  if (!config.advertiseAddress.empty()) return config.advertiseAddress;
  const std::string& listen = config.listenAddress;
  if (listen != "0.0.0.0" && listen != "*" && listen != "::" && listen != "[::]") return listen;
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

}  // namespace

Status setLogLevel(const std::string& level) {
  if (level != "error" && level != "warning" && level != "info" && level != "debug") {
    return Status::invalidArgument("unknown log level '" + level +
                                   "': use error, warning, info or debug");
  }
  gLogThreshold.store(levelOf(level.c_str()));
  return Status::ok();
}

std::string defaultStateDir() {
  if (::geteuid() == 0) return "/var/lib/ringside-agent";
  const char* state = std::getenv("XDG_STATE_HOME");
  if (state != nullptr && *state != '\0') return std::string(state) + "/ringside-agent";
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr ? home : ".") + "/.local/state/ringside-agent";
}

struct Agent::Impl {
  AgentConfig config;
  zmq::context_t context;
  curve::KeyPair keys;
  curve::Allowlist allowlist;
  std::unique_ptr<curve::ZapHandler> zap;
  zmq::socket_t control{context, zmq::socket_type::router};
  zmq::socket_t events{context, zmq::socket_type::pub};
  zmq::socket_t ranks{context, zmq::socket_type::pull};
  // Ranks of multi-node runs on other nodes: CURVE, per-run keys (runKeys), kRankZapDomain.
  zmq::socket_t remoteRanks{context, zmq::socket_type::pull};
  curve::Allowlist runKeys;
  std::string controlEndpoint, eventsEndpoint, rankEndpoint, rankTcpEndpoint;
  std::unique_ptr<Journal> journal;
  std::unique_ptr<RunManager> runs;
  std::unique_ptr<NvmlProbe> nvml;
  GpuProbe* gpuProbe = nullptr;
  std::unique_ptr<TelemetrySampler> telemetry;
  v1::NodeInfo node;
  bool draining = false;
  std::map<std::string, LogTailer> tailers;  // per active run
  // Trainer runs this agent adopted while they were active: an earlier agent was away for part
  // of them, so their ranks may have ended with metrics they could not send.
  std::set<std::string> adoptedActive;
  // Ended trainer runs whose metrics are to be recovered from stdout.log (metrics_recovery.h),
  // and when: a few seconds after the end, when every batch the ranks sent has been journaled.
  std::map<std::string, Clock::time_point> recoveries;
  std::string allowlistError;  // the last reload error reported (reported once per change)
  HangMonitor hangs;           // stalls and hang timeouts of the runs this agent owns

  explicit Impl(AgentConfig c) : config(std::move(c)) {}

  // Creates, configures and binds the control (ROUTER) and events (PUB) sockets on `control` and
  // `events` (tcp endpoints; port 0 or "*" picks a free one), replacing any earlier ones, and
  // records the bound endpoints. Retries a busy port for up to `retryFor` (a re-bind right after
  // the old sockets closed). Errors: Internal naming the address.
  Status bindServerSockets(const std::string& control, const std::string& events,
                           std::chrono::milliseconds retryFor) {
    const auto deadline = Clock::now() + retryFor;
    for (;;) {
      try {
        this->control = zmq::socket_t(context, zmq::socket_type::router);
        this->events = zmq::socket_t(context, zmq::socket_type::pub);
        for (zmq::socket_t* socket : {&this->control, &this->events}) {
          socket->set(zmq::sockopt::linger, 0);
          socket->set(zmq::sockopt::maxmsgsize, protocol::kTransportMaxMessageBytes);
          RINGSIDE_RETURN_IF_ERROR(config.insecure ? curve::configureInsecureServer(*socket)
                                                   : curve::configureServer(*socket, keys));
        }
        this->events.set(zmq::sockopt::sndhwm, 100000);
        this->control.bind(control);
        controlEndpoint = this->control.get(zmq::sockopt::last_endpoint);
        this->events.bind(events);
        eventsEndpoint = this->events.get(zmq::sockopt::last_endpoint);
        return Status::ok();
      } catch (const zmq::error_t& error) {
        if (error.num() != EADDRINUSE || Clock::now() >= deadline) {
          return Status::internal(std::string("cannot bind the agent's sockets on ") +
                                  config.listenAddress + ": " + error.what() +
                                  " (is another agent running?)");
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    }
  }

  // Picks up `ringside-agent authorize` / `revoke` (or an edit) of the allowlist file. A key that
  // was removed loses access at once, also on connections it already has: CURVE authenticates a
  // connection only at its handshake, so the control and events sockets are closed and bound
  // again on the same ports; every client reconnects and is authenticated afresh (a GUI then
  // catches up on what it missed by sequence number). A file that cannot be read leaves the
  // previous keys in force and is reported once, until it changes.
  void reloadAllowlist() {
    const std::vector<std::string> before = allowlist.keys();
    const Status status = allowlist.reloadIfChanged();
    if (!status.isOk()) {
      if (status.message() != allowlistError) {
        logLine("error", "the allowlist was not reloaded, the previous " +
                             std::to_string(before.size()) +
                             " key(s) stay in force: " + status.message());
        allowlistError = status.message();
      }
      return;
    }
    allowlistError.clear();
    const std::vector<std::string> after = allowlist.keys();
    if (after == before) return;
    std::vector<std::string> revoked;
    std::set_difference(before.begin(), before.end(), after.begin(), after.end(),
                        std::back_inserter(revoked));
    logLine("info", "allowlist reloaded: " + std::to_string(after.size()) + " key(s)");
    if (revoked.empty()) return;
    std::string names;
    for (const std::string& key : revoked) names += (names.empty() ? "" : ", ") + key;
    logLine("info", "revoked " + names +
                        ": closing every client connection (authorized clients "
                        "reconnect)");
    const Status bound =
        bindServerSockets(controlEndpoint, eventsEndpoint,
                          std::chrono::duration_cast<std::chrono::milliseconds>(kRebindTimeout));
    if (!bound.isOk()) logLine("error", bound.message());
  }

  // Deletes runs that ended more than --retention-days ago (at start and every hour).
  void applyRetention() {
    if (config.retentionDays <= 0) return;
    RetentionPolicy policy;
    policy.maxAgeDays = config.retentionDays;
    auto report = journal->applyRetention(policy, wallSeconds());
    if (!report.isOk()) {
      logLine("warning", "retention: " + report.status().toString());
    } else if (report->runsDeleted > 0) {
      logLine("info", "retention deleted " + std::to_string(report->runsDeleted) +
                          " ended run(s) older than " + std::to_string(config.retentionDays) +
                          " days");
    }
  }

  void publish(const v1::Envelope& event) {
    const std::string bytes = protocol::encodeEnvelope(event);
    events.send(zmq::buffer(bytes), zmq::send_flags::dontwait);
  }

  v1::NodeInfo nodeInfo() {
    v1::NodeInfo info = node;
    info.set_slots_used(runs->usedSlots());
    info.set_draining(draining);
    return info;
  }

  // For a launch or a pre-flight: from the processes as they are now.
  uint32_t freeSlots() const {
    return node.slots_total() - std::min(node.slots_total(), runs->usedSlots(/*fresh=*/true));
  }

  // Journals a state change, then publishes it (DESIGN.md decision 2: journal before publish).
  void onRunState(const v1::RunInfo& run, const RunProcessIds& ids) {
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
    if (isEnded(run.state())) {
      logLine("info", "run " + run.run_id() + " " + v1::RunState_Name(run.state()) +
                          (run.reason().empty() ? "" : ": " + run.reason()));
      if (run.spec().has_trainer() && mayHaveLostMetrics(run.run_id())) {
        recoveries[run.run_id()] = Clock::now() + kRecoveryDelay;
      }
    } else if (!tailers.contains(run.run_id()) && !run.run_dir().empty()) {
      tailers.emplace(run.run_id(), LogTailer(run.run_dir(), run.spec().has_command()));
    }
  }

  // True when the ranks of a run may have ended with metrics the journal lacks: the agent was
  // away during the run (adopted), or a rank's batches went missing or it dropped points.
  bool mayHaveLostMetrics(const std::string& runId) {
    if (adoptedActive.contains(runId)) return true;
    auto deliveries = journal->rankDeliveries(runId);
    if (!deliveries.isOk()) return false;
    for (const RankDelivery& rank : *deliveries) {
      if (rank.missingBatches > 0 || rank.droppedTotal > 0) return true;
    }
    return false;
  }

  // Journals and publishes what the run's stdout.log holds and the journal lacks, with a note
  // in the run's log saying how many samples came back.
  void recoverMetrics(const std::string& runId) {
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

  // Journals and publishes a line of the agent's own in a run's log (stream "stderr").
  void appendAgentNote(const std::string& runId, const std::string& note) {
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

  // Judges the running runs (hang_monitor.h) and applies the verdicts: a stall or its end is a
  // state event (RunInfo.stall) and a note in the run's log; a hang timeout fails the run.
  void checkHangs() {
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

  void runDueRecoveries() {
    const auto now = Clock::now();
    for (auto it = recoveries.begin(); it != recoveries.end();) {
      if (it->second > now) {
        ++it;
        continue;
      }
      const std::string runId = it->first;
      it = recoveries.erase(it);
      recoverMetrics(runId);
    }
  }

  void publishSamples(const std::string& runId, std::vector<v1::MetricSample> samples) {
    if (samples.empty()) return;
    hangs.onSamples(runId, samples, wallSeconds());
    v1::Envelope envelope = protocol::newEnvelope(0);
    envelope.mutable_metric_batch()->set_run_id(runId);
    auto* out = envelope.mutable_metric_batch()->mutable_samples();
    out->Reserve(static_cast<int>(samples.size()));
    for (auto& sample : samples) *out->Add() = std::move(sample);
    publish(envelope);
  }

  // Journals the rank batches of one receive burst in a single transaction (group commit: many
  // small batches cost one commit), then publishes what was journaled (decision 2: journal before
  // publish). A batch that fails alone (unknown run) is skipped; a failed commit publishes nothing.
  // From the tcp:// rank endpoint (`remote`), a batch is journaled only when the connection's
  // CURVE key is the key of the batch's run: a rank of one run cannot write into another.
  void ingestRankMessages(const std::vector<zmq::message_t>& messages, bool remote) {
    std::vector<v1::RankMetrics> batches;
    batches.reserve(messages.size());
    for (const zmq::message_t& message : messages) {
      auto decoded = protocol::decodeEnvelope(message.data(), message.size());
      if (!decoded.isOk() || (!decoded->has_rank_metrics() && !decoded->has_rank_heartbeat())) {
        logLine("warning", "dropped a malformed message on the ranks socket");
        continue;
      }
      const std::string& runId = decoded->has_rank_heartbeat() ? decoded->rank_heartbeat().run_id()
                                                               : decoded->rank_metrics().run_id();
      if (remote) {
        const char* userId = zmq_msg_gets(const_cast<zmq_msg_t*>(message.handle()), "User-Id");
        const std::string runKey = runs->runPublicKey(runId);
        if (userId == nullptr || runKey.empty() || runKey != userId) {
          logLine("warning",
                  "dropped rank metrics for run " + runId + " sent with another run's key");
          continue;
        }
      }
      if (decoded->has_rank_heartbeat()) {
        hangs.onHeartbeat(decoded->rank_heartbeat(), wallSeconds());
        continue;
      }
      batches.push_back(std::move(*decoded->mutable_rank_metrics()));
    }
    std::vector<std::pair<std::string, std::vector<v1::MetricSample>>> journaled;
    Status committed = journal->inTransaction([&] {
      for (const v1::RankMetrics& batch : batches) {
        auto appended = journal->appendRankMetrics(batch);
        if (!appended.isOk()) {
          logLine("warning",
                  "rank metrics for run " + batch.run_id() + ": " + appended.status().toString());
          continue;
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
    for (auto& [runId, samples] : journaled) publishSamples(runId, std::move(samples));
  }

  void tailLogs() {
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
        auto samples = journal->appendMetricSamples(runId, chunk.samples);
        if (samples.isOk()) publishSamples(runId, *samples);
      }
      const v1::RunInfo* run = runs->find(runId);
      if (run == nullptr || isEnded(run->state())) {
        if (chunk.lines.empty()) {
          it = tailers.erase(it);  // ended and fully read
          continue;
        }
      }
      ++it;
    }
  }

  v1::Envelope handle(const v1::Envelope& request) {
    const uint64_t id = request.request_id();
    v1::Envelope reply = protocol::newEnvelope(id);
    auto fail = [&](const Status& status) {
      return protocol::makeErrorReply(id, protocol::errorCodeFor(status.code()), status.message());
    };
    switch (request.body_case()) {
      case v1::Envelope::kHello:
        *reply.mutable_hello_reply()->mutable_node() = nodeInfo();
        reply.mutable_hello_reply()->set_protocol_version(protocol::kProtocolVersion);
        return reply;
      case v1::Envelope::kListRuns: {
        auto stored = journal->loadRuns(!request.list_runs().include_ended());
        if (!stored.isOk()) return fail(stored.status());
        auto page =
            listRunsPage(*stored, request.list_runs().page_token(), protocol::kMaxReplyPageBytes);
        if (!page.isOk()) return fail(page.status());
        *reply.mutable_list_runs_reply() = std::move(page).value();  // set even with no runs
        return reply;
      }
      case v1::Envelope::kLaunchRun: {
        if (draining) {
          return fail(Status::failedPrecondition(
              "node " + node.hostname() + " is draining: undrain it or choose another node"));
        }
        auto run = runs->launch(request.launch_run().spec(), freeSlots());
        if (!run.isOk()) return fail(run.status());
        auto stored = journal->findRun(run->run_id());
        *reply.mutable_launch_run_reply()->mutable_run() = stored.isOk() ? stored->info : *run;
        return reply;
      }
      case v1::Envelope::kPreflight: {
        auto* out = reply.mutable_preflight_reply();
        out->set_hostname(node.hostname());
        out->set_agent_version(kAgentVersion);
        out->set_slot_kind(node.slot_kind());
        if (draining) {
          out->add_problems("node " + node.hostname() +
                            " is draining: undrain it or choose another node");
        }
        const uint32_t free = freeSlots();
        for (const std::string& problem :
             runs->preflight(request.preflight().spec(), request.preflight().ranks(), free)) {
          out->add_problems(problem);
        }
        out->set_free_slots(free);
        for (uint32_t gpu : runs->freeGpus()) out->add_free_gpus(gpu);
        const double reserve = request.preflight().reserve_seconds();
        if (out->problems().empty() && std::isfinite(reserve) && reserve > 0) {
          const Reservation held = runs->reserve(request.preflight().ranks(), reserve);
          out->set_reservation_id(held.id);
          for (uint32_t gpu : held.gpus) out->add_reserved_gpus(gpu);
        }
        return reply;
      }
      case v1::Envelope::kStopRun: {
        auto run = runs->stop(request.stop_run().run_id(), request.stop_run().grace_seconds());
        if (!run.isOk()) return fail(run.status());
        *reply.mutable_stop_run_reply()->mutable_run() = *run;
        return reply;
      }
      case v1::Envelope::kFetchRunData: {
        const auto& fetch = request.fetch_run_data();
        auto page = journal->fetchSince(fetch.run_id(), fetch.after_seq(), fetch.max_entries());
        if (!page.isOk()) return fail(page.status());
        *reply.mutable_fetch_run_data_reply() = std::move(page).value();
        return reply;
      }
      case v1::Envelope::kTailLog: {
        const auto& tail = request.tail_log();
        auto stored = journal->findRun(tail.run_id());
        if (!stored.isOk()) return fail(stored.status());
        *reply.mutable_tail_log_reply() = tailLogReply(
            tail.run_id(), stored->info.run_dir(), tail.max_lines(), protocol::kMaxReplyPageBytes);
        return reply;
      }
      case v1::Envelope::kSetDrain:
        draining = request.set_drain().draining();
        if (draining) {
          std::ofstream(config.stateDir + "/draining") << "1\n";
        } else {
          std::error_code ec;
          fs::remove(config.stateDir + "/draining", ec);
        }
        *reply.mutable_set_drain_reply()->mutable_node() = nodeInfo();
        return reply;
      default:
        return protocol::makeErrorReply(
            id, v1::ErrorReply::UNKNOWN_MESSAGE,
            std::string("the control socket takes requests only, not ") +
                protocol::bodyName(request));
    }
  }

  void serveControl() {
    std::vector<zmq::message_t> frames;
    while (true) {
      frames.clear();
      auto received =
          zmq::recv_multipart(control, std::back_inserter(frames), zmq::recv_flags::dontwait);
      if (!received || frames.size() < 2) return;
      // [routing id][envelope]: exactly one frame after the id (docs/protocol.md#framing); any
      // other framing, such as a REQ-style empty delimiter, is answered MALFORMED.
      std::vector<std::string_view> request;
      for (size_t i = 1; i < frames.size(); ++i) {
        request.emplace_back(frames[i].data<char>(), frames[i].size());
      }
      v1::Envelope reply;
      auto decoded = protocol::decodeRequest(request);
      if (!decoded.isOk()) {
        reply = protocol::makeErrorReply(decoded.error());
      } else if (!protocol::isControlRequest(*decoded)) {
        reply =
            protocol::makeErrorReply(decoded->request_id(), v1::ErrorReply::UNKNOWN_MESSAGE,
                                     std::string("the control socket takes requests only, not ") +
                                         protocol::bodyName(*decoded));
      } else {
        reply = handle(*decoded);
      }
      const std::string bytes = protocol::encodeEnvelope(reply);
      control.send(frames[0], zmq::send_flags::sndmore | zmq::send_flags::dontwait);
      control.send(zmq::buffer(bytes), zmq::send_flags::dontwait);
    }
  }
};

Agent::Agent(AgentConfig config) : impl_(std::make_unique<Impl>(std::move(config))) {}

Agent::~Agent() {
  if (!impl_) return;
  // Sockets close before the ZAP handler stops (curve.h): no connection slips through.
  impl_->control.close();
  impl_->events.close();
  impl_->ranks.close();
  impl_->remoteRanks.close();
  if (impl_->zap) impl_->zap->stop();
}

std::string Agent::controlEndpoint() const { return impl_->controlEndpoint; }
std::string Agent::eventsEndpoint() const { return impl_->eventsEndpoint; }
std::string Agent::publicKey() const { return impl_->keys.publicKey; }

Status Agent::start() {
  Impl& d = *impl_;
  AgentConfig& c = d.config;
  if (c.stateDir.empty()) c.stateDir = defaultStateDir();
  if (c.runtimeDir.empty()) c.runtimeDir = c.stateDir + "/run";
  const std::string tcpBase = "tcp://" + c.listenAddress + ":";
  if (c.insecure && !curve::isLoopbackEndpoint(tcpBase + "1")) {
    return Status::invalidArgument("--insecure is refused on " + c.listenAddress +
                                   ": plaintext is allowed on loopback only (127.0.0.1, ::1)");
  }
  // Created 0700 when missing; an existing one is checked, never chmod-ed (private_dir.h).
  RINGSIDE_RETURN_IF_ERROR(preparePrivateDirectory(c.stateDir, "--state-dir"));
  RINGSIDE_RETURN_IF_ERROR(preparePrivateDirectory(c.runtimeDir, "--runtime-dir"));
  auto keys = curve::loadOrCreateKeyPair(c.stateDir, "agent");
  if (!keys.isOk()) return keys.status();
  d.keys = *keys;
  RINGSIDE_RETURN_IF_ERROR(d.allowlist.load(c.stateDir + "/allowlist"));
  auto journal = Journal::open(c.stateDir + "/journal.sqlite");
  if (!journal.isOk()) return journal.status();
  d.journal = std::move(journal).value();
  std::error_code ec;
  d.draining = fs::exists(c.stateDir + "/draining", ec);

  d.nvml = std::make_unique<NvmlProbe>(c.nvmlLibrary);
  if (Status s = d.nvml->init(); s.isOk()) {
    d.gpuProbe = d.nvml.get();
  } else {
    logLine("info", "no GPUs reported: " + s.message());
  }
  InventoryOptions inventory;
  inventory.gpuProbe = d.gpuProbe;
  inventory.agentVersion = kAgentVersion;
  inventory.labels = c.labels;
  d.node = toProto(collectInventory(inventory));
  d.node.set_node_id(d.keys.publicKey.substr(0, 16));
  TelemetryOptions telemetry;
  telemetry.gpuProbe = d.gpuProbe;
  d.telemetry = std::make_unique<TelemetrySampler>(telemetry);

  // ZAP first: libzmq lets connections through unauthenticated while no handler is bound.
  d.zap = std::make_unique<curve::ZapHandler>(d.context, d.allowlist,
                                              curve::ZapHandler::Options{.allowNull = c.insecure});
  RINGSIDE_RETURN_IF_ERROR(d.zap->addDomain(curve::kRankZapDomain, d.runKeys));
  RINGSIDE_RETURN_IF_ERROR(d.zap->start());
  auto portText = [](int port) { return port == 0 ? std::string("*") : std::to_string(port); };
  RINGSIDE_RETURN_IF_ERROR(d.bindServerSockets(tcpBase + portText(c.controlPort),
                                               tcpBase + portText(c.eventsPort),
                                               std::chrono::milliseconds(0)));
  try {
    d.rankEndpoint = "ipc://" + c.runtimeDir + "/ranks.sock";
    d.ranks.set(zmq::sockopt::linger, 0);
    d.ranks.set(zmq::sockopt::rcvhwm, 100000);
    d.ranks.bind(d.rankEndpoint);
    if (!c.insecure) {
      RINGSIDE_RETURN_IF_ERROR(
          curve::configureServer(d.remoteRanks, d.keys, curve::kRankZapDomain));
      d.remoteRanks.set(zmq::sockopt::linger, 0);
      d.remoteRanks.set(zmq::sockopt::rcvhwm, 100000);
      d.remoteRanks.set(zmq::sockopt::maxmsgsize, protocol::kTransportMaxMessageBytes);
      const int rankPort = c.rankPort >= 0      ? c.rankPort
                           : c.controlPort == 0 ? 0
                                                : c.controlPort + 2;
      d.remoteRanks.bind(tcpBase + portText(rankPort));
      const std::string bound = d.remoteRanks.get(zmq::sockopt::last_endpoint);
      d.rankTcpEndpoint = "tcp://" + advertiseAddress(c) + bound.substr(bound.rfind(':'));
    }
  } catch (const zmq::error_t& error) {
    return Status::internal(std::string("cannot bind the agent's sockets on ") + c.listenAddress +
                            ": " + error.what() + " (is another agent running?)");
  }

  RunManagerOptions runOptions;
  runOptions.runsDir = c.stateDir + "/runs";
  runOptions.mpirunPath = c.mpirunPath;
  runOptions.trainerPath = c.trainerPath;
  runOptions.rankEndpoint = d.rankEndpoint;
  runOptions.defaultGraceSeconds = c.stopGraceS;
  runOptions.mpirunArgs.insert(runOptions.mpirunArgs.end(), c.mpirunArgs.begin(),
                               c.mpirunArgs.end());
  runOptions.rankTcpEndpoint = d.rankTcpEndpoint;
  runOptions.agentPublicKey = d.keys.publicKey;
  runOptions.runKeys = &d.runKeys;
  runOptions.launcher = c.launcher;
  runOptions.networkInterface = c.networkInterface;
  runOptions.localNames = {d.node.hostname(), c.listenAddress, advertiseAddress(c)};
  for (const auto& gpu : d.node.gpus()) runOptions.gpuIndices.push_back(gpu.index());
  d.runs = std::make_unique<RunManager>(
      runOptions,
      [&d](const v1::RunInfo& run, const RunProcessIds& ids) { d.onRunState(run, ids); });

  // Re-adopt what an earlier agent left running (DESIGN.md decision 5).
  auto active = d.journal->loadRuns(true);
  if (!active.isOk()) return active.status();
  for (const StoredRun& run : *active) {
    if (run.info.spec().has_trainer()) d.adoptedActive.insert(run.info.run_id());
    d.runs->adopt(run.info);
    d.tailers.emplace(run.info.run_id(),
                      LogTailer(run.info.run_dir(), run.info.spec().has_command()));
    logLine("info",
            "adopted run " + run.info.run_id() + " (" + v1::RunState_Name(run.info.state()) + ")");
  }
  d.applyRetention();
  logLine("info", "serving control on " + d.controlEndpoint + ", events on " + d.eventsEndpoint +
                      (c.insecure ? " (INSECURE: plaintext)" : " (CURVE)") + "; public key " +
                      d.keys.publicKey);
  if (!c.readyFile.empty()) {
    v1::AgentReady ready;
    ready.set_control_endpoint(d.controlEndpoint);
    ready.set_events_endpoint(d.eventsEndpoint);
    ready.set_public_key(d.keys.publicKey);
    ready.set_node_id(d.node.node_id());
    ready.set_agent_version(kAgentVersion);
    ready.set_protocol_version(protocol::kProtocolVersion);
    ready.set_pid(::getpid());
    ready.set_insecure(c.insecure);
    ready.set_rank_endpoint(d.rankTcpEndpoint);
    RINGSIDE_RETURN_IF_ERROR(
        writeAgentReady(c.readyFile, ready).withContext("--ready-file " + c.readyFile));
  }
  return Status::ok();
}

Status Agent::run() {
  Impl& d = *impl_;
  auto nextTelemetry = Clock::now();
  auto nextPoll = Clock::now();
  auto nextRetention = Clock::now() + kRetentionInterval;
  auto nextAllowlistCheck = Clock::now() + kAllowlistReloadInterval;
  auto nextHangCheck = Clock::now() + kHangCheckInterval;
  zmq::pollitem_t items[] = {{nullptr, 0, ZMQ_POLLIN, 0},
                             {d.ranks.handle(), 0, ZMQ_POLLIN, 0},
                             {d.remoteRanks.handle(), 0, ZMQ_POLLIN, 0}};
  const int itemCount = d.rankTcpEndpoint.empty() ? 2 : 3;
  while (!stopRequested_.load()) {
    items[0].socket = d.control.handle();  // replaced when a revocation re-binds it
    try {
      zmq::poll(items, itemCount, kPollInterval);
    } catch (const zmq::error_t& error) {
      if (error.num() == EINTR) continue;  // a signal (SIGTERM: stop) interrupted the wait
      return Status::internal(std::string("polling the agent's sockets: ") + error.what());
    }
    if (items[0].revents & ZMQ_POLLIN) d.serveControl();
    for (int i = 1; i < itemCount; ++i) {
      if ((items[i].revents & ZMQ_POLLIN) == 0) continue;
      // A bounded burst, so control requests are not starved by a flood of metrics.
      zmq::socket_t& socket = i == 1 ? d.ranks : d.remoteRanks;
      std::vector<zmq::message_t> burst;
      zmq::message_t message;
      while (burst.size() < kMaxRankBurst && socket.recv(message, zmq::recv_flags::dontwait)) {
        burst.push_back(std::move(message));
      }
      d.ingestRankMessages(burst, /*remote=*/i == 2);
    }
    const auto now = Clock::now();
    if (now >= nextPoll) {
      d.runs->poll();
      d.tailLogs();
      d.runDueRecoveries();
      nextPoll = now + kPollInterval;
    }
    if (now >= nextHangCheck) {
      d.checkHangs();
      nextHangCheck = now + kHangCheckInterval;
    }
    if (now >= nextAllowlistCheck) {
      d.reloadAllowlist();
      nextAllowlistCheck = now + kAllowlistReloadInterval;
    }
    if (now >= nextRetention) {
      d.applyRetention();
      nextRetention = now + kRetentionInterval;
    }
    if (now >= nextTelemetry) {
      v1::Envelope envelope = protocol::newEnvelope(0);
      *envelope.mutable_node_telemetry() = toProto(d.telemetry->sample());
      envelope.mutable_node_telemetry()->set_node_id(d.node.node_id());
      envelope.mutable_node_telemetry()->set_slots_used(d.runs->usedSlots());
      for (uint32_t gpu : d.runs->gpusInUse()) {
        envelope.mutable_node_telemetry()->add_gpus_in_use(gpu);
      }
      envelope.mutable_node_telemetry()->set_draining(d.draining);
      d.publish(envelope);
      nextTelemetry = now + std::chrono::duration_cast<Clock::duration>(
                                std::chrono::duration<double>(d.config.telemetryIntervalS));
    }
  }
  if (!d.config.readyFile.empty()) ::unlink(d.config.readyFile.c_str());  // no longer serving
  return Status::ok();
}

}  // namespace ringside::agent
