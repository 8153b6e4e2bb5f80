#include "agent_connection_worker.h"

#include <QCoreApplication>

#include <QLoggingCategory>
#include <algorithm>
#include <chrono>
#include <vector>

#include "ringside/common/protocol.h"

Q_LOGGING_CATEGORY(lcAgentConnection, "ringside.gui.agent_connection")

namespace ringside::gui {

namespace {

// Poll timeout of the network thread: stop() joins within about this long.
constexpr std::chrono::milliseconds kPollTimeout{100};
// At most this many frames are read from one socket per loop turn, so neither starves the other.
constexpr int kMaxFramesPerTurn = 2000;
// Catch-up fetches in flight at once (each page can be thousands of entries).
constexpr int kMaxConcurrentFetches = 4;
// A malformed frame is logged at most this often; all are counted.
constexpr int64_t kMalformedLogIntervalMs = 5000;
// What the agent sent over the protocol's limits is logged and reported at most this often.
constexpr int64_t kRefusalReportIntervalMs = 5000;
// Live entries of runs the GUI does not know make it list the node's runs, at most this often.
constexpr int64_t kUnknownRunListIntervalMs = 2000;

// Bounds of one delivery to the GUI thread, which does work per entry (copies into the store's
// batches, a RunInfo note per state): together they keep one delivery's work on the GUI thread
// to a few milliseconds. A delivery holds at least one entry, whatever its size.
constexpr size_t kMaxEntriesPerDelivery = 20000;          // samples, log lines and states
constexpr size_t kMaxStatesPerDelivery = 256;             // run state events
constexpr size_t kMaxBytesPerDelivery = 4 * 1024 * 1024;  // approximate serialized bytes
constexpr size_t kMaxRunsPerDelivery = 256;               // runs of one run list slice
// Telemetry messages of one node per delivery (~33 ms): an agent sends one every interval
// (seconds); when more arrive, only the newest are handed on.
constexpr size_t kMaxTelemetryPerDelivery = 8;

// Splits `batch` into deliveries within the bounds above, keeping each run's order.
std::vector<EventBatch> sliceEvents(EventBatch batch) {
  std::vector<EventBatch> slices(1);
  size_t entries = 0;
  size_t bytes = 0;
  size_t states = 0;
  auto full = [&] { return entries >= kMaxEntriesPerDelivery || bytes >= kMaxBytesPerDelivery; };
  auto next = [&] {
    slices.emplace_back();
    entries = bytes = states = 0;
  };
  slices.back().telemetry = std::move(batch.telemetry);
  slices.back().sweeps = std::move(batch.sweeps);
  for (v1::MetricBatch& metrics : batch.metrics) {
    v1::MetricBatch* part = nullptr;
    for (v1::MetricSample& sample : *metrics.mutable_samples()) {
      if (full()) {
        next();
        part = nullptr;
      }
      if (part == nullptr) {
        part = &slices.back().metrics.emplace_back();
        part->set_run_id(metrics.run_id());
      }
      bytes += 48 + sample.name().size();
      ++entries;
      *part->add_samples() = std::move(sample);
    }
  }
  for (v1::LogBatch& logs : batch.logs) {
    v1::LogBatch* part = nullptr;
    for (v1::LogLine& line : *logs.mutable_lines()) {
      if (full()) {
        next();
        part = nullptr;
      }
      if (part == nullptr) {
        part = &slices.back().logs.emplace_back();
        part->set_run_id(logs.run_id());
      }
      bytes += 32 + line.text().size();
      ++entries;
      *part->add_lines() = std::move(line);
    }
  }
  for (v1::RunStateEvent& state : batch.states) {
    if (full() || states >= kMaxStatesPerDelivery) next();
    bytes += state.ByteSizeLong();
    ++entries;
    ++states;
    slices.back().states.push_back(std::move(state));
  }
  if (slices.back().empty()) slices.pop_back();
  return slices;
}

// The batch of `runId` in `batches`, appended (with its run id) when the run has none yet;
// `index` maps run ids to positions in `batches`.
template <typename Batch>
Batch& batchFor(std::vector<Batch>& batches, std::map<std::string, size_t>& index,
                const std::string& runId) {
  auto [it, inserted] = index.try_emplace(runId, batches.size());
  if (inserted) {
    batches.emplace_back();
    batches.back().set_run_id(runId);
  }
  return batches[it->second];
}

}  // namespace

int64_t nowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

AgentConnection::Worker::Worker(AgentConnection* owner, curve::KeyPair keys,
                                AgentConnectionOptions options)
    : owner_(owner),
      keys_(std::move(keys)),
      options_(std::move(options)),
      catchUp_(options_.autoTrackRuns, kMaxConcurrentFetches),
      lastMalformedLogMs_(-kMalformedLogIntervalMs),
      lastRefusalReportMs_(-kRefusalReportIntervalMs) {
  wakeReceiver_ = zmq::socket_t(context_, zmq::socket_type::pull);
  wakeReceiver_.set(zmq::sockopt::linger, 0);
  const std::string wakeEndpoint =
      "inproc://ringside-agent-connection-" + std::to_string(reinterpret_cast<uintptr_t>(this));
  wakeReceiver_.bind(wakeEndpoint);
  wakeSender_ = zmq::socket_t(context_, zmq::socket_type::push);
  wakeSender_.set(zmq::sockopt::linger, 0);
  wakeSender_.set(zmq::sockopt::sndhwm, 1);  // one pending wake-up is enough
  wakeSender_.connect(wakeEndpoint);
  thread_ = std::thread([this] { run(); });
}

void AgentConnection::Worker::post(std::function<void()> command) {
  MutexLock lock(mutex_);
  if (!wakeSender_) return;  // stopped
  commands_.push_back(std::move(command));
  // A full wake queue means the thread is already due to wake up: dropping this one is fine.
  (void)wakeSender_.send(zmq::str_buffer("w"), zmq::send_flags::dontwait);
}

void AgentConnection::Worker::wake() {
  MutexLock lock(mutex_);
  if (!wakeSender_) return;  // stopped
  (void)wakeSender_.send(zmq::str_buffer("w"), zmq::send_flags::dontwait);
}

void AgentConnection::Worker::stop() {
  if (!thread_.joinable()) return;
  stopping_.store(true);
  {
    MutexLock lock(mutex_);
    (void)wakeSender_.send(zmq::str_buffer("w"), zmq::send_flags::dontwait);
  }
  thread_.join();
  MutexLock lock(mutex_);
  wakeSender_.close();
}

// ---- Commands (run on the network thread).

void AgentConnection::Worker::connectTo(const std::string& control, const std::string& events,
                                        const std::string& key) {
  closeSockets();
  failUserRequests(QStringLiteral("the connection to the agent was replaced"));
  pending_.clear();
  listInFlight_ = false;
  catchUp_.fetchesLost();
  const Status status = openSockets(control, events, key);
  if (!status.isOk()) {
    closeSockets();
    setState(NodeState::Offline);
    const QString message = QString::fromStdString(status.message());
    emitLater([o = owner_, message] { emit o->connectionError(message); });
    return;
  }
  connectedAtMs_ = nowMs();
  setState(NodeState::Connecting);
  sendHeartbeat();
}

void AgentConnection::Worker::sendUserRequest(uint64_t requestId, std::string frame) {
  if (!sendFrame(frame)) {
    emitLater([o = owner_, requestId] {
      emit o->requestFailed(
          requestId, AgentConnection::tr("not connected to the agent; the request was not sent"));
    });
    return;
  }
  pending_[requestId] = Pending{Pending::Kind::User, nowMs() + options_.requestTimeoutMs, {}};
}

void AgentConnection::Worker::setState(NodeState state) {
  if (owner_->state_.exchange(state) == state) return;
  const int64_t age = owner_->heartbeatAgeMs();
  emitLater([o = owner_, state, age] { emit o->stateChanged(state, age); });
}

Status AgentConnection::Worker::openSockets(const std::string& control, const std::string& events,
                                            const std::string& key) {
  const bool plaintext = key.empty();
  if (plaintext && !(curve::isLoopbackEndpoint(control) && curve::isLoopbackEndpoint(events))) {
    return Status::invalidArgument(
        "no agent public key for " + control +
        ": plaintext is allowed only on loopback; give the key that `ringside-agent "
        "print-public-key` prints on that node");
  }
  try {
    dealer_ = zmq::socket_t(context_, zmq::socket_type::dealer);
    sub_ = zmq::socket_t(context_, zmq::socket_type::sub);
    for (zmq::socket_t* socket : {&dealer_, &sub_}) {
      socket->set(zmq::sockopt::linger, 0);
      socket->set(zmq::sockopt::reconnect_ivl, 200);
      socket->set(zmq::sockopt::reconnect_ivl_max, 2000);
      // ZMTP heartbeats notice a dead peer behind a silent network, so ZeroMQ reconnects.
      socket->set(zmq::sockopt::heartbeat_ivl, 1000);
      socket->set(zmq::sockopt::heartbeat_timeout, 3000);
      socket->set(zmq::sockopt::maxmsgsize, protocol::kTransportMaxMessageBytes);
      if (!plaintext) {
        RINGSIDE_RETURN_IF_ERROR(curve::configureClient(*socket, keys_, key));
      }
    }
    // Queue requests only on a connection that completed its handshake: a heartbeat sent while
    // the agent is away is dropped instead of piling up and flooding it on reconnect.
    dealer_.set(zmq::sockopt::immediate, 1);
    sub_.set(zmq::sockopt::rcvhwm, 100000);
    sub_.set(zmq::sockopt::subscribe, "");
    dealer_.connect(control);
    sub_.connect(events);
  } catch (const zmq::error_t& error) {
    return Status::invalidArgument("cannot connect to agent at " + control + " / " + events + ": " +
                                   error.what());
  }
  return Status::ok();
}

void AgentConnection::Worker::closeSockets() {
  if (dealer_) dealer_.close();
  if (sub_) sub_.close();
}

bool AgentConnection::Worker::sendFrame(const std::string& frame) {
  if (!dealer_) return false;
  try {
    return dealer_.send(zmq::buffer(frame), zmq::send_flags::dontwait).has_value();
  } catch (const zmq::error_t& error) {
    qCWarning(lcAgentConnection) << "send failed:" << error.what();
    return false;
  }
}

uint64_t AgentConnection::Worker::sendInternal(v1::Envelope envelope, Pending::Kind kind,
                                               const std::string& runId) {
  const uint64_t id = owner_->nextRequestId();
  envelope.set_protocol_version(protocol::kProtocolVersion);
  envelope.set_request_id(id);
  if (!sendFrame(protocol::encodeEnvelope(envelope))) return 0;
  const int timeout =
      kind == Pending::Kind::Hello ? options_.offlineAfterMs : options_.requestTimeoutMs;
  pending_[id] = Pending{kind, nowMs() + timeout, runId};
  return id;
}

void AgentConnection::Worker::sendHeartbeat() {
  lastHeartbeatMs_ = nowMs();
  v1::Envelope hello;
  hello.mutable_hello()->set_client_name(options_.clientName.toStdString());
  (void)sendInternal(std::move(hello), Pending::Kind::Hello);
}

void AgentConnection::Worker::failUserRequests(const QString& message) {
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (it->second.kind == Pending::Kind::User) {
      const uint64_t id = it->first;
      emitLater([o = owner_, id, message] { emit o->requestFailed(id, message); });
      it = pending_.erase(it);
    } else {
      ++it;
    }
  }
}

