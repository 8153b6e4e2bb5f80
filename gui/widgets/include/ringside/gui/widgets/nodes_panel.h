// NodesPanel: the cluster's nodes. A table (NodeTableModel: name, address, state with heartbeat
// age, CPU, memory, GPU utilization bars, slots, agent version) above a NodeDetailPane with the
// selected node's info and live charts, and the node actions: Add node… (Ctrl+N), Edit… (Ctrl+E),
// Remove (Del, after a confirmation), Drain (Ctrl+D), Undrain (Ctrl+Shift+D).
//
// Refresh: Controller::nodesChanged and telemetryReceived only mark the table stale; it is
// re-read from Controller::nodes() at most every 250 ms (not per message), and at least every
// second so the heartbeat ages keep counting and a node that stopped answering shows offline as
// soon as its connection says so (AgentConnection: offline after 5 s without a reply).
// The action shortcuts work while the panel or a child has focus (Qt::WidgetWithChildrenShortcut);
// a main window may also put the actions into its menus.
// GUI thread only. Dialogs are opened window-modal with open(), never with a nested exec().
#pragma once

#include <QList>
#include <QWidget>

#include "ringside/gui/controller.h"

class QAction;
class QLabel;
class QLineEdit;
class QSortFilterProxyModel;
class QTableView;
class QTimer;

namespace ringside::gui {

class NodeDetailPane;
class NodeTableModel;

class NodesPanel : public QWidget {
  Q_OBJECT

 public:
  // `controller` must outlive the panel (start() may come before or after).
  explicit NodesPanel(Controller& controller, QWidget* parent = nullptr);

  // The node id of the selected row ("" when none).
  QString selectedNodeId() const;
  // Selects the row of `nodeId` (nothing when it is not listed).
  void selectNode(const QString& nodeId);

  QAction* addNodeAction() const { return addNode_; }
  QAction* editNodeAction() const { return editNode_; }
  QAction* removeNodeAction() const { return removeNode_; }
  QAction* drainAction() const { return drain_; }
  QAction* undrainAction() const { return undrain_; }

  NodeTableModel* model() const { return model_; }
  QTableView* tableView() const { return table_; }
  // The line above the table: NodeTableModel::clusterText() of the listed nodes.
  QString clusterSummary() const;
  // The table's sort and filter over model() (tableView()'s model), and the filter's text box.
  QSortFilterProxyModel* proxy() const { return proxy_; }
  QLineEdit* filterEdit() const { return filter_; }
  NodeDetailPane* detailPane() const { return detail_; }

 signals:
  // The selection moved to another node ("" when none is selected).
  void selectedNodeChanged(const QString& nodeId);

 public slots:
  // Re-reads Controller::nodes() into the table now (showNodes).
  void refresh();
  // Shows `nodes` in the table and the cluster line, keeping the selection by node id: what
  // refresh() does with Controller::nodes(). A given list (a simulated cluster in a test or a
  // screenshot) stays until the next refresh (at most a second later).
  void showNodes(const QList<NodeView>& nodes);
  // Opens the add-node dialog (AddNodeDialog).
  void addNode();
  // Opens the edit dialog for the selected node (not for the local agent).
  void editSelectedNode();
  // Asks for confirmation, then removes the selected node.
  void removeSelectedNode();
  void drainSelectedNode();
  void undrainSelectedNode();

 private:
  void scheduleRefresh();
  void updateActions();
  void selectedChanged(const QString& nodeId);

  Controller& controller_;
  NodeTableModel* model_;
  QTableView* table_;
  QLabel* cluster_ = nullptr;
  QSortFilterProxyModel* proxy_ = nullptr;  // sorts (kSortRole) and filters model_
  QLineEdit* filter_ = nullptr;
  NodeDetailPane* detail_;
  QTimer* refreshTimer_;  // single shot, 250 ms: coalesces nodesChanged / telemetryReceived
  QTimer* ageTimer_;      // 1 s: heartbeat ages and offline detection
  QAction* addNode_;
  QAction* editNode_;
  QAction* removeNode_;
  QAction* drain_;
  QAction* undrain_;
  QString selected_;            // the selected node id, kept across model resets
  bool updatingModel_ = false;  // inside refresh()'s setNodes
};

}  // namespace ringside::gui
