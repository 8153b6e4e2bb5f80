// The Queue page (queue_panel.h).
#include "ringside/gui/widgets/queue_panel.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QPushButton>
#include <QSet>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

#include "ringside/gui/controller.h"
#include "ringside/gui/queue_table_model.h"

namespace ringside::gui {
namespace {

// The priority box's entries, in its order.
constexpr v1::RunPriority kPriorities[] = {v1::HIGH_PRIORITY, v1::NORMAL_PRIORITY,
                                           v1::LOW_PRIORITY};

}  // namespace

QueuePanel::QueuePanel(Controller& controller, QWidget* parent)
    : QWidget(parent), controller_(controller) {
  summary_ = new QLabel;
  summary_->setObjectName(QStringLiteral("queueSummary"));
  summary_->setWordWrap(true);

  model_ = new QueueTableModel(this);
  table_ = new QTableView;
  table_->setObjectName(QStringLiteral("queueTable"));
  table_->setModel(model_);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->verticalHeader()->hide();
  table_->setWordWrap(false);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->horizontalHeader()->setSectionResizeMode(QueueTableModel::kWaitingFor,
                                                   QHeaderView::Stretch);

  up_ = new QPushButton(tr("Move up"));
  up_->setToolTip(tr("One place towards the head of its node's queue, among the runs of its "
                     "priority"));
  down_ = new QPushButton(tr("Move down"));
  down_->setToolTip(tr("One place towards the tail, among the runs of its priority"));
  priority_ = new QComboBox;
  priority_->setObjectName(QStringLiteral("queuePriority"));
  for (v1::RunPriority priority : kPriorities) {
    priority_->addItem(QueueTableModel::priorityText(priority));
  }
  priority_->setToolTip(tr("Runs of a higher priority start first; within a priority, in the "
                           "order they were queued"));
  cancel_ = new QPushButton(QIcon(QStringLiteral(":/icons/stop.svg")), tr("Cancel run"));
  cancel_->setToolTip(tr("Take the run out of the queue: it never starts and stays in the "
                         "History as stopped"));
  auto* actions = new QHBoxLayout;
  actions->addWidget(up_);
  actions->addWidget(down_);
  actions->addSpacing(12);
  actions->addWidget(new QLabel(tr("Priority:")));
  actions->addWidget(priority_);
  actions->addStretch(1);
  actions->addWidget(cancel_);

  auto* layout = new QVBoxLayout(this);
  layout->addWidget(summary_);
  layout->addWidget(table_, 1);
  layout->addLayout(actions);

  refreshDue_ = new QTimer(this);
  refreshDue_->setSingleShot(true);
  refreshDue_->setInterval(0);
  connect(refreshDue_, &QTimer::timeout, this, &QueuePanel::refresh);
  auto due = [this] { refreshDue_->start(); };
  connect(&controller_, &Controller::queueChanged, this, due);
  connect(&controller_, &Controller::nodesChanged, this, due);
  connect(&controller_, &Controller::queueActionFailed, this,
          [this](const QString&, const QString& message) { emit errorMessage(message); });
  connect(&controller_, &Controller::runStopFailed, this,
          [this](const QString& runId, const QString& message) {
            if (model_->rowOfRun(runId) >= 0) emit errorMessage(message);
          });
  connect(table_->selectionModel(), &QItemSelectionModel::selectionChanged, this,
          &QueuePanel::updateButtons);
  connect(table_, &QTableView::doubleClicked, this, [this](const QModelIndex& index) {
    const QString runId = index.data(QueueTableModel::kRunIdRole).toString();
    if (!runId.isEmpty()) emit openRunRequested(runId);
  });
  connect(up_, &QPushButton::clicked, this, [this] { move(-1); });
  connect(down_, &QPushButton::clicked, this, [this] { move(1); });
  connect(priority_, &QComboBox::activated, this, &QueuePanel::setPriority);
  connect(cancel_, &QPushButton::clicked, this, &QueuePanel::cancel);
  refresh();
}

QString QueuePanel::selectedRun() const {
  const QModelIndexList rows = table_->selectionModel()->selectedRows();
  return rows.isEmpty() ? QString() : rows.first().data(QueueTableModel::kRunIdRole).toString();
}

bool QueuePanel::selectRun(const QString& runId) {
  const int row = model_->rowOfRun(runId);
  if (row < 0) return false;
  table_->selectRow(row);
  return true;
}

void QueuePanel::refresh() {
  const QString selected = selectedRun();
  const QList<QueuedRun> runs = controller_.queuedRuns();
  QSet<QString> nodes;
  for (const QueuedRun& run : runs) nodes.insert(run.nodeId);
  model_->setRuns(runs);
  if (!selected.isEmpty() && selectedRun() != selected) selectRun(selected);
  if (runs.isEmpty()) {
    summary_->setText(tr("No run is waiting. A run launched while its slots are busy waits here "
                         "and starts by itself when they are free, also while the GUI is "
                         "closed."));
  } else {
    const QString waiting =
        runs.size() == 1 ? tr("1 run waiting") : tr("%L1 runs waiting").arg(runs.size());
    const QString where = nodes.size() == 1 ? tr("on 1 node") : tr("on %L1 nodes").arg(nodes.size());
    summary_->setText(tr("%1 %2. Each starts by itself when its slots are free, in order of "
                         "priority, then of queueing.")
                          .arg(waiting, where));
  }
  if (lastCount_ != runs.size()) {
    lastCount_ = static_cast<int>(runs.size());
    emit queuedCountChanged(lastCount_);
  }
  updateButtons();
}

void QueuePanel::updateButtons() {
  const int row = model_->rowOfRun(selectedRun());
  const QueuedRun* run = model_->runAt(row);
  const bool online = run != nullptr && run->nodeOnline;
  up_->setEnabled(online && model_->canMove(row, -1));
  down_->setEnabled(online && model_->canMove(row, 1));
  priority_->setEnabled(online);
  cancel_->setEnabled(online);
  if (run != nullptr) {
    for (int i = 0; i < priority_->count(); ++i) {
      if (kPriorities[i] == run->run.spec().priority()) priority_->setCurrentIndex(i);
    }
  }
}

void QueuePanel::move(int places) {
  const QString runId = selectedRun();
  if (!runId.isEmpty()) controller_.reorderQueuedRun(runId, places);
}

void QueuePanel::setPriority(int index) {
  const QString runId = selectedRun();
  if (runId.isEmpty() || index < 0 || index >= priority_->count()) return;
  controller_.reorderQueuedRun(runId, 0, kPriorities[index]);
}

void QueuePanel::cancel() {
  const QString runId = selectedRun();
  if (!runId.isEmpty()) controller_.stopRun(runId);
}

}  // namespace ringside::gui
