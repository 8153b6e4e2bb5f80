// MainWindow: composes the panels (nodes, run setup, history) and one tab per open run dashboard
// or comparison. Owns nothing but widgets; the Controller owns the logic. Restores its geometry
// and layout from QSettings. GUI thread only.
#pragma once

#include <QMainWindow>
#include <QStringList>

class QLabel;
class QTabWidget;

namespace ringside::gui {

class Controller;
class HistoryPanel;
class SweepBook;
class QueuePanel;
class RunNotifier;
class SweepsPanel;
class NodesPanel;
class RunSetupPanel;
struct RunForm;

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  explicit MainWindow(Controller& controller, QWidget* parent = nullptr);

  // Opens (or shows) the live dashboard of a run.
  void openRun(const QString& runId);
  // Launches the run setup form as it stands (scripts/run --launch) once a node is online. With
  // `nodeNames` (ringside --local-cluster --launch: the cluster's nodes), waits until every
  // one of them is online and places the run on all of them, in that order.
  void launchWhenReady(const QStringList& nodeNames = {});
  // scripts/screenshots: launches two short runs, waits for them, saves every main view as a
  // PNG in `dir` (nodes, run-setup, dashboard, history, compare) and quits (exit code 1 when it
  // could not finish within the time limit).
  void runScreenshotTour(const QString& dir);
  // scripts/screenshots --cluster: launches the run setup form's run on every node named (the
  // local cluster's), and once every rank has reported for a while saves the live dashboard
  // (cluster-dashboard) and the nodes with their used slots (cluster-nodes) in `dir`, stops the
  // run and quits (exit code 1 when it could not within the time limit).
  void runClusterScreenshotTour(const QString& dir, const QStringList& nodeNames);
  // Shows the page with this index (0 nodes, 1 new run, 2 history) or an open run tab.
  void showPage(int index);

 protected:
  void closeEvent(QCloseEvent* event) override;

 private:
  void buildActions();
  void refreshNodeChoices();
  void compare(const QStringList& runIds);
  void clone(const RunForm& form);

  Controller& controller_;
  QTabWidget* tabs_;
  NodesPanel* nodes_;
  RunSetupPanel* setup_;
  HistoryPanel* history_;
  SweepBook* sweepBook_;
  SweepsPanel* sweeps_;
  QueuePanel* queue_;
  RunNotifier* notifier_;
  QLabel* status_;
  // Saves the window as <dir>/<name>.png (the screenshot tours), after pending events.
  void saveScreenshot(const QString& dir, const QString& name);
  // The node ids of these nodes (by name) when every one of them is online, else empty.
  QStringList onlineNodeIds(const QStringList& nodeNames) const;
  // For the modes that launch by themselves (--launch, the screenshot tours): when the run setup
  // form refuses its run, prints "ringside <mode>: ..." with every field's message on stderr and
  // quits with exit code 2 at once (a silent wait helped nobody). Returns whether it refused.
  bool quitIfFormRefuses(const QString& mode);

  bool launchPending_ = false;
  QStringList launchNodes_;  // by name; empty: the form's own choice
  QStringList tourRuns_;
  // "--launch" or "--screenshots" while the window launches by itself: a refused or failed launch
  // is printed on stderr and quits (exit code 2 or 1) instead of waiting for a user.
  QString launchMode_;
};

}  // namespace ringside::gui
