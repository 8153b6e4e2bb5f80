// The Sweeps page (sweeps_panel.h).
#include "ringside/gui/widgets/sweeps_panel.h"

#include <QComboBox>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSaveFile>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QSplitter>
#include <QTableView>
#include <QTableWidget>
#include <QTimer>
#include <QVBoxLayout>
#include <algorithm>
#include <map>
#include <memory>

#include "ringside/gui/controller.h"
#include "ringside/gui/dialog_folder.h"
#include "ringside/gui/export_files.h"
#include "ringside/gui/sweep_book.h"
#include "ringside/gui/sweep_trial_model.h"
#include "ringside/gui/when_ready.h"
#include "ringside/gui/widgets/metric_chart.h"

namespace ringside::gui {

namespace {

enum SweepColumn { kName, kNode, kState, kTrials, kBest, kStarted, kSweepColumns };

QTableWidgetItem* item(const QString& text) {
  auto* cell = new QTableWidgetItem(text);
  cell->setFlags(Qt::ItemIsSelectable | Qt::ItemIsEnabled);
  return cell;
}

}  // namespace

SweepsPanel::SweepsPanel(Controller& controller, SweepBook& book, QWidget* parent)
    : QWidget(parent), controller_(controller), book_(book) {
  auto* launchRow = new QHBoxLayout;
  nodes_ = new QComboBox;
  nodes_->setToolTip(tr("The node whose agent runs a sweep started from a file"));
  auto* fromFile = new QPushButton(tr("Start sweep from file…"));
  fromFile->setToolTip(tr("A sweep spec as JSON (docs/sweeps.md): base run, parameters, method, "
                          "metric, early stopping"));
  launchRow->addWidget(new QLabel(tr("Node:")));
  launchRow->addWidget(nodes_, 1);
  launchRow->addWidget(fromFile);

  sweeps_ = new QTableWidget(0, kSweepColumns);
  sweeps_->setObjectName(QStringLiteral("sweepList"));
  sweeps_->setHorizontalHeaderLabels(
      {tr("Sweep"), tr("Node"), tr("State"), tr("Trials"), tr("Best"), tr("Started")});
  sweeps_->setSelectionBehavior(QAbstractItemView::SelectRows);
  sweeps_->setSelectionMode(QAbstractItemView::SingleSelection);
  sweeps_->verticalHeader()->hide();
  sweeps_->horizontalHeader()->setStretchLastSection(true);
  sweeps_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);