// ---- The loop.

void AgentConnection::Worker::run() {
  while (!stopping_.load()) {
    std::vector<zmq::pollitem_t> items{{wakeReceiver_.handle(), 0, ZMQ_POLLIN, 0}};
    if (dealer_) items.push_back({dealer_.handle(), 0, ZMQ_POLLIN, 0});
    if (sub_) items.push_back({sub_.handle(), 0, ZMQ_POLLIN, 0});
    auto timeout = kPollTimeout;
    if (!batch_.empty()) {
      const int64_t untilFlush = lastFlushMs_ + options_.deliveryIntervalMs - nowMs();
      timeout = std::clamp(std::chrono::milliseconds(untilFlush), std::chrono::milliseconds(1),
                           kPollTimeout);
    }
    try {
      zmq::poll(items, timeout);
    } catch (const zmq::error_t& error) {
      if (error.num() != EINTR) qCWarning(lcAgentConnection) << "poll failed:" << error.what();
      continue;
    }
    drainWakeUps();
    runCommands();
    if (dealer_) receiveReplies();
    if (sub_) receiveEvents();
    onTimers();
  }
  closeSockets();
  wakeReceiver_.close();
}

void AgentConnection::Worker::drainWakeUps() {
  zmq::message_t message;
  while (wakeReceiver_.recv(message, zmq::recv_flags::dontwait)) {
  }
}

