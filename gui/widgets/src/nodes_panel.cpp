#include "ringside/gui/widgets/nodes_panel.h"

#include <QAction>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QTimer>
#include <QToolBar>
#include <QVBoxLayout>

#include "ringside/gui/controller.h"
#include "ringside/gui/widgets/add_node_dialog.h"
#include "ringside/gui/widgets/node_detail_pane.h"
#include "ringside/gui/widgets/node_table_model.h"

namespace ringside::gui {

namespace {

constexpr int kRefreshDelayMs = 250;  // at most 4 table refreshes a second
constexpr int kAgeIntervalMs = 1000;  // heartbeat ages tick once a second

QAction* makeAction(QWidget* owner, const QString& text, const QKeySequence& shortcut,
                    const QString& tip) {
  auto* action = new QAction(text, owner);
  action->setShortcut(shortcut);
  action->setShortcutContext(Qt::WidgetWithChildrenShortcut);
  action->setToolTip(
      QStringLiteral("%1 (%2)").arg(tip, shortcut.toString(QKeySequence::NativeText)));
  owner->addAction(action);
  return action;
}

}  // namespace

NodesPanel::NodesPanel(Controller& controller, QWidget* parent)
    : QWidget(parent), controller_(controller) {
  addNode_ = makeAction(this, tr("&Add node…"), QKeySequence(Qt::CTRL | Qt::Key_N),
                        tr("Add a node by its address and the agent's public key"));
  editNode_ = makeAction(this, tr("&Edit…"), QKeySequence(Qt::CTRL | Qt::Key_E),
                         tr("Change the selected node's name, address or key"));
  removeNode_ = makeAction(this, tr("&Remove"), QKeySequence(QKeySequence::Delete),
                           tr("Remove the selected node from this GUI"));
  drain_ = makeAction(this, tr("&Drain"), QKeySequence(Qt::CTRL | Qt::Key_D),
                      tr("The selected node accepts no new runs; running ones go on"));
  undrain_ = makeAction(this, tr("&Undrain"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_D),
                        tr("The selected node accepts new runs again"));
  connect(addNode_, &QAction::triggered, this, &NodesPanel::addNode);
  connect(editNode_, &QAction::triggered, this, &NodesPanel::editSelectedNode);
  connect(removeNode_, &QAction::triggered, this, &NodesPanel::removeSelectedNode);
  connect(drain_, &QAction::triggered, this, &NodesPanel::drainSelectedNode);
  connect(undrain_, &QAction::triggered, this, &NodesPanel::undrainSelectedNode);

  auto* toolbar = new QToolBar;
  toolbar->setToolButtonStyle(Qt::ToolButtonTextOnly);
  toolbar->addAction(addNode_);
  toolbar->addAction(editNode_);
  toolbar->addAction(removeNode_);
  toolbar->addSeparator();
  toolbar->addAction(drain_);
  toolbar->addAction(undrain_);

  detail_ = new NodeDetailPane(controller_);
  model_ = new NodeTableModel(this);
  proxy_ = new QSortFilterProxyModel(this);
  proxy_->setSourceModel(model_);
  proxy_->setSortRole(NodeTableModel::kSortRole);
  proxy_->setFilterKeyColumn(-1);  // any column's text
  proxy_->setFilterCaseSensitivity(Qt::CaseInsensitive);
  filter_ = new QLineEdit;
  filter_->setPlaceholderText(tr("Filter nodes"));
  filter_->setClearButtonEnabled(true);
  filter_->setToolTip(
      tr("Shows the nodes with this text in any column (name, address, state, "
         "CPU model, GPUs, agent version)."));
  connect(filter_, &QLineEdit::textChanged, proxy_, &QSortFilterProxyModel::setFilterFixedString);
  table_ = new QTableView;
  table_->setModel(proxy_);
  table_->setItemDelegateForColumn(NodeTableModel::kGpus, new GpuBarsDelegate(table_));
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->setAlternatingRowColors(true);
  table_->setWordWrap(false);
  table_->verticalHeader()->hide();
  QHeaderView* header = table_->horizontalHeader();
  header->setStretchLastSection(false);
  header->setSectionResizeMode(QHeaderView::Interactive);
  header->setSectionResizeMode(NodeTableModel::kCpu, QHeaderView::Stretch);
  header->resizeSection(NodeTableModel::kName, 180);
  header->resizeSection(NodeTableModel::kAddress, 150);
  header->resizeSection(NodeTableModel::kState, 130);
  header->resizeSection(NodeTableModel::kMemory, 120);
  header->resizeSection(NodeTableModel::kGpus, 160);
  header->resizeSection(NodeTableModel::kSlots, 140);
  header->resizeSection(NodeTableModel::kAgentVersion, 80);
  // In the agents' order until a header is clicked.
  header->setSortIndicator(-1, Qt::AscendingOrder);
  table_->setSortingEnabled(true);
  connect(table_, &QTableView::doubleClicked, this, [this] {
    if (editNode_->isEnabled()) editSelectedNode();
  });
  connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) {
            if (updatingModel_) return;
            selectedChanged(current.isValid() ? current.data(NodeTableModel::kNodeIdRole).toString()
                                              : QString());
          });
  cluster_ = new QLabel;
  cluster_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* tablePane = new QWidget;
  auto* tableLayout = new QVBoxLayout(tablePane);
  tableLayout->setContentsMargins(0, 0, 0, 0);
  auto* above = new QHBoxLayout;
  above->addWidget(cluster_, 1);
  above->addWidget(filter_);
  tableLayout->addLayout(above);
  tableLayout->addWidget(table_, 1);
  auto* splitter = new QSplitter(Qt::Vertical);
  splitter->addWidget(tablePane);
  splitter->addWidget(detail_);
  splitter->setStretchFactor(0, 1);
  splitter->setStretchFactor(1, 2);
  splitter->setChildrenCollapsible(false);

  auto* column = new QVBoxLayout(this);
  column->setContentsMargins(0, 0, 0, 0);
  column->addWidget(toolbar);
  column->addWidget(splitter, 1);

  refreshTimer_ = new QTimer(this);
  refreshTimer_->setSingleShot(true);
  refreshTimer_->setInterval(kRefreshDelayMs);
  connect(refreshTimer_, &QTimer::timeout, this, &NodesPanel::refresh);
  ageTimer_ = new QTimer(this);
  ageTimer_->setInterval(kAgeIntervalMs);
  connect(ageTimer_, &QTimer::timeout, this, &NodesPanel::scheduleRefresh);
  ageTimer_->start();
  connect(&controller_, &Controller::nodesChanged, this, &NodesPanel::scheduleRefresh);
  connect(&controller_, &Controller::telemetryReceived, this, &NodesPanel::scheduleRefresh);
  refresh();
}

