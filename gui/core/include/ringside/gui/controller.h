// Controller: the GUI's application logic, without widgets. Owns the metrics store (its database
// thread), one AgentConnection per node (each with its network thread) and, on a workstation
// with no node configured, the embedded local agent. It routes every event batch and catch-up
// page into the store, keeps each connection's per-run sequence numbers current so a reconnect
// fetches only what is missing, launches and stops runs, and tells the panels what changed.
//
// GUI thread only: every method is called from, and every signal emitted on, the GUI thread; the
// work behind them runs on the store's and the connections' threads.
#pragma once

#include <QHash>
#include <QObject>
#include <QPair>
#include <QPointer>
#include <QSet>
#include <QString>
#include <QStringList>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "ringside/common/curve.h"
#include "ringside/gui/agent_connection.h"
#include "ringside/gui/local_agent.h"
#include "ringside/gui/local_cluster.h"
#include "ringside/gui/metrics_store.h"
#include "ringside/gui/node_settings.h"
#include "ringside/gui/preflight.h"
#include "ringside/gui/run_form.h"

namespace ringside::gui {

// The address of the embedded local agent in NodeRecord.address.
inline constexpr const char* kLocalNodeAddress = "local";

struct ControllerOptions {
  QString dataDir;              // database, keys, local agent state
  QString agentBinary;          // for the local agent (empty: beside the GUI / build tree)
  QString trainerBinary;        // for the local agent
  bool startLocalAgent = true;  // on a first start with no node configured
  AgentConnectionOptions connection;
  // How long a multi-node launch waits for every node's pre-flight answer.
  int preflightTimeoutMs = kPreflightTimeoutMs;
  // `ringside --local-cluster`: these nodes are added when start() has read the stored ones (a
  // stored node with the same name is updated, keeping its launch settings) and reached with the
  // cluster's client keypair. Nodes added this way count as configured: no local agent starts
  // on a fresh database.
  std::optional<LocalCluster> localCluster;
};

// What the nodes panel shows about a node.
struct NodeView {
  NodeRecord record;
  bool local = false;
  NodeState state = NodeState::Offline;
  qint64 heartbeatAgeMs = -1;
  std::optional<v1::NodeInfo> info;            // from the last hello
  std::optional<v1::NodeTelemetry> telemetry;  // the latest sample
  // Stalled runs that concern this node (docs/metrics.md, "Hangs"): a stuck rank runs here
  // (StallVerdict.stuck_nodes names its host name), or the verdict names no node and this node
  // owns the run. Each entry "<run name>: <the verdict's summary>".
  QStringList stalls;
  // What the GUI clipped or refused of what this node sent (AgentConnection::agentDataRefused),
  // oldest first, the latest kMaxNodeProblems, each "HH:mm:ss <sentence>".
  QStringList problems;
};

// NodeView::problems keeps this many.
inline constexpr int kMaxNodeProblems = 5;

// A run waiting in its owner agent's queue (docs/queue.md), as that agent last reported it.
struct QueuedRun {
  QString nodeId;
  QString nodeName;          // the node's display name
  bool nodeOnline = false;   // false: the node went offline since; the entry is its last word
  bool nodeHasGpus = false;  // from its last hello: the trainer's "auto" backend takes GPUs there
  v1::RunInfo run;           // QUEUED: queue_position, waiting_reason, estimated_start, spec
};

class Controller : public QObject {
  Q_OBJECT

 public:
  // Creates the store object (its thread; the file is not touched until start()).
  explicit Controller(ControllerOptions options, QObject* parent = nullptr);
  ~Controller() override;

  // Starts without waiting on the database: creates the data folder, loads (or creates) the GUI
  // keys, and posts the store's open() and the reads of the known nodes and runs to the store's
  // thread. When they are back (on the GUI thread, from the event loop, never inside start()),
  // it connects to every configured node, starts the local agent when configured (or when no
  // node is), emits nodesChanged() and then started(). A store that cannot be opened or read
  // emits startFailed(message) instead, and nothing is connected.
  // Returns an error only for what fails before anything is posted (the GUI keys cannot be
  // read or created); then neither signal comes. A second call returns kFailedPrecondition. The
  // store may be used as soon as start() returned: its work runs in order of submission, after
  // open().
  Status start();
  // True once started() was emitted.
  bool isStarted() const { return started_; }

