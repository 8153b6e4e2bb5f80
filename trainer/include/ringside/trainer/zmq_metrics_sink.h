// ZmqMetricSink: sends one rank's metric samples to the node agent over ZeroMQ PUSH (docs/design.md
// decision 1), as Envelope{rank_metrics} messages of common/proto/ringside.proto.
//
// The training thread only appends to a bounded in-memory queue; a background sender thread owns
// the socket, packs the queue into batches numbered batch_seq = 1, 2, 3, ... and sends them without
// ever waiting for the agent. While the agent is away (not started yet, restarting after a crash)
// the points wait in the queue; when the queue is full, new points are dropped and counted, never
// blocking a step. Every batch carries the running dropped count, and the destructor reports it on
// stderr.
//
// A message written to a connection that then dies (agent SIGKILL) is lost inside the kernel or
// ZeroMQ, so the sender keeps the last `resendWindow` batches it sent and sends them again, ahead
// of anything new, each time the socket connects. The agent skips a batch_seq it already journaled,
// so nothing is counted twice. With ZmqMetricSinkOptions::activity the same thread sends the
// rank's heartbeat about once a second (docs/metrics.md, "Hangs"). docs/metrics.md ("The agent
// sink") describes the behaviour for users.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <thread>

#include "ringside/common/curve.h"
#include "ringside/common/mutex.h"
#include "ringside/common/status.h"
#include "ringside/trainer/metrics_sink.h"
#include "ringside/trainer/rank_activity.h"

namespace ringside::trainer {

struct ZmqMetricSinkOptions {
  // Points waiting for the sender (not yet in a batch). A record that does not fit whole is
  // dropped whole. At about 100 bytes a point, the default holds ~6 MB: minutes of metrics
  // at the trainer's log rate while the agent restarts.
  size_t queueCapacity = 65536;
  // Batches kept after they were sent, resent after a reconnect. Must cover what can be in
  // flight when the agent dies: the ZeroMQ pipe (sendHighWaterMark) plus the kernel's socket
  // buffer plus what the agent had received but not yet journaled.
  size_t resendWindow = 256;
  // The sender packs and sends the queue at least this often (sooner when maxBatchPoints points
  // are waiting, or on flush()).
  std::chrono::milliseconds flushInterval{100};
  // Points per batch (one Envelope), >= 1.
  size_t maxBatchPoints = 1024;
  // ZMQ_SNDHWM, in messages: how many batches ZeroMQ itself queues for a connected agent.
  int sendHighWaterMark = 64;
  // ZMQ_RECONNECT_IVL: how soon the socket tries again after the agent went away.
  std::chrono::milliseconds reconnectInterval{100};
  // How long flush() waits for the queue to be sent.
  std::chrono::milliseconds flushTimeout{2000};
  // ZMQ_LINGER: how long closing the socket in the destructor waits for batches that ZeroMQ has
  // accepted to reach the agent.
  std::chrono::milliseconds linger{1000};
  // CURVE, required for a tcp:// endpoint off loopback (a rank on another node than its agent): the
  // agent's public key and the run's own keypair (the RINGSIDE_AGENT_PUBLIC_KEY,
  // RINGSIDE_RUN_PUBLIC_KEY and RINGSIDE_RUN_SECRET_KEY the agent sets). Empty: no CURVE (ipc://).
  std::string agentPublicKey;
  curve::KeyPair runKeys;
  // Not null: the sender thread also sends a heartbeat of this rank (RankHeartbeat: its phase,
  // step and the collective it waits in) every heartbeatInterval, whatever the training thread
  // is doing; heartbeats are never queued or resent (a newer one replaces a lost one). Must
  // outlive the sink.
  const RankActivity* activity = nullptr;
  std::chrono::milliseconds heartbeatInterval{1000};
};

// Counters of a ZmqMetricSink, for tests and the destructor's report.
struct ZmqMetricSinkStats {
  uint64_t droppedPoints = 0;  // points dropped because the queue was full
  uint64_t queuedPoints = 0;   // points accepted into the queue
  uint64_t sentBatches = 0;    // batches sent for the first time (batch_seq of the last one)
  uint64_t resentBatches = 0;  // batches sent again after a reconnect
};

// Thread-safety: writeMetrics(), writeEvent() and flush() may be called from any one thread at a
// time (the training thread); stats() from any thread. The socket belongs to the sender thread.
class ZmqMetricSink final : public MetricSink {
 public:
  // Connects a PUSH socket to `endpoint` (e.g. "ipc:///run/user/1000/ringside/ranks.sock"; the
  // agent need not be listening yet) and starts the sender thread. Samples are sent as RankMetrics
  // {run_id = runId, rank = rank}. Errors: InvalidArgument for an endpoint ZeroMQ does not accept,
  // for options out of range (naming them), for a non-loopback tcp:// endpoint without CURVE
  // keys or for an invalid key; Internal when ZeroMQ cannot create the socket.
  static Result<std::unique_ptr<ZmqMetricSink>> create(const std::string& endpoint,
                                                       const std::string& runId, int rank,
                                                       const ZmqMetricSinkOptions& options = {});

  // Stops the sender after one last attempt to send what is queued (waiting at most about
  // flushInterval + linger), and prints on stderr how many points were dropped or left unsent,
  // if any.
  ~ZmqMetricSink() override;
  ZmqMetricSink(const ZmqMetricSink&) = delete;
  ZmqMetricSink& operator=(const ZmqMetricSink&) = delete;

  // Queues the record's values as points (global = !record.rank); never blocks on the network.
  // When the queue cannot take all of them, the whole record is dropped and counted.
  void writeMetrics(const MetricRecord& record) override;
  // Run events are not sent: the agent learns the run's start and end from mpirun itself.
  void writeEvent(const nlohmann::json& event) override;
  // Waits, at most options.flushTimeout, until every queued point has been handed to ZeroMQ.
  // Returns early (points still queued) when the agent is not reachable within that time.
  void flush() override;

  ZmqMetricSinkStats stats() const;

 private:
  struct Point {
    int64_t step = 0;
    int64_t epoch = 0;
    double wallTime = 0.0;  // Unix seconds
    bool global = false;
    std::string name;
    double value = 0.0;
  };
  class Sender;  // the sender thread's state: ZeroMQ context, sockets, outbox, resend window

  ZmqMetricSink(std::string endpoint, const ZmqMetricSinkOptions& options, int rank,
                std::unique_ptr<Sender> sender);
  void senderLoop();
  // Moves up to maxBatchPoints points from the queue into `points`; true when any were taken.
  bool takeBatch(std::deque<Point>* points) EXCLUDES(mutex_);

  const std::string endpoint_;  // for messages
  const ZmqMetricSinkOptions options_;
  const int rank_;
  std::unique_ptr<Sender> sender_;  // used by the sender thread only (after construction)

  mutable Mutex mutex_;
  CondVar wake_;     // with mutex_: sender: new points, flush requested or stop
  CondVar drained_;  // with mutex_: flush(): the sender went idle
  std::deque<Point> queue_ GUARDED_BY(mutex_);
  bool flushRequested_ GUARDED_BY(mutex_) = false;
  bool senderIdle_ GUARDED_BY(mutex_) = true;  // queue empty and nothing left unsent

  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> droppedPoints_{0};
  std::atomic<uint64_t> queuedPoints_{0};
  std::atomic<uint64_t> sentBatches_{0};
  std::atomic<uint64_t> resentBatches_{0};
  std::thread thread_;
};

}  // namespace ringside::trainer