void AgentConnection::Worker::runCommands() {
  std::deque<std::function<void()>> commands;
  {
    MutexLock lock(mutex_);
    commands.swap(commands_);
  }
  for (auto& command : commands) command();
}

std::optional<v1::Envelope> AgentConnection::Worker::receiveOne(zmq::socket_t& socket,
                                                                AgentChannel channel,
                                                                bool& gotFrame) {
  zmq::message_t message;
  gotFrame = socket.recv(message, zmq::recv_flags::dontwait).has_value();
  if (!gotFrame) return std::nullopt;
  if (message.more()) {
    zmq::message_t rest;  // a multi-part message arrives whole: drop the other parts
    while (socket.recv(rest, zmq::recv_flags::dontwait) && rest.more()) {
    }
    noteMalformed("a multi-part message (the protocol sends one frame per message)");
    return std::nullopt;
  }
  protocol::DecodeResult decoded = protocol::decodeEnvelope(message.data(), message.size());
  if (!decoded.isOk() && decoded.error().code == v1::ErrorReply::TOO_LARGE) {
    // The same limits at both ends (protocol.h): an agent that keeps to the protocol never
    // sends this; say so rather than wait for a reply that will not come.
    const QString why = QStringLiteral(
                            "refused a %1-byte message from the agent: over the protocol's %2-byte "
                            "limit (an agent of another version?); the request it answered fails "
                            "with a time-out")
                            .arg(message.size())
                            .arg(protocol::kMaxMessageBytes);
    qCWarning(lcAgentConnection).noquote() << why;
    owner_->malformed_.fetch_add(1);
    emitLater([o = owner_, why] { emit o->connectionError(why); });
    return std::nullopt;
  }
  if (!decoded.isOk()) {
    noteMalformed(decoded.error().message);
    return std::nullopt;
  }
  v1::Envelope envelope = std::move(decoded).value();
  BoundsReport report;
  boundAgentMessage(envelope, channel, report);
  if (!report.empty()) noteRefused(report.summary());
  return envelope;
}

