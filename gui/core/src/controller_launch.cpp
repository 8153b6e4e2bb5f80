// Controller: launching (with the pre-flight of a multi-node run), stopping, and the replies to
// those requests. The rest of the controller is in controller.cpp.
#include <QLocale>
#include <QTimer>

#include "ringside/gui/controller.h"
#include "ringside/gui/queue_text.h"
#include "ringside/gui/run_resume.h"

namespace ringside::gui {

QString Controller::displayName(const QString& nodeId) const {
  auto it = links_.find(nodeId);
  return it != links_.end() && !it->second.record.name.isEmpty() ? it->second.record.name : nodeId;
}

void Controller::noteRun(const QString& nodeId, const v1::RunInfo& run) {
  const QString runId = QString::fromStdString(run.run_id());
  runNode_.insert(runId, nodeId);
  v1::RunInfo& info = runInfos_[runId];
  // A run in a queue, or one that left it, changes the queue (queuedRuns()).
  const bool queueChange =
      run.state() == v1::QUEUED
          ? info.state() != v1::QUEUED || info.queue_position() != run.queue_position() ||
                info.waiting_reason() != run.waiting_reason() ||
                info.estimated_start() != run.estimated_start() ||
                info.spec().priority() != run.spec().priority() ||
                info.queue_order() != run.queue_order()
          : info.state() == v1::QUEUED;
  info = run;
  info.clear_stall();
  if (run.has_spec() && !run.spec().name().empty()) {
    runNames_.insert(runId, QString::fromStdString(run.spec().name()));
  }
  const bool stalled = run.has_stall() && run.state() == v1::RUNNING;
  const auto known = stalls_.find(runId);
  if (stalled &&
      (known == stalls_.end() || known->SerializeAsString() != run.stall().SerializeAsString())) {
    stalls_.insert(runId, run.stall());
    emit runStallChanged(runId);
    emit nodesChanged();
  } else if (!stalled && known != stalls_.end()) {
    stalls_.erase(known);
    emit runStallChanged(runId);
    emit nodesChanged();
  }
  if (run.has_spec() && run.spec().hosts_size() > 0) {
    QStringList hosts;
    for (const v1::HostSlots& host : run.spec().hosts()) {
      hosts << QString::fromStdString(host.host());
    }
    runHosts_.insert(runId, hosts);
  }
  if (queueChange) emit queueChanged();
}

std::optional<v1::StallVerdict> Controller::stallOf(const QString& runId) const {
  auto it = stalls_.find(runId);
  if (it == stalls_.end()) return std::nullopt;
  return *it;
}

void Controller::addStalls(NodeView* view) const {
  const QString hostname = view->info ? QString::fromStdString(view->info->hostname()) : QString();
  for (auto it = stalls_.begin(); it != stalls_.end(); ++it) {
    bool concerns = false;
    for (const std::string& node : it->stuck_nodes()) {
      concerns |= !hostname.isEmpty() && QString::fromStdString(node) == hostname;
    }
    if (it->stuck_nodes().empty()) concerns = runNode_.value(it.key()) == view->record.nodeId;
    if (!concerns) continue;
    const QString name = runNames_.value(it.key(), it.key());
    view->stalls.append(name + QStringLiteral(": ") + QString::fromStdString(it->summary()));
  }
}

QStringList Controller::otherNodesOfRun(const QString& runId, const QString& owner) const {
  QStringList nodeIds;
  const QList<NodeChoice> choices = nodeChoices();
  for (const QString& host : runHosts_.value(runId)) {
    for (const NodeChoice& choice : choices) {
      if (choice.nodeId != owner && !nodeIds.contains(choice.nodeId) &&
          choice.hostName.compare(host, Qt::CaseInsensitive) == 0) {
        nodeIds << choice.nodeId;
      }
    }
  }
  return nodeIds;
}

void Controller::launch(const RunForm& form) {
  if (form.nodeIds.isEmpty()) {
    emit launchFailed(tr("Choose at least one node to run on (add nodes under Nodes)."));
    return;
  }
  // The first node owns the run: it gets the Launch, its agent starts mpirun for every node,
  // journals the run and relays its metrics, also those the ranks on the other nodes push to it.
  // Stop goes to it and to the other nodes (stopRun).
  const QString owner = form.nodeIds.first();
  NodeLink* link = linkOf(owner);
  if (link == nullptr || !link->connection) {
    emit launchFailed(tr("Node %1 is not connected.").arg(displayName(owner)));
    return;
  }
  for (const QString& nodeId : form.nodeIds) {
    if (linkOf(nodeId) == nullptr) {
      emit launchFailed(tr("Node %1 is not known (removed?); choose another node.").arg(nodeId));
      return;
    }
  }
  v1::RunSpec spec = toRunSpec(form, nodeChoices());
  if (form.nodeIds.size() == 1) {
    sendLaunch(owner, spec);
    return;
  }
  for (const QString& nodeId : form.nodeIds) {
    const NodeLink* node = linkOf(nodeId);
    if (!node->connection || node->connection->state() != NodeState::Online) {
      emit launchFailed(tr("Node %1 is not online, so the run cannot start on it: wait until it "
                           "is online (Nodes) or choose another node.")
                            .arg(displayName(nodeId)));
      return;
    }
  }
  startPreflight(form.nodeIds, std::move(spec));
}

QString Controller::queuedText(const QString& runId) const {
  const auto it = runInfos_.constFind(runId);
  return it == runInfos_.cend() ? QString() : gui::queuedText(*it);
}

QString Controller::resumeProblem(const QString& runId) const {
  const auto it = runInfos_.constFind(runId);
  if (it == runInfos_.cend()) {
    return tr("Run %1 is not known to a connected node: connect its node (Nodes), then resume it.")
        .arg(runId);
  }
  if (!hasResumableCheckpoint(it->state(), it->spec())) {
    return tr(
        "Only a trainer run that was stopped, or that failed with periodic checkpoints on, "
        "has a checkpoint to resume from.");
  }
  const QString owner = runNode_.value(runId);
  const auto link = links_.find(owner);
  if (link == links_.end() || !link->second.connection ||
      link->second.connection->state() != NodeState::Online) {
    return tr("Node %1, which holds the run's checkpoints, is not online: wait until it is "
              "(Nodes), then resume the run.")
        .arg(displayName(owner));
  }
  return {};
}

QString Controller::checkpointDirOf(const QString& runId) const {
  const auto it = runInfos_.constFind(runId);
  if (it == runInfos_.cend()) return {};
  auto dir = checkpointDirOfRun(*it);
  return dir.isOk() ? dir.value() : QString();
}

void Controller::resumeRun(const QString& runId) {
  const QString problem = resumeProblem(runId);
  if (!problem.isEmpty()) {
    emit launchFailed(problem);
    return;
  }
  auto spec = resumedRunSpec(runInfos_.value(runId));
  if (!spec.isOk()) {
    emit launchFailed(tr("Run %1 cannot be resumed: %2")
                          .arg(runId, QString::fromStdString(spec.status().message())));
    return;
  }
  // The checkpoints are on the owner's node: the new run is owned by the same node, and a
  // multi-node run runs on the same hosts again, in the same rank order.
  const QString owner = runNode_.value(runId);
  if (spec->hosts_size() <= 1) {
    sendLaunch(owner, spec.value());
    return;
  }
  QStringList nodeIds{owner};
  nodeIds << otherNodesOfRun(runId, owner);
  if (nodeIds.size() != spec->hosts_size()) {
    emit launchFailed(tr("Not every host of run %1 is a known node (it ran on %2): add the "
                         "missing nodes under Nodes, then resume it.")
                          .arg(runId, runHosts_.value(runId).join(QStringLiteral(", "))));
    return;
  }
  for (const QString& nodeId : nodeIds) {
    const NodeLink* node = linkOf(nodeId);
    if (node == nullptr || !node->connection || node->connection->state() != NodeState::Online) {
      emit launchFailed(tr("Node %1 is not online, so the run cannot be resumed on it: wait "
                           "until it is online (Nodes).")
                            .arg(displayName(nodeId)));
      return;
    }
  }
  startPreflight(nodeIds, std::move(spec.value()));
}

void Controller::sendLaunch(const QString& owner, const v1::RunSpec& spec) {
  NodeLink* link = linkOf(owner);
  if (link == nullptr || !link->connection) {
    emit launchFailed(tr("Node %1 is not connected.").arg(displayName(owner)));
    return;
  }
  v1::Envelope request;
  *request.mutable_launch_run()->mutable_spec() = spec;
  pendingLaunches_.insert({owner, link->connection->request(request)});
}

void Controller::startPreflight(const QStringList& nodeIds, v1::RunSpec spec) {
  const quint64 attempt = ++nextPreflight_;
  Preflight& preflight = preflights_[attempt];
  preflight.nodeIds = nodeIds;
  preflight.spec = std::move(spec);
  QStringList names;
  for (int i = 0; i < nodeIds.size(); ++i) {
    v1::Envelope request;
    *request.mutable_preflight()->mutable_spec() = preflight.spec;
    request.mutable_preflight()->set_ranks(preflight.spec.hosts(i).ranks());
    request.mutable_preflight()->set_reserve_seconds(kPreflightReserveSeconds);
    preflightRequests_.insert({nodeIds[i], linkOf(nodeIds[i])->connection->request(request)},
                              attempt);
    names << displayName(nodeIds[i]);
  }
  // The GUI thread does not wait: whatever has not answered by then fails the launch.
  QTimer::singleShot(options_.preflightTimeoutMs, this, [this, attempt] {
    auto it = preflights_.find(attempt);
    if (it == preflights_.end()) return;
    QStringList silent;
    for (const QString& nodeId : it->second.nodeIds) {
      if (it->second.replies.count(nodeId) == 0) silent << displayName(nodeId);
    }
    failPreflight(attempt,
                  tr("%1 did not answer the pre-flight check within %2 s, so nothing was "
                     "launched: check that the node's agent runs and is reachable (Nodes), then "
                     "launch again.")
                      .arg(silent.join(QStringLiteral(", ")),
                           QLocale().toString(options_.preflightTimeoutMs / 1000.0)));
  });
  emit preflightStarted(names);
}

void Controller::failPreflight(quint64 attempt, const QString& message) {
  if (preflights_.erase(attempt) == 0) return;
  for (auto it = preflightRequests_.begin(); it != preflightRequests_.end();) {
    it = it.value() == attempt ? preflightRequests_.erase(it) : std::next(it);
  }
  emit launchFailed(message);
}

void Controller::onPreflightAnswer(quint64 attempt, const QString& nodeId,
                                   const v1::Envelope& reply) {
  auto it = preflights_.find(attempt);
  if (it == preflights_.end()) return;
  if (reply.has_error() || !reply.has_preflight_reply()) {
    // An agent from before the pre-flight answers UNKNOWN_MESSAGE.
    const QString why = reply.has_error() ? QString::fromStdString(reply.error().message())
                                          : tr("the reply was not a pre-flight answer");
    failPreflight(attempt, tr("The pre-flight check on %1 failed, so nothing was launched: %2. "
                              "Check that the node runs the same Ringside version as the others.")
                               .arg(displayName(nodeId), why));
    return;
  }
  Preflight& preflight = it->second;
  preflight.replies[nodeId] = reply.preflight_reply();
  if (preflight.replies.size() < static_cast<size_t>(preflight.nodeIds.size())) return;
  QList<PreflightAnswer> answers;
  for (const QString& id : preflight.nodeIds) {
    answers.append({displayName(id), preflight.replies[id]});
  }
  v1::RunSpec spec = preflight.spec;
  const QString owner = preflight.nodeIds.first();
  const QString problems = applyPreflight(answers, &spec);
  if (!problems.isEmpty()) {
    failPreflight(attempt, problems);
    return;
  }
  preflights_.erase(it);
  sendLaunch(owner, spec);
}

void Controller::stopRun(const QString& runId, double graceSeconds) {
  const QString owner = runNode_.value(runId);
  NodeLink* link = linkOf(owner);
  if (link == nullptr || !link->connection) {
    emit runStopFailed(runId, tr("The node of run %1 is not connected.").arg(runId));
    return;
  }
  pendingStops_.insert({owner, link->connection->stopRun(runId, graceSeconds)}, {runId, true});
  // The ranks on the other nodes of a multi-node run: their agents stop them too, so they end
  // even when mpirun on the owner cannot reach them any more.
  for (const QString& nodeId : otherNodesOfRun(runId, owner)) {
    NodeLink* other = linkOf(nodeId);
    if (other == nullptr || !other->connection) continue;
    pendingStops_.insert({nodeId, other->connection->stopRun(runId, graceSeconds)}, {runId, false});
  }
}

void Controller::onReply(const QString& nodeId, quint64 requestId, const v1::Envelope& reply) {
  const RequestKey key{nodeId, requestId};
  if (telemetryRequests_.remove(key)) {
    onTelemetryPage(nodeId, reply);  // controller_telemetry.cpp
    return;
  }
  if (onQueueReply(key, reply)) return;  // controller_queue.cpp
  if (auto preflight = preflightRequests_.constFind(key); preflight != preflightRequests_.cend()) {
    const quint64 attempt = preflight.value();
    preflightRequests_.erase(preflight);
    onPreflightAnswer(attempt, nodeId, reply);
    return;
  }
  if (auto stop = pendingStops_.constFind(key); stop != pendingStops_.cend()) {
    const StopRequest request = stop.value();
    pendingStops_.erase(stop);
    if (!reply.has_error()) return;  // the run's new state comes as an event
    // A node other than the owner has no ranks of the run once they exited: nothing to stop.
    if (!request.owner && reply.error().code() == v1::ErrorReply::NOT_FOUND) return;
    emit runStopFailed(request.runId,
                       request.owner ? QString::fromStdString(reply.error().message())
                                     : tr("%1 could not stop the run's ranks there: %2")
                                           .arg(displayName(nodeId),
                                                QString::fromStdString(reply.error().message())));
    return;
  }
  if (!pendingLaunches_.remove(key)) {
    emit nodeReply(nodeId, requestId, reply);  // a sendToNode request
    return;
  }
  if (reply.has_error()) {
    emit launchFailed(QString::fromStdString(reply.error().message()));
    return;
  }
  const v1::RunInfo& run = reply.launch_run_reply().run();
  const QString runId = QString::fromStdString(run.run_id());
  noteRun(nodeId, run);
  store_->upsertRun(nodeId, run);
  if (NodeLink* link = linkOf(nodeId); link && link->connection) {
    link->connection->trackRun(runId, 0);
  }
  emit runLaunched(runId);
}

void Controller::onRequestFailed(const QString& nodeId, quint64 requestId, const QString& message) {
  const RequestKey key{nodeId, requestId};
  if (telemetryRequests_.remove(key)) {
    telemetryFetchFailed(nodeId, message);
    telemetryCatchUps_[nodeId].due = true;  // again when the node is back online
    return;
  }
  if (onQueueRequestFailed(key, message)) return;
  if (auto preflight = preflightRequests_.constFind(key); preflight != preflightRequests_.cend()) {
    const quint64 attempt = preflight.value();
    preflightRequests_.erase(preflight);
    failPreflight(attempt, tr("The pre-flight check could not reach %1, so nothing was launched: "
                              "%2. Check that the node is online (Nodes), then launch again.")
                               .arg(displayName(nodeId), message));
    return;
  }
  if (auto stop = pendingStops_.constFind(key); stop != pendingStops_.cend()) {
    const StopRequest request = stop.value();
    pendingStops_.erase(stop);
    emit runStopFailed(request.runId,
                       request.owner ? message
                                     : tr("%1 could not be asked to stop the run's ranks there: "
                                          "%2. The owner's mpirun stops them as well; check the "
                                          "node once it is reachable.")
                                           .arg(displayName(nodeId), message));
    return;
  }
  if (pendingLaunches_.remove(key)) {
    emit launchFailed(message);
    return;
  }
  emit nodeRequestFailed(nodeId, requestId, message);
}

quint64 Controller::sendToNode(const QString& nodeId, const v1::Envelope& request) {
  NodeLink* link = linkOf(nodeId);
  if (link == nullptr || !link->connection) return 0;
  return link->connection->request(request);
}

}  // namespace ringside::gui
