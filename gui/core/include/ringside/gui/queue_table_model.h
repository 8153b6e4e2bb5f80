// QueueTableModel: the Queue page's table (docs/queue.md, "The Queue page") over
// Controller::queuedRuns(): one row per queued run of every node, in the order the controller
// gives (by node, then queue position). setRuns() keeps the rows when the same runs are queued
// in the same order (dataChanged only), so that the view keeps its selection while the agents
// update reasons and estimates; otherwise it resets and the view reselects by kRunIdRole.
//
// Thread-safety: GUI thread only.
#pragma once

#include <QAbstractTableModel>
#include <QDateTime>
#include <QList>

#include "ringside/gui/controller.h"

namespace ringside::gui {

class QueueTableModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column {
    kNode,            // the node's name; "(offline)" after it when it went offline
    kPosition,        // 1 = starts next on that node
    kPriority,        // high | normal | low
    kRun,             // the run's name
    kRanks,           // ranks and what they take: "2 CPU slots", "1 GPU"
    kWaitingFor,      // the agent's reason (RunInfo.waiting_reason), whole in the tooltip
    kEstimatedStart,  // local time, with the date when not today; "unknown" without an estimate
    kQueuedAt,        // local time of submission (created_time)
    kColumnCount
  };
  enum Role {
    kRunIdRole = Qt::UserRole + 1,  // QString
    kNodeIdRole,                    // QString
  };

  explicit QueueTableModel(QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

  void setRuns(QList<QueuedRun> runs);
  // The run of a row (nullptr when out of range).
  const QueuedRun* runAt(int row) const;
  // The row of a run, -1 when it is not queued.
  int rowOfRun(const QString& runId) const;
  // Whether the run of `row` has a queued run of its node and priority before or after it (Move
  // up / Move down can move it).
  bool canMove(int row, int direction) const;

  // "high", "normal", "low" (translated).
  static QString priorityText(v1::RunPriority priority);
  // "14:05" today, "Mon 30 Nov 14:05" on another day (the locale's words), from Unix seconds;
  // `now` for tests.
  static QString timeText(double unixSeconds, const QDateTime& now = QDateTime::currentDateTime());
  // "2 CPU slots" / "1 GPU" / "4 GPUs on 2 nodes": what the run's ranks take (the agent's rule
  // for a run's slot kind: a GPU for the nccl backend or "Use GPUs", a CPU slot otherwise; the
  // node's kind decides the trainer's "auto" backend, `gpuNode`).
  static QString slotsText(const v1::RunSpec& spec, bool gpuNode);

 private:
  QList<QueuedRun> runs_;
};

}  // namespace ringside::gui