void AgentConnection::Worker::noteRefused(const std::string& what) {
  ++refusedSinceReport_;
  latestRefusal_ = what;
  reportRefusals();
}

void AgentConnection::Worker::reportRefusals() {
  if (refusedSinceReport_ == 0) return;
  const int64_t now = nowMs();
  if (now - lastRefusalReportMs_ < kRefusalReportIntervalMs) return;
  lastRefusalReportMs_ = now;
  const QString message =
      AgentConnection::tr(
          "sent %n message(s) over the protocol's limits (docs/protocol.md#limits), which the GUI "
          "clipped or refused; the latest: %1",
          "", static_cast<int>(std::min<uint64_t>(refusedSinceReport_, INT32_MAX)))
          .arg(QString::fromStdString(latestRefusal_));
  qCWarning(lcAgentConnection).noquote()
      << QStringLiteral("agent data over the protocol's limits (%1 message(s)); the latest: %2")
             .arg(refusedSinceReport_)
             .arg(QString::fromStdString(latestRefusal_));
  refusedSinceReport_ = 0;
  latestRefusal_.clear();
  emitLater([o = owner_, message] { emit o->agentDataRefused(message); });
}

void AgentConnection::Worker::noteMalformed(const std::string& why) {
  owner_->malformed_.fetch_add(1);
  const int64_t now = nowMs();
  if (now - lastMalformedLogMs_ >= kMalformedLogIntervalMs) {
    lastMalformedLogMs_ = now;
    qCWarning(lcAgentConnection) << "ignored a bad frame from the agent:" << why.c_str();
  }
}

void AgentConnection::Worker::heard() {
  owner_->lastHeardMs_.store(nowMs());
  if (owner_->state_.load() != NodeState::Online) {
    setState(NodeState::Online);
    onOnline();
  }
}

void AgentConnection::Worker::receiveReplies() {
  for (int i = 0; i < kMaxFramesPerTurn && dealer_; ++i) {
    bool gotFrame = false;
    std::optional<v1::Envelope> reply = receiveOne(dealer_, AgentChannel::kReply, gotFrame);
    if (!gotFrame) return;
    if (!reply) continue;
    heard();
    handleReply(std::move(*reply));
  }
}

