// SweepsPanel: the Sweeps page (docs/sweeps.md). The sweeps of every node (SweepBook) in a list;
// the selected one's trials in a sortable table (SweepTrialModel: values, state, rung, how far it
// trained, best value, why it ended; the best trial in bold) with its summary line; Pause,
// Resume, Stop, Extend and Rerun trial; every trial's curve of the metric on one chart (stopped
// trials faint, the best highlighted); Compare the selected trials' runs; CSV export of the
// trial table; a sweep spec started from a JSON file on a chosen node. A double-click on a trial
// opens its run's dashboard.
//
// Thread-safety: GUI thread only.
#pragma once

#include <QWidget>

#include "ringside/proto/ringside.pb.h"

class QComboBox;
class QLabel;
class QPushButton;
class QSortFilterProxyModel;
class QSpinBox;
class QTableView;
class QTableWidget;
class QTimer;

namespace ringside::gui {

class Controller;
class MetricChart;
class SweepBook;
class SweepTrialModel;

class SweepsPanel : public QWidget {
  Q_OBJECT

 public:
  // `book` and `controller` must outlive the panel.
  SweepsPanel(Controller& controller, SweepBook& book, QWidget* parent = nullptr);

  // Starts the sweep of `specFile` (JSON, docs/sweeps.md) on the node chosen in the node list;
  // what went wrong (unreadable, not a sweep spec, refused by the agent) comes as errorMessage.
  void launchFile(const QString& specFile);
  // Selects a sweep in the list (tests, and after a launch).
  void selectSweep(const QString& sweepId);
  QString selectedSweep() const;

 signals:
  void openRunRequested(const QString& runId);
  void compareRequested(const QStringList& runIds);
  void errorMessage(const QString& message);

 private:
  void refreshSweeps();
  void refreshNodes();
  void showSelected();
  void updateButtons();
  void control(v1::SweepAction action);
  void exportCsv();
  QStringList selectedRunIds() const;
  // Every trial's curve of the sweep's metric (its runs' global samples from the GUI's store, a
  // promoted trial's runs one after another), stopped trials faint, the best in its own colour.
  void refreshCurves();
  int selectedTrial() const;

  Controller& controller_;
  SweepBook& book_;
  QComboBox* nodes_ = nullptr;
  QTableWidget* sweeps_ = nullptr;
  QLabel* summary_ = nullptr;
  QTableView* trials_ = nullptr;
  MetricChart* curves_ = nullptr;
  QTimer* curvesDue_ = nullptr;  // curves are read again at most every 3 s
  int curvesGeneration_ = 0;
  SweepTrialModel* model_ = nullptr;
  QSortFilterProxyModel* sorted_ = nullptr;
  QPushButton* pause_ = nullptr;
  QPushButton* resume_ = nullptr;
  QPushButton* stop_ = nullptr;
  QSpinBox* extendBy_ = nullptr;
  QPushButton* extend_ = nullptr;
  QPushButton* rerun_ = nullptr;
  QPushButton* compare_ = nullptr;
  QPushButton* export_ = nullptr;
  QString shown_;  // the sweep whose trials are shown
};

}  // namespace ringside::gui
