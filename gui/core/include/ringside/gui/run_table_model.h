// RunTableModel: the run history table over MetricsStore::runs(), and RunFilterProxy, the sorting
// and filtering in front of it. The model reads every run once, a page at a time; afterwards it
// re-reads only the runs the store reports changed (coalesced by a timer; the whole table again
// when more than a page of runs changed at once) and drops a deleted run's row, merging row by
// row so that the view keeps its selection and scroll position while runs are live. Tags and notes
// are edited in place; the edit shows at once and is written to the store asynchronously. GUI
// thread only; the store's futures complete on its thread and are received here through
// QFutureWatcher, so the GUI thread never waits on SQLite.
#pragma once

#include <QAbstractTableModel>
#include <QHash>
#include <QJsonObject>
#include <QSet>
#include <QSortFilterProxyModel>
#include <QStringList>
#include <QTimer>
#include <QVector>

#include "ringside/gui/metrics_store.h"

namespace ringside::gui {

class RunTableModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column {
    kName,
    kState,
    kPlacement,  // "nodes × ranks per node", e.g. "1 × 2"
    kStart,      // local time
    kDuration,   // end - start; now - start while running
    kFinalLoss,  // train/loss at the highest step
    kBestAccuracy,
    kSamplesPerS,  // mean of train/samples_per_s
    kTags,         // editable
    kNotes,        // editable
    kColumnCount   // then one column per hyperparameter key (paramKeys())
  };
  // At most this many hyperparameter columns: the keys most runs declare.
  static constexpr int kMaxParamColumns = 16;
  enum Role {
    // The value sorting uses: a double for the numeric and time columns (invalid when N/A), the
    // display text otherwise.
    kSortRole = Qt::UserRole + 1,
    kRunIdRole,  // QString
    kStateRole,  // int (v1::RunState)
  };

  // Does not query yet: call refresh() (the history panel does on construction). `store` must
  // outlive the model.
  explicit RunTableModel(MetricsStore& store, QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;
  Qt::ItemFlags flags(const QModelIndex& index) const override;
  // Tags and notes only: updates the row at once and calls store().setTags/setNotes; a failure
  // is reported with errorOccurred and the row is re-read. Tags are normalized to "a, b".
  bool setData(const QModelIndex& index, const QVariant& value, int role = Qt::EditRole) override;

  // The record of a source row (nullptr when out of range).
  const RunRecord* record(int row) const;
  // The source row of a run, -1 when the model does not hold it. A hash look-up.
  int rowOfRun(const QString& runId) const;
  // The hyperparameter keys shown as columns after kColumnCount, in column order: the keys the
  // runs' scripts declared (ringside.config; RunInfo.params, the "params." keys of the stored
  // config), those most runs have first, then by name, at most kMaxParamColumns. A run without
  // a key shows an empty cell; numbers sort numerically.
  const QStringList& paramKeys() const { return paramKeys_; }
  MetricsStore& store() { return store_; }
  // True once the first answer from the store has arrived.
  bool loaded() const { return loaded_; }

  // "queued", "running", ... (translated).
  static QString stateText(v1::RunState state);
  // "1 × 2" from the stored spec: hosts × ranks per host, or 1 × ranks_per_node when the spec has
  // no host list; the world size alone when the hosts' rank counts differ; N/A without a spec.
  static QString placementText(const RunRecord& run);

 public slots:
  // Re-reads now: every run before the first load (and after over a page of runs changed),
  // otherwise the runs noted changed since the last read. One read in flight at a time; a
  // request while one is in flight runs once it has answered.
  void refresh();
  // refresh() after the coalescing interval.
  void scheduleRefresh();
  // The store's runChanged: the run is re-read at the next refresh (scheduled).
  void noteChangedRun(const QString& runId);
  // The store's runDeleted: the run's row goes at once.
  void removeRun(const QString& runId);

 signals:
  // A store query or edit failed; the message says what and why (for the status bar or a dialog).
  void errorOccurred(const QString& message);
  // A refresh has been merged into the rows.
  void refreshed();

 private:
  // A refresh reads the store kRefreshPageRuns runs at a time (readPage), merging each page into
  // the rows as it comes (mergePage); after the last page the rows the store no longer has go
  // (removeUnseen), refreshed() is emitted and finishRefresh() starts a refresh asked for
  // meanwhile.
  void readPage(int64_t afterRunKey);
  // Reads the runs of changed_ in one store query (RunFilter::runIds) and merges them; a run
  // the store no longer has loses its row.
  void readChanged();
  // Returns whether a run was added or a run's stored config changed (its hyperparameters may
  // have: updateParams is due).
  bool mergePage(std::vector<RunRecord> runs);
  void removeUnseen();
  void finishRefresh();
  // Re-reads every row's hyperparameters and the columns they make (paramKeys()).
  void updateParams();
  std::optional<double> durationSeconds(const RunRecord& run) const;

  MetricsStore& store_;
  QVector<RunRecord> runs_;
  struct ParsedParams {
    QString configJson;  // the stored config they were read from
    QJsonObject params;  // key (without "params.") -> value
  };
  QHash<QString, ParsedParams> params_;  // run id -> its declared hyperparameters
  QStringList paramKeys_;
  QTimer refreshTimer_;
  bool inFlight_ = false;  // a refresh is being read or merged
  bool pending_ = false;
  bool loaded_ = false;
  // Runs per page of a refresh: each page costs the GUI thread about 10 ms to merge (and the
  // view a repaint), so 10,000 runs load in ten turns of the event loop.
  static constexpr int kRefreshPageRuns = 1000;
  QSet<QString> seen_;     // run ids of the refresh's pages so far
  QSet<QString> changed_;  // runs the store reported changed since the last read
  // run id -> row; cleared when rows are removed and rebuilt by the next rowOfRun.
  mutable QHash<QString, int> rowOf_;
};

// Sorting and filtering of the history table. Numbers sort numerically with N/A below every
// value; text compares locale-aware and case-insensitively.
class RunFilterProxy : public QSortFilterProxyModel {
  Q_OBJECT

 public:
  // The state filter's choices (the panel's combo box, in this order).
  enum class StateFilter {
    kAll,
    kActive,  // queued, starting or running
    kCompleted,
    kFailed,
    kStopped,
  };

  explicit RunFilterProxy(QObject* parent = nullptr);

  // Case-insensitive substring of the name, run id, tags or notes; empty matches every run.
  void setTextFilter(const QString& text);
  const QString& textFilter() const { return text_; }
  void setStateFilter(StateFilter filter);
  StateFilter stateFilter() const { return state_; }

 protected:
  bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;
  bool lessThan(const QModelIndex& left, const QModelIndex& right) const override;

 private:
  QString text_;
  StateFilter state_ = StateFilter::kAll;
};

}  // namespace ringside::gui
