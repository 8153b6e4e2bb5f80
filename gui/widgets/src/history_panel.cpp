#include "ringside/gui/widgets/history_panel.h"
#include "ringside/gui/when_ready.h"

#include <QComboBox>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QMessageBox>
#include <QPushButton>
#include <QShortcut>
#include <QStyle>
#include <QStyleOptionViewItem>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>

#include "ringside/gui/controller.h"
#include "ringside/gui/run_resume.h"
#include "ringside/gui/run_table_model.h"
#include "ringside/gui/widgets/run_csv_export.h"

namespace ringside::gui {

namespace {

// Added to a column's content width when the columns are fitted: air between the columns.
constexpr int kColumnPadding = 12;

bool isActive(v1::RunState state) {
  return state == v1::QUEUED || state == v1::STARTING || state == v1::RUNNING;
}

QString withShortcut(const QString& text, const QKeySequence& key) {
  return QStringLiteral("%1 (%2)").arg(text, key.toString(QKeySequence::NativeText));
}

// The width the State column needs for the longest text of any run state (as translated now,
// in the table's current font, with the style's cell margins) plus the padding: the column
// is fitted to the first rows only, and a later "failed" ("fehlgeschlagen" in German) must not be
// cut off.
int stateColumnWidth(const QTableView* table) {
  QStyleOptionViewItem option;
  option.initFrom(table->viewport());
  option.font = table->font();
  option.fontMetrics = QFontMetrics(option.font);
  option.features = QStyleOptionViewItem::HasDisplay;
  option.displayAlignment = Qt::AlignLeft | Qt::AlignVCenter;
  int width = 0;
  for (int state = v1::RunState_MIN; state <= v1::RunState_MAX; ++state) {
    option.text = RunTableModel::stateText(static_cast<v1::RunState>(state));
    width = std::max(
        width,
        table->style()->sizeFromContents(QStyle::CT_ItemViewItem, &option, QSize(), table).width());
  }
  return width + kColumnPadding;
}

}  // namespace

HistoryPanel::HistoryPanel(Controller& controller, QWidget* parent)
    : QWidget(parent), controller_(controller) {
  model_ = new RunTableModel(controller_.store(), this);
  proxy_ = new RunFilterProxy(this);
  proxy_->setSourceModel(model_);

  filter_ = new QLineEdit;
  filter_->setPlaceholderText(tr("Filter by name, run id, tags or notes"));
  filter_->setClearButtonEnabled(true);
  const QKeySequence findKey(QKeySequence::Find);
  filter_->setToolTip(
      withShortcut(tr("Show only runs whose name, id, tags or notes contain this"), findKey));
  stateFilter_ = new QComboBox;
  stateFilter_->addItem(tr("All states"), int(RunFilterProxy::StateFilter::kAll));
  stateFilter_->addItem(tr("Running"), int(RunFilterProxy::StateFilter::kActive));
  stateFilter_->addItem(tr("Completed"), int(RunFilterProxy::StateFilter::kCompleted));
  stateFilter_->addItem(tr("Failed"), int(RunFilterProxy::StateFilter::kFailed));
  stateFilter_->addItem(tr("Stopped"), int(RunFilterProxy::StateFilter::kStopped));
  stateFilter_->setToolTip(
      tr("Show only runs in this state (Running includes queued and "
         "starting runs)"));
  auto* filterLabel = new QLabel(tr("&Filter:"));
  filterLabel->setBuddy(filter_);
  auto* stateLabel = new QLabel(tr("&State:"));
  stateLabel->setBuddy(stateFilter_);
  countLabel_ = new QLabel;
  auto* filters = new QHBoxLayout;
  filters->addWidget(filterLabel);
  filters->addWidget(filter_, 1);
  filters->addWidget(stateLabel);
  filters->addWidget(stateFilter_);
  filters->addWidget(countLabel_);

  table_ = new QTableView;
  table_->setModel(proxy_);
  table_->setSortingEnabled(true);
  table_->sortByColumn(RunTableModel::kStart, Qt::DescendingOrder);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::ExtendedSelection);
  table_->setEditTriggers(QAbstractItemView::DoubleClicked | QAbstractItemView::EditKeyPressed);
  table_->setAlternatingRowColors(true);
  table_->setWordWrap(false);
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->horizontalHeader()->setHighlightSections(false);
  table_->installEventFilter(this);

