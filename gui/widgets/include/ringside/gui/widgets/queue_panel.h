// QueuePanel: the Queue page (docs/queue.md, "The Queue page"). Every run waiting in a node's
// queue (Controller::queuedRuns) in one table: node, position, priority, run, what it takes, what
// it waits for in its agent's words, estimated start and when it was queued; a summary line above.
// Move up / Move down (within its priority on its node), Priority (high, normal, low) and Cancel
// act on the selected run through its owner agent; a double-click opens the run's dashboard. The
// table follows the agents' events: the selection stays on its run while the queue moves.
//
// Thread-safety: GUI thread only.
#pragma once

#include <QWidget>

class QComboBox;
class QLabel;
class QPushButton;
class QTableView;
class QTimer;

namespace ringside::gui {

class Controller;
class QueueTableModel;

class QueuePanel : public QWidget {
  Q_OBJECT

 public:
  // `controller` must outlive the panel.
  explicit QueuePanel(Controller& controller, QWidget* parent = nullptr);

  // The run of the selected row ("" when none).
  QString selectedRun() const;
  // Selects a queued run's row (tests; after a launch that was queued). False when not queued.
  bool selectRun(const QString& runId);
  QueueTableModel* model() const { return model_; }

 signals:
  void openRunRequested(const QString& runId);
  // How many runs wait in all (the main window puts it in the page's tab).
  void queuedCountChanged(int count);
  void errorMessage(const QString& message);

 private:
  void refresh();
  void updateButtons();
  void move(int places);
  void setPriority(int index);
  void cancel();

  Controller& controller_;
  QueueTableModel* model_ = nullptr;
  QTableView* table_ = nullptr;
  QLabel* summary_ = nullptr;
  QPushButton* up_ = nullptr;
  QPushButton* down_ = nullptr;
  QComboBox* priority_ = nullptr;
  QPushButton* cancel_ = nullptr;
  QTimer* refreshDue_ = nullptr;  // coalesces the controller's signals into one redraw
  int lastCount_ = -1;
};

}  // namespace ringside::gui