  summary_ = new QLabel;
  summary_->setObjectName(QStringLiteral("sweepSummary"));
  summary_->setWordWrap(true);
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);

  auto* actions = new QHBoxLayout;
  pause_ = new QPushButton(tr("Pause"));
  pause_->setToolTip(tr("Queue no new trial; queued trials leave the queue, running ones go on"));
  resume_ = new QPushButton(tr("Resume"));
  stop_ = new QPushButton(tr("Stop"));
  stop_->setToolTip(tr("End the sweep: its running trials are stopped"));
  extendBy_ = new QSpinBox;
  extendBy_->setRange(1, 1000);
  extendBy_->setValue(4);
  extend_ = new QPushButton(tr("Add trials"));
  extend_->setToolTip(tr("Draw this many more trials (a completed sweep runs again)"));
  rerun_ = new QPushButton(tr("Rerun trial"));
  rerun_->setToolTip(tr("Run the selected trial again from the start with the same values"));
  compare_ = new QPushButton(tr("Compare"));
  compare_->setToolTip(tr("Compare the runs of the selected trials"));
  export_ = new QPushButton(tr("Export CSV…"));
  for (QWidget* w : std::initializer_list<QWidget*>{pause_, resume_, stop_, extendBy_, extend_,
                                                    rerun_, compare_, export_}) {
    actions->addWidget(w);
  }
  actions->addStretch(1);

  model_ = new SweepTrialModel(this);
  sorted_ = new QSortFilterProxyModel(this);
  sorted_->setSourceModel(model_);
  sorted_->setSortRole(SweepTrialModel::kSortRole);
  trials_ = new QTableView;
  trials_->setObjectName(QStringLiteral("trialTable"));
  trials_->setModel(sorted_);
  trials_->setSortingEnabled(true);
  trials_->sortByColumn(0, Qt::AscendingOrder);
  trials_->setSelectionBehavior(QAbstractItemView::SelectRows);
  trials_->setSelectionMode(QAbstractItemView::ExtendedSelection);
  trials_->verticalHeader()->hide();
  trials_->horizontalHeader()->setStretchLastSection(true);
  trials_->setToolTip(tr("Double-click a trial to open its run"));

  curves_ = new MetricChart(tr("Each trial's metric"));
  curves_->setObjectName(QStringLiteral("trialCurves"));
  curves_->setAxisTitles(tr("step"), QString());
  curves_->setPlaceholderText(tr("No trial has reported the sweep's metric yet"));
  curvesDue_ = new QTimer(this);
  curvesDue_->setSingleShot(true);
  curvesDue_->setInterval(3000);
  connect(curvesDue_, &QTimer::timeout, this, &SweepsPanel::refreshCurves);
  auto* trialsAndCurves = new QSplitter(Qt::Horizontal);
  trialsAndCurves->addWidget(trials_);
  trialsAndCurves->addWidget(curves_);
  trialsAndCurves->setStretchFactor(0, 3);
  trialsAndCurves->setStretchFactor(1, 2);

  auto* lower = new QWidget;
  auto* lowerLayout = new QVBoxLayout(lower);
  lowerLayout->setContentsMargins(0, 0, 0, 0);
  lowerLayout->addWidget(summary_);
  lowerLayout->addLayout(actions);
  lowerLayout->addWidget(trialsAndCurves, 1);
  auto* split = new QSplitter(Qt::Vertical);
  split->addWidget(sweeps_);
  split->addWidget(lower);
  split->setStretchFactor(1, 3);
  split->setSizes({120, 480});  // a few sweeps; the trials get the room

  auto* layout = new QVBoxLayout(this);
  layout->addLayout(launchRow);
  layout->addWidget(split, 1);

  connect(&book_, &SweepBook::changed, this, &SweepsPanel::refreshSweeps);
  connect(&book_, &SweepBook::failed, this, &SweepsPanel::errorMessage);
  connect(&book_, &SweepBook::sweepLaunched, this, &SweepsPanel::selectSweep);
  connect(&controller_, &Controller::nodesChanged, this, &SweepsPanel::refreshNodes);
  // New samples of a shown trial's run (they may come after its final state): the curves again.
  connect(&controller_, &Controller::runDataChanged, this, [this](const QString& runId) {
    const SweepBook::Entry* entry = shown_.isEmpty() ? nullptr : book_.find(shown_);
    if (entry == nullptr || curvesDue_->isActive()) return;
    const std::string id = runId.toStdString();
    for (const v1::SweepTrial& trial : entry->sweep.trials()) {
      if (trial.run_id() == id ||
          std::find(trial.earlier_run_ids().begin(), trial.earlier_run_ids().end(), id) !=
              trial.earlier_run_ids().end()) {
        curvesDue_->start();
        return;
      }
    }
  });
  connect(sweeps_, &QTableWidget::itemSelectionChanged, this, &SweepsPanel::showSelected);
  connect(trials_->selectionModel(), &QItemSelectionModel::selectionChanged, this,
          &SweepsPanel::updateButtons);
  connect(trials_, &QTableView::doubleClicked, this, [this](const QModelIndex& index) {
    const QString runId = index.data(SweepTrialModel::kRunIdRole).toString();
    if (!runId.isEmpty()) emit openRunRequested(runId);
  });
  connect(fromFile, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Start sweep from file"), dialogFolder(kPresetDialog), tr("Sweep specs (*.json)"));
    if (path.isEmpty()) return;
    rememberDialogFolder(kPresetDialog, path);
    launchFile(path);
  });
  connect(pause_, &QPushButton::clicked, this, [this] { control(v1::PAUSE_SWEEP); });
  connect(resume_, &QPushButton::clicked, this, [this] { control(v1::RESUME_SWEEP); });
  connect(stop_, &QPushButton::clicked, this, [this] { control(v1::STOP_SWEEP); });
  connect(extend_, &QPushButton::clicked, this, [this] { control(v1::EXTEND_SWEEP); });
  connect(rerun_, &QPushButton::clicked, this, [this] { control(v1::RERUN_TRIAL); });
  connect(compare_, &QPushButton::clicked, this,
          [this] { emit compareRequested(selectedRunIds()); });
  connect(export_, &QPushButton::clicked, this, &SweepsPanel::exportCsv);
  refreshNodes();
  refreshSweeps();
}

