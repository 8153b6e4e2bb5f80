// SweepTrialModel: one sweep's trials as a table (the Sweeps view; docs/sweeps.md): the trial's
// number, one column per parameter, its state (with "stopped early" and "paused at rung k"), the
// rung it reached, how far it trained, its best value of the sweep's metric, its runs and why it
// ended. Qt::DisplayRole is the text; kSortRole a value that sorts (numbers as numbers, a missing
// value last). And the same table as CSV.
//
// Thread-safety: GUI thread (a QAbstractTableModel).
#pragma once

#include <QAbstractTableModel>
#include <QString>
#include <QStringList>

#include "ringside/proto/ringside.pb.h"

namespace ringside::gui {

class SweepTrialModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  static constexpr int kSortRole = Qt::UserRole + 1;
  static constexpr int kRunIdRole = Qt::UserRole + 2;  // the trial's latest run id

  explicit SweepTrialModel(QObject* parent = nullptr);

  // Shows `sweep` (replacing what was shown; the columns follow its parameters).
  void setSweep(const v1::SweepInfo& sweep);
  const v1::SweepInfo& sweep() const { return sweep_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

  // The header texts and each row's texts, as shown (for the CSV export and tests).
  QStringList headers() const;
  QString text(int row, int column) const;

 private:
  QVariant sortValue(int row, int column) const;
  int firstFixedColumn() const { return 1 + parameters_.size(); }

  v1::SweepInfo sweep_;
  QStringList parameters_;  // names, in the spec's order
};

// A trial's state in words: "waiting", "queued", "running", "completed", "stopped early",
// "paused at rung 1", "failed", "stopped" (translated).
QString trialStateText(const v1::SweepTrial& trial);
// A sweep's state in words: "running", "paused", "completed", "stopped" (translated).
QString sweepStateText(v1::SweepState state);

// The trial table as CSV (RFC 4180: a header row, every field quoted where it holds a comma,
// quote or line break), the trial's latest run id added as a last column.
QString sweepTrialsCsv(const SweepTrialModel& model);

}  // namespace ringside::gui