void AgentConnection::Worker::receiveEvents() {
  for (int i = 0; i < kMaxFramesPerTurn && sub_; ++i) {
    bool gotFrame = false;
    std::optional<v1::Envelope> event = receiveOne(sub_, AgentChannel::kEvent, gotFrame);
    if (!gotFrame) return;
    if (!event) continue;
    heard();
    handleEvent(*event);
  }
}

void AgentConnection::Worker::handleReply(v1::Envelope reply) {
  const uint64_t id = reply.request_id();
  auto it = pending_.find(id);
  if (it == pending_.end()) {
    if (reply.has_error()) {
      qCWarning(lcAgentConnection) << "agent error for no pending request (id" << id
                                   << "):" << protocol::errorCodeName(reply.error().code())
                                   << reply.error().message().c_str();
    }
    return;  // a late reply to a request we gave up on, or to an earlier connection
  }
  const Pending pending = std::move(it->second);
  pending_.erase(it);
  switch (pending.kind) {
    case Pending::Kind::User:
      emitLater([o = owner_, id, r = std::move(reply)] { emit o->replyReceived(id, r); });
      break;
    case Pending::Kind::Hello:
      if (reply.has_hello_reply()) {
        lastHelloError_.clear();
        emitLater([o = owner_, h = reply.hello_reply()] { emit o->nodeInfoReceived(h); });
      } else if (reply.has_error() && reply.error().message() != lastHelloError_) {
        lastHelloError_ = reply.error().message();
        qCWarning(lcAgentConnection) << "the agent refused hello:"
                                     << protocol::errorCodeName(reply.error().code())
                                     << lastHelloError_.c_str();
        // An agent of another protocol version (an older one refuses this GUI's version 2):
        // say so on the node, with what to do, instead of a node that never comes online.
        QString message = QString::fromStdString(reply.error().message());
        if (reply.error().code() == v1::ErrorReply::UNSUPPORTED_VERSION) {
          message = QCoreApplication::translate(
                        "ringside::gui::AgentConnection",
                        "its agent speaks another protocol version than this GUI (%1): install "
                        "the same Ringside version on the GUI's machine and every node")
                        .arg(message);
        }
        emitLater([o = owner_, message] { emit o->connectionError(message); });
      }
      break;
    case Pending::Kind::List:
      handleRunList(std::move(reply));
      break;
    case Pending::Kind::Fetch:
      handleFetchPage(pending.runId, reply);
      break;
  }
}

// ---- Catch-up over the sockets.

void AgentConnection::Worker::onOnline(const std::string& pageToken) {
  v1::Envelope list;
  list.mutable_list_runs()->set_include_ended(true);
  list.mutable_list_runs()->set_page_token(pageToken);
  if (pageToken.empty()) {
    catchUp_.runListRequested();
    lastListRequestMs_ = nowMs();
  }
  listInFlight_ = true;
  if (sendInternal(std::move(list), Pending::Kind::List) == 0) listFailed();
}

void AgentConnection::Worker::listFailed() {
  listInFlight_ = false;
  catchUp_.listFailed();
}

void AgentConnection::Worker::handleRunList(v1::Envelope reply) {
  if (!reply.has_list_runs_reply()) {
    listFailed();
    return;
  }
  v1::ListRunsReply& list = *reply.mutable_list_runs_reply();
  catchUp_.onRunList(list);
  // The GUI thread notes and stores each run: hand it the page in slices.
  v1::ListRunsReply slice;
  size_t bytes = 0;
  for (v1::RunInfo& run : *list.mutable_runs()) {
    const size_t size = run.ByteSizeLong();
    if (slice.runs_size() > 0 && (static_cast<size_t>(slice.runs_size()) >= kMaxRunsPerDelivery ||
                                  bytes + size > kMaxBytesPerDelivery)) {
      deliver([o = owner_, l = std::move(slice)] { emit o->runsListed(l); });
      slice = v1::ListRunsReply();
      bytes = 0;
    }
    bytes += size;
    *slice.add_runs() = std::move(run);
  }
  slice.set_next_page_token(list.next_page_token());
  deliver([o = owner_, l = std::move(slice)] { emit o->runsListed(l); });
  if (!list.next_page_token().empty()) {
    onOnline(list.next_page_token());
    return;
  }
  listInFlight_ = false;
  const std::map<std::string, uint64_t> refused = catchUp_.runListComplete();
  if (refused.empty()) return;
  uint64_t entries = 0;
  std::string runs;
  for (const auto& [runId, count] : refused) {
    entries += count;
    if (runId.empty()) continue;
    if (!runs.empty()) runs += ", ";
    runs += runId;
  }
  noteRefused(std::to_string(entries) +
              " live metric samples or log lines of runs the node does not list (" +
              (runs.empty() ? std::string("more than ") +
                                  std::to_string(CatchUp::kMaxUnknownRunsNamed) + " runs"
                            : runs) +
              "): ignored, no run was created for them");
}

