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
#include <QPointer>
#include <QString>
#include <memory>
#include <optional>
#include <vector>

#include "ringside/common/curve.h"
#include "ringside/gui/agent_connection.h"
#include "ringside/gui/local_agent.h"
#include "ringside/gui/metrics_store.h"
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
};

// What the nodes panel shows about a node.
struct NodeView {
  NodeRecord record;
  bool local = false;
  NodeState state = NodeState::Offline;
  qint64 heartbeatAgeMs = -1;
  std::optional<v1::NodeInfo> info;            // from the last hello
  std::optional<v1::NodeTelemetry> telemetry;  // the latest sample
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

  // Adds a node by address ("host" or "tcp://host", ports default 47600/47601) and the agent's
  // public key. Errors: InvalidArgument for a malformed key or address.
  Status addNode(const QString& name, const QString& host, int controlPort, int eventsPort,
                 const QString& agentPublicKey);
  Status editNode(const QString& nodeId, const QString& name, const QString& host, int controlPort,
                  int eventsPort, const QString& agentPublicKey);
  void removeNode(const QString& nodeId);
  void setDrain(const QString& nodeId, bool draining);

  // Launches the form's run: the spec (toRunSpec with nodeChoices(), so a multi-node run names
  // every chosen node's host) goes to the first of form.nodeIds, whose agent owns the run and
  // starts mpirun for all nodes. The outcome comes as runLaunched or launchFailed (no node
  // chosen, the first node not connected, another chosen node unknown, or the agent's error).
  void launch(const RunForm& form);
  void stopRun(const QString& runId, double graceSeconds = 0);
  // The node that owns a run ("" when unknown).
  QString nodeOfRun(const QString& runId) const { return runNode_.value(runId); }

 signals:
  void nodesChanged();
  void telemetryReceived(const QString& nodeId, const ringside::v1::NodeTelemetry& telemetry);
  void runLaunched(const QString& runId);
  void launchFailed(const QString& message);
  void runStopFailed(const QString& runId, const QString& message);
  // New data for a run is in the store (the dashboards redraw on their timer).
  void runDataChanged(const QString& runId);
  void runStateChanged(const QString& runId, ringside::v1::RunState state);
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
  void connectNode(NodeLink& link, const QString& control, const QString& events,
                   const QString& agentKey);
  // The second half of start(), once the store's nodes and runs are back.
  void finishStart(const std::vector<NodeRecord>& nodes, const std::vector<RunRecord>& runs);
  void startLocalAgent(const QString& nodeId);
  void ingest(const QString& nodeId, IngestBatch batch);
  void onEvents(const QString& nodeId, const EventBatch& batch);
  NodeLink* linkOf(const QString& nodeId);

  ControllerOptions options_;
  curve::KeyPair keys_;
  std::unique_ptr<MetricsStore> store_;
  std::unique_ptr<LocalAgent> localAgent_;
  std::map<QString, NodeLink> links_;        // by node id
  QHash<QString, QString> runNode_;          // run id -> node id
  QHash<quint64, QString> pendingLaunches_;  // request id -> node id
  bool startCalled_ = false;
  bool started_ = false;
};

// "host" or "tcp://host" -> the control and events endpoints.
std::pair<QString, QString> agentEndpoints(const QString& host, int controlPort, int eventsPort);

}  // namespace ringside::gui
