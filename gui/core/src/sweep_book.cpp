// The GUI's view of the agents' sweeps (sweep_book.h).
#include "ringside/gui/sweep_book.h"

#include <google/protobuf/util/json_util.h>

#include <algorithm>

#include "ringside/common/protocol.h"
#include "ringside/gui/controller.h"

namespace ringside::gui {

namespace {

constexpr qsizetype kMaxSweepJsonBytes = 1 << 20;

}  // namespace

Result<v1::SweepSpec> sweepSpecFromJson(const QByteArray& json) {
  if (json.size() > kMaxSweepJsonBytes) {
    return Status::invalidArgument("the sweep file is over 1 MiB");
  }
  v1::SweepSpec spec;
  const auto parsed = google::protobuf::util::JsonStringToMessage(
      std::string(json.constData(), static_cast<size_t>(json.size())), &spec);
  if (!parsed.ok()) {
    return Status::invalidArgument("not a sweep spec (docs/sweeps.md): " +
                                   std::string(parsed.message()));
  }
  return spec;
}

SweepBook::SweepBook(Controller* controller, QObject* parent)
    : QObject(parent), controller_(controller) {
  connect(controller_, &Controller::nodeOnline, this, &SweepBook::refresh);
  connect(controller_, &Controller::sweepsReported, this,
          [this](const QString& nodeId, const std::vector<v1::SweepInfo>& sweeps) {
            for (const v1::SweepInfo& sweep : sweeps) apply(nodeId, sweep);
            emit changed();
          });
  connect(controller_, &Controller::nodeReply, this, &SweepBook::onReply);
  connect(controller_, &Controller::nodeRequestFailed, this,
          [this](const QString& nodeId, quint64 requestId, const QString& message) {
            auto it = asked_.find({nodeId, requestId});
            if (it == asked_.end()) return;  // not the book's
            const Ask ask = it.value();
            asked_.erase(it);
            if (ask == Ask::kList) return;  // asked again when the node is back
            emit failed(tr("The sweep request did not reach its node: %1").arg(message));
          });
}

std::vector<SweepBook::Entry> SweepBook::sweeps() const {
  std::vector<Entry> out;
  out.reserve(sweeps_.size());
  for (const auto& [id, entry] : sweeps_) out.push_back(entry);
  std::stable_sort(out.begin(), out.end(), [](const Entry& a, const Entry& b) {
    return a.sweep.created_time() < b.sweep.created_time();
  });
  return out;
}

const SweepBook::Entry* SweepBook::find(const QString& sweepId) const {
  auto it = sweeps_.find(sweepId);
  return it == sweeps_.end() ? nullptr : &it->second;
}

void SweepBook::refresh(const QString& nodeId) {
  v1::Envelope request;
  request.mutable_list_sweeps()->set_include_ended(true);
  if (const quint64 id = controller_->sendToNode(nodeId, request)) {
    asked_.insert({nodeId, id}, Ask::kList);
  }
}

void SweepBook::launch(const QString& nodeId, const v1::SweepSpec& spec) {
  v1::Envelope request;
  *request.mutable_launch_sweep()->mutable_spec() = spec;
  const quint64 id = controller_->sendToNode(nodeId, request);
  if (id == 0) {
    emit failed(tr("The sweep was not started: its node is not connected."));
    return;
  }
  asked_.insert({nodeId, id}, Ask::kLaunch);
}

void SweepBook::control(const QString& sweepId, v1::SweepAction action, uint32_t trials,
                        uint32_t trial) {
  const Entry* entry = find(sweepId);
  if (entry == nullptr) {
    emit failed(tr("Sweep %1 is not known here.").arg(sweepId));
    return;
  }
  v1::Envelope request;
  v1::ControlSweepRequest& control = *request.mutable_control_sweep();
  control.set_sweep_id(sweepId.toStdString());
  control.set_action(action);
  control.set_trials(trials);
  control.set_trial(trial);
  const quint64 id = controller_->sendToNode(entry->nodeId, request);
  if (id == 0) {
    emit failed(tr("Sweep %1: its node is not connected.").arg(sweepId));
    return;
  }
  asked_.insert({entry->nodeId, id}, Ask::kControl);
}

void SweepBook::apply(const QString& nodeId, const v1::SweepInfo& sweep) {
  if (sweep.sweep_id().empty()) return;
  Entry& entry = sweeps_[QString::fromStdString(sweep.sweep_id())];
  entry.nodeId = nodeId;
  entry.sweep = sweep;
}

void SweepBook::onReply(const QString& nodeId, quint64 requestId, const v1::Envelope& reply) {
  auto it = asked_.find({nodeId, requestId});
  if (it == asked_.end()) return;  // not the book's
  const Ask ask = it.value();
  asked_.erase(it);
  if (reply.has_error()) {
    emit failed(ask == Ask::kLaunch
                    ? tr("The sweep was not started: %1")
                          .arg(QString::fromStdString(reply.error().message()))
                    : tr("The sweep request failed: %1")
                          .arg(QString::fromStdString(reply.error().message())));
    return;
  }
  switch (reply.body_case()) {
    case v1::Envelope::kListSweepsReply:
      for (const v1::SweepInfo& sweep : reply.list_sweeps_reply().sweeps()) apply(nodeId, sweep);
      break;
    case v1::Envelope::kLaunchSweepReply:
      apply(nodeId, reply.launch_sweep_reply().sweep());
      emit sweepLaunched(QString::fromStdString(reply.launch_sweep_reply().sweep().sweep_id()));
      break;
    case v1::Envelope::kControlSweepReply:
      apply(nodeId, reply.control_sweep_reply().sweep());
      break;
    default:
      return;
  }
  emit changed();
}

}  // namespace ringside::gui
