// The GUI's connection to one node agent (docs/design.md decisions 1, 2, 3 and 7;
// docs/protocol.md).
//
// One AgentConnection per node. It owns a network thread with a DEALER (control requests) and a SUB
// (events, subscribed to everything), both CURVE clients with the GUI's keypair, or plaintext for
// an `--insecure` loopback agent. All socket work happens on that thread in a poll loop with a
// 100 ms timeout, so stop() joins within about that long. The GUI thread only queues commands and
// receives signals; it never waits on ZeroMQ.
//
// What it does by itself:
//  - Liveness: a hello every second. The node is online while replies or events come, offline
//    when nothing was heard for 5 s. ZeroMQ reconnects by itself.
//  - Catch-up (docs/protocol.md, "Sequence numbers and catch-up"): when the node comes online
//    (first connect or back after being offline) it lists the node's runs and, for every run whose
//    journal holds seqs the GUI has not seen, fetches them page by page until `more` is false.
//    A gap in the live seqs of a run (PUB dropped something) starts the same fetch. The rules
//    are CatchUp's (catch_up.h), which tests drive without sockets.
//  - Live events are batched on the network thread and handed to the GUI thread at most every
//    ~33 ms as eventsReceived signals; entries with seq <= the last one delivered for their run
//    are dropped, and so are metric samples and log lines of runs the agent has not told the GUI
//    of (CatchUp: the run list is asked for again and the journal fetched, so nothing is lost).
//  - Everything the agent sends is bounded to the protocol's limits on the network thread as it
//    arrives (agent_bounds.h): text clipped, oversized lists refused, reported through
//    agentDataRefused. What reaches the GUI thread comes in deliveries of bounded size (event
//    batches, run list slices, catch-up pages), one at a time: the next is posted only once the
//    GUI thread has handled the previous one, so no message keeps the GUI thread busy for long.
//  - A malformed frame from the agent is counted and logged, never fatal.
//
// Every signal is emitted on the thread this object lives in (the GUI thread), through its event
// loop, so receivers never run on the network thread.
#pragma once

#include <QObject>
#include <QString>
#include <atomic>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "ringside/common/curve.h"
#include "ringside/proto/ringside.pb.h"

namespace ringside::gui {

// What the GUI knows about a node's reachability.
enum class NodeState {
  Connecting,  // connectTo() was called, nothing heard yet
  Online,      // a reply or an event arrived within the last kOfflineAfterMs
  Offline,     // nothing heard for kOfflineAfterMs (or not connected at all)
};

// Live events of one node, collected over one delivery interval (~33 ms). Metric samples and log
// lines are grouped by run (one MetricBatch / LogBatch per run, samples in seq order); run states
// and telemetry in arrival order. Only entries the GUI has not been given before are included.
struct EventBatch {
  std::vector<v1::MetricBatch> metrics;
  std::vector<v1::LogBatch> logs;
  std::vector<v1::RunStateEvent> states;
  std::vector<v1::NodeTelemetry> telemetry;
  // Sweep events (the whole SweepInfo each): only the latest of each sweep in the interval.
  std::vector<v1::SweepInfo> sweeps;

  bool empty() const {
    return metrics.empty() && logs.empty() && states.empty() && telemetry.empty() &&
           sweeps.empty();
  }
  // Metric samples in all runs.
  size_t sampleCount() const;
};

// Tunables; the defaults are what the issue asks (1 s hello, offline after 5 s, ≤ 30 Hz).
struct AgentConnectionOptions {
  int heartbeatIntervalMs = 1000;  // a hello this often
  int offlineAfterMs = 5000;       // nothing heard this long -> offline
  int deliveryIntervalMs = 33;     // at most one eventsReceived per interval
  int requestTimeoutMs = 15000;    // requestFailed after this long without a reply
  uint32_t fetchPageEntries = 0;   // FetchRunDataRequest.max_entries (0: the agent's page size)
  // Catch up on runs the GUI does not track yet (seen in list_runs or in live events), from seq 0.
  bool autoTrackRuns = true;
  QString clientName = QStringLiteral("ringside");  // HelloRequest.client_name
};

class AgentConnection : public QObject {
  Q_OBJECT

 public:
  // `keys`: the GUI's keypair (gui_keys.h). Starts the network thread at once (idle until
  // connectTo). Errors: none here; a bad key is reported by connectTo through connectionError.
  explicit AgentConnection(curve::KeyPair keys, AgentConnectionOptions options = {},
                           QObject* parent = nullptr);
  ~AgentConnection() override;  // stop()

  // Connects (or reconnects, dropping the previous sockets and pending requests) to an agent.
  // `agentPublicKey` empty: plaintext, allowed only for loopback endpoints (an `--insecure`
  // agent); otherwise CURVE with that server key. Non-blocking; a bad key or endpoint is reported
  // through connectionError and the state stays Offline. Thread-safe.
  void connectTo(const QString& controlEndpoint, const QString& eventsEndpoint,
                 const QString& agentPublicKey);

  // Closes the sockets and joins the network thread, within about 100 ms. Later calls do nothing;
  // requests after stop() return 0. Call from the owning thread.
  void stop();

