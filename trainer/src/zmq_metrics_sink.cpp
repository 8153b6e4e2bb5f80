#include "ringside/trainer/zmq_metrics_sink.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <stdexcept>
#include <utility>
#include <vector>

#include <unistd.h>

#include <zmq.hpp>

#include "ringside/common/protocol.h"
#include "ringside/proto/ringside.pb.h"

namespace ringside::trainer {

namespace {

// Envelope.protocol_version of the messages this sink writes (common/proto/ringside.proto).
constexpr uint32_t kProtocolVersion = 1;
// Each sink has its own ZeroMQ context, and inproc names are per context: one name is enough.
constexpr const char* kMonitorEndpoint = "inproc://ringside-metrics-sink-monitor";
// A full queue is reported on stderr at most this often (the count is in every batch anyway).
constexpr std::chrono::seconds kDropReportInterval{10};

using Clock = std::chrono::steady_clock;

}  // namespace

// Everything the sender thread owns. Created (and the socket connected) by create(), then used by
// the sender thread only, and destroyed after it has been joined.
class ZmqMetricSink::Sender {
 public:
  struct Batch {
    uint64_t seq = 0;
    size_t points = 0;
    std::string bytes;  // the serialized Envelope
  };
  struct Outgoing {
    std::shared_ptr<const Batch> batch;
    bool resend = false;  // already sent once (in window_)
  };

  Sender(std::string runId, int rank) : runId_(std::move(runId)), rank_(rank) {}

  ~Sender() {
    if (push_) zmq_socket_monitor(push_.handle(), nullptr, 0);
    monitor_.close();
    push_.close();  // waits for queued batches at most ZMQ_LINGER, in context_'s destructor
  }

  // Errors: zmq::error_t for an endpoint or option ZeroMQ refuses.
  void connect(const std::string& endpoint, const ZmqMetricSinkOptions& options) {
    push_ = zmq::socket_t(context_, zmq::socket_type::push);
    // Queue nothing for an agent that is not connected: batches stay in the sink, where they
    // are counted, bounded and resent, instead of in a ZeroMQ pipe that dies with the connection.
    push_.set(zmq::sockopt::immediate, 1);
    push_.set(zmq::sockopt::sndhwm, options.sendHighWaterMark);
    push_.set(zmq::sockopt::linger, static_cast<int>(options.linger.count()));
    push_.set(zmq::sockopt::reconnect_ivl, static_cast<int>(options.reconnectInterval.count()));
    if (!options.agentPublicKey.empty()) {
      const Status curve = curve::configureClient(push_, options.runKeys, options.agentPublicKey);
      if (!curve.isOk()) throw std::invalid_argument(curve.message());
    }
    // The monitor is attached before connecting so that the first CONNECTED event is seen.
    if (zmq_socket_monitor(push_.handle(), kMonitorEndpoint,
                           ZMQ_EVENT_CONNECTED | ZMQ_EVENT_DISCONNECTED) != 0) {
      throw zmq::error_t();
    }
    monitor_ = zmq::socket_t(context_, zmq::socket_type::pair);
    monitor_.connect(kMonitorEndpoint);
    push_.connect(endpoint);
  }

  // Handles the socket's connection events. On each new connection the resend window goes to
  // the front of the outbox: the agent may have died before journaling those batches.
  void handleMonitorEvents() {
    for (;;) {
      zmq::message_t event;
      zmq::message_t address;
      try {
        if (!monitor_.recv(event, zmq::recv_flags::dontwait)) return;
        // Multipart messages arrive whole: the address frame is already there.
        if (event.more()) (void)monitor_.recv(address, zmq::recv_flags::dontwait);
      } catch (const zmq::error_t&) {
        return;  // EINTR (a stop signal): the next pass reads the event
      }
      uint16_t id = 0;
      if (event.size() >= sizeof id) std::memcpy(&id, event.data(), sizeof id);
      if (id == ZMQ_EVENT_CONNECTED) requeueWindow();
    }
  }

