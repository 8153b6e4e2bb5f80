#include "ringside/gui/controller.h"
#include "ringside/gui/when_ready.h"

#include <QDateTime>
#include <QDir>
#include <QFutureWatcher>
#include <QSysInfo>
#include <QTimer>
#include <QUrl>
#include <QUuid>
#include <algorithm>
#include <chrono>
#include <iterator>
#include <utility>

#include "ringside/gui/gui_keys.h"

namespace ringside::gui {

namespace {

constexpr const char* kLocalNodeId = "local";

double nowSeconds() { return QDateTime::currentMSecsSinceEpoch() / 1000.0; }

QString addressOf(const QString& control, const QString& events) {
  return control + QLatin1Char(' ') + events;
}

}  // namespace

std::pair<QString, QString> agentEndpoints(const QString& host, int controlPort, int eventsPort) {
  QString base = host.trimmed();
  if (!base.startsWith(QLatin1String("tcp://"))) base.prepend(QLatin1String("tcp://"));
  return {base + QLatin1Char(':') + QString::number(controlPort),
          base + QLatin1Char(':') + QString::number(eventsPort)};
}

namespace {

// The host name nodeChoices() gives a node (mpirun's --host, RunInfo.placement): the hostname of
// its hello, else the host of its address, this machine's for the local agent. One node's, so
// that what is done per node (every telemetry batch, every catch-up) does not copy every node's
// view (nodeChoices(), nodes()): at 64 nodes that was 64 x 64 NodeView copies with their GPU
// protos on the GUI thread every second (bench/scale).
QString hostNameOf(const NodeView& node) {
  QString hostName = node.info ? QString::fromStdString(node.info->hostname()) : QString();
  if (hostName.isEmpty()) {
    hostName = node.local ? QSysInfo::machineHostName()
                          : QUrl(node.record.address.section(QLatin1Char(' '), 0, 0)).host();
  }
  return hostName;
}

}  // namespace

Controller::Controller(ControllerOptions options, QObject* parent)
    : QObject(parent), options_(std::move(options)) {
  store_ = std::make_unique<MetricsStore>(options_.dataDir + QStringLiteral("/ringside.sqlite"));
  // A run deleted in History: no connection fetches or delivers it again (the store refuses it
  // anyway; this spares fetching its journal from the agent for nothing).
  connect(store_.get(), &MetricsStore::runDeleted, this, [this](const QString& runId) {
    for (auto& entry : links_) {
      if (entry.second.connection) entry.second.connection->ignoreRun(runId);
    }
  });
}

Controller::~Controller() {
  // Live data still waiting for its commit: the store finishes what was handed to it.
  for (auto& [key, live] : live_) {
    if (!live.batch.samples.empty() || !live.batch.logLines.empty() || !live.batch.states.empty()) {
      store_->ingest(std::move(live.batch));
    }
  }
  live_.clear();
  if (!pendingTelemetry_.empty()) store_->ingestTelemetry(std::move(pendingTelemetry_));
  // Connections first (their threads may still deliver), then the local agent.
  links_.clear();
  localAgent_.reset();
}

Status Controller::start() {
  if (startCalled_) return Status::failedPrecondition("Controller::start() was called twice");
  startCalled_ = true;
  QDir().mkpath(options_.dataDir);
  auto keys = loadOrCreateGuiKeys(options_.dataDir);
  if (!keys.isOk()) return keys.status();
  keys_ = *keys;
  // Posted together: the store runs them in this order on its thread, so the two reads see the
  // open database, and the GUI thread only picks up the results (docs/design.md decision 7).
  const QFuture<Status> opened = store_->open();
  const QFuture<Result<std::vector<NodeRecord>>> nodes = store_->nodes();
  const QFuture<Result<std::vector<RunRecord>>> runs = store_->runs();
  const QString path = store_->databasePath();
  whenReady(this, opened, [this, nodes, runs, path](const Status& status) {
    if (!status.isOk()) {
      emit startFailed(tr("Cannot open the run database %1: %2. To keep the run history in "
                          "another folder, start Ringside with --data-dir.")
                           .arg(path, QString::fromStdString(status.message())));
      return;
    }
    whenReady(this, nodes, [this, runs, path](Result<std::vector<NodeRecord>> nodeList) {
      if (!nodeList.isOk()) {
        emit startFailed(tr("Cannot read the nodes from the run database %1: %2")
                             .arg(path, QString::fromStdString(nodeList.status().message())));
        return;
      }
      whenReady(this, runs,
                [this, nodeRecords = *nodeList](Result<std::vector<RunRecord>> runList) {
                  if (!runList.isOk()) {
                    emit errorMessage(tr("Cannot read the run history: %1")
                                          .arg(QString::fromStdString(runList.status().message())));
                  }
                  finishStart(nodeRecords, runList.isOk() ? *runList : std::vector<RunRecord>{});
                });
    });
  });
  return Status::ok();
}

void Controller::finishStart(const std::vector<NodeRecord>& nodes,
                             const std::vector<RunRecord>& runs) {
  // Runs the store already knows: their nodes, so a reconnect catches up on them, and the hosts
  // of multi-node runs, so a stop reaches every node.
  for (const RunRecord& run : runs) {
    if (!runNode_.contains(run.runId)) runNode_.insert(run.runId, run.nodeId);
    v1::RunSpec spec;
    if (!runHosts_.contains(run.runId) && !run.spec.isEmpty() &&
        spec.ParseFromArray(run.spec.constData(), static_cast<int>(run.spec.size())) &&
        spec.hosts_size() > 0) {
      QStringList hosts;
      for (const v1::HostSlots& host : spec.hosts()) hosts << QString::fromStdString(host.host());
      runHosts_.insert(run.runId, hosts);
    }
  }
  if (options_.localCluster) applyLocalCluster(nodes);
  // "No node configured" counts nodes added (addNode) while the store was opening, too.
  const bool noneConfigured = nodes.empty() && links_.empty();
  bool haveLocal = false;
  for (const NodeRecord& record : nodes) {
    if (links_.count(record.nodeId) > 0) continue;  // added or edited since start()
    NodeLink& link = links_[record.nodeId];
    link.record = record;
    link.view.record = record;
    if (record.address == QLatin1String(kLocalNodeAddress)) {
      link.view.local = true;
      haveLocal = true;
      continue;  // connected when the local agent is up
    }
    const QStringList endpoints = record.address.split(QLatin1Char(' '));
    if (endpoints.size() == 2) connectNode(link, endpoints[0], endpoints[1], record.publicKey);
  }
  if (options_.startLocalAgent && (haveLocal || noneConfigured)) {
    startLocalAgent(QString::fromLatin1(kLocalNodeId));
  }
  started_ = true;
  emit nodesChanged();
  emit started();
}

Controller::NodeLink* Controller::linkOf(const QString& nodeId) {
  auto it = links_.find(nodeId);
  return it == links_.end() ? nullptr : &it->second;
}

void Controller::startLocalAgent(const QString& nodeId) {
  NodeLink& link = links_[nodeId];
  link.record.nodeId = nodeId;
  if (link.record.name.isEmpty()) {
    link.record.name = tr("%1 (this workstation)").arg(QSysInfo::machineHostName());
  }
  link.record.address = QString::fromLatin1(kLocalNodeAddress);
  if (link.record.addedTime == 0) link.record.addedTime = nowSeconds();
  link.view.record = link.record;
  link.view.local = true;
  LocalAgentOptions options;
  options.agentBinary = options_.agentBinary;
  options.trainerBinary = options_.trainerBinary;
  options.stateDir = options_.dataDir + QStringLiteral("/local-agent");
  options.guiPublicKey = guiPublicKey();
  localAgent_ = std::make_unique<LocalAgent>(options);
  connect(localAgent_.get(), &LocalAgent::ready, this,
          [this, nodeId](const QString& control, const QString& events, const QString& key) {
            NodeLink* link = linkOf(nodeId);
            if (link == nullptr) return;
            link->record.publicKey = key;
            link->view.record = link->record;
            store_->upsertNode(link->record);
            connectNode(*link, control, events, key);
            emit nodesChanged();
          });
  connect(localAgent_.get(), &LocalAgent::failed, this, [this](const QString& message) {
    emit errorMessage(tr("The local agent could not start: %1").arg(message));
  });
  store_->upsertNode(link.record);
  localAgent_->start();
}

void Controller::connectNode(NodeLink& link, const QString& control, const QString& events,
                             const QString& agentKey) {
  const QString nodeId = link.record.nodeId;
  curve::KeyPair keys = keys_;
  if (!link.record.clientKeyFile.isEmpty()) {
    auto clientKeys = loadClientKeyFile(link.record.clientKeyFile);
    if (!clientKeys.isOk()) {
      emit errorMessage(
          tr("Node %1 cannot be connected: %2")
              .arg(link.record.name, QString::fromStdString(clientKeys.status().message())));
      return;
    }
    keys = *clientKeys;
  }
  link.connection = std::make_unique<AgentConnection>(keys, options_.connection);
  // Requests of an earlier connection get no answer: its telemetry catch-up starts over.
  telemetryCatchUps_[nodeId] = TelemetryCatchUp{};
  telemetryRequests_.removeIf([&nodeId](const RequestKey& key) { return key.first == nodeId; });
  AgentConnection* connection = link.connection.get();
  connect(connection, &AgentConnection::stateChanged, this,
          [this, nodeId](NodeState state, qint64 age) {
            if (NodeLink* link = linkOf(nodeId)) {
              link->view.state = state;
              link->view.heartbeatAgeMs = age;
              emit nodesChanged();
              // Back online: what the node journaled meanwhile (controller_telemetry.cpp).
              if (state == NodeState::Online) {
                catchUpTelemetry(nodeId);
                emit nodeOnline(nodeId);
              }
            }
          });
  connect(connection, &AgentConnection::nodeInfoReceived, this,
          [this, nodeId](const v1::HelloReply& hello) {
            if (NodeLink* link = linkOf(nodeId)) {
              link->view.info = hello.node();
              emit nodesChanged();
              startTelemetryCatchUp(nodeId);  // waits for the host name of the first hello
            }
          });
  // A key that cannot be used, a message over the protocol's limit: said, not only logged.
  connect(connection, &AgentConnection::connectionError, this,
          [this, nodeId](const QString& message) {
            emit errorMessage(tr("Node %1: %2").arg(displayName(nodeId), message));
          });
  // A slice of at most 256 runs (AgentConnection): stored in one transaction, then the
  // connection catches up on each from what the store already has.
  connect(
      connection, &AgentConnection::runsListed, this,
      [this, nodeId](const v1::ListRunsReply& list) {
        if (list.runs().empty()) return;
        std::vector<QString> runIds;
        runIds.reserve(static_cast<size_t>(list.runs_size()));
        for (const v1::RunInfo& run : list.runs()) {
          runIds.push_back(QString::fromStdString(run.run_id()));
          noteRun(nodeId, run);
        }
        whenReady(
            this, store_->upsertRuns(nodeId, {list.runs().begin(), list.runs().end()}),
            [this, nodeId, runIds](Result<std::vector<std::optional<uint64_t>>> lastSeqs) {
              NodeLink* link = linkOf(nodeId);
              std::vector<std::pair<QString, uint64_t>> marks;
              marks.reserve(runIds.size());
              for (size_t i = 0; i < runIds.size(); ++i) {
                const bool known = lastSeqs.isOk() && i < lastSeqs->size();
                if (known && !(*lastSeqs)[i]) {  // deleted in this GUI: never fetched again
                  if (link && link->connection) link->connection->ignoreRun(runIds[i]);
                  continue;
                }
                marks.emplace_back(runIds[i], known ? *(*lastSeqs)[i] : 0);
              }
              if (!lastSeqs.isOk()) {
                emit errorMessage(tr("Storing the runs of node %1 failed: %2")
                                      .arg(displayName(nodeId),
                                           QString::fromStdString(lastSeqs.status().message())));
              }
              if (link && link->connection) link->connection->trackRuns(marks);
              // Runs new to the store may have run on any node.
              if (lastSeqs.isOk()) catchUpTelemetryEverywhere();
            });
      });
  // What the node sent over the protocol's limits: shown with the node and in the status bar.
  connect(connection, &AgentConnection::agentDataRefused, this,
          [this, nodeId](const QString& message) {
            if (NodeLink* link = linkOf(nodeId)) {
              QStringList& problems = link->view.problems;
              problems.append(QDateTime::currentDateTime().toString(QStringLiteral("HH:mm:ss ")) +
                              message);
              while (problems.size() > kMaxNodeProblems) problems.removeFirst();
            }
            emit errorMessage(tr("Node %1: %2").arg(displayName(nodeId), message));
            emit nodesChanged();
          });
  connect(connection, &AgentConnection::eventsReceived, this,
          [this, nodeId](const EventBatch& batch) { onEvents(nodeId, batch); });
  connect(connection, &AgentConnection::runDataFetched, this,
          [this, nodeId](const v1::FetchRunDataReply& page) {
            IngestBatch batch;
            batch.runId = QString::fromStdString(page.run_id());
            batch.nodeId = nodeId;
            batch.samples.assign(page.samples().begin(), page.samples().end());
            batch.logLines.assign(page.log_lines().begin(), page.log_lines().end());
            batch.states.assign(page.states().begin(), page.states().end());
            if (page.has_run()) {
              noteRun(nodeId, page.run());
              store_->upsertRun(nodeId, page.run());
            }
            ingest(nodeId, std::move(batch));
          });
  connect(connection, &AgentConnection::replyReceived, this,
          [this, nodeId](quint64 requestId, const v1::Envelope& reply) {
            onReply(nodeId, requestId, reply);
          });
  connect(connection, &AgentConnection::requestFailed, this,
          [this, nodeId](quint64 requestId, const QString& message) {
            onRequestFailed(nodeId, requestId, message);
          });
  connection->connectTo(control, events, agentKey);
  connection->listRuns(true);
  if (link.record.address != QLatin1String(kLocalNodeAddress)) {
    link.record.address = addressOf(control, events);
    link.view.record = link.record;
  }
}

void Controller::onEvents(const QString& nodeId, const EventBatch& batch) {
  if (!batch.sweeps.empty()) emit sweepsReported(nodeId, batch.sweeps);  // sweep_book.h
  std::map<QString, IngestBatch> byRun;
  auto batchOf = [&](const std::string& runId) -> IngestBatch& {
    IngestBatch& b = byRun[QString::fromStdString(runId)];
    b.runId = QString::fromStdString(runId);
    b.nodeId = nodeId;
    return b;
  };
  for (const v1::MetricBatch& metrics : batch.metrics) {
    auto& b = batchOf(metrics.run_id());
    b.samples.insert(b.samples.end(), metrics.samples().begin(), metrics.samples().end());
  }
  for (const v1::LogBatch& logs : batch.logs) {
    auto& b = batchOf(logs.run_id());
    b.logLines.insert(b.logLines.end(), logs.lines().begin(), logs.lines().end());
  }
  bool endedRun = false;
  for (const v1::RunStateEvent& state : batch.states) {
    batchOf(state.run().run_id()).states.push_back(state);
    const QString runId = QString::fromStdString(state.run().run_id());
    noteRun(nodeId, state.run());
    emit runStateChanged(runId, state.run().state());
    endedRun = endedRun || state.run().state() == v1::COMPLETED ||
               state.run().state() == v1::FAILED || state.run().state() == v1::STOPPED;
  }
  for (auto& [runId, ingestBatch] : byRun) ingestLive(nodeId, std::move(ingestBatch));
  // An ended run's telemetry to its end, from every node of it (what live telemetry missed).
  if (endedRun) catchUpTelemetryEverywhere();
  QString hostName;  // as the placement of the node's runs names it (nodeChoices().hostName)
  if (!batch.telemetry.empty()) {
    if (const NodeLink* link = linkOf(nodeId)) hostName = hostNameOf(link->view);
  }
  for (const v1::NodeTelemetry& telemetry : batch.telemetry) {
    if (NodeLink* link = linkOf(nodeId)) link->view.telemetry = telemetry;
    // A reading missed on the way (PUB dropped it, or the connection kept only the newest):
    // fetched from the node's telemetry journal.
    if (telemetry.seq() > 0) {
      uint64_t& lastLive = telemetryCatchUps_[nodeId].lastLiveSeq;
      if (lastLive > 0 && telemetry.seq() > lastLive + 1) catchUpTelemetry(nodeId);
      lastLive = telemetry.seq();
    }
    emit telemetryReceived(nodeId, telemetry);
    // GPU values of running runs are kept with the run (docs/metrics.md).
    if (telemetry.gpus_size() > 0) pendingTelemetry_.push_back({nodeId, hostName, telemetry});
  }
  if (!pendingTelemetry_.empty()) commitTelemetry();
}

namespace {

qint64 steadyMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

bool Controller::mayCommitNow(CommitPace& pace, bool urgent, std::function<void()> retry) {
  if (pace.inFlight) return false;  // its completion calls again
  const qint64 now = steadyMs();
  const qint64 due = pace.lastCommitMs < 0 ? now : pace.lastCommitMs + kLiveCommitIntervalMs;
  if (now < due && !urgent) {
    if (!pace.timerArmed) {
      pace.timerArmed = true;
      QTimer::singleShot(static_cast<int>(due - now), this, std::move(retry));
    }
    return false;
  }
  pace.inFlight = true;
  pace.lastCommitMs = now;
  return true;
}

void Controller::commitTelemetry() {
  if (pendingTelemetry_.empty() || !mayCommitNow(telemetryPace_, /*urgent=*/false, [this] {
        telemetryPace_.timerArmed = false;
        commitTelemetry();
      })) {
    return;
  }
  QStringList nodeIds;
  for (const TelemetryReading& reading : pendingTelemetry_) {
    if (!nodeIds.contains(reading.nodeId)) nodeIds.append(reading.nodeId);
  }
  whenReady(this, store_->ingestTelemetry(std::exchange(pendingTelemetry_, {})),
            [this, nodeIds](Result<QStringList> stored) {
              telemetryPace_.inFlight = false;
              if (!stored.isOk()) {
                emit errorMessage(tr("Storing GPU telemetry of node %1 failed: %2")
                                      .arg(nodeIds.join(QStringLiteral(", ")),
                                           QString::fromStdString(stored.status().message())));
              }
              commitTelemetry();
            });
}

void Controller::ingestLive(const QString& nodeId, IngestBatch batch) {
  const QPair<QString, QString> key(nodeId, batch.runId);
  LiveIngest& live = live_[key];
  for (const v1::RunStateEvent& state : batch.states) {
    const v1::RunState s = state.run().state();
    live.ended = live.ended || s == v1::COMPLETED || s == v1::FAILED || s == v1::STOPPED;
  }
  IngestBatch& waiting = live.batch;
  if (waiting.runId.isEmpty()) {
    waiting = std::move(batch);
  } else {
    auto append = [](auto& into, auto& from) {
      into.insert(into.end(), std::make_move_iterator(from.begin()),
                  std::make_move_iterator(from.end()));
    };
    append(waiting.samples, batch.samples);
    append(waiting.logLines, batch.logLines);
    append(waiting.states, batch.states);
  }
  commitLive(key);
}

void Controller::commitLive(const QPair<QString, QString>& key) {
  auto it = live_.find(key);
  if (it == live_.end()) return;
  LiveIngest& live = it->second;
  if (live.pace.inFlight) return;  // its completion calls again
  if (live.batch.runId.isEmpty()) {
    if (live.ended && !live.pace.timerArmed) live_.erase(it);
    return;
  }
  // A run state is committed at once (with what waited before it).
  if (!mayCommitNow(live.pace, /*urgent=*/!live.batch.states.empty(), [this, key] {
        if (auto armed = live_.find(key); armed != live_.end()) {
          armed->second.pace.timerArmed = false;
        }
        commitLive(key);
      })) {
    return;
  }
  ingest(key.first, std::exchange(live.batch, IngestBatch{}), [this, key] {
    if (auto done = live_.find(key); done != live_.end()) done->second.pace.inFlight = false;
    commitLive(key);
  });
}

void Controller::ingest(const QString& nodeId, IngestBatch batch, std::function<void()> done) {
  const QString runId = batch.runId;
  whenReady(
      this, store_->ingest(std::move(batch)),
      [this, nodeId, runId, done = std::move(done)](Result<IngestResult> result) {
        if (done) done();
        if (!result.isOk()) {
          emit errorMessage(tr("Storing data of run %1 failed: %2")
                                .arg(runId, QString::fromStdString(result.status().message())));
          return;
        }
        NodeLink* link = linkOf(nodeId);
        if (result->deleted) {  // deleted in this GUI: nothing stored, nothing more to fetch
          if (link && link->connection) link->connection->ignoreRun(runId);
          return;
        }
        if (link && link->connection) link->connection->trackRun(runId, result->lastSeq);
        emit runDataChanged(runId);
      });
}

QList<NodeView> Controller::nodes() const {
  QList<NodeView> views;
  for (const auto& [id, link] : links_) {
    NodeView view = link.view;
    if (link.connection) {
      view.state = link.connection->state();
      view.heartbeatAgeMs = link.connection->heartbeatAgeMs();
    }
    addStalls(&view);
    views.append(view);
  }
  return views;
}

std::optional<NodeView> Controller::node(const QString& nodeId) const {
  auto it = links_.find(nodeId);
  if (it == links_.end()) return std::nullopt;
  NodeView view = it->second.view;
  if (it->second.connection) {
    view.state = it->second.connection->state();
    view.heartbeatAgeMs = it->second.connection->heartbeatAgeMs();
  }
  addStalls(&view);
  return view;
}

Status Controller::addNode(const QString& name, const QString& host, int controlPort,
                           int eventsPort, const QString& agentPublicKey,
                           const NodeSettings& settings) {
  const QString id = QStringLiteral("n-") + QUuid::createUuid().toString(QUuid::Id128).left(12);
  return editNode(id, name, host, controlPort, eventsPort, agentPublicKey, settings);
}

Status Controller::editNode(const QString& nodeId, const QString& name, const QString& host,
                            int controlPort, int eventsPort, const QString& agentPublicKey,
                            const NodeSettings& settings) {
  RINGSIDE_RETURN_IF_ERROR(curve::validateKey(agentPublicKey.trimmed().toStdString())
                               .withContext("the agent's public key"));
  if (host.trimmed().isEmpty() || host.contains(QLatin1Char(' '))) {
    return Status::invalidArgument("enter the node's host name or address, e.g. gpu01 or 10.0.0.5");
  }
  if (controlPort <= 0 || controlPort > 65535 || eventsPort <= 0 || eventsPort > 65535) {
    return Status::invalidArgument("ports must be between 1 and 65535");
  }
  const QString networkInterface = settings.networkInterface.trimmed();
  for (const QString& error :
       {networkInterfaceError(networkInterface), mpirunOptionsError(settings.mpirunOptions)}) {
    if (!error.isEmpty()) return Status::invalidArgument(error.toStdString());
  }
  const QString clientKeyFile = settings.clientKeyFile.trimmed();
  if (!clientKeyFile.isEmpty()) {
    auto clientKeys = loadClientKeyFile(clientKeyFile);
    if (!clientKeys.isOk()) return clientKeys.status();
  }
  const auto [control, events] = agentEndpoints(host, controlPort, eventsPort);
  NodeLink& link = links_[nodeId];
  link.connection.reset();
  link.record.nodeId = nodeId;
  link.record.name = name.trimmed().isEmpty() ? host.trimmed() : name.trimmed();
  link.record.address = addressOf(control, events);
  link.record.publicKey = agentPublicKey.trimmed();
  link.record.networkInterface = networkInterface;
  link.record.mpirunOptions = settings.mpirunOptions.trimmed();
  link.record.clientKeyFile = clientKeyFile;
  if (link.record.addedTime == 0) link.record.addedTime = nowSeconds();
  link.view = NodeView{};
  link.view.record = link.record;
  store_->upsertNode(link.record);
  connectNode(link, control, events, link.record.publicKey);
  emit nodesChanged();
  return Status::ok();
}

void Controller::applyLocalCluster(const std::vector<NodeRecord>& stored) {
  const LocalCluster& cluster = *options_.localCluster;
  for (const LocalClusterNode& node : cluster.nodes) {
    NodeSettings settings;
    settings.clientKeyFile = cluster.clientSecretKeyFile;
    // Update by name: the node keeps its id (its runs) and the launch settings given to it.
    const auto match = std::find_if(stored.begin(), stored.end(), [&](const NodeRecord& record) {
      return record.name == node.name && record.address != QLatin1String(kLocalNodeAddress);
    });
    Status status;
    if (match != stored.end()) {
      settings.networkInterface = match->networkInterface;
      settings.mpirunOptions = match->mpirunOptions;
      status = editNode(match->nodeId, node.name, node.host, node.controlPort, node.eventsPort,
                        node.agentPublicKey, settings);
    } else {
      status = addNode(node.name, node.host, node.controlPort, node.eventsPort, node.agentPublicKey,
                       settings);
    }
    if (!status.isOk()) {
      emit errorMessage(tr("Cannot add node %1 of the local cluster: %2")
                            .arg(node.name, QString::fromStdString(status.message())));
    }
  }
}

void Controller::removeNode(const QString& nodeId) {
  auto it = links_.find(nodeId);
  if (it == links_.end()) return;
  if (it->second.view.local) localAgent_.reset();
  links_.erase(it);
  store_->removeNode(nodeId);
  emit nodesChanged();
}

void Controller::setDrain(const QString& nodeId, bool draining) {
  if (NodeLink* link = linkOf(nodeId); link && link->connection) {
    link->connection->setDrain(draining);
    link->connection->hello();  // refresh the node info shown
  }
}

QString Controller::telemetryHostName(const QString& nodeId) const {
  auto it = links_.find(nodeId);
  if (it == links_.end() || !it->second.view.info) return QString();
  return hostNameOf(it->second.view);
}

QList<NodeChoice> Controller::nodeChoices() const {
  QList<NodeChoice> choices;
  for (const NodeView& node : nodes()) {
    NodeChoice choice;
    choice.nodeId = node.record.nodeId;
    choice.name = node.record.name;
    choice.networkInterface = node.record.networkInterface;
    choice.mpirunOptions = node.record.mpirunOptions;
    choice.online = node.state == NodeState::Online;
    if (node.info) {
      // Slots by kind (protocol version 2): the telemetry's counts are the newer.
      const int cpuUsed = static_cast<int>(node.telemetry ? node.telemetry->cpu_slots_used()
                                                          : node.info->cpu_slots_used());
      const int gpuUsed = static_cast<int>(node.telemetry ? node.telemetry->gpu_slots_used()
                                                          : node.info->gpu_slots_used());
      choice.gpuSlotsTotal = static_cast<int>(node.info->gpu_slots_total());
      choice.cpuSlotsTotal = static_cast<int>(node.info->cpu_slots_total());
      choice.freeCpuSlots = std::max(0, static_cast<int>(node.info->cpu_slots_total()) - cpuUsed);
      choice.freeGpuSlots = std::max(0, choice.gpuSlotsTotal - gpuUsed);
      choice.draining = node.telemetry ? node.telemetry->draining() : node.info->draining();
      choice.slurm = node.info->engine() == "slurm";
      for (const v1::SlurmPartition& partition : node.info->slurm_partitions()) {
        const QString name = QString::fromStdString(partition.name());
        if (partition.is_default()) {
          choice.slurmPartitions.prepend(name);
        } else {
          choice.slurmPartitions.append(name);
        }
      }
    }
    choice.hostName = hostNameOf(node);
    choices.append(choice);
  }
  return choices;
}

}  // namespace ringside::gui