  const QKeySequence openKey(Qt::Key_Return);
  const QKeySequence cloneKey(Qt::CTRL | Qt::Key_D);
  const QKeySequence compareKey(Qt::CTRL | Qt::SHIFT | Qt::Key_C);
  const QKeySequence exportKey(Qt::CTRL | Qt::Key_E);
  const QKeySequence deleteKey(QKeySequence::Delete);
  open_ = new QPushButton(tr("&Open"));
  open_->setToolTip(withShortcut(tr("Open the run's dashboard; or double-click a row"), openKey));
  clone_ = new QPushButton(tr("C&lone"));
  clone_->setToolTip(
      withShortcut(tr("Fill the run setup form with this run's settings"), cloneKey));
  resume_ = new QPushButton(tr("&Resume"));
  resume_->setToolTip(
      tr("Start a new run that continues the selected stopped or failed run "
         "from its last checkpoint, on the same node"));
  compare_ = new QPushButton(tr("Co&mpare"));
  compare_->setToolTip(withShortcut(tr("Compare two or more selected runs"), compareKey));
  export_ = new QPushButton(tr("E&xport CSV…"));
  export_->setToolTip(
      withShortcut(tr("Write every metric sample of the selected runs to CSV"), exportKey));
  delete_ = new QPushButton(tr("&Delete…"));
  delete_->setToolTip(
      withShortcut(tr("Delete the selected runs with their metrics and logs"), deleteKey));
  open_->setObjectName(QStringLiteral("openButton"));
  clone_->setObjectName(QStringLiteral("cloneButton"));
  resume_->setObjectName(QStringLiteral("resumeButton"));
  compare_->setObjectName(QStringLiteral("compareButton"));
  export_->setObjectName(QStringLiteral("exportButton"));
  delete_->setObjectName(QStringLiteral("deleteButton"));
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(open_);
  buttons->addWidget(clone_);
  buttons->addWidget(resume_);
  buttons->addWidget(compare_);
  buttons->addWidget(export_);
  buttons->addStretch();
  buttons->addWidget(delete_);

  auto* column = new QVBoxLayout(this);
  column->addLayout(filters);
  column->addWidget(table_, 1);
  lineage_ = new QLabel;
  lineage_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  lineage_->hide();
  column->addWidget(lineage_);
  column->addLayout(buttons);
  fitStateColumn();

  // Return is handled in eventFilter (only while the table itself has focus, so that Return in
  // a tags or notes editor still commits the edit); Delete only while the table has focus, so
  // that it keeps deleting text in an editor or the filter box.
  auto* cloneShortcut =
      new QShortcut(cloneKey, this, nullptr, nullptr, Qt::WidgetWithChildrenShortcut);
  auto* compareShortcut =
      new QShortcut(compareKey, this, nullptr, nullptr, Qt::WidgetWithChildrenShortcut);
  auto* exportShortcut =
      new QShortcut(exportKey, this, nullptr, nullptr, Qt::WidgetWithChildrenShortcut);
  auto* deleteShortcut = new QShortcut(deleteKey, table_, nullptr, nullptr, Qt::WidgetShortcut);
  auto* findShortcut =
      new QShortcut(findKey, this, nullptr, nullptr, Qt::WidgetWithChildrenShortcut);
  connect(cloneShortcut, &QShortcut::activated, this, &HistoryPanel::cloneSelected);
  connect(compareShortcut, &QShortcut::activated, this, &HistoryPanel::compareSelected);
  connect(exportShortcut, &QShortcut::activated, this, &HistoryPanel::exportSelectedCsv);
  connect(deleteShortcut, &QShortcut::activated, this, &HistoryPanel::deleteSelected);
  connect(findShortcut, &QShortcut::activated, this, [this] {
    filter_->setFocus(Qt::ShortcutFocusReason);
    filter_->selectAll();
  });

