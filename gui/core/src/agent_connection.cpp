#include "ringside/gui/agent_connection.h"

#include <QLoggingCategory>
#include <QMetaObject>
#include <algorithm>
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <zmq.hpp>

#include "ringside/common/mutex.h"
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

int64_t nowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void registerMetaTypes() {
  static std::once_flag once;
  std::call_once(once, [] {
    qRegisterMetaType<v1::Envelope>();
    qRegisterMetaType<v1::HelloReply>();
    qRegisterMetaType<v1::ListRunsReply>();
    qRegisterMetaType<v1::FetchRunDataReply>();
    qRegisterMetaType<EventBatch>();
    qRegisterMetaType<NodeState>();
  });
}

}  // namespace

size_t EventBatch::sampleCount() const {
  size_t count = 0;
  for (const auto& batch : metrics) count += static_cast<size_t>(batch.samples_size());
  return count;
}

const char* nodeStateName(NodeState state) {
  switch (state) {
    case NodeState::Connecting:
      return "connecting";
    case NodeState::Online:
      return "online";
    case NodeState::Offline:
      return "offline";
  }
  return "offline";
}

// Everything that touches ZeroMQ. The socket members and the catch-up state belong to the network
// thread; the GUI thread only appends to commands_ (under mutex_) and wakes the thread.
class AgentConnection::Worker {
 public:
  Worker(AgentConnection* owner, curve::KeyPair keys, AgentConnectionOptions options)
      : owner_(owner), keys_(std::move(keys)), options_(std::move(options)) {
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

  ~Worker() { stop(); }

  // Queues `command` for the network thread and wakes it. Thread-safe.
  void post(std::function<void()> command) {
    MutexLock lock(mutex_);
    if (!wakeSender_) return;  // stopped
    commands_.push_back(std::move(command));
    // A full wake queue means the thread is already due to wake up: dropping this one is fine.
    (void)wakeSender_.send(zmq::str_buffer("w"), zmq::send_flags::dontwait);
  }

  void stop() {
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

  void connectTo(const std::string& control, const std::string& events, const std::string& key) {
    closeSockets();
    failUserRequests("the connection to the agent was replaced");
    pending_.clear();
    for (auto& [runId, track] : runs_) {
      if (track.fetching) track.needsFetch = true;
      track.fetching = false;
    }
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

  void sendUserRequest(uint64_t requestId, std::string frame) {
    if (!sendFrame(frame)) {
      emitLater([o = owner_, requestId] {
        emit o->requestFailed(requestId,
                              tr("not connected to the agent; the request was not sent"));
      });
      return;
    }
    pending_[requestId] = Pending{Pending::Kind::User, nowMs() + options_.requestTimeoutMs, {}};
  }

  void trackRun(const std::string& runId, uint64_t lastSeq) {
    auto [it, inserted] = runs_.try_emplace(runId);
    RunTrack& track = it->second;
    track.followed = true;
    track.applied = std::max(track.applied, lastSeq);
    if (inserted) track.needsFetch = true;  // the list may have come before: look once
  }

  void untrackRun(const std::string& runId) { runs_.erase(runId); }

 private:
  struct Pending {
    enum class Kind { User, Hello, List, Fetch };
    Kind kind = Kind::User;
    int64_t deadlineMs = 0;
    std::string runId;  // Fetch
  };

  // Catch-up state of one run (docs/protocol.md, steps 2-4).
  struct RunTrack {
    uint64_t applied = 0;            // every seq <= applied was delivered (or the GUI had it)
    bool followed = false;           // trackRun() or autoTrackRuns: gaps are fetched
    bool needsFetch = false;         // fetch from `applied` when online
    bool fetching = false;           // a page request is in flight
    uint64_t seenWhileFetching = 0;  // highest live seq dropped during the fetch
  };

  static QString tr(const char* text) { return AgentConnection::tr(text); }

  // Emits on the owner's thread, through its event loop.
  template <typename F>
  void emitLater(F&& function) {
    QMetaObject::invokeMethod(owner_, std::forward<F>(function), Qt::QueuedConnection);
  }

  void setState(NodeState state) {
    if (owner_->state_.exchange(state) == state) return;
    const int64_t age = owner_->heartbeatAgeMs();
    emitLater([o = owner_, state, age] { emit o->stateChanged(state, age); });
  }

  Status openSockets(const std::string& control, const std::string& events,
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
      return Status::invalidArgument("cannot connect to agent at " + control + " / " + events +
                                     ": " + error.what());
    }
    return Status::ok();
  }

  void closeSockets() {
    if (dealer_) dealer_.close();
    if (sub_) sub_.close();
  }

  bool sendFrame(const std::string& frame) {
    if (!dealer_) return false;
    try {
      return dealer_.send(zmq::buffer(frame), zmq::send_flags::dontwait).has_value();
    } catch (const zmq::error_t& error) {
      qCWarning(lcAgentConnection) << "send failed:" << error.what();
      return false;
    }
  }

  uint64_t sendInternal(v1::Envelope envelope, Pending::Kind kind, const std::string& runId = {}) {
    const uint64_t id = owner_->nextRequestId();
    envelope.set_protocol_version(protocol::kProtocolVersion);
    envelope.set_request_id(id);
    if (!sendFrame(protocol::encodeEnvelope(envelope))) return 0;
    const int timeout =
        kind == Pending::Kind::Hello ? options_.offlineAfterMs : options_.requestTimeoutMs;
    pending_[id] = Pending{kind, nowMs() + timeout, runId};
    return id;
  }

  void sendHeartbeat() {
    lastHeartbeatMs_ = nowMs();
    v1::Envelope hello;
    hello.mutable_hello()->set_client_name(options_.clientName.toStdString());
    (void)sendInternal(std::move(hello), Pending::Kind::Hello);
  }

  void failUserRequests(const QString& message) {
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

  void run() {
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

  void drainWakeUps() {
    zmq::message_t message;
    while (wakeReceiver_.recv(message, zmq::recv_flags::dontwait)) {
    }
  }

  void runCommands() {
    std::deque<std::function<void()>> commands;
    {
      MutexLock lock(mutex_);
      commands.swap(commands_);
    }
    for (auto& command : commands) command();
  }

  // Reads one frame (and discards any further parts of a multi-part message, which the protocol
  // never sends). Returns the decoded envelope, or nothing when there is no frame or it is bad.
  std::optional<v1::Envelope> receiveOne(zmq::socket_t& socket, bool& gotFrame) {
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
      const QString why =
          QStringLiteral(
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

  void noteMalformed(const std::string& why) {
    owner_->malformed_.fetch_add(1);
    const int64_t now = nowMs();
    if (now - lastMalformedLogMs_ >= kMalformedLogIntervalMs) {
      lastMalformedLogMs_ = now;
      qCWarning(lcAgentConnection) << "ignored a bad frame from the agent:" << why.c_str();
    }
  }

  void heard() {
    owner_->lastHeardMs_.store(nowMs());
    if (owner_->state_.load() != NodeState::Online) {
      setState(NodeState::Online);
      onOnline();
    }
  }

  void receiveReplies() {
    for (int i = 0; i < kMaxFramesPerTurn && dealer_; ++i) {
      bool gotFrame = false;
      std::optional<v1::Envelope> reply = receiveOne(dealer_, gotFrame);
      if (!gotFrame) return;
      if (!reply) continue;
      heard();
      handleReply(std::move(*reply));
    }
  }

  void receiveEvents() {
    for (int i = 0; i < kMaxFramesPerTurn && sub_; ++i) {
      bool gotFrame = false;
      std::optional<v1::Envelope> event = receiveOne(sub_, gotFrame);
      if (!gotFrame) return;
      if (!event) continue;
      heard();
      handleEvent(*event);
    }
  }

  void handleReply(v1::Envelope reply) {
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

  // ---- Catch-up.

  // Asks for the node's runs, one page (ListRunsReply.next_page_token) at a time.
  void onOnline(const std::string& pageToken = std::string()) {
    v1::Envelope list;
    list.mutable_list_runs()->set_include_ended(true);
    list.mutable_list_runs()->set_page_token(pageToken);
    if (sendInternal(std::move(list), Pending::Kind::List) == 0) markAllFollowedForFetch();
  }

  void markAllFollowedForFetch() {
    for (auto& [runId, track] : runs_) {
      if (track.followed && !track.fetching) track.needsFetch = true;
    }
  }

  void handleRunList(const v1::Envelope& reply) {
    if (!reply.has_list_runs_reply()) {
      markAllFollowedForFetch();
      return;
    }
    for (const v1::RunInfo& run : reply.list_runs_reply().runs()) {
      auto it = runs_.find(run.run_id());
      if (it == runs_.end()) {
        if (!options_.autoTrackRuns || run.last_seq() == 0) continue;
        it = runs_.try_emplace(run.run_id()).first;
        it->second.followed = true;
      }
      RunTrack& track = it->second;
      if (track.followed && !track.fetching && track.applied < run.last_seq()) {
        track.needsFetch = true;
      }
    }
    emitLater([o = owner_, l = reply.list_runs_reply()] { emit o->runsListed(l); });
    if (!reply.list_runs_reply().next_page_token().empty()) {
      onOnline(reply.list_runs_reply().next_page_token());
    }
  }

  void startFetches() {
    if (owner_->state_.load() != NodeState::Online) return;
    int inFlight = 0;
    for (const auto& [runId, track] : runs_) inFlight += track.fetching ? 1 : 0;
    for (auto& [runId, track] : runs_) {
      if (inFlight >= kMaxConcurrentFetches) return;
      if (!track.needsFetch || track.fetching) continue;
      track.needsFetch = false;
      if (requestPage(runId, track)) ++inFlight;
    }
  }

  bool requestPage(const std::string& runId, RunTrack& track) {
    v1::Envelope fetch;
    auto* body = fetch.mutable_fetch_run_data();
    body->set_run_id(runId);
    body->set_after_seq(track.applied);
    body->set_max_entries(options_.fetchPageEntries);
    if (sendInternal(std::move(fetch), Pending::Kind::Fetch, runId) == 0) {
      track.fetching = false;
      track.needsFetch = true;
      return false;
    }
    track.fetching = true;
    return true;
  }

  void handleFetchPage(const std::string& runId, const v1::Envelope& reply) {
    auto it = runs_.find(runId);
    if (it == runs_.end()) return;  // untracked meanwhile
    RunTrack& track = it->second;
    track.fetching = false;
    if (reply.has_error()) {
      const QString id = QString::fromStdString(runId);
      if (reply.error().code() == v1::ErrorReply::NOT_FOUND) {
        runs_.erase(it);  // deleted by the agent's retention: nothing left to fetch
        return;
      }
      const QString message = QString::fromStdString(reply.error().message());
      emitLater([o = owner_, id, message] { emit o->fetchFailed(id, message); });
      return;
    }
    if (!reply.has_fetch_run_data_reply()) return;
    v1::FetchRunDataReply page = reply.fetch_run_data_reply();
    const uint64_t applied = track.applied;
    auto removeSeen = [applied](auto* entries, auto seqOf) {
      entries->erase(std::remove_if(entries->begin(), entries->end(),
                                    [&](const auto& entry) { return seqOf(entry) <= applied; }),
                     entries->end());
    };
    removeSeen(page.mutable_samples(), [](const v1::MetricSample& s) { return s.seq(); });
    removeSeen(page.mutable_log_lines(), [](const v1::LogLine& l) { return l.seq(); });
    removeSeen(page.mutable_states(), [](const v1::RunStateEvent& e) { return e.seq(); });
    track.applied = std::max(track.applied, page.last_seq());
    // Live entries collected so far are older than this page: deliver them first.
    flush(true);
    const bool more = page.more();
    emitLater([o = owner_, p = std::move(page)] { emit o->runDataFetched(p); });
    if (more) {
      requestPage(runId, track);
      return;
    }
    const QString id = QString::fromStdString(runId);
    const uint64_t lastSeq = track.applied;
    emitLater([o = owner_, id, lastSeq] { emit o->runCaughtUp(id, lastSeq); });
    if (track.seenWhileFetching > track.applied) track.needsFetch = true;
    track.seenWhileFetching = 0;
  }

  // ---- Live events.

  // Whether the live entry `seq` of `runId` is new and next in line; notes gaps for a fetch.
  bool acceptLive(const std::string& runId, uint64_t seq) {
    auto [it, inserted] = runs_.try_emplace(runId);
    RunTrack& track = it->second;
    if (inserted) track.followed = options_.autoTrackRuns;
    if (track.fetching) {
      track.seenWhileFetching = std::max(track.seenWhileFetching, seq);
      return false;
    }
    if (seq <= track.applied) return false;
    if (seq == track.applied + 1 || !track.followed) {
      track.applied = seq;
      return true;
    }
    track.needsFetch = true;  // a gap: the journal has the missing entries, and this one
    return false;
  }

  void handleEvent(const v1::Envelope& event) {
    switch (event.body_case()) {
      case v1::Envelope::kNodeTelemetry:
        batch_.telemetry.push_back(event.node_telemetry());
        break;
      case v1::Envelope::kRunState:
        if (acceptLive(event.run_state().run().run_id(), event.run_state().seq())) {
          batch_.states.push_back(event.run_state());
        }
        break;
      case v1::Envelope::kMetricBatch: {
        const std::string& runId = event.metric_batch().run_id();
        v1::MetricBatch* target = nullptr;
        for (const v1::MetricSample& sample : event.metric_batch().samples()) {
          if (!acceptLive(runId, sample.seq())) continue;
          if (target == nullptr) target = &batchFor(batch_.metrics, metricIndex_, runId);
          *target->add_samples() = sample;
        }
        break;
      }
      case v1::Envelope::kLogBatch: {
        const std::string& runId = event.log_batch().run_id();
        v1::LogBatch* target = nullptr;
        for (const v1::LogLine& line : event.log_batch().lines()) {
          if (!acceptLive(runId, line.seq())) continue;
          if (target == nullptr) target = &batchFor(batch_.logs, logIndex_, runId);
          *target->add_lines() = line;
        }
        break;
      }
      default:
        break;  // not an event (or one this build does not know): ignore
    }
  }

  template <typename Batch>
  static Batch& batchFor(std::vector<Batch>& batches, std::map<std::string, size_t>& index,
                         const std::string& runId) {
    auto [it, inserted] = index.try_emplace(runId, batches.size());
    if (inserted) {
      batches.emplace_back();
      batches.back().set_run_id(runId);
    }
    return batches[it->second];
  }

  // Hands the collected events to the GUI thread: at most every deliveryIntervalMs, and only when
  // the GUI thread took the previous batch (so a busy GUI gets fewer, larger batches); `force`
  // skips both checks (before a fetch page, so per-run order holds).
  void flush(bool force) {
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

  void onTimers() {
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
          emit o->requestFailed(id, tr("the agent did not answer in time"));
        });
      } else if (pending.kind == Pending::Kind::List) {
        markAllFollowedForFetch();
      } else if (pending.kind == Pending::Kind::Fetch) {
        auto track = runs_.find(pending.runId);
        if (track != runs_.end()) {
          track->second.fetching = false;
          track->second.needsFetch = true;
        }
        const QString runId = QString::fromStdString(pending.runId);
        emitLater([o = owner_, runId] {
          emit o->fetchFailed(runId, tr("the agent did not answer a catch-up request in time"));
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

  void goOffline() {
    setState(NodeState::Offline);
    // Internal requests in flight are lost with the connection; catch-up starts over when the
    // node is back (user requests keep their own timeout).
    for (auto it = pending_.begin(); it != pending_.end();) {
      if (it->second.kind == Pending::Kind::User) {
        ++it;
        continue;
      }
      if (it->second.kind == Pending::Kind::Fetch) {
        auto track = runs_.find(it->second.runId);
        if (track != runs_.end()) {
          track->second.fetching = false;
          track->second.needsFetch = true;
        }
      }
      it = pending_.erase(it);
    }
  }

  AgentConnection* const owner_;
  const curve::KeyPair keys_;
  const AgentConnectionOptions options_;
  zmq::context_t context_;

  Mutex mutex_;
  std::deque<std::function<void()>> commands_ GUARDED_BY(mutex_);
  zmq::socket_t wakeSender_ GUARDED_BY(mutex_);
  std::atomic<bool> stopping_{false};
  std::thread thread_;

  // Network thread only.
  zmq::socket_t wakeReceiver_;
  zmq::socket_t dealer_;
  zmq::socket_t sub_;
  std::unordered_map<uint64_t, Pending> pending_;
  std::map<std::string, RunTrack> runs_;
  EventBatch batch_;
  std::map<std::string, size_t> metricIndex_;  // run id -> index in batch_.metrics
  std::map<std::string, size_t> logIndex_;     // run id -> index in batch_.logs
  std::shared_ptr<std::atomic<bool>> deliveryInFlight_ = std::make_shared<std::atomic<bool>>(false);
  int64_t lastFlushMs_ = 0;
  int64_t lastHeartbeatMs_ = 0;
  int64_t connectedAtMs_ = 0;
  int64_t lastMalformedLogMs_ = -kMalformedLogIntervalMs;
};

AgentConnection::AgentConnection(curve::KeyPair keys, AgentConnectionOptions options,
                                 QObject* parent)
    : QObject(parent) {
  registerMetaTypes();
  worker_ = std::make_unique<Worker>(this, std::move(keys), std::move(options));
}

AgentConnection::~AgentConnection() { stop(); }

void AgentConnection::stop() {
  if (stopped_.exchange(true)) return;
  worker_->stop();
}

void AgentConnection::connectTo(const QString& controlEndpoint, const QString& eventsEndpoint,
                                const QString& agentPublicKey) {
  if (stopped_.load()) return;
  worker_->post([w = worker_.get(), control = controlEndpoint.toStdString(),
                 events = eventsEndpoint.toStdString(),
                 key = agentPublicKey.toStdString()] { w->connectTo(control, events, key); });
}

uint64_t AgentConnection::request(const v1::Envelope& envelope) {
  if (stopped_.load()) return 0;
  const uint64_t id = nextRequestId();
  v1::Envelope copy = envelope;
  copy.set_protocol_version(protocol::kProtocolVersion);
  copy.set_request_id(id);
  worker_->post([w = worker_.get(), id, frame = protocol::encodeEnvelope(copy)]() mutable {
    w->sendUserRequest(id, std::move(frame));
  });
  return id;
}

uint64_t AgentConnection::hello() {
  v1::Envelope envelope;
  envelope.mutable_hello()->set_client_name("ringside");
  return request(envelope);
}

uint64_t AgentConnection::listRuns(bool includeEnded) {
  v1::Envelope envelope;
  envelope.mutable_list_runs()->set_include_ended(includeEnded);
  return request(envelope);
}

uint64_t AgentConnection::launchRun(const v1::RunSpec& spec) {
  v1::Envelope envelope;
  *envelope.mutable_launch_run()->mutable_spec() = spec;
  return request(envelope);
}

uint64_t AgentConnection::stopRun(const QString& runId, double graceSeconds) {
  v1::Envelope envelope;
  envelope.mutable_stop_run()->set_run_id(runId.toStdString());
  envelope.mutable_stop_run()->set_grace_seconds(graceSeconds);
  return request(envelope);
}

uint64_t AgentConnection::setDrain(bool draining) {
  v1::Envelope envelope;
  envelope.mutable_set_drain()->set_draining(draining);
  return request(envelope);
}

uint64_t AgentConnection::tailLog(const QString& runId, uint32_t maxLines) {
  v1::Envelope envelope;
  envelope.mutable_tail_log()->set_run_id(runId.toStdString());
  envelope.mutable_tail_log()->set_max_lines(maxLines);
  return request(envelope);
}

uint64_t AgentConnection::fetchSince(const QString& runId, uint64_t afterSeq, uint32_t maxEntries) {
  v1::Envelope envelope;
  envelope.mutable_fetch_run_data()->set_run_id(runId.toStdString());
  envelope.mutable_fetch_run_data()->set_after_seq(afterSeq);
  envelope.mutable_fetch_run_data()->set_max_entries(maxEntries);
  return request(envelope);
}

void AgentConnection::trackRun(const QString& runId, uint64_t lastSeq) {
  if (stopped_.load()) return;
  worker_->post(
      [w = worker_.get(), id = runId.toStdString(), lastSeq] { w->trackRun(id, lastSeq); });
}

void AgentConnection::untrackRun(const QString& runId) {
  if (stopped_.load()) return;
  worker_->post([w = worker_.get(), id = runId.toStdString()] { w->untrackRun(id); });
}

int64_t AgentConnection::heartbeatAgeMs() const {
  const int64_t last = lastHeardMs_.load();
  return last < 0 ? -1 : nowMs() - last;
}

}  // namespace ringside::gui