void SweepsPanel::refreshNodes() {
  const QString current = nodes_->currentData().toString();
  nodes_->clear();
  for (const NodeChoice& node : controller_.nodeChoices()) {
    nodes_->addItem(node.name, node.nodeId);
  }
  const int index = nodes_->findData(current);
  if (index >= 0) nodes_->setCurrentIndex(index);
}

void SweepsPanel::launchFile(const QString& specFile) {
  QFile file(specFile);
  if (!file.open(QIODevice::ReadOnly)) {
    emit errorMessage(tr("Cannot read %1: %2").arg(specFile, file.errorString()));
    return;
  }
  auto spec = sweepSpecFromJson(file.read(2 << 20));
  if (!spec.isOk()) {
    emit errorMessage(
        tr("%1: %2").arg(specFile, QString::fromStdString(spec.status().message())));
    return;
  }
  const QString nodeId = nodes_->currentData().toString();
  if (nodeId.isEmpty()) {
    emit errorMessage(tr("No node to start the sweep on: add one in Nodes."));
    return;
  }
  book_.launch(nodeId, *spec);
}

void SweepsPanel::refreshSweeps() {
  const QString keep = selectedSweep().isEmpty() ? shown_ : selectedSweep();
  const std::vector<SweepBook::Entry> all = book_.sweeps();
  QSignalBlocker blocker(sweeps_);
  sweeps_->setRowCount(static_cast<int>(all.size()));
  int keepRow = -1;
  for (int row = 0; row < static_cast<int>(all.size()); ++row) {
    const v1::SweepInfo& sweep = all[static_cast<size_t>(row)].sweep;
    const QString id = QString::fromStdString(sweep.sweep_id());
    const QString name = sweep.spec().name().empty() ? id : QString::fromStdString(sweep.spec().name());
    int ended = 0;
    for (const v1::SweepTrial& trial : sweep.trials()) {
      if (trial.state() == v1::COMPLETED || trial.state() == v1::FAILED ||
          trial.state() == v1::STOPPED) {
        ++ended;
      }
    }
    QString best;
    if (sweep.best_trial() >= 0 && sweep.best_trial() < sweep.trials_size()) {
      best = tr("%1 (trial %2)")
                 .arg(QString::number(sweep.trials(sweep.best_trial()).best_value(), 'g', 4))
                 .arg(sweep.best_trial());
    }
    const auto node = controller_.node(all[static_cast<size_t>(row)].nodeId);
    sweeps_->setItem(row, kName, item(name));
    sweeps_->item(row, kName)->setData(Qt::UserRole, id);
    sweeps_->setItem(row, kNode, item(node ? node->record.name : all[static_cast<size_t>(row)].nodeId));
    sweeps_->setItem(row, kState, item(sweepStateText(sweep.state())));
    sweeps_->setItem(row, kTrials,
                     item(tr("%1 of %2 ended").arg(ended).arg(sweep.trials_size())));
    sweeps_->setItem(row, kBest, item(best));
    sweeps_->setItem(row, kStarted,
                     item(QDateTime::fromMSecsSinceEpoch(
                              static_cast<qint64>(sweep.created_time() * 1000))
                              .toString(QStringLiteral("yyyy-MM-dd HH:mm"))));
    if (id == keep) keepRow = row;
  }
  if (keepRow < 0 && !all.empty()) keepRow = static_cast<int>(all.size()) - 1;
  if (keepRow >= 0) sweeps_->selectRow(keepRow);
  blocker.unblock();
  showSelected();
}

