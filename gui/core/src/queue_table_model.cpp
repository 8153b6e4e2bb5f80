#include "ringside/gui/queue_table_model.h"

#include <QBrush>
#include <QGuiApplication>
#include <QLocale>
#include <QPalette>

#include "ringside/common/run_spec.h"

namespace ringside::gui {

QueueTableModel::QueueTableModel(QObject* parent) : QAbstractTableModel(parent) {}

int QueueTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(runs_.size());
}

int QueueTableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumnCount;
}

QString QueueTableModel::priorityText(v1::RunPriority priority) {
  switch (priority) {
    case v1::HIGH_PRIORITY:
      return tr("high");
    case v1::LOW_PRIORITY:
      return tr("low");
    default:
      return tr("normal");
  }
}

QString QueueTableModel::timeText(double unixSeconds, const QDateTime& now) {
  const QDateTime at = QDateTime::fromMSecsSinceEpoch(static_cast<qint64>(unixSeconds * 1000.0));
  // The locale's short time, to the minute (some locales' short format has seconds).
  QString time = QLocale().timeFormat(QLocale::ShortFormat);
  time.remove(QStringLiteral(":ss"));
  if (at.date() == now.date()) return QLocale().toString(at.time(), time);
  return QLocale().toString(at, QStringLiteral("ddd d MMM ") + time);
}

QString QueueTableModel::slotsText(const v1::RunSpec& spec, bool gpuNode) {
  bool gpus = false;
  if (spec.has_python()) {
    gpus = spec.python().use_gpus();
  } else if (spec.has_trainer()) {
    auto config = trainerConfigOf(spec.trainer());
    const std::string backend =
        config.isOk() && config->has_backend() ? config->backend() : std::string("auto");
    gpus = backend == "nccl" || (backend == "auto" && gpuNode);
  }
  qint64 ranks = 0;
  for (const v1::HostSlots& host : spec.hosts()) ranks += host.ranks();
  const int nodes = spec.hosts_size();
  if (nodes == 0) ranks = spec.ranks_per_node();
  QString what;
  if (gpus) {
    what = ranks == 1 ? tr("1 GPU") : tr("%L1 GPUs").arg(ranks);
  } else {
    what = ranks == 1 ? tr("1 CPU slot") : tr("%L1 CPU slots").arg(ranks);
  }
  return nodes > 1 ? tr("%1 on %L2 nodes").arg(what).arg(nodes) : what;
}

QVariant QueueTableModel::data(const QModelIndex& index, int role) const {
  const QueuedRun* queued = runAt(index.row());
  if (queued == nullptr || index.column() < 0 || index.column() >= kColumnCount) return {};
  const v1::RunInfo& run = queued->run;
  if (role == kRunIdRole) return QString::fromStdString(run.run_id());
  if (role == kNodeIdRole) return queued->nodeId;
  if (role == Qt::ForegroundRole && !queued->nodeOnline) {
    return QGuiApplication::palette().brush(QPalette::Disabled, QPalette::Text);
  }
  if (role == Qt::TextAlignmentRole && index.column() == kPosition) {
    return QVariant(Qt::AlignRight | Qt::AlignVCenter);
  }
  if (role == Qt::ToolTipRole) {
    if (index.column() == kWaitingFor || index.column() == kRun) {
      QString tip = QString::fromStdString(run.run_id());
      if (!run.waiting_reason().empty()) {
        tip += QLatin1Char('\n') + QString::fromStdString(run.waiting_reason());
      }
      if (!queued->nodeOnline) {
        tip += QLatin1Char('\n') +
               tr("The node is offline: this is what its agent said last. The run is still in "
                  "its queue, which moves without the GUI.");
      }
      return tip;
    }
    if (index.column() == kEstimatedStart && run.estimated_start() <= 0) {
      return tr("No estimate yet: a run it waits for has no progress to go by (a PyTorch script "
                "without a step count), or it waits behind another queued run.");
    }
    return {};
  }
  if (role != Qt::DisplayRole) return {};
  switch (static_cast<Column>(index.column())) {
    case kNode:
      return queued->nodeOnline ? queued->nodeName : tr("%1 (offline)").arg(queued->nodeName);
    case kPosition:
      return run.queue_position() > 0 ? QString::number(run.queue_position()) : QString();
    case kPriority:
      return priorityText(run.spec().priority());
    case kRun:
      return QString::fromStdString(run.spec().name().empty() ? run.run_id() : run.spec().name());
    case kRanks:
      return slotsText(run.spec(), queued->nodeHasGpus);
    case kWaitingFor: {
      // The agent's sentence, without the leading "waiting for" the column header says.
      QString reason = QString::fromStdString(run.waiting_reason());
      if (reason.startsWith(QLatin1String("waiting for "))) reason = reason.mid(12);
      return reason;
    }
    case kEstimatedStart:
      return run.estimated_start() > 0 ? timeText(run.estimated_start()) : tr("unknown");
    case kQueuedAt:
      return run.created_time() > 0 ? timeText(run.created_time()) : QString();
    case kColumnCount:
      break;
  }
  return {};
}

QVariant QueueTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (static_cast<Column>(section)) {
    case kNode:
      return tr("Node");
    case kPosition:
      return tr("Position");
    case kPriority:
      return tr("Priority");
    case kRun:
      return tr("Run");
    case kRanks:
      return tr("Takes");
    case kWaitingFor:
      return tr("Waiting for");
    case kEstimatedStart:
      return tr("Estimated start");
    case kQueuedAt:
      return tr("Queued at");
    case kColumnCount:
      break;
  }
  return {};
}

void QueueTableModel::setRuns(QList<QueuedRun> runs) {
  bool sameRows = runs.size() == runs_.size();
  for (qsizetype i = 0; sameRows && i < runs.size(); ++i) {
    sameRows = runs[i].run.run_id() == runs_[i].run.run_id() && runs[i].nodeId == runs_[i].nodeId;
  }
  if (!sameRows) {
    beginResetModel();
    runs_ = std::move(runs);
    endResetModel();
    return;
  }
  runs_ = std::move(runs);
  if (!runs_.isEmpty()) {
    emit dataChanged(index(0, 0), index(static_cast<int>(runs_.size()) - 1, kColumnCount - 1));
  }
}

const QueuedRun* QueueTableModel::runAt(int row) const {
  return row >= 0 && row < runs_.size() ? &runs_[row] : nullptr;
}

int QueueTableModel::rowOfRun(const QString& runId) const {
  const std::string id = runId.toStdString();
  for (qsizetype i = 0; i < runs_.size(); ++i) {
    if (runs_[i].run.run_id() == id) return static_cast<int>(i);
  }
  return -1;
}

bool QueueTableModel::canMove(int row, int direction) const {
  const QueuedRun* queued = runAt(row);
  if (queued == nullptr || direction == 0) return false;
  for (qsizetype i = row + direction; i >= 0 && i < runs_.size(); i += direction) {
    if (runs_[i].nodeId == queued->nodeId &&
        runs_[i].run.spec().priority() == queued->run.spec().priority()) {
      return true;
    }
  }
  return false;
}

}  // namespace ringside::gui
