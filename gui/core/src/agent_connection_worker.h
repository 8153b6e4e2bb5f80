// AgentConnection's network thread, private to agent_connection*.cpp: the sockets, the poll loop,
// the pending requests with their time-outs, liveness, and the live-event batch. Catch-up
// decisions are CatchUp's (catch_up.h); this class only carries them out over the sockets.
#pragma once

#include <QMetaObject>
#include <QString>
#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <zmq.hpp>

#include "ringside/common/mutex.h"
#include "ringside/gui/agent_bounds.h"
#include "ringside/gui/agent_connection.h"
#include "ringside/gui/catch_up.h"

namespace ringside::gui {

// Steady-clock milliseconds.
int64_t nowMs();

// Everything that touches ZeroMQ. The socket members and the catch-up state belong to the network
// thread; the GUI thread only appends to commands_ (under mutex_) and wakes the thread.
class AgentConnection::Worker {
 public:
  // Binds the wake-up pair and starts the network thread.
  Worker(AgentConnection* owner, curve::KeyPair keys, AgentConnectionOptions options);
  ~Worker() { stop(); }

  // Queues `command` for the network thread and wakes it. Thread-safe.
  void post(std::function<void()> command);
  // Wakes the network thread without a command (a delivery was taken). Thread-safe.
  void wake();
  // Ends the network thread (within about one poll timeout) and joins it. Idempotent.
  void stop();

  // ---- Commands (run on the network thread).

  void connectTo(const std::string& control, const std::string& events, const std::string& key);
  void sendUserRequest(uint64_t requestId, std::string frame);
  void trackRun(const std::string& runId, uint64_t lastSeq) { catchUp_.trackRun(runId, lastSeq); }
  void trackRuns(const std::vector<std::pair<std::string, uint64_t>>& runs) {
    for (const auto& [runId, lastSeq] : runs) catchUp_.trackRun(runId, lastSeq);
  }
  void untrackRun(const std::string& runId) { catchUp_.untrackRun(runId); }
  void ignoreRun(const std::string& runId) { catchUp_.ignoreRun(runId); }

 private:
  struct Pending {
    enum class Kind { User, Hello, List, Fetch };
    Kind kind = Kind::User;
    int64_t deadlineMs = 0;
    std::string runId;  // Fetch
  };

  // Emits on the owner's thread, through its event loop.
  template <typename F>
  void emitLater(F&& function) {
    QMetaObject::invokeMethod(owner_, std::forward<F>(function), Qt::QueuedConnection);
  }

  void setState(NodeState state);
  Status openSockets(const std::string& control, const std::string& events, const std::string& key);
  void closeSockets();
  bool sendFrame(const std::string& frame);
  // Sends an internal request; returns its id, 0 when it could not be sent.
  uint64_t sendInternal(v1::Envelope envelope, Pending::Kind kind, const std::string& runId = {});
  void sendHeartbeat();
  void failUserRequests(const QString& message);

  // The loop and what it reads.
  void run();
  void drainWakeUps();
  void runCommands();
  // Reads one frame (and discards any further parts of a multi-part message, which the protocol
  // never sends). Returns the decoded envelope, bounded to the protocol's limits
  // (agent_bounds.h), or nothing when there is no frame or it is bad.
  std::optional<v1::Envelope> receiveOne(zmq::socket_t& socket, AgentChannel channel,
                                         bool& gotFrame);
  void noteMalformed(const std::string& why);
  // Something the agent sent was clipped or refused (`what`, in English): logged and reported
  // through agentDataRefused, at most every kRefusalReportIntervalMs with a count of the rest.
  void noteRefused(const std::string& what);
  void reportRefusals();
  void heard();
  void receiveReplies();
  void receiveEvents();
  void handleReply(v1::Envelope reply);

  // Catch-up over the sockets.
  // Asks for the node's runs, one page (ListRunsReply.next_page_token) at a time.
  void onOnline(const std::string& pageToken = std::string());
  void handleRunList(v1::Envelope reply);
  void listFailed();
  void startFetches();
  void handleFetchPage(const std::string& runId, const v1::Envelope& reply);
  // CatchUp's way of sending a page request.
  bool sendFetch(const std::string& runId, uint64_t afterSeq);

  // Live events.
  void handleEvent(const v1::Envelope& event);
  // Hands the collected events to the GUI thread: at most every deliveryIntervalMs, and only when
  // the GUI thread took every earlier delivery (so a busy GUI gets fewer, larger batches), in
  // slices of bounded size; `force` skips both checks (before a fetch page, so per-run order
  // holds).
  void flush(bool force);

  // Deliveries to the GUI thread (event batches, run list slices, catch-up pages and their
  // outcomes), in order, one at a time: the next is posted only once the GUI thread has run the
  // previous one, so its event loop runs timers and paints between any two, and no one delivery
  // holds more than the per-delivery bounds (agent_connection_worker.cpp).
  void deliver(std::function<void()> emitOnGuiThread);
  void pumpOutbox();

  // Time-outs, liveness, heartbeats, due fetches and deliveries: once per loop turn.
  void onTimers();
  void goOffline();

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
  CatchUp catchUp_;
  EventBatch batch_;
  std::map<std::string, size_t> metricIndex_;  // run id -> index in batch_.metrics
  std::map<std::string, size_t> logIndex_;     // run id -> index in batch_.logs
  std::shared_ptr<std::atomic<bool>> deliveryInFlight_ = std::make_shared<std::atomic<bool>>(false);
  std::deque<std::function<void()>> outbox_;
  int64_t lastFlushMs_ = 0;
  bool listInFlight_ = false;
  int64_t lastListRequestMs_ = 0;
  uint64_t refusedSinceReport_ = 0;
  std::string latestRefusal_;
  int64_t lastHeartbeatMs_ = 0;
  int64_t connectedAtMs_ = 0;
  int64_t lastMalformedLogMs_;
  // The last refusal of hello said to the user (a refusal is said once, not every heartbeat).
  std::string lastHelloError_;
  int64_t lastRefusalReportMs_;
};

}  // namespace ringside::gui