void SweepsPanel::selectSweep(const QString& sweepId) {
  for (int row = 0; row < sweeps_->rowCount(); ++row) {
    if (sweeps_->item(row, kName)->data(Qt::UserRole).toString() == sweepId) {
      sweeps_->selectRow(row);
      return;
    }
  }
  shown_ = sweepId;  // listed by the next refresh
}

QString SweepsPanel::selectedSweep() const {
  const auto rows = sweeps_->selectionModel()->selectedRows();
  if (rows.isEmpty()) return {};
  return sweeps_->item(rows.first().row(), kName)->data(Qt::UserRole).toString();
}

void SweepsPanel::showSelected() {
  const QString id = selectedSweep();
  const SweepBook::Entry* entry = id.isEmpty() ? nullptr : book_.find(id);
  if (entry == nullptr) {
    model_->setSweep({});
    summary_->setText(book_.sweeps().empty()
                          ? tr("No sweep yet. Start one from a sweep spec file (docs/sweeps.md), "
                               "or with the example client's sweep command.")
                          : QString());
    shown_.clear();
    updateButtons();
    return;
  }
  shown_ = id;
  const v1::SweepInfo& sweep = entry->sweep;
  model_->setSweep(sweep);
  const v1::SweepSpec& spec = sweep.spec();
  QString rule = tr("no early stopping");
  if (spec.early_stopping().has_asha()) {
    rule = tr("ASHA, eta %1").arg(spec.early_stopping().asha().eta() > 0
                                      ? spec.early_stopping().asha().eta()
                                      : 3.0);
  } else if (spec.early_stopping().has_median()) {
    rule = tr("median stopping rule");
  }
  QString text = tr("%1: %2 (%3), %4 %5, %6.")
                     .arg(QString::fromStdString(spec.name().empty() ? sweep.sweep_id() : spec.name()),
                          sweepStateText(sweep.state()),
                          QString::fromStdString(sweep.reason()),
                          QString::fromStdString(v1::SweepMethod_Name(spec.method())).toLower(),
                          tr("search"), rule);
  if (sweep.best_trial() >= 0 && sweep.best_trial() < sweep.trials_size()) {
    const v1::SweepTrial& best = sweep.trials(sweep.best_trial());
    QStringList values;
    for (const auto& [name, value] : best.params()) {
      const QString text = QString::fromStdString(value);
      bool isNumber = false;
      const double number = text.toDouble(&isNumber);
      values << QString::fromStdString(name) + QLatin1Char('=') +
                    (isNumber ? QString::number(number, 'g', 4) : text);
    }
    values.sort();
    text += QLatin1Char(' ') + tr("Best: trial %1 (%2), %3 %4.")
                                   .arg(best.trial())
                                   .arg(values.join(QStringLiteral(", ")),
                                        QString::fromStdString(spec.metric()),
                                        QString::number(best.best_value(), 'g', 4));
  }
  summary_->setText(text);
  trials_->resizeColumnsToContents();
  updateButtons();
  if (!curvesDue_->isActive()) curvesDue_->start();
}