  // Packs `points` into the next batch (batch_seq + 1) at the back of the outbox.
  template <typename Points>
  void enqueue(const Points& points, uint64_t droppedTotal) {
    ringside::v1::Envelope envelope;
    envelope.set_protocol_version(kProtocolVersion);
    ringside::v1::RankMetrics* metrics = envelope.mutable_rank_metrics();
    metrics->set_run_id(runId_);
    metrics->set_rank(rank_);
    metrics->set_batch_seq(nextSeq_);
    metrics->set_dropped_total(droppedTotal);
    for (const auto& point : points) {
      ringside::v1::RankMetricPoint* out = metrics->add_points();
      out->set_step(point.step);
      out->set_epoch(point.epoch);
      out->set_wall_time(point.wallTime);
      out->set_global(point.global);
      out->set_name(point.name);
      out->set_value(point.value);
    }
    auto batch = std::make_shared<Batch>();
    batch->seq = nextSeq_++;
    batch->points = points.size();
    envelope.SerializeToString(&batch->bytes);
    outbox_.push_back({std::move(batch), false});
  }

  bool outboxEmpty() const { return outbox_.empty(); }

  // Points in batches never sent yet.
  size_t unsentPoints() const {
    size_t points = 0;
    for (const Outgoing& out : outbox_) points += out.resend ? 0 : out.batch->points;
    return points;
  }

  enum class SendResult { kSentNew, kResent, kWouldBlock };

  // Sends the outbox's first batch without waiting. kWouldBlock: no agent connected, or its
  // pipe is full; the batch stays first in the outbox.
  SendResult sendFront(size_t resendWindow) {
    const Outgoing& front = outbox_.front();
    zmq::send_result_t sent;
    try {
      sent = push_.send(zmq::buffer(front.batch->bytes), zmq::send_flags::dontwait);
    } catch (const zmq::error_t& e) {
      // EINTR (a stop signal) or, not expected for PUSH, another error: keep the batch and try
      // again later rather than lose it.
      if (e.num() != EINTR && !sendErrorReported_) {
        std::fprintf(stderr, "ringside-trainer: rank %d: sending metrics to the agent failed: %s\n",
                     rank_, e.what());
        sendErrorReported_ = true;
      }
      return SendResult::kWouldBlock;
    }
    if (!sent) return SendResult::kWouldBlock;
    const bool resend = front.resend;
    if (!resend && resendWindow > 0) {
      window_.push_back(front.batch);
      while (window_.size() > resendWindow) window_.pop_front();
    }
    outbox_.pop_front();
    return resend ? SendResult::kResent : SendResult::kSentNew;
  }

  // Sends one heartbeat (RankHeartbeat) of `activity` without waiting; one the socket cannot take
  // now (no agent connected, or its pipe full) is dropped: the next one replaces it.
  void sendHeartbeat(const RankActivity& activity, const std::string& host) {
    const RankActivity::Snapshot a = activity.snapshot();
    ringside::v1::Envelope envelope;
    envelope.set_protocol_version(kProtocolVersion);
    ringside::v1::RankHeartbeat* beat = envelope.mutable_rank_heartbeat();
    beat->set_run_id(runId_);
    beat->set_rank(rank_);
    beat->set_host(host);
    beat->set_pid(static_cast<int64_t>(::getpid()));
    beat->set_phase(a.phase);
    beat->set_phase_seconds(a.phaseSeconds);
    beat->set_step(a.step);
    beat->set_bucket(a.bucket);
    if (a.waitingIn != nullptr) {
      beat->set_waiting_in(RankActivity::describeWait(a));
      beat->set_waiting_seconds(a.waitingSeconds);
    }
    beat->set_work_done(a.workDone);
    beat->set_last_step_ms(a.lastStepMs);
    beat->set_wall_time(
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count());
    const std::string bytes = envelope.SerializeAsString();
    try {
      (void)push_.send(zmq::buffer(bytes), zmq::send_flags::dontwait);
    } catch (const zmq::error_t&) {
      // EINTR or a closed connection: the next heartbeat tries again.
    }
  }

  // Waits until the socket can send or reports an event, at most `timeout`.
  void waitForAgent(std::chrono::milliseconds timeout) {
    zmq::pollitem_t items[] = {{push_.handle(), 0, ZMQ_POLLOUT, 0},
                               {monitor_.handle(), 0, ZMQ_POLLIN, 0}};
    try {
      zmq::poll(items, 2, timeout);
    } catch (const zmq::error_t&) {
      // EINTR: the caller loops anyway.
    }
  }

 private:
  void requeueWindow() {
    while (!outbox_.empty() && outbox_.front().resend) outbox_.pop_front();
    for (auto it = window_.rbegin(); it != window_.rend(); ++it) outbox_.push_front({*it, true});
  }