  connect(open_, &QPushButton::clicked, this, &HistoryPanel::openSelected);
  connect(clone_, &QPushButton::clicked, this, &HistoryPanel::cloneSelected);
  connect(resume_, &QPushButton::clicked, this, &HistoryPanel::resumeSelected);
  // Resume needs the run's owner online.
  connect(&controller_, &Controller::nodesChanged, this, &HistoryPanel::updateActions);
  connect(compare_, &QPushButton::clicked, this, &HistoryPanel::compareSelected);
  connect(export_, &QPushButton::clicked, this, &HistoryPanel::exportSelectedCsv);
  connect(delete_, &QPushButton::clicked, this, &HistoryPanel::deleteSelected);
  connect(table_, &QTableView::doubleClicked, this, [this](const QModelIndex& index) {
    // A double-click on tags or notes edits the cell instead.
    if (index.flags().testFlag(Qt::ItemIsEditable)) return;
    const QString runId = index.data(RunTableModel::kRunIdRole).toString();
    if (!runId.isEmpty()) emit openRunRequested(runId);
  });
  connect(filter_, &QLineEdit::textChanged, proxy_, &RunFilterProxy::setTextFilter);
  connect(stateFilter_, &QComboBox::currentIndexChanged, this, [this] {
    proxy_->setStateFilter(
        static_cast<RunFilterProxy::StateFilter>(stateFilter_->currentData().toInt()));
  });
  connect(table_->selectionModel(), &QItemSelectionModel::selectionChanged, this,
          &HistoryPanel::updateActions);
  connect(proxy_, &QAbstractItemModel::rowsInserted, this, &HistoryPanel::updateActions);
  connect(proxy_, &QAbstractItemModel::rowsRemoved, this, &HistoryPanel::updateActions);
  connect(proxy_, &QAbstractItemModel::modelReset, this, &HistoryPanel::updateActions);
  connect(proxy_, &QAbstractItemModel::layoutChanged, this, &HistoryPanel::updateActions);
  connect(proxy_, &QAbstractItemModel::dataChanged, this, &HistoryPanel::updateActions);
  connect(model_, &RunTableModel::errorOccurred, this, &HistoryPanel::errorMessage);
  connect(model_, &RunTableModel::refreshed, this, [this] {
    // Fit the columns to their content once, when the first rows arrive; afterwards the user's
    // widths stay.
    static constexpr int kMaxInitialWidth = 260;
    if (model_->rowCount() > 0 && !columnsFitted_) {
      columnsFitted_ = true;
      table_->resizeColumnsToContents();
      for (int c = 0; c < RunTableModel::kColumnCount; ++c) {
        table_->setColumnWidth(c,
                               std::min(table_->columnWidth(c) + kColumnPadding, kMaxInitialWidth));
      }
      fitStateColumn();
    }
  });

  updateActions();
  model_->refresh();
}

void HistoryPanel::fitStateColumn() {
  const int needed = stateColumnWidth(table_);
  if (table_->columnWidth(RunTableModel::kState) < needed) {
    table_->setColumnWidth(RunTableModel::kState, needed);
  }
}

QStringList HistoryPanel::selectedRunIds() const {
  QModelIndexList rows = table_->selectionModel()->selectedRows();
  std::sort(rows.begin(), rows.end(),
            [](const QModelIndex& a, const QModelIndex& b) { return a.row() < b.row(); });
  QStringList ids;
  for (const QModelIndex& row : rows) ids << row.data(RunTableModel::kRunIdRole).toString();
  return ids;
}