  // The folder of the database, keys and local agent (ControllerOptions.dataDir).
  QString dataDir() const { return options_.dataDir; }
  // The store; valid from construction (calls before start() fail with kFailedPrecondition).
  MetricsStore& store() { return *store_; }
  QString guiPublicKey() const { return QString::fromStdString(keys_.publicKey); }
  QList<NodeView> nodes() const;
  std::optional<NodeView> node(const QString& nodeId) const;
  // Every node as the run setup form places runs on it: state, draining, free slots (total
  // minus used, from the latest telemetry or else the hello; unknown before the first hello)
  // and the host name for mpirun's --host (the hostname the agent reported in its hello, else
  // the host of the node's address, this machine's host name for the local agent).
  QList<NodeChoice> nodeChoices() const;

  // Adds a node by address ("host" or "tcp://host", ports default 47600/47601), the agent's
  // public key and the node's launch settings. Errors: InvalidArgument for a malformed key or
  // address, a network interface or mpirun options that networkInterfaceError /
  // mpirunOptionsError refuse, or a client key file that cannot be loaded (loadClientKeyFile);
  // the message says which and what to enter. Nothing changes then.
  Status addNode(const QString& name, const QString& host, int controlPort, int eventsPort,
                 const QString& agentPublicKey, const NodeSettings& settings = {});
  // The same for an existing node (or a new one with this id); reconnects it.
  Status editNode(const QString& nodeId, const QString& name, const QString& host, int controlPort,
                  int eventsPort, const QString& agentPublicKey, const NodeSettings& settings = {});
  void removeNode(const QString& nodeId);
  void setDrain(const QString& nodeId, bool draining);

  // Launches the form's run: the spec (toRunSpec with nodeChoices(), so a multi-node run names
  // every chosen node's host, interface and the owner's mpirun options) goes to the first of
  // form.nodeIds, whose agent owns the run and starts mpirun for all nodes. A multi-node launch
  // first asks every chosen node for a pre-flight (preflightStarted), without blocking: the
  // Launch is sent only when all of them answered within options.preflightTimeoutMs with no
  // problem and the owner's agent version (applyPreflight, which also picks the other GPU nodes'
  // GPUs). The outcome comes as runLaunched or launchFailed: no node chosen, the first node not
  // connected, another chosen node unknown, a node of a multi-node run not online, not
  // answering or refusing the pre-flight, the pre-flight's problems (one message naming each
  // node), or the agent's error. Each message names the node and says what to do.
  void launch(const RunForm& form);
  // Stops a run: StopRun goes to its owner and, for a multi-node run, to every other node of it
  // (found by the host names of the run's spec: nodeChoices().hostName) so that ranks there end
  // even when mpirun cannot reach them. A node's error reply comes as runStopFailed naming the
  // node, except NotFound from a node other than the owner (its ranks had already exited).
  void stopRun(const QString& runId, double graceSeconds = 0);
  // Resume (docs/dashboard.md, "Resume"; run_resume.h): empty when resumeRun(runId) can launch
  // now, else a translated reason: the run is unknown or its owner's agent has not reported it
  // since the GUI connected, it is not a trainer run that stopped (or failed with periodic
  // checkpoints), or its owner node is not connected.
  QString resumeProblem(const QString& runId) const;
  // "Queued: position 2. waiting for ..." while the run waits in its owner agent's queue, as the
  // agent last reported it (queue_text.h); "" otherwise or for an unknown run.
  QString queuedText(const QString& runId) const;
  // Every QUEUED run of every configured node, as its owner agent last reported it (list_runs
  // at connect, then its run_state events), ordered by node name, then queue position. A node
  // that went offline keeps its runs listed with nodeOnline false until it is back and says
  // otherwise; a removed node's runs are not listed.
  QList<QueuedRun> queuedRuns() const;
  // Moves a queued run among the queued runs of its priority on its owner's node (`places` < 0
  // towards the head; the agent stops at either end) and/or gives it another priority, among
  // whose runs it takes its place by submission time (reorder_queued_run, docs/queue.md). The agent's answer
  // and its run_state events update queuedRuns() (queueChanged); a refusal (the run started or
  // was cancelled meanwhile, the node is not connected or does not answer) comes as
  // queueActionFailed with the agent's or a translated reason.
  void reorderQueuedRun(const QString& runId, int places,
                        std::optional<v1::RunPriority> priority = std::nullopt);
  // Launches a run that continues `runId` from the newest checkpoint in its checkpoint directory
  // on its owner's node (resumedRunSpec: the same spec with TrainerConfig.resume set, tagged
  // "resumed-from:<runId>"), on the same node(s): the owner gets the Launch; a multi-node run
  // first passes the pre-flight of every node of it, as launch() does. The outcome comes as
  // runLaunched (the new run's id) or launchFailed (resumeProblem's reason, a node of the run not
  // known or not online, or the agent's error). The trainer refuses a checkpoint that does not
  // match the spec, or an empty directory; the new run then fails saying why.
  void resumeRun(const QString& runId);
  // The checkpoint directory resumeRun would resume `runId` from, on its owner's node ("" when
  // the run or its directory is unknown).
  QString checkpointDirOf(const QString& runId) const;
  // A run's latest RunInfo as its owner agent reported it since the GUI connected (list_runs,
  // launch replies, state events); std::nullopt for a run not reported yet.
  std::optional<v1::RunInfo> runInfo(const QString& runId) const;
  // The node that owns a run ("" when unknown).
  QString nodeOfRun(const QString& runId) const { return runNode_.value(runId); }
  // The stall verdict (RunInfo.stall) of a running run, as its agent last reported it; nullopt
  // while it makes progress, once it ended, or for an unknown run.
  std::optional<v1::StallVerdict> stallOf(const QString& runId) const;

