#include "agent_connection_worker.h"

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
      lastMalformedLogMs_(-kMalformedLogIntervalMs) {
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
  return std::move(decoded).value();
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
    std::optional<v1::Envelope> reply = receiveOne(dealer_, gotFrame);
    if (!gotFrame) return;
    if (!reply) continue;
    heard();
    handleReply(std::move(*reply));
  }
}

void AgentConnection::Worker::receiveEvents() {
  for (int i = 0; i < kMaxFramesPerTurn && sub_; ++i) {
    bool gotFrame = false;
    std::optional<v1::Envelope> event = receiveOne(sub_, gotFrame);
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
        emitLater([o = owner_, h = reply.hello_reply()] { emit o->nodeInfoReceived(h); });
      }
      break;
    case Pending::Kind::List:
      handleRunList(reply);
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
  if (sendInternal(std::move(list), Pending::Kind::List) == 0) catchUp_.listFailed();
}

void AgentConnection::Worker::handleRunList(const v1::Envelope& reply) {
  if (!reply.has_list_runs_reply()) {
    catchUp_.listFailed();
    return;
  }
  catchUp_.onRunList(reply.list_runs_reply());
  emitLater([o = owner_, l = reply.list_runs_reply()] { emit o->runsListed(l); });
  if (!reply.list_runs_reply().next_page_token().empty()) {
    onOnline(reply.list_runs_reply().next_page_token());
  }
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
      emitLater([o = owner_, id, message] { emit o->fetchFailed(id, message); });
      return;
    }
    case CatchUp::FetchOutcome::Kind::kPage:
      break;
  }
  // Live entries collected so far are older than this page: deliver them first.
  flush(true);
  emitLater([o = owner_, p = std::move(outcome.page)] { emit o->runDataFetched(p); });
  if (outcome.done) {
    const uint64_t lastSeq = *outcome.done;
    emitLater([o = owner_, id, lastSeq] { emit o->runCaughtUp(id, lastSeq); });
  }
}

// ---- Live events.

void AgentConnection::Worker::handleEvent(const v1::Envelope& event) {
  switch (event.body_case()) {
    case v1::Envelope::kNodeTelemetry:
      batch_.telemetry.push_back(event.node_telemetry());
      break;
    case v1::Envelope::kRunState:
      if (catchUp_.acceptLive(event.run_state().run().run_id(), event.run_state().seq())) {
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
    default:
      break;  // not an event (or one this build does not know): ignore
  }
}

void AgentConnection::Worker::flush(bool force) {
  if (batch_.empty()) return;
  const int64_t now = nowMs();
  if (!force && (deliveryInFlight_->load() || now - lastFlushMs_ < options_.deliveryIntervalMs)) {
    return;
  }
  lastFlushMs_ = now;
  deliveryInFlight_->store(true);
  emitLater([o = owner_, b = std::move(batch_), inFlight = deliveryInFlight_] {
    inFlight->store(false);
    emit o->eventsReceived(b);
  });
  batch_ = EventBatch{};
  metricIndex_.clear();
  logIndex_.clear();
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
      catchUp_.listFailed();
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
  }
  startFetches();
  flush(false);
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
}

}  // namespace ringside::gui