bool AgentConnection::Worker::sendFetch(const std::string& runId, uint64_t afterSeq) {
  v1::Envelope fetch;
  auto* body = fetch.mutable_fetch_run_data();
  body->set_run_id(runId);
  body->set_after_seq(afterSeq);
  body->set_max_entries(options_.fetchPageEntries);
  return sendInternal(std::move(fetch), Pending::Kind::Fetch, runId) != 0;
}

void AgentConnection::Worker::startFetches() {
  if (owner_->state_.load() != NodeState::Online) return;
  catchUp_.startFetches(
      [this](const std::string& runId, uint64_t afterSeq) { return sendFetch(runId, afterSeq); });
}

void AgentConnection::Worker::handleFetchPage(const std::string& runId, const v1::Envelope& reply) {
  CatchUp::FetchOutcome outcome = catchUp_.onFetchReply(
      runId, reply,
      [this](const std::string& run, uint64_t afterSeq) { return sendFetch(run, afterSeq); });
  const QString id = QString::fromStdString(runId);
  switch (outcome.kind) {
    case CatchUp::FetchOutcome::Kind::kIgnored:
    case CatchUp::FetchOutcome::Kind::kForgotten:
      return;
    case CatchUp::FetchOutcome::Kind::kFailed: {
      const QString message = QString::fromStdString(outcome.error);
      flush(true);
      deliver([o = owner_, id, message] { emit o->fetchFailed(id, message); });
      return;
    }
    case CatchUp::FetchOutcome::Kind::kPage:
      break;
  }
  // Live entries collected so far are older than this page: deliver them first.
  flush(true);
  deliver([o = owner_, p = std::move(outcome.page)] { emit o->runDataFetched(p); });
  if (outcome.done) {
    const uint64_t lastSeq = *outcome.done;
    deliver([o = owner_, id, lastSeq] { emit o->runCaughtUp(id, lastSeq); });
  }
}

// ---- Live events.

void AgentConnection::Worker::handleEvent(const v1::Envelope& event) {
  switch (event.body_case()) {
    case v1::Envelope::kNodeTelemetry:
      batch_.telemetry.push_back(event.node_telemetry());
      break;
    case v1::Envelope::kRunState:
      if (catchUp_.acceptLive(event.run_state().run().run_id(), event.run_state().seq(),
                              /*introducesRun=*/true)) {
        batch_.states.push_back(event.run_state());
      }
      break;
    case v1::Envelope::kMetricBatch: {
      const std::string& runId = event.metric_batch().run_id();
      v1::MetricBatch* target = nullptr;
      for (const v1::MetricSample& sample : event.metric_batch().samples()) {
        if (!catchUp_.acceptLive(runId, sample.seq())) continue;
        if (target == nullptr) target = &batchFor(batch_.metrics, metricIndex_, runId);
        *target->add_samples() = sample;
      }
      break;
    }
    case v1::Envelope::kLogBatch: {
      const std::string& runId = event.log_batch().run_id();
      v1::LogBatch* target = nullptr;
      for (const v1::LogLine& line : event.log_batch().lines()) {
        if (!catchUp_.acceptLive(runId, line.seq())) continue;
        if (target == nullptr) target = &batchFor(batch_.logs, logIndex_, runId);
        *target->add_lines() = line;
      }
      break;
    }
    case v1::Envelope::kSweepEvent: {
      // The newest state of each sweep replaces an older one of the same interval.
      const v1::SweepInfo& sweep = event.sweep_event().sweep();
      auto same = std::find_if(batch_.sweeps.begin(), batch_.sweeps.end(),
                               [&](const v1::SweepInfo& s) { return s.sweep_id() == sweep.sweep_id(); });
      if (same != batch_.sweeps.end()) {
        *same = sweep;
      } else {
        batch_.sweeps.push_back(sweep);
      }
      break;
    }
    default:
      break;  // not an event (or one this build does not know): ignore
  }
}