  // Sends a request of a kind the controller does not handle itself (e.g. the sweeps',
  // sweep_book.h) to a node; the reply comes as nodeReply, a failure as nodeRequestFailed.
  // Returns the request id, 0 when the node is unknown or not connected.
  quint64 sendToNode(const QString& nodeId, const v1::Envelope& request);

 signals:
  // The reply to a sendToNode request (also an ErrorReply).
  void nodeReply(const QString& nodeId, quint64 requestId, const ringside::v1::Envelope& reply);
  // A sendToNode request got no reply (not connected, or timed out).
  void nodeRequestFailed(const QString& nodeId, quint64 requestId, const QString& message);
  // Sweep events of a node (the latest state of each sweep that changed).
  void sweepsReported(const QString& nodeId, const std::vector<ringside::v1::SweepInfo>& sweeps);
  // A node came online (first connect, or back after being offline).
  void nodeOnline(const QString& nodeId);
  void nodesChanged();
  void telemetryReceived(const QString& nodeId, const ringside::v1::NodeTelemetry& telemetry);
  void runLaunched(const QString& runId);
  void launchFailed(const QString& message);
  // A multi-node launch is asking these nodes (display names) for their pre-flight; runLaunched
  // or launchFailed follows.
  void preflightStarted(const QStringList& nodeNames);
  void runStopFailed(const QString& runId, const QString& message);
  // A run entered or left a queue, or a queued run's place, priority, reason or estimate
  // changed (queuedRuns(); a node going offline or coming back is nodesChanged). Emitted once
  // per change; a view that redraws coalesces them.
  void queueChanged();
  // reorderQueuedRun was refused; the message says why and what to do.
  void queueActionFailed(const QString& runId, const QString& message);
  // New data for a run is in the store (the dashboards redraw on their timer).
  void runDataChanged(const QString& runId);
  // GPU telemetry of a run fetched from a node's telemetry journal was stored (samples the GUI
  // did not hold); the run's GPU charts read the store again.
  void runTelemetryStored(const QString& runId);
  void runStateChanged(const QString& runId, ringside::v1::RunState state);
  // A run's stall verdict appeared, changed or cleared (stallOf).
  void runStallChanged(const QString& runId);
  void errorMessage(const QString& message);
  // start() has finished: the store is open, the known nodes are connected and the known runs'
  // nodes are set (nodeOfRun), so a reconnect catches up on them.
  void started();
  // start() failed on the database: a translated message saying what failed with which file
  // and what to do. Nothing is connected and the store cannot be used.
  void startFailed(const QString& message);

