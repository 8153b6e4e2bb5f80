// The Controller's view of the nodes' run queues (docs/queue.md): the queued runs the agents
// reported, and moving a queued run or changing its priority (reorder_queued_run).
#include <algorithm>

#include "ringside/gui/controller.h"

namespace ringside::gui {

QList<QueuedRun> Controller::queuedRuns() const {
  QList<QueuedRun> out;
  for (auto it = runInfos_.cbegin(); it != runInfos_.cend(); ++it) {
    if (it->state() != v1::QUEUED) continue;
    const QString nodeId = runNode_.value(it.key());
    auto link = links_.find(nodeId);
    if (link == links_.end()) continue;  // a removed node
    QueuedRun queued;
    queued.nodeId = nodeId;
    queued.nodeName = displayName(nodeId);
    queued.nodeOnline = link->second.view.state == NodeState::Online;
    queued.nodeHasGpus = link->second.view.info && link->second.view.info->gpus_size() > 0;
    queued.run = *it;
    out.push_back(std::move(queued));
  }
  std::sort(out.begin(), out.end(), [](const QueuedRun& a, const QueuedRun& b) {
    const int byName = QString::localeAwareCompare(a.nodeName, b.nodeName);
    if (byName != 0) return byName < 0;
    if (a.nodeId != b.nodeId) return a.nodeId < b.nodeId;
    // Position 0 (an agent that has not placed it yet) last.
    const uint32_t pa = a.run.queue_position() > 0 ? a.run.queue_position() : UINT32_MAX;
    const uint32_t pb = b.run.queue_position() > 0 ? b.run.queue_position() : UINT32_MAX;
    if (pa != pb) return pa < pb;
    return a.run.run_id() < b.run.run_id();
  });
  return out;
}

std::optional<v1::RunInfo> Controller::runInfo(const QString& runId) const {
  auto it = runInfos_.constFind(runId);
  if (it == runInfos_.cend()) return std::nullopt;
  return *it;
}

void Controller::reorderQueuedRun(const QString& runId, int places,
                                  std::optional<v1::RunPriority> priority) {
  const QString owner = runNode_.value(runId);
  NodeLink* link = linkOf(owner);
  if (link == nullptr || !link->connection || link->view.state != NodeState::Online) {
    emit queueActionFailed(
        runId, tr("The node of run %1 is not connected, so its queue cannot be changed now. "
                  "Try again when the node is online (Nodes).")
                   .arg(runId));
    return;
  }
  v1::Envelope request;
  v1::ReorderQueuedRunRequest& reorder = *request.mutable_reorder_queued_run();
  reorder.set_run_id(runId.toStdString());
  reorder.set_places(places);
  if (priority) reorder.set_priority(*priority);
  pendingReorders_.insert({owner, link->connection->request(request)}, runId);
}

bool Controller::onQueueReply(const RequestKey& key, const v1::Envelope& reply) {
  auto pending = pendingReorders_.constFind(key);
  if (pending == pendingReorders_.cend()) return false;
  const QString runId = pending.value();
  pendingReorders_.erase(pending);
  if (reply.has_error()) {
    emit queueActionFailed(runId, tr("%1 did not move run %2: %3")
                                      .arg(displayName(key.first), runId,
                                           QString::fromStdString(reply.error().message())));
    return true;
  }
  if (reply.has_reorder_queued_run_reply()) {
    // The run's new place at once; the other runs' come as the agent's run_state events.
    const v1::RunInfo& run = reply.reorder_queued_run_reply().run();
    noteRun(key.first, run);
    store_->upsertRun(key.first, run);
  }
  return true;
}

bool Controller::onQueueRequestFailed(const RequestKey& key, const QString& message) {
  auto pending = pendingReorders_.constFind(key);
  if (pending == pendingReorders_.cend()) return false;
  const QString runId = pending.value();
  pendingReorders_.erase(pending);
  emit queueActionFailed(runId, tr("%1 did not answer, so run %2 may not have moved: %3")
                                    .arg(displayName(key.first), runId, message));
  return true;
}

}  // namespace ringside::gui