  // Sends `envelope` (its body set; protocol_version and request_id are filled in) and returns the
  // request id. The reply arrives as replyReceived(id, reply), or requestFailed(id, why) when it
  // could not be sent or no reply came within requestTimeoutMs. Thread-safe, non-blocking.
  // Returns 0 after stop().
  uint64_t request(const v1::Envelope& envelope);

  // Convenience requests (docs/protocol.md "Requests and replies"); each returns request()'s id.
  uint64_t hello();
  uint64_t listRuns(bool includeEnded = true);
  uint64_t launchRun(const v1::RunSpec& spec);
  uint64_t stopRun(const QString& runId, double graceSeconds = 0);
  uint64_t setDrain(bool draining);
  uint64_t tailLog(const QString& runId, uint32_t maxLines);
  // One page of the run's journal after `afterSeq`, answered through replyReceived (the automatic
  // catch-up uses its own requests and runDataFetched instead).
  uint64_t fetchSince(const QString& runId, uint64_t afterSeq, uint32_t maxEntries = 0);

  // Tells the connection that the GUI already holds `runId` up to `lastSeq` (the controller calls
  // this for the runs in its store, before connectTo, and as it ingests). The connection then
  // fetches only what lies after it, and drops live entries at or below it. A lower lastSeq than
  // the connection's own mark is ignored. Thread-safe.
  void trackRun(const QString& runId, uint64_t lastSeq);
  // trackRun for many runs at once (one command for the network thread). Thread-safe.
  void trackRuns(const std::vector<std::pair<QString, uint64_t>>& runs);
  // Forgets a run: its entries are no longer fetched (live ones are still delivered when
  // autoTrackRuns is on, which tracks it again). Thread-safe.
  void untrackRun(const QString& runId);
  // The GUI deleted the run (MetricsStore::deleteRun): it is neither fetched nor delivered again,
  // whatever the node's run lists and live events show (CatchUp::ignoreRun). Thread-safe.
  void ignoreRun(const QString& runId);

  // The current state and ms since the last reply or event (-1: never heard). Thread-safe.
  NodeState state() const { return state_.load(); }
  int64_t heartbeatAgeMs() const;
  // Frames from the agent that could not be decoded, since construction. Thread-safe.
  uint64_t malformedFrames() const { return malformed_.load(); }

 signals:
  // The reply to request `requestId` (any body, including ErrorReply).
  void replyReceived(quint64 requestId, const ringside::v1::Envelope& reply);
  // Request `requestId` got no reply: not connected when sent, or requestTimeoutMs passed.
  void requestFailed(quint64 requestId, const QString& message);
  // Reachability changed; `heartbeatAgeMs` as heartbeatAgeMs() at the change.
  void stateChanged(ringside::gui::NodeState state, qint64 heartbeatAgeMs);
  // The node's inventory, from each heartbeat hello reply (about once a second while online).
  void nodeInfoReceived(const ringside::v1::HelloReply& hello);
  // The node's runs (include_ended), listed each time it comes online and when live entries of a
  // run the GUI does not know arrive: each page of the agent's list in slices of at most 256 runs
  // (the last slice of a page carries its next_page_token).
  void runsListed(const ringside::v1::ListRunsReply& runs);
  // New live events (see EventBatch); at most one per deliveryIntervalMs.
  void eventsReceived(const ringside::gui::EventBatch& batch);
  // One catch-up page of a run, with the entries already delivered removed (`last_seq`, `more`
  // and `run` as the agent sent them).
  void runDataFetched(const ringside::v1::FetchRunDataReply& page);
  // The catch-up of `runId` is complete up to `lastSeq` (the page with more == false arrived).
  void runCaughtUp(const QString& runId, quint64 lastSeq);
  // A catch-up fetch failed (an ErrorReply other than NOT_FOUND, or a timeout); it is retried the
  // next time the node comes online or a gap shows.
  void fetchFailed(const QString& runId, const QString& message);
  // connectTo could not configure the sockets (bad key, bad endpoint, plaintext off loopback).
  void connectionError(const QString& message);
  // The agent sent something over the protocol's limits (docs/protocol.md#limits), which the GUI
  // clipped or refused: a translated sentence with the count since the last report and the
  // latest finding (in English), at most one every 5 s. Logged as well.
  void agentDataRefused(const QString& message);

 private:
  class Worker;
  friend class Worker;

  uint64_t nextRequestId() { return requestCounter_.fetch_add(1) + 1; }

  std::unique_ptr<Worker> worker_;
  std::atomic<uint64_t> requestCounter_{0};
  std::atomic<NodeState> state_{NodeState::Offline};
  std::atomic<int64_t> lastHeardMs_{-1};  // steady clock ms; -1: never
  std::atomic<uint64_t> malformed_{0};
  std::atomic<bool> stopped_{false};
};

// "online", "offline", "connecting" (not translated; for logs and tests).
const char* nodeStateName(NodeState state);

}  // namespace ringside::gui

Q_DECLARE_METATYPE(ringside::v1::Envelope)
Q_DECLARE_METATYPE(ringside::v1::HelloReply)
Q_DECLARE_METATYPE(ringside::v1::ListRunsReply)
Q_DECLARE_METATYPE(ringside::v1::FetchRunDataReply)
Q_DECLARE_METATYPE(ringside::gui::EventBatch)
Q_DECLARE_METATYPE(ringside::gui::NodeState)