 private:
  struct NodeLink {
    NodeRecord record;
    std::unique_ptr<AgentConnection> connection;
    NodeView view;
  };
  // A request to one node: request ids are counted per connection, so the node is part of it.
  using RequestKey = QPair<QString, quint64>;  // node id, request id
  // A multi-node launch waiting for its pre-flight answers.
  struct Preflight {
    QStringList nodeIds;  // in the spec's host order; the first owns the run
    v1::RunSpec spec;
    std::map<QString, v1::PreflightReply> replies;  // by node id
  };
  struct StopRequest {
    QString runId;
    bool owner = false;
  };
  // Connects with the GUI's keypair, or the one in link.record.clientKeyFile (errorMessage and
  // no connection when that cannot be loaded).
  void connectNode(NodeLink& link, const QString& control, const QString& events,
                   const QString& agentKey);
  // Replies and failed requests of every connection (controller_launch.cpp).
  void onReply(const QString& nodeId, quint64 requestId, const v1::Envelope& reply);
  void onRequestFailed(const QString& nodeId, quint64 requestId, const QString& message);
  void startPreflight(const QStringList& nodeIds, v1::RunSpec spec);
  void onPreflightAnswer(quint64 attempt, const QString& nodeId, const v1::Envelope& reply);
  void failPreflight(quint64 attempt, const QString& message);
  void sendLaunch(const QString& owner, const v1::RunSpec& spec);
  // The replies and failures of reorderQueuedRun's requests (controller_queue.cpp): true when
  // `key` was one of them.
  bool onQueueReply(const RequestKey& key, const v1::Envelope& reply);
  bool onQueueRequestFailed(const RequestKey& key, const QString& message);
  QHash<RequestKey, QString> pendingReorders_;  // -> run id
  // Remembers the run's owner and, for a multi-node run, its hosts (for stopRun).
  void noteRun(const QString& nodeId, const v1::RunInfo& run);
  // The nodes other than `owner` whose host names the run's spec lists.
  QStringList otherNodesOfRun(const QString& runId, const QString& owner) const;
  QString displayName(const QString& nodeId) const;
  // Adds or updates options_.localCluster's nodes; `stored`: the nodes the store had.
  void applyLocalCluster(const std::vector<NodeRecord>& stored);
  // The second half of start(), once the store's nodes and runs are back.
  void finishStart(const std::vector<NodeRecord>& nodes, const std::vector<RunRecord>& runs);
  void startLocalAgent(const QString& nodeId);
  // Hands `batch` to the store; `done` runs on this thread once it is stored (or failed).
  void ingest(const QString& nodeId, IngestBatch batch, std::function<void()> done = {});
  void onEvents(const QString& nodeId, const EventBatch& batch);

  // Live events' store commits (group commit). Each store transaction rewrites every B-tree page
  // it touches (WAL), and a run's samples of one delivery (~33 ms) land on a page per series
  // (the metrics table is ordered by run, key, rank, step): at 128 ranks that was ~4 KiB written
  // per sample. So a run's live data is committed at most once per kLiveCommitIntervalMs, and
  // never while its previous commit is still running: what arrives meanwhile is merged into one
  // batch. A run state event is committed at once (with what waited before it). The first batch
  // after a quiet interval goes at once, so a slow run's data is not delayed.
  static constexpr int kLiveCommitIntervalMs = 250;
  // The pacing of one stream of live commits (a run's data from a node, or all GPU telemetry).
  struct CommitPace {
    bool inFlight = false;     // a store commit of the stream has not returned yet
    bool timerArmed = false;   // a timer will call the stream's commit again
    qint64 lastCommitMs = -1;  // steady ms when the last one was handed to the store
  };
  // Whether the stream may commit now: nothing in flight, and its interval over or `urgent`;
  // then marks it in flight. Else, unless one is in flight, arms (once) a timer that calls
  // `retry` when the interval is over; `retry` clears timerArmed (the stream may be gone).
  bool mayCommitNow(CommitPace& pace, bool urgent, std::function<void()> retry);
  struct LiveIngest {
    IngestBatch batch;  // merged, not yet handed to the store
    CommitPace pace;
    bool ended = false;  // an ended state came: the entry goes once nothing waits
  };
  void ingestLive(const QString& nodeId, IngestBatch batch);
  // Live GPU telemetry kept with running runs, grouped the same way for all nodes: one store
  // transaction at most every kLiveCommitIntervalMs (was one per node and reading: 16 commits a
  // second at 16 nodes, ~20 % of the GUI side's CPU in bench/scale).
  void commitTelemetry();
  std::vector<TelemetryReading> pendingTelemetry_;
  CommitPace telemetryPace_;
  void commitLive(const QPair<QString, QString>& key);  // (node id, run id)
  std::map<QPair<QString, QString>, LiveIngest> live_;
  NodeLink* linkOf(const QString& nodeId);