void HistoryPanel::selectRuns(const QStringList& runIds) {
  QItemSelection selection;
  for (const QString& runId : runIds) {
    const int sourceRow = model_->rowOfRun(runId);
    if (sourceRow < 0) continue;
    const QModelIndex row = proxy_->mapFromSource(model_->index(sourceRow, 0));
    if (row.isValid()) selection.select(row, row);
  }
  table_->selectionModel()->select(selection,
                                   QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
  if (!selection.isEmpty()) {
    table_->selectionModel()->setCurrentIndex(selection.indexes().first(),
                                              QItemSelectionModel::NoUpdate);
  }
}

QString HistoryPanel::displayName(const QString& runId) const {
  const RunRecord* run = model_->record(model_->rowOfRun(runId));
  return run == nullptr || run->name.isEmpty() ? runId : run->name;
}

void HistoryPanel::updateActions() {
  const QStringList ids = selectedRunIds();
  open_->setEnabled(!ids.isEmpty());
  clone_->setEnabled(ids.size() == 1);
  compare_->setEnabled(ids.size() >= 2);
  const RunRecord* one = ids.size() == 1 ? model_->record(model_->rowOfRun(ids.first())) : nullptr;
  v1::RunSpec spec;
  const bool resumable = one != nullptr &&
                         spec.ParseFromArray(one->spec.constData(), one->spec.size()) &&
                         hasResumableCheckpoint(one->state, spec);
  const QString problem = resumable ? controller_.resumeProblem(ids.first()) : QString();
  resume_->setEnabled(resumable && problem.isEmpty());
  resume_->setToolTip(
      resumable && !problem.isEmpty()
          ? problem
          : tr("Start a new run that continues the selected stopped or failed run from its last "
               "checkpoint, on the same node"));
  const QString original = one != nullptr ? resumedFromRunId(one->tags) : QString();
  const QString originalName = original.isEmpty() ? QString() : displayName(original);
  if (original.isEmpty()) {
    lineage_->clear();
  } else if (originalName == original) {  // the original is not in the history (deleted)
    lineage_->setText(tr("Resumed from %1").arg(original));
  } else {
    lineage_->setText(tr("Resumed from %1 (%2)").arg(originalName, original));
  }
  lineage_->setVisible(!original.isEmpty());
  export_->setEnabled(!ids.isEmpty());
  delete_->setEnabled(!ids.isEmpty());
  const int shown = proxy_->rowCount();
  const int total = model_->rowCount();
  countLabel_->setText(shown == total
                           ? tr("%Ln run(s)", nullptr, total)
                           : tr("%1 of %Ln run(s)", nullptr, total).arg(QLocale().toString(shown)));
}

void HistoryPanel::openSelected() {
  if (!open_->isEnabled()) return;
  for (const QString& runId : selectedRunIds()) emit openRunRequested(runId);
}

void HistoryPanel::cloneSelected() {
  if (!clone_->isEnabled()) return;
  const QString runId = selectedRunIds().value(0);
  const RunRecord* run = model_->record(model_->rowOfRun(runId));
  if (run == nullptr) return;
  v1::RunSpec spec;
  if (run->spec.isEmpty() || !spec.ParseFromArray(run->spec.constData(), run->spec.size())) {
    QMessageBox::information(
        this, tr("Clone run"),
        tr("The settings of run %1 are not known yet: its node has not reported them. Connect "
           "the node that ran it and try again.")
            .arg(displayName(runId)));
    return;
  }
  emit cloneRequested(fromRunSpec(spec));
}

void HistoryPanel::resumeSelected() {
  if (!resume_->isEnabled()) return;
  resume_->setEnabled(false);  // one new run per click; the next selection change re-enables
  controller_.resumeRun(selectedRunIds().value(0));
}

QString HistoryPanel::lineageText() const { return lineage_->text(); }

void HistoryPanel::compareSelected() {
  if (!compare_->isEnabled()) return;
  emit compareRequested(selectedRunIds());
}

void HistoryPanel::exportSelectedCsv() {
  if (!export_->isEnabled()) return;
  QList<RunToExport> runs;
  for (const QString& runId : selectedRunIds()) {
    const RunRecord* run = model_->record(model_->rowOfRun(runId));
    runs.append(RunToExport{.runId = runId, .name = run != nullptr ? run->name : QString()});
  }
  askExportRunsCsv(this, controller_.store(), runs);
}

void HistoryPanel::deleteSelected() {
  if (!delete_->isEnabled()) return;
  const QStringList ids = selectedRunIds();
  QStringList active;
  for (const QString& runId : ids) {
    const RunRecord* run = model_->record(model_->rowOfRun(runId));
    if (run != nullptr && isActive(run->state)) active << displayName(runId);
  }
  if (!active.isEmpty()) {
    QMessageBox::information(this, tr("Delete runs"),
                             tr("Stop these runs before deleting them: %1").arg(active.join(", ")));
    return;
  }
  const QString question =
      ids.size() == 1
          ? tr("Delete run \"%1\" with all its metrics and log lines? This cannot be undone.")
                .arg(displayName(ids.first()))
          : tr("Delete %Ln runs with all their metrics and log lines? This cannot be undone.",
               nullptr, static_cast<int>(ids.size()));
  if (QMessageBox::question(this, tr("Delete runs"), question,
                            QMessageBox::Yes | QMessageBox::Cancel,
                            QMessageBox::Cancel) != QMessageBox::Yes) {
    return;
  }
  for (const QString& runId : ids) {
    whenReady(this, controller_.store().deleteRun(runId), [this, runId](const Status& status) {
      if (status.isOk()) return;
      emit errorMessage(
          tr("Could not delete run %1: %2").arg(runId, QString::fromStdString(status.message())));
    });
  }
}

bool HistoryPanel::eventFilter(QObject* watched, QEvent* event) {
  if (watched == table_ &&
      (event->type() == QEvent::FontChange || event->type() == QEvent::StyleChange)) {
    fitStateColumn();
  }
  // Key presses reach the table only while it has focus itself: an open tags or notes editor
  // gets Return first and commits the edit.
  if (watched == table_ && event->type() == QEvent::KeyPress) {
    auto* key = static_cast<QKeyEvent*>(event);
    if ((key->key() == Qt::Key_Return || key->key() == Qt::Key_Enter) &&
        (key->modifiers() & ~Qt::KeypadModifier) == Qt::NoModifier) {
      openSelected();
      return true;
    }
  }
  return QWidget::eventFilter(watched, event);
}

}  // namespace ringside::gui
