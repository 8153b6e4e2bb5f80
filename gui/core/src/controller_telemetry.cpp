// Controller: runs' node telemetry fetched from the agents' telemetry journals (docs/design.md
// decision 12; docs/protocol.md, "FetchTelemetry"), so a run's GPU charts are complete on every
// node of the run also when the GUI was closed while it ran.
#include <QLoggingCategory>

#include "ringside/gui/controller.h"
#include "ringside/gui/when_ready.h"

namespace ringside::gui {

void Controller::catchUpTelemetry(const QString& nodeId) {
  telemetryCatchUps_[nodeId].due = true;
  startTelemetryCatchUp(nodeId);
}

void Controller::catchUpTelemetryEverywhere() {
  for (const auto& entry : links_) catchUpTelemetry(entry.first);
}

void Controller::startTelemetryCatchUp(const QString& nodeId) {
  TelemetryCatchUp& catchUp = telemetryCatchUps_[nodeId];
  if (catchUp.busy || catchUp.unsupported || !catchUp.due || !started_) return;
  NodeLink* link = linkOf(nodeId);
  if (!link || !link->connection || link->view.state != NodeState::Online) return;
  const QString hostName = telemetryHostName(nodeId);
  if (hostName.isEmpty()) return;  // after its hello
  catchUp.due = false;
  catchUp.busy = true;
  whenReady(this, store_->telemetryWindows(nodeId, hostName),
            [this, nodeId](Result<std::vector<TelemetryWindow>> windows) {
              TelemetryCatchUp& catchUp = telemetryCatchUps_[nodeId];
              if (!windows.isOk()) {
                catchUp.busy = false;
                qWarning().noquote()
                    << "ringside: listing the runs whose telemetry node" << displayName(nodeId)
                    << "holds failed:" << QString::fromStdString(windows.status().message());
                return;
              }
              catchUp.windows.assign(windows->begin(), windows->end());
              catchUp.afterSeq = 0;
              catchUp.lastTime = 0;
              fetchTelemetryPage(nodeId);
            });
}

void Controller::fetchTelemetryPage(const QString& nodeId) {
  TelemetryCatchUp& catchUp = telemetryCatchUps_[nodeId];
  NodeLink* link = linkOf(nodeId);
  if (catchUp.windows.empty() || !link || !link->connection ||
      link->view.state != NodeState::Online) {
    if (!catchUp.windows.empty()) catchUp.due = true;  // the rest when it is back
    catchUp.windows.clear();
    catchUp.busy = false;
    startTelemetryCatchUp(nodeId);  // asked for again meanwhile
    return;
  }
  const TelemetryWindow& window = catchUp.windows.front();
  v1::Envelope envelope;
  v1::FetchTelemetryRequest& fetch = *envelope.mutable_fetch_telemetry();
  fetch.set_from_time(window.from);
  fetch.set_to_time(window.to);
  fetch.set_after_seq(catchUp.afterSeq);
  const uint64_t id = link->connection->request(envelope);
  if (id == 0) {
    telemetryFetchFailed(nodeId, QStringLiteral("the connection is closed"));
    return;
  }
  telemetryRequests_.insert(RequestKey{nodeId, id});
}

void Controller::telemetryFetchFailed(const QString& nodeId, const QString& message) {
  TelemetryCatchUp& catchUp = telemetryCatchUps_[nodeId];
  qWarning().noquote() << "ringside: fetching run telemetry from node" << displayName(nodeId)
                       << "failed:" << message << "(tried again when it is back online)";
  catchUp.windows.clear();
  catchUp.busy = false;
}

void Controller::onTelemetryPage(const QString& nodeId, const v1::Envelope& reply) {
  TelemetryCatchUp& catchUp = telemetryCatchUps_[nodeId];
  if (catchUp.windows.empty()) {
    catchUp.busy = false;
    return;
  }
  if (reply.has_error() || !reply.has_fetch_telemetry_reply()) {
    if (reply.has_error() && reply.error().code() == v1::ErrorReply::UNKNOWN_MESSAGE) {
      // An agent of before the telemetry journal: runs keep what the GUI received live.
      catchUp.unsupported = true;
      catchUp.windows.clear();
      catchUp.busy = false;
      qInfo().noquote() << "ringside: node" << displayName(nodeId)
                        << "keeps no telemetry journal (an older ringside-agent): GPU charts of "
                           "its runs hold only what this GUI received live; update the agent "
                           "there to have them complete";
      return;
    }
    // This window only (a bad window, a damaged reading): the others are still fetched, and
    // this one again on the next catch-up.
    qWarning().noquote() << "ringside: node" << displayName(nodeId)
                         << "did not give the telemetry of run" << catchUp.windows.front().runId
                         << ":"
                         << QString::fromStdString(reply.has_error() ? reply.error().message()
                                                                     : "no telemetry page");
    catchUp.windows.pop_front();
    catchUp.afterSeq = 0;
    catchUp.lastTime = 0;
    fetchTelemetryPage(nodeId);
    return;
  }
  const v1::FetchTelemetryReply& page = reply.fetch_telemetry_reply();
  const TelemetryWindow window = catchUp.windows.front();
  std::vector<v1::NodeTelemetry> readings(page.entries().begin(), page.entries().end());
  for (const v1::NodeTelemetry& reading : readings) {
    catchUp.lastTime = std::max(catchUp.lastTime, reading.wall_time());
  }
  // A page that says more but brings nothing would ask for itself forever: the window ends.
  const bool more = page.more() && !readings.empty() && page.last_seq() > catchUp.afterSeq;
  std::optional<double> through;
  if (!more) {
    if (window.to > 0) {
      through = window.to;  // an ended run: complete from this node
    } else if (catchUp.lastTime > 0) {
      through = catchUp.lastTime;  // a running run: held up to its newest reading
    }
  }
  catchUp.afterSeq = page.last_seq();
  whenReady(this,
            store_->ingestFetchedTelemetry(nodeId, telemetryHostName(nodeId), window.runId,
                                           std::move(readings), through),
            [this, nodeId, runId = window.runId, more](Result<int64_t> stored) {
              if (!stored.isOk()) {
                if (stored.status().code() != Status::Code::kNotFound) {
                  emit errorMessage(tr("Storing GPU telemetry of node %1 failed: %2")
                                        .arg(displayName(nodeId),
                                             QString::fromStdString(stored.status().message())));
                }
              } else if (*stored > 0) {
                emit runTelemetryStored(runId);
              }
              TelemetryCatchUp& catchUp = telemetryCatchUps_[nodeId];
              if (!more && !catchUp.windows.empty()) {
                catchUp.windows.pop_front();
                catchUp.afterSeq = 0;
                catchUp.lastTime = 0;
              }
              fetchTelemetryPage(nodeId);
            });
}

}  // namespace ringside::gui