void SweepsPanel::refreshCurves() {
  const SweepBook::Entry* entry = shown_.isEmpty() ? nullptr : book_.find(shown_);
  if (entry == nullptr) {
    curves_->clearSeries();
    return;
  }
  const v1::SweepInfo sweep = entry->sweep;
  const QString metric = QString::fromStdString(sweep.spec().metric());
  curves_->setAxisTitles(tr("step"), metric);
  // One query per run; drawn when all answered (a later refresh wins).
  const int generation = ++curvesGeneration_;
  auto points = std::make_shared<std::map<uint32_t, std::vector<SeriesPoint>>>();
  auto pending = std::make_shared<int>(0);
  std::vector<std::pair<uint32_t, QString>> runs;
  for (const v1::SweepTrial& trial : sweep.trials()) {
    for (const std::string& id : trial.earlier_run_ids()) runs.emplace_back(trial.trial(), QString::fromStdString(id));
    if (!trial.run_id().empty()) runs.emplace_back(trial.trial(), QString::fromStdString(trial.run_id()));
  }
  *pending = static_cast<int>(runs.size());
  auto draw = [this, generation, points, sweep] {
    if (generation != curvesGeneration_) return;
    QStringList shown;
    for (auto& [trial, series] : *points) {
      std::stable_sort(series.begin(), series.end(),
                       [](const SeriesPoint& a, const SeriesPoint& b) { return a.x < b.x; });
      const v1::SweepTrial& info = sweep.trials(static_cast<int>(trial));
      const bool best = static_cast<int>(trial) == sweep.best_trial();
      const QString name = tr("trial %1").arg(trial);
      curves_->setSeries(name, series, best ? QColor(0xd6, 0x27, 0x28) : QColor(),
                         /*faint=*/info.stopped_early() || info.state() == v1::FAILED);
      shown << name;
    }
    for (const QString& name : curves_->seriesNames()) {
      if (!shown.contains(name)) curves_->removeSeries(name);
    }
  };
  if (runs.empty()) {
    draw();
    return;
  }
  for (const auto& [trial, runId] : runs) {
    const uint32_t t = trial;
    whenReady(this, controller_.store().series(runId, metric, -1, SeriesX::kStep),
              [generation, points, pending, t, draw, this](Result<std::vector<SeriesPoint>> got) {
                if (generation != curvesGeneration_) return;
                if (got.isOk()) {
                  auto& series = (*points)[t];
                  series.insert(series.end(), got->begin(), got->end());
                }
                if (--*pending == 0) draw();
              });
  }
}

void SweepsPanel::updateButtons() {
  const SweepBook::Entry* entry = shown_.isEmpty() ? nullptr : book_.find(shown_);
  const v1::SweepState state = entry ? entry->sweep.state() : v1::SWEEP_STATE_UNSPECIFIED;
  pause_->setEnabled(state == v1::SWEEP_RUNNING);
  resume_->setEnabled(state == v1::SWEEP_PAUSED);
  stop_->setEnabled(state == v1::SWEEP_RUNNING || state == v1::SWEEP_PAUSED);
  extend_->setEnabled(entry != nullptr && state != v1::SWEEP_STOPPED);
  extendBy_->setEnabled(extend_->isEnabled());
  rerun_->setEnabled(entry != nullptr && state != v1::SWEEP_STOPPED && selectedTrial() >= 0);
  compare_->setEnabled(selectedRunIds().size() >= 2);
  export_->setEnabled(entry != nullptr && model_->rowCount() > 0);
}

int SweepsPanel::selectedTrial() const {
  const auto rows = trials_->selectionModel()->selectedRows();
  if (rows.size() != 1) return -1;
  return sorted_->mapToSource(rows.first()).row();
}

QStringList SweepsPanel::selectedRunIds() const {
  QStringList ids;
  for (const QModelIndex& row : trials_->selectionModel()->selectedRows()) {
    const QString id = row.data(SweepTrialModel::kRunIdRole).toString();
    if (!id.isEmpty()) ids << id;
  }
  return ids;
}

void SweepsPanel::control(v1::SweepAction action) {
  if (shown_.isEmpty()) return;
  const int trial = selectedTrial();
  book_.control(shown_, action, static_cast<uint32_t>(extendBy_->value()),
                trial >= 0 ? model_->sweep().trials(trial).trial() : 0);
}

void SweepsPanel::exportCsv() {
  const SweepBook::Entry* entry = shown_.isEmpty() ? nullptr : book_.find(shown_);
  if (entry == nullptr) return;
  const QString base = fileSafeName(QString::fromStdString(
      entry->sweep.spec().name().empty() ? entry->sweep.sweep_id() : entry->sweep.spec().name()));
  const QString path = QFileDialog::getSaveFileName(
      this, tr("Export trials as CSV"),
      QDir(dialogFolder(kExportDialog)).filePath(base + QStringLiteral("-trials.csv")),
      tr("CSV files (*.csv);;All files (*)"));
  if (path.isEmpty()) return;
  rememberDialogFolder(kExportDialog, path);
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly) || file.write(sweepTrialsCsv(*model_).toUtf8()) < 0 ||
      !file.commit()) {
    emit errorMessage(tr("Could not write %1: %2").arg(path, file.errorString()));
  }
}

}  // namespace ringside::gui