void AgentConnection::Worker::flush(bool force) {
  if (batch_.empty()) return;
  const int64_t now = nowMs();
  if (!force && (!outbox_.empty() || deliveryInFlight_->load() ||
                 now - lastFlushMs_ < options_.deliveryIntervalMs)) {
    return;
  }
  lastFlushMs_ = now;
  if (batch_.telemetry.size() > kMaxTelemetryPerDelivery) {
    const size_t dropped = batch_.telemetry.size() - kMaxTelemetryPerDelivery;
    batch_.telemetry.erase(batch_.telemetry.begin(),
                           batch_.telemetry.begin() + static_cast<ptrdiff_t>(dropped));
    noteRefused("telemetry came faster than the GUI takes it (" +
                std::to_string(dropped + kMaxTelemetryPerDelivery) +
                " messages in one delivery interval): only the newest " +
                std::to_string(kMaxTelemetryPerDelivery) + " were kept");
  }
  for (EventBatch& slice : sliceEvents(std::move(batch_))) {
    deliver([o = owner_, b = std::move(slice)] { emit o->eventsReceived(b); });
  }
  batch_ = EventBatch{};
  metricIndex_.clear();
  logIndex_.clear();
}

void AgentConnection::Worker::deliver(std::function<void()> emitOnGuiThread) {
  outbox_.push_back(std::move(emitOnGuiThread));
  pumpOutbox();
}

void AgentConnection::Worker::pumpOutbox() {
  if (outbox_.empty() || deliveryInFlight_->load()) return;
  deliveryInFlight_->store(true);
  emitLater([o = owner_, inFlight = deliveryInFlight_, emitNow = std::move(outbox_.front())] {
    emitNow();
    inFlight->store(false);
    o->worker_->wake();  // the next delivery, if any, goes out now
  });
  outbox_.pop_front();
}

void AgentConnection::Worker::onTimers() {
  const int64_t now = nowMs();
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (it->second.deadlineMs > now) {
      ++it;
      continue;
    }
    const uint64_t id = it->first;
    const Pending pending = std::move(it->second);
    it = pending_.erase(it);
    if (pending.kind == Pending::Kind::User) {
      emitLater([o = owner_, id] {
        emit o->requestFailed(id, AgentConnection::tr("the agent did not answer in time"));
      });
    } else if (pending.kind == Pending::Kind::List) {
      listFailed();
    } else if (pending.kind == Pending::Kind::Fetch) {
      catchUp_.fetchLost(pending.runId);
      const QString runId = QString::fromStdString(pending.runId);
      emitLater([o = owner_, runId] {
        emit o->fetchFailed(
            runId, AgentConnection::tr("the agent did not answer a catch-up request in time"));
      });
    }
  }
  if (dealer_) {
    const NodeState state = owner_->state_.load();
    const int64_t lastHeard = owner_->lastHeardMs_.load();
    const int64_t silentSince = state == NodeState::Online ? lastHeard : connectedAtMs_;
    if (state != NodeState::Offline && now - silentSince >= options_.offlineAfterMs) {
      goOffline();
    }
    if (now - lastHeartbeatMs_ >= options_.heartbeatIntervalMs) sendHeartbeat();
    // Live entries of runs the GUI does not know: list the node's runs (CatchUp decides).
    if (state == NodeState::Online && catchUp_.wantsRunList() && !listInFlight_ &&
        now - lastListRequestMs_ >= kUnknownRunListIntervalMs) {
      onOnline();
    }
  }
  startFetches();
  flush(false);
  pumpOutbox();
  reportRefusals();
}

void AgentConnection::Worker::goOffline() {
  setState(NodeState::Offline);
  // Internal requests in flight are lost with the connection; catch-up starts over when the
  // node is back (user requests keep their own timeout).
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (it->second.kind == Pending::Kind::User) {
      ++it;
      continue;
    }
    if (it->second.kind == Pending::Kind::Fetch) catchUp_.fetchLost(it->second.runId);
    it = pending_.erase(it);
  }
  listInFlight_ = false;
}

}  // namespace ringside::gui