  // Runs' node telemetry from the agents' telemetry journals (controller_telemetry.cpp;
  // docs/design.md decision 12): when a node comes online, a run list was stored, a run ended, or a
  // live reading's seq skipped ahead, every stretch of a run's telemetry the node journaled that
  // the store may lack (MetricsStore::telemetryWindows) is fetched page by page (FetchTelemetry,
  // one page in flight per node) and stored (ingestFetchedTelemetry). An agent that answers
  // UNKNOWN_MESSAGE (one without a telemetry journal) is said once in the log and not asked again.
  struct TelemetryCatchUp {
    bool due = false;          // look for windows once the node is online and has said hello
    bool busy = false;         // windows are being listed or fetched
    bool unsupported = false;  // the agent answered UNKNOWN_MESSAGE
    std::deque<TelemetryWindow> windows;  // the front one is being fetched
    uint64_t afterSeq = 0;                // of the front window's next page
    double lastTime = 0;       // wall time of the newest reading of the front window so far
    uint64_t lastLiveSeq = 0;  // the seq of the last live reading (a jump marks due)
  };
  void catchUpTelemetry(const QString& nodeId);
  void catchUpTelemetryEverywhere();
  void startTelemetryCatchUp(const QString& nodeId);
  void fetchTelemetryPage(const QString& nodeId);
  void onTelemetryPage(const QString& nodeId, const v1::Envelope& reply);
  void telemetryFetchFailed(const QString& nodeId, const QString& message);
  // The node's host name as its runs' placements name it ("" before its first hello).
  QString telemetryHostName(const QString& nodeId) const;
  std::map<QString, TelemetryCatchUp> telemetryCatchUps_;  // by node id
  QSet<RequestKey> telemetryRequests_;

  ControllerOptions options_;
  curve::KeyPair keys_;
  std::unique_ptr<MetricsStore> store_;
  std::unique_ptr<LocalAgent> localAgent_;
  std::map<QString, NodeLink> links_;  // by node id
  QHash<QString, QString> runNode_;    // run id -> node id
  // Running runs' stall verdicts and names, from their latest RunInfo (noteRun).
  QHash<QString, v1::StallVerdict> stalls_;
  QHash<QString, QString> runNames_;
  void addStalls(NodeView* view) const;
  QHash<QString, QStringList> runHosts_;  // run id -> its spec's host names (multi-node runs)
  // Each run's latest RunInfo (its spec, state and run directory), for resumeRun.
  QHash<QString, v1::RunInfo> runInfos_;
  QSet<RequestKey> pendingLaunches_;
  std::map<quint64, Preflight> preflights_;       // by attempt (nextPreflight_)
  QHash<RequestKey, quint64> preflightRequests_;  // -> attempt
  QHash<RequestKey, StopRequest> pendingStops_;
  quint64 nextPreflight_ = 0;
  bool startCalled_ = false;
  bool started_ = false;
};

// "host" or "tcp://host" -> the control and events endpoints.
std::pair<QString, QString> agentEndpoints(const QString& host, int controlPort, int eventsPort);

}  // namespace ringside::gui
