// AgentConnection's GUI-thread side: requests and commands queued for the network thread
// (agent_connection_worker.cpp), whose catch-up rules are CatchUp's (catch_up.cpp).
#include "ringside/gui/agent_connection.h"

#include <mutex>
#include <string>
#include <utility>

#include "agent_connection_worker.h"
#include "ringside/common/protocol.h"

namespace ringside::gui {

namespace {

void registerMetaTypes() {
  static std::once_flag once;
  std::call_once(once, [] {
    qRegisterMetaType<v1::Envelope>();
    qRegisterMetaType<v1::HelloReply>();
    qRegisterMetaType<v1::ListRunsReply>();
    qRegisterMetaType<v1::FetchRunDataReply>();
    qRegisterMetaType<EventBatch>();
    qRegisterMetaType<NodeState>();
  });
}

}  // namespace

size_t EventBatch::sampleCount() const {
  size_t count = 0;
  for (const auto& batch : metrics) count += static_cast<size_t>(batch.samples_size());
  return count;
}

const char* nodeStateName(NodeState state) {
  switch (state) {
    case NodeState::Connecting:
      return "connecting";
    case NodeState::Online:
      return "online";
    case NodeState::Offline:
      return "offline";
  }
  return "offline";
}

AgentConnection::AgentConnection(curve::KeyPair keys, AgentConnectionOptions options,
                                 QObject* parent)
    : QObject(parent) {
  registerMetaTypes();
  worker_ = std::make_unique<Worker>(this, std::move(keys), std::move(options));
}

AgentConnection::~AgentConnection() { stop(); }

void AgentConnection::stop() {
  if (stopped_.exchange(true)) return;
  worker_->stop();
}

void AgentConnection::connectTo(const QString& controlEndpoint, const QString& eventsEndpoint,
                                const QString& agentPublicKey) {
  if (stopped_.load()) return;
  worker_->post([w = worker_.get(), control = controlEndpoint.toStdString(),
                 events = eventsEndpoint.toStdString(),
                 key = agentPublicKey.toStdString()] { w->connectTo(control, events, key); });
}

uint64_t AgentConnection::request(const v1::Envelope& envelope) {
  if (stopped_.load()) return 0;
  const uint64_t id = nextRequestId();
  v1::Envelope copy = envelope;
  copy.set_protocol_version(protocol::kProtocolVersion);
  copy.set_request_id(id);
  worker_->post([w = worker_.get(), id, frame = protocol::encodeEnvelope(copy)]() mutable {
    w->sendUserRequest(id, std::move(frame));
  });
  return id;
}

uint64_t AgentConnection::hello() {
  v1::Envelope envelope;
  envelope.mutable_hello()->set_client_name("ringside");
  return request(envelope);
}

uint64_t AgentConnection::listRuns(bool includeEnded) {
  v1::Envelope envelope;
  envelope.mutable_list_runs()->set_include_ended(includeEnded);
  return request(envelope);
}

uint64_t AgentConnection::launchRun(const v1::RunSpec& spec) {
  v1::Envelope envelope;
  *envelope.mutable_launch_run()->mutable_spec() = spec;
  return request(envelope);
}

uint64_t AgentConnection::stopRun(const QString& runId, double graceSeconds) {
  v1::Envelope envelope;
  envelope.mutable_stop_run()->set_run_id(runId.toStdString());
  envelope.mutable_stop_run()->set_grace_seconds(graceSeconds);
  return request(envelope);
}

uint64_t AgentConnection::setDrain(bool draining) {
  v1::Envelope envelope;
  envelope.mutable_set_drain()->set_draining(draining);
  return request(envelope);
}

uint64_t AgentConnection::tailLog(const QString& runId, uint32_t maxLines) {
  v1::Envelope envelope;
  envelope.mutable_tail_log()->set_run_id(runId.toStdString());
  envelope.mutable_tail_log()->set_max_lines(maxLines);
  return request(envelope);
}

uint64_t AgentConnection::fetchSince(const QString& runId, uint64_t afterSeq, uint32_t maxEntries) {
  v1::Envelope envelope;
  envelope.mutable_fetch_run_data()->set_run_id(runId.toStdString());
  envelope.mutable_fetch_run_data()->set_after_seq(afterSeq);
  envelope.mutable_fetch_run_data()->set_max_entries(maxEntries);
  return request(envelope);
}

void AgentConnection::trackRun(const QString& runId, uint64_t lastSeq) {
  if (stopped_.load()) return;
  worker_->post(
      [w = worker_.get(), id = runId.toStdString(), lastSeq] { w->trackRun(id, lastSeq); });
}

void AgentConnection::trackRuns(const std::vector<std::pair<QString, uint64_t>>& runs) {
  if (stopped_.load() || runs.empty()) return;
  std::vector<std::pair<std::string, uint64_t>> ids;
  ids.reserve(runs.size());
  for (const auto& [runId, lastSeq] : runs) ids.emplace_back(runId.toStdString(), lastSeq);
  worker_->post([w = worker_.get(), ids = std::move(ids)] { w->trackRuns(ids); });
}

void AgentConnection::untrackRun(const QString& runId) {
  if (stopped_.load()) return;
  worker_->post([w = worker_.get(), id = runId.toStdString()] { w->untrackRun(id); });
}

void AgentConnection::ignoreRun(const QString& runId) {
  if (stopped_.load()) return;
  worker_->post([w = worker_.get(), id = runId.toStdString()] { w->ignoreRun(id); });
}

int64_t AgentConnection::heartbeatAgeMs() const {
  const int64_t last = lastHeardMs_.load();
  return last < 0 ? -1 : nowMs() - last;
}

}  // namespace ringside::gui
