// HistoryPanel: the run history. A sortable, filterable table of every run in the GUI's database
// (RunTableModel), with in-place editing of tags and notes and the actions on the selected runs:
// Open (the run's live dashboard), Clone (pre-fill the run setup form), Resume (a stopped or
// failed trainer run with a checkpoint: Controller::resumeRun), Compare, Export CSV and Delete.
// Under the table, a selected run that continues another says "Resumed from <run>"
// (run_resume.h). The panel asks for what needs another view with signals; the main window connects
// them.
//
// Shortcuts while the table has focus: Return/Enter or double-click = Open, Ctrl+D = Clone,
// Ctrl+Shift+C = Compare, Ctrl+E = Export CSV, Delete = Delete; Ctrl+F focuses the filter box
// (all while focus is inside the panel). Tooltips name them.
// GUI thread only.
#pragma once

#include <QStringList>
#include <QWidget>

#include "ringside/gui/run_form.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QTableView;

namespace ringside::gui {

class Controller;
class RunFilterProxy;
class RunTableModel;

class HistoryPanel : public QWidget {
  Q_OBJECT

 public:
  // `controller` (its store) must outlive the panel. Reads the history at once.
  explicit HistoryPanel(Controller& controller, QWidget* parent = nullptr);

  // The selected runs' ids in the table's current order.
  QStringList selectedRunIds() const;
  // Selects exactly these runs (those present); for the main window restoring a selection.
  void selectRuns(const QStringList& runIds);

  RunTableModel* model() const { return model_; }
  RunFilterProxy* proxy() const { return proxy_; }
  QTableView* table() const { return table_; }
  QPushButton* resumeButton() const { return resume_; }
  // "Resumed from <name> (<run id>)" while one selected run continues another, else "".
  QString lineageText() const;

 signals:
  // Open the run's live dashboard tab.
  void openRunRequested(const QString& runId);
  // Pre-fill the run setup form: fromRunSpec of the run's stored spec.
  void cloneRequested(const ringside::gui::RunForm& form);
  // Compare these runs (two or more) in a CompareView.
  void compareRequested(const QStringList& runIds);
  // A failure the user should see in the status bar (store errors; dialogs show the rest).
  void errorMessage(const QString& message);

 public slots:
  // Each acts on the current selection and does nothing when its button is disabled.
  void openSelected();
  void cloneSelected();
  // Controller::resumeRun for the one selected run (its new dashboard opens on runLaunched).
  void resumeSelected();
  void compareSelected();
  // Asks for a file (one run) or a folder (several) and writes every sample at full resolution.
  void exportSelectedCsv();
  // Asks for confirmation, then deletes the runs with their metrics and logs. Active runs are
  // refused (they would be re-created by their next sample): stop them first.
  void deleteSelected();

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private slots:
  void updateActions();

 private:
  QString displayName(const QString& runId) const;
  // Widens the State column to the longest translated state text in the table's font (never
  // narrows it); on construction, after the first fit to the rows, and on a font or style change.
  void fitStateColumn();

  Controller& controller_;
  RunTableModel* model_;
  RunFilterProxy* proxy_;
  QTableView* table_;
  QLineEdit* filter_;
  QComboBox* stateFilter_;
  QLabel* countLabel_;
  QPushButton* open_;
  QPushButton* clone_;
  QPushButton* resume_;
  QLabel* lineage_;  // "Resumed from <run>" for one selected resumed run
  QPushButton* compare_;
  QPushButton* export_;
  QPushButton* delete_;
  bool columnsFitted_ = false;  // fitted to the first rows once; the user's widths stay
};

}  // namespace ringside::gui