QString NodesPanel::selectedNodeId() const { return selected_; }

QString NodesPanel::clusterSummary() const { return cluster_->text(); }

void NodesPanel::selectNode(const QString& nodeId) {
  const int sourceRow = model_->rowOf(nodeId);
  if (sourceRow < 0) return;
  const QModelIndex shown = proxy_->mapFromSource(model_->index(sourceRow, 0));
  if (!shown.isValid()) return;  // filtered out
  const QModelIndex current = table_->selectionModel()->currentIndex();
  if (current.isValid() && current.row() == shown.row() && selected_ == nodeId) return;
  table_->selectionModel()->setCurrentIndex(
      shown, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
}

void NodesPanel::scheduleRefresh() {
  if (!refreshTimer_->isActive()) refreshTimer_->start();
}

void NodesPanel::refresh() { showNodes(controller_.nodes()); }

void NodesPanel::showNodes(const QList<NodeView>& nodes) {
  refreshTimer_->stop();
  // A model reset clears the view's current index; the selection is restored by id below, so the
  // detail pane and selectedNodeChanged see no change when the node is still listed.
  updatingModel_ = true;
  model_->setNodes(nodes);
  updatingModel_ = false;
  cluster_->setText(NodeTableModel::clusterText(NodeTableModel::clusterGpuUse(model_->nodes())));
  if (model_->rowOf(selected_) >= 0) {
    selectNode(selected_);
  } else if (model_->rowCount() > 0) {
    selectNode(model_->nodes().first().record.nodeId);
  } else if (!selected_.isEmpty()) {
    selectedChanged({});
  }
  updateActions();
}

void NodesPanel::selectedChanged(const QString& nodeId) {
  if (nodeId == selected_) return;
  selected_ = nodeId;
  detail_->setNodeId(nodeId);
  updateActions();
  emit selectedNodeChanged(nodeId);
}

void NodesPanel::updateActions() {
  const std::optional<NodeView> node = controller_.node(selected_);
  const bool haveNode = node.has_value();
  const bool online = haveNode && node->state == NodeState::Online;
  const bool draining = haveNode && NodeTableModel::isDraining(*node);
  editNode_->setEnabled(haveNode && !node->local);
  removeNode_->setEnabled(haveNode);
  drain_->setEnabled(online && !draining);
  undrain_->setEnabled(online && draining);
}

void NodesPanel::addNode() {
  auto* dialog = new AddNodeDialog(controller_, {}, this);
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  connect(dialog, &QDialog::accepted, this, &NodesPanel::refresh);
  dialog->open();
}

void NodesPanel::editSelectedNode() {
  const std::optional<NodeView> node = controller_.node(selected_);
  if (!node || node->local) return;
  auto* dialog = new AddNodeDialog(controller_, selected_, this);
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  connect(dialog, &QDialog::accepted, this, &NodesPanel::refresh);
  dialog->open();
}

void NodesPanel::removeSelectedNode() {
  const std::optional<NodeView> node = controller_.node(selected_);
  if (!node) return;
  const QString nodeId = selected_;
  auto* box = new QMessageBox(this);
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->setIcon(QMessageBox::Question);
  box->setWindowTitle(tr("Remove node"));
  box->setText(tr("Remove node \"%1\" from this GUI?").arg(node->record.name));
  box->setInformativeText(
      node->local
          ? tr("The local agent is stopped; runs on it go on, and their history stays in this "
               "GUI.")
          : tr("The agent and its runs are not touched; the run history stays in this GUI."));
  box->setStandardButtons(QMessageBox::Yes | QMessageBox::Cancel);
  box->setDefaultButton(QMessageBox::Cancel);
  connect(box, &QMessageBox::finished, this, [this, nodeId](int result) {
    if (result != QMessageBox::Yes) return;
    controller_.removeNode(nodeId);
    refresh();
  });
  box->open();
}

void NodesPanel::drainSelectedNode() {
  if (selected_.isEmpty()) return;
  controller_.setDrain(selected_, true);
}

void NodesPanel::undrainSelectedNode() {
  if (selected_.isEmpty()) return;
  controller_.setDrain(selected_, false);
}

}  // namespace ringside::gui