  const std::string runId_;
  const int rank_;
  zmq::context_t context_{1};
  zmq::socket_t push_;
  zmq::socket_t monitor_;                            // PAIR end of push_'s monitor
  uint64_t nextSeq_ = 1;                             // batch_seq of the next new batch
  std::deque<Outgoing> outbox_;                      // resends first, then new batches in order
  std::deque<std::shared_ptr<const Batch>> window_;  // the last batches sent, oldest first
  bool sendErrorReported_ = false;
};

Result<std::unique_ptr<ZmqMetricSink>> ZmqMetricSink::create(const std::string& endpoint,
                                                             const std::string& runId, int rank,
                                                             const ZmqMetricSinkOptions& options) {
  if (options.queueCapacity < 1 || options.maxBatchPoints < 1 || options.sendHighWaterMark < 1 ||
      options.flushInterval.count() <= 0 || options.heartbeatInterval.count() <= 0 ||
      options.reconnectInterval.count() <= 0 || options.flushTimeout.count() < 0 ||
      options.linger.count() < 0) {
    return Status::invalidArgument(
        "agent metrics sink options out of range: queueCapacity, maxBatchPoints, "
        "sendHighWaterMark, flushInterval and reconnectInterval must be positive, flushTimeout "
        "and linger not negative");
  }
  if (endpoint.starts_with("tcp://") && !curve::isLoopbackEndpoint(endpoint) &&
      options.agentPublicKey.empty()) {
    return Status::invalidArgument("agent endpoint '" + endpoint +
                                   "' is tcp:// but no CURVE keys were given (" +
                                   protocol::kAgentPublicKeyEnv + ", " +
                                   protocol::kRunPublicKeyEnv + ", " + protocol::kRunSecretKeyEnv +
                                   "): metrics never cross nodes in plaintext; the agent sets "
                                   "them for multi-node runs");
  }
  auto sender = std::make_unique<Sender>(runId, rank);
  try {
    sender->connect(endpoint, options);
  } catch (const std::invalid_argument& e) {
    return Status::invalidArgument(std::string("agent metrics sink CURVE keys: ") + e.what());
  } catch (const zmq::error_t& e) {
    if (e.num() == EINVAL || e.num() == EPROTONOSUPPORT || e.num() == ENOENT) {
      return Status::invalidArgument("cannot use agent endpoint '" + endpoint + "': " + e.what() +
                                     " (" + protocol::kAgentEndpointEnv +
                                     " must be a ZeroMQ endpoint such as "
                                     "ipc:///run/ringside/ranks.sock)");
    }
    return Status::internal("cannot create the agent metrics socket for '" + endpoint +
                            "': " + e.what());
  }
  return std::unique_ptr<ZmqMetricSink>(
      new ZmqMetricSink(endpoint, options, rank, std::move(sender)));
}

ZmqMetricSink::ZmqMetricSink(std::string endpoint, const ZmqMetricSinkOptions& options, int rank,
                             std::unique_ptr<Sender> sender)
    : endpoint_(std::move(endpoint)), options_(options), rank_(rank), sender_(std::move(sender)) {
  thread_ = std::thread([this] { senderLoop(); });
}

ZmqMetricSink::~ZmqMetricSink() {
  {
    MutexLock lock(mutex_);
    stop_.store(true, std::memory_order_release);
  }
  wake_.notifyAll();
  if (thread_.joinable()) thread_.join();
  size_t unsent = 0;
  {
    MutexLock lock(mutex_);
    unsent = queue_.size() + sender_->unsentPoints();
  }
  const uint64_t dropped = droppedPoints_.load();
  if (dropped > 0 || unsent > 0) {
    std::string why;
    if (dropped > 0) {
      why = std::to_string(dropped) + " dropped because the queue (" +
            std::to_string(options_.queueCapacity) + " points) was full";
    }
    if (unsent > 0) {
      why += (why.empty() ? "" : ", ") + std::to_string(unsent) + " unsent at exit";
    }
    std::fprintf(
        stderr, "ringside-trainer: rank %d: the agent at %s did not get %llu metric points: %s\n",
        rank_, endpoint_.c_str(), static_cast<unsigned long long>(dropped + unsent), why.c_str());
  }
  sender_.reset();  // closes the socket, bounded by options_.linger
}

void ZmqMetricSink::writeMetrics(const MetricRecord& record) {
  if (record.values.empty()) return;
  std::vector<Point> points;
  points.reserve(record.values.size());
  for (const auto& [name, value] : record.values) {
    points.push_back(Point{record.step, record.epoch, record.wallTime, !record.rank, name, value});
  }
  bool wake = false;
  {
    MutexLock lock(mutex_);
    if (queue_.size() + points.size() > options_.queueCapacity) {
      droppedPoints_.fetch_add(points.size(), std::memory_order_relaxed);
      return;
    }
    for (Point& point : points) queue_.push_back(std::move(point));
    senderIdle_ = false;
    wake = queue_.size() >= options_.maxBatchPoints;
  }
  queuedPoints_.fetch_add(points.size(), std::memory_order_relaxed);
  if (wake) wake_.notifyOne();
}

void ZmqMetricSink::writeEvent(const nlohmann::json& /*event*/) {}

void ZmqMetricSink::flush() {
  const auto deadline = Clock::now() + options_.flushTimeout;
  MutexLock lock(mutex_);
  if (senderIdle_) return;
  flushRequested_ = true;
  wake_.notifyOne();
  while (!senderIdle_ && drained_.waitUntil(mutex_, deadline)) {
  }
}

ZmqMetricSinkStats ZmqMetricSink::stats() const {
  return {droppedPoints_.load(), queuedPoints_.load(), sentBatches_.load(), resentBatches_.load()};
}

bool ZmqMetricSink::takeBatch(std::deque<Point>* points) {
  MutexLock lock(mutex_);
  const size_t count = std::min(queue_.size(), options_.maxBatchPoints);
  if (count == 0) return false;
  auto end = queue_.begin() + static_cast<std::ptrdiff_t>(count);
  points->assign(std::make_move_iterator(queue_.begin()), std::make_move_iterator(end));
  queue_.erase(queue_.begin(), end);
  senderIdle_ = false;  // the points are now in the outbox, not yet sent
  return true;
}

void ZmqMetricSink::senderLoop() {
  Sender& sender = *sender_;
  uint64_t reportedDrops = 0;
  Clock::time_point lastDropReport;
  std::deque<Point> points;
  Clock::time_point nextHeartbeat = Clock::now();
  std::string host;
  if (options_.activity != nullptr) {
    char name[256] = {};
    if (::gethostname(name, sizeof name - 1) == 0) host = name;
  }
  for (;;) {
    // Read before sending, so that the last pass sends everything written before the stop.
    const bool stopping = stop_.load(std::memory_order_acquire);
    // Events first: after a reconnect the resend window must go out before any new batch.
    sender.handleMonitorEvents();
    if (options_.activity != nullptr && !stopping && Clock::now() >= nextHeartbeat) {
      sender.sendHeartbeat(*options_.activity, host);
      nextHeartbeat = Clock::now() + options_.heartbeatInterval;
    }
    bool blocked = false;
    for (;;) {
      if (sender.outboxEmpty()) {
        if (!takeBatch(&points)) break;
        sender.enqueue(points, droppedPoints_.load(std::memory_order_relaxed));
      }
      const auto result = sender.sendFront(options_.resendWindow);
      if (result == Sender::SendResult::kWouldBlock) {
        blocked = true;
        break;
      }
      (result == Sender::SendResult::kSentNew ? sentBatches_ : resentBatches_)
          .fetch_add(1, std::memory_order_relaxed);
    }
    {
      MutexLock lock(mutex_);
      senderIdle_ = !blocked && queue_.empty();
      if (senderIdle_) flushRequested_ = false;
    }
    drained_.notifyAll();

    const uint64_t dropped = droppedPoints_.load(std::memory_order_relaxed);
    if (dropped > reportedDrops &&
        (reportedDrops == 0 || stopping || Clock::now() - lastDropReport >= kDropReportInterval)) {
      if (!stopping) {
        std::fprintf(stderr,
                     "ringside-trainer: rank %d: the metrics queue for the agent at %s is full "
                     "(%zu points; is the agent running?): %llu points dropped so far\n",
                     rank_, endpoint_.c_str(), options_.queueCapacity,
                     static_cast<unsigned long long>(dropped));
      }
      reportedDrops = dropped;
      lastDropReport = Clock::now();
    }
    if (stopping) return;

    if (blocked) {
      // Wake when the agent (re)connects or its pipe has room, or to retry after a while.
      sender.waitForAgent(options_.flushInterval);
    } else {
      const auto deadline = Clock::now() + options_.flushInterval;
      MutexLock lock(mutex_);
      while (!stop_.load(std::memory_order_relaxed) && !flushRequested_ &&
             queue_.size() < options_.maxBatchPoints && wake_.waitUntil(mutex_, deadline)) {
      }
    }
  }
}

}  // namespace ringside::trainer
