#include "ringside/gui/run_table_model.h"

#include <QJsonArray>
#include <QJsonDocument>
#include "ringside/gui/clipped_text.h"
#include "ringside/gui/duration_format.h"
#include "ringside/gui/sort_values.h"
#include "ringside/gui/when_ready.h"

#include <QBrush>
#include <QColor>
#include <QDateTime>
#include <QFutureWatcher>
#include <QHash>
#include <QLocale>
#include <QSet>

#include <algorithm>
#include <cmath>
#include <memory>
#include <utility>

namespace ringside::gui {

namespace {

// Store signals arrive per ingested batch while runs are live; one re-read per interval is
// enough for a table.
constexpr int kRefreshCoalesceMs = 250;

double nowSeconds() { return QDateTime::currentMSecsSinceEpoch() / 1000.0; }

bool isActive(v1::RunState state) {
  return state == v1::QUEUED || state == v1::STARTING || state == v1::RUNNING;
}

QString normalizedTags(const QString& text) {
  QStringList tags;
  for (const QString& part : text.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
    const QString tag = part.trimmed();
    if (!tag.isEmpty() && !tags.contains(tag)) tags << tag;
  }
  return tags.join(QStringLiteral(", "));
}

// Colours readable on light and dark palettes alike.
QColor stateColor(v1::RunState state) {
  switch (state) {
    case v1::RUNNING:
    case v1::STARTING:
    case v1::QUEUED:
      return QColor(0x2f, 0x80, 0xed);
    case v1::COMPLETED:
      return QColor(0x2e, 0x9d, 0x4f);
    case v1::FAILED:
      return QColor(0xd9, 0x48, 0x3b);
    case v1::STOPPED:
      return QColor(0xc0, 0x84, 0x1a);
    default:
      return {};
  }
}

bool sameRow(const RunRecord& a, const RunRecord& b) {
  return a.name == b.name && a.state == b.state && a.reason == b.reason && a.spec == b.spec &&
         a.startTime == b.startTime && a.endTime == b.endTime && a.tags == b.tags &&
         a.notes == b.notes && a.finalLoss == b.finalLoss && a.bestAccuracy == b.bestAccuracy &&
         a.meanSamplesPerS == b.meanSamplesPerS && a.worldSize == b.worldSize;
}

}  // namespace

RunTableModel::RunTableModel(MetricsStore& store, QObject* parent)
    : QAbstractTableModel(parent), store_(store) {
  refreshTimer_.setSingleShot(true);
  refreshTimer_.setInterval(kRefreshCoalesceMs);
  connect(&refreshTimer_, &QTimer::timeout, this, &RunTableModel::refresh);
  connect(&store_, &MetricsStore::runChanged, this, &RunTableModel::noteChangedRun);
  connect(&store_, &MetricsStore::runDeleted, this, &RunTableModel::removeRun);
}

int RunTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(runs_.size());
}

int RunTableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumnCount + static_cast<int>(paramKeys_.size());
}

const RunRecord* RunTableModel::record(int row) const {
  return row >= 0 && row < runs_.size() ? &runs_[row] : nullptr;
}

int RunTableModel::rowOfRun(const QString& runId) const {
  if (rowOf_.size() != runs_.size()) {  // rows were removed since the index was built
    rowOf_.clear();
    for (int row = 0; row < runs_.size(); ++row) rowOf_.insert(runs_[row].runId, row);
  }
  return rowOf_.value(runId, -1);
}

QString RunTableModel::stateText(v1::RunState state) {
  switch (state) {
    case v1::QUEUED:
      return tr("queued");
    case v1::STARTING:
      return tr("starting");
    case v1::RUNNING:
      return tr("running");
    case v1::COMPLETED:
      return tr("completed");
    case v1::FAILED:
      return tr("failed");
    case v1::STOPPED:
      return tr("stopped");
    default:
      return tr("unknown");
  }
}

QString RunTableModel::placementText(const RunRecord& run) {
  const QLocale locale;
  v1::RunSpec spec;
  if (run.spec.isEmpty() || !spec.ParseFromArray(run.spec.constData(), run.spec.size())) {
    return run.worldSize > 0 ? locale.toString(run.worldSize) : tr("N/A");
  }
  if (spec.hosts_size() == 0) {
    const int ranks = spec.ranks_per_node() > 0 ? static_cast<int>(spec.ranks_per_node())
                                                : std::max(run.worldSize, 1);
    return tr("%1 × %2").arg(locale.toString(1), locale.toString(ranks));
  }
  const uint32_t first = spec.hosts(0).ranks();
  for (const auto& host : spec.hosts()) {
    if (host.ranks() != first) {
      return tr("%Ln rank(s) on %1 nodes", nullptr, run.worldSize)
          .arg(locale.toString(spec.hosts_size()));
    }
  }
  return tr("%1 × %2").arg(locale.toString(spec.hosts_size()), locale.toString(first));
}

std::optional<double> RunTableModel::durationSeconds(const RunRecord& run) const {
  if (run.startTime <= 0) return std::nullopt;
  if (run.endTime > 0) return run.endTime - run.startTime;
  if (isActive(run.state)) return nowSeconds() - run.startTime;
  return std::nullopt;  // ended without an end time: unknown, not "still counting"
}

QVariant RunTableModel::data(const QModelIndex& index, int role) const {
  const RunRecord* run = index.isValid() ? record(index.row()) : nullptr;
  if (run == nullptr) return {};
  const int column = index.column();
  if (role == kRunIdRole) return run->runId;
  if (role == kStateRole) return static_cast<int>(run->state);
  if (column >= kColumnCount) {
    // A hyperparameter: numbers right-aligned and sorted as numbers, absent values empty.
    const QJsonValue value =
        params_.value(run->runId).params.value(paramKeys_.value(column - kColumnCount));
    if (role == Qt::TextAlignmentRole) {
      return value.isDouble() ? QVariant(Qt::AlignRight | Qt::AlignVCenter) : QVariant();
    }
    if (role == kSortRole && value.isDouble()) return value.toDouble();
    if (role != Qt::DisplayRole && role != kSortRole && role != Qt::ToolTipRole) return {};
    if (value.isDouble()) return QLocale().toString(value.toDouble(), 'g', 8);
    if (value.isBool()) return value.toBool() ? QStringLiteral("true") : QStringLiteral("false");
    if (value.isString()) return value.toString();
    if (value.isUndefined() || value.isNull()) return QString();
    const QJsonDocument nested =
        value.isArray() ? QJsonDocument(value.toArray()) : QJsonDocument(value.toObject());
    return QString::fromUtf8(nested.toJson(QJsonDocument::Compact));
  }

  // Numeric value of a column (nullopt: N/A; also nullopt for text columns).
  auto number = [&]() -> std::optional<double> {
    switch (column) {
      case kStart:
        return run->startTime > 0 ? std::optional<double>(run->startTime) : std::nullopt;
      case kDuration:
        return durationSeconds(*run);
      case kFinalLoss:
        return run->finalLoss;
      case kBestAccuracy:
        return run->bestAccuracy;
      case kSamplesPerS:
        return run->meanSamplesPerS;
      default:
        return std::nullopt;
    }
  };
  const bool numeric = column == kStart || column == kDuration || column == kFinalLoss ||
                       column == kBestAccuracy || column == kSamplesPerS;

  switch (role) {
    case Qt::DisplayRole: {
      switch (column) {
        case kName:
          return run->name.isEmpty() ? run->runId : run->name;
        case kState:
          return stateText(run->state);
        case kPlacement:
          return placementText(*run);
        case kTags:
          return run->tags;
        case kNotes:
          return run->notes;
        default:
          break;
      }
      const std::optional<double> value = number();
      if (!value || !std::isfinite(*value)) return tr("N/A");
      const QLocale locale;
      switch (column) {
        case kStart:
          return locale.toString(QDateTime::fromMSecsSinceEpoch(qint64(*value * 1000.0)),
                                 QStringLiteral("yyyy-MM-dd HH:mm"));
        case kDuration:
          return formatDuration(*value);
        case kFinalLoss:
          return locale.toString(*value, 'f', 4);
        case kBestAccuracy:
          return tr("%1 %").arg(locale.toString(*value * 100.0, 'f', 2));
        case kSamplesPerS:
          return locale.toString(*value, 'f', 0);
        default:
          return {};
      }
    }
    case Qt::EditRole:
      if (column == kTags) return run->tags;
      if (column == kNotes) return run->notes;
      return data(index, Qt::DisplayRole);
    case kSortRole:
      if (numeric) {
        const std::optional<double> value = number();
        return value && std::isfinite(*value) ? QVariant(*value) : QVariant();
      }
      if (column == kPlacement) return run->worldSize;
      return data(index, Qt::DisplayRole);
    case Qt::TextAlignmentRole:
      if (numeric && column != kStart) {
        return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
      }
      if (column == kPlacement) return QVariant::fromValue(Qt::AlignHCenter | Qt::AlignVCenter);
      return {};
    case Qt::ForegroundRole:
      if (column == kState) {
        const QColor color = stateColor(run->state);
        if (color.isValid()) return QBrush(color);
      }
      return {};
    case Qt::ToolTipRole:
      switch (column) {
        case kName:
          return tr("Run %1").arg(run->runId);
        case kState:
          return run->reason.isEmpty()
                     ? QVariant()
                     : QVariant(tooltipText(tr("%1: %2").arg(stateText(run->state), run->reason)));
        case kTags:
        case kNotes:
          return tr("Double-click or press F2 to edit");
        default:
          return {};
      }
    default:
      return {};
  }
}

QVariant RunTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal) return {};
  if (section >= kColumnCount && section < columnCount()) {
    const QString key = paramKeys_.value(section - kColumnCount);
    if (role == Qt::DisplayRole) return key;
    if (role == Qt::ToolTipRole) {
      return tr("Hyperparameter %1 as the run's script declared it (ringside.config)").arg(key);
    }
    return {};
  }
  if (role == Qt::DisplayRole) {
    switch (section) {
      case kName:
        return tr("Name");
      case kState:
        return tr("State");
      case kPlacement:
        return tr("Nodes × ranks");
      case kStart:
        return tr("Start");
      case kDuration:
        return tr("Duration");
      case kFinalLoss:
        return tr("Final loss");
      case kBestAccuracy:
        return tr("Best accuracy");
      case kSamplesPerS:
        return tr("Samples/s");
      case kTags:
        return tr("Tags");
      case kNotes:
        return tr("Notes");
      default:
        return {};
    }
  }
  if (role == Qt::ToolTipRole) {
    switch (section) {
      case kPlacement:
        return tr("Nodes × ranks per node");
      case kFinalLoss:
        return tr("Training loss (train/loss) at the last step");
      case kBestAccuracy:
        return tr("Highest test accuracy (test/accuracy) of any evaluation");
      case kSamplesPerS:
        return tr("Mean training throughput (train/samples_per_s) over all ranks");
      case kTags:
      case kNotes:
        return tr("Double-click or press F2 to edit");
      default:
        return {};
    }
  }
  return {};
}

Qt::ItemFlags RunTableModel::flags(const QModelIndex& index) const {
  Qt::ItemFlags result = QAbstractTableModel::flags(index);
  if (index.isValid() && (index.column() == kTags || index.column() == kNotes)) {
    result |= Qt::ItemIsEditable;
  }
  return result;
}

bool RunTableModel::setData(const QModelIndex& index, const QVariant& value, int role) {
  if (role != Qt::EditRole || !index.isValid() || index.row() >= runs_.size()) return false;
  const int column = index.column();
  if (column != kTags && column != kNotes) return false;
  RunRecord& run = runs_[index.row()];
  const QString runId = run.runId;
  QFuture<Status> write;
  if (column == kTags) {
    const QString tags = normalizedTags(value.toString());
    if (tags == run.tags) return true;
    run.tags = tags;
    write = store_.setTags(runId, tags);
  } else {
    const QString notes = value.toString();
    if (notes == run.notes) return true;
    run.notes = notes;
    write = store_.setNotes(runId, notes);
  }
  emit dataChanged(index, index, {Qt::DisplayRole, Qt::EditRole, kSortRole});
  whenReady(this, write, [this, runId, column](const Status& status) {
    if (status.isOk()) return;
    emit errorOccurred(tr("Could not save the %1 of run %2: %3")
                           .arg(column == kTags ? tr("tags") : tr("notes"), runId,
                                QString::fromStdString(status.message())));
    noteChangedRun(runId);  // shows what the store holds again
  });
  return true;
}

void RunTableModel::scheduleRefresh() {
  if (!refreshTimer_.isActive()) refreshTimer_.start();
}

void RunTableModel::noteChangedRun(const QString& runId) {
  if (changed_.size() <= kRefreshPageRuns) changed_.insert(runId);
  scheduleRefresh();
}

void RunTableModel::removeRun(const QString& runId) {
  changed_.remove(runId);
  const int row = rowOfRun(runId);
  if (row < 0) return;
  beginRemoveRows({}, row, row);
  runs_.remove(row);
  params_.remove(runId);
  rowOf_.clear();  // rebuilt by the next look-up
  endRemoveRows();
}

void RunTableModel::refresh() {
  if (inFlight_) {
    pending_ = true;
    return;
  }
  inFlight_ = true;
  // Before the first load, and after more runs changed than a page holds (a node's run list),
  // the whole table is read again; otherwise only the runs that changed, in one query, so a
  // live run costs its own row, not the history's.
  if (loaded_ && !changed_.isEmpty() && changed_.size() <= kRefreshPageRuns) {
    readChanged();
    return;
  }
  changed_.clear();
  seen_.clear();
  readPage(0);
}

void RunTableModel::readChanged() {
  const QSet<QString> changed = std::exchange(changed_, {});
  // One query for all of them (up to a page), in store order as a full refresh appends them.
  RunFilter filter;
  filter.runIds = QStringList(changed.begin(), changed.end());
  whenReady(this, store_.runs(filter), [this, changed](Result<std::vector<RunRecord>> runs) {
    if (!runs.isOk()) {
      emit errorOccurred(tr("Could not read the run history: %1")
                             .arg(QString::fromStdString(runs.status().message())));
      finishRefresh();
      return;
    }
    QSet<QString> gone = changed;
    for (const RunRecord& run : *runs) gone.remove(run.runId);
    for (const QString& runId : gone) removeRun(runId);  // deleted meanwhile
    // A live run's new samples leave its config as it was: no need to look at every run's.
    if (mergePage(std::move(runs).value()) || !gone.isEmpty()) updateParams();
    emit refreshed();
    finishRefresh();
  });
}

void RunTableModel::readPage(int64_t afterRunKey) {
  // A long history (a node may list tens of thousands of runs) is read and merged a page at a
  // time, each in its own turn of the event loop, so that no refresh keeps the GUI thread busy.
  RunFilter page;
  page.limit = kRefreshPageRuns;
  page.afterRunKey = afterRunKey;
  whenReady(this, store_.runs(page), [this](Result<std::vector<RunRecord>> runs) {
    if (!runs.isOk()) {
      emit errorOccurred(tr("Could not read the run history: %1")
                             .arg(QString::fromStdString(runs.status().message())));
      finishRefresh();
      return;
    }
    const bool last = static_cast<int>(runs->size()) < kRefreshPageRuns;
    const int64_t lastKey = runs->empty() ? 0 : runs->back().runKey;
    mergePage(std::move(runs).value());
    if (!last) {
      readPage(lastKey);
      return;
    }
    removeUnseen();
    loaded_ = true;
    updateParams();
    emit refreshed();
    finishRefresh();
  });
}

void RunTableModel::finishRefresh() {
  seen_.clear();
  inFlight_ = false;
  if (pending_) {
    pending_ = false;
    refresh();
  }
}

bool RunTableModel::mergePage(std::vector<RunRecord> runs) {
  (void)rowOfRun(QString());  // brings rowOf_ up to date
  std::vector<int> changed;   // rows whose columns changed
  std::vector<int> live;      // unchanged rows of active runs: their duration keeps counting
  QVector<RunRecord> added;
  bool configChanged = false;
  for (RunRecord& run : runs) {
    seen_.insert(run.runId);
    const auto it = rowOf_.constFind(run.runId);
    if (it == rowOf_.constEnd()) {
      added.append(std::move(run));
      continue;
    }
    RunRecord& current = runs_[it.value()];
    configChanged = configChanged || current.configJson != run.configJson;
    if (!sameRow(current, run)) {
      changed.push_back(it.value());
    } else if (isActive(run.state)) {
      live.push_back(it.value());
    }
    current = std::move(run);
  }
  // One dataChanged per block of adjacent rows (each one makes the proxy re-sort its rows).
  auto emitBlocks = [this](std::vector<int>& rows, int firstColumn, int lastColumn) {
    std::sort(rows.begin(), rows.end());
    for (size_t i = 0; i < rows.size();) {
      size_t j = i;
      while (j + 1 < rows.size() && rows[j + 1] == rows[j] + 1) ++j;
      emit dataChanged(index(rows[i], firstColumn), index(rows[j], lastColumn));
      i = j + 1;
    }
  };
  emitBlocks(changed, 0, columnCount() - 1);
  emitBlocks(live, kDuration, kDuration);
  // New runs, appended (the proxy sorts).
  if (!added.isEmpty()) {
    const int first = static_cast<int>(runs_.size());
    beginInsertRows({}, first, first + static_cast<int>(added.size()) - 1);
    for (int i = 0; i < added.size(); ++i) rowOf_.insert(added[i].runId, first + i);
    runs_.append(std::move(added));
    endInsertRows();
    return true;
  }
  return configChanged;
}

void RunTableModel::removeUnseen() {
  // Rows the store no longer has, removed from the bottom (a block of adjacent rows at once) so
  // earlier row numbers stay valid.
  bool removed = false;
  for (int row = static_cast<int>(runs_.size()) - 1; row >= 0; --row) {
    if (seen_.contains(runs_[row].runId)) continue;
    int first = row;
    while (first > 0 && !seen_.contains(runs_[first - 1].runId)) --first;
    beginRemoveRows({}, first, row);
    runs_.remove(first, row - first + 1);
    endRemoveRows();
    removed = true;
    row = first;
  }
  if (removed) rowOf_.clear();  // rebuilt by the next look-up
}

void RunTableModel::updateParams() {
  // The "params." keys of each run's stored config (store_database.cpp, configJsonOf). A run's
  // config is parsed again only when it changed, so a refresh of many runs stays cheap.
  QHash<QString, ParsedParams> previous;
  previous.swap(params_);
  QHash<QString, int> runsWithKey;
  std::vector<int> changedRows;  // rows whose hyperparameters were parsed again or went
  for (int row = 0; row < runs_.size(); ++row) {
    const RunRecord& run = runs_[row];
    auto cached = previous.constFind(run.runId);
    if (!run.configJson.contains(QLatin1String("\"params."))) {
      if (cached != previous.constEnd()) changedRows.push_back(row);
      continue;
    }
    if (cached != previous.constEnd() && cached->configJson == run.configJson) {
      params_.insert(run.runId, *cached);
    } else {
      changedRows.push_back(row);
      const QJsonObject config = QJsonDocument::fromJson(run.configJson.toUtf8()).object();
      ParsedParams parsed{run.configJson, {}};
      for (auto it = config.begin(); it != config.end(); ++it) {
        if (it.key().startsWith(QLatin1String("params.")))
          parsed.params.insert(it.key().mid(7), it.value());
      }
      params_.insert(run.runId, parsed);
    }
    const QJsonObject& params = params_[run.runId].params;
    for (auto it = params.begin(); it != params.end(); ++it) ++runsWithKey[it.key()];
  }
  QStringList keys = runsWithKey.keys();
  std::sort(keys.begin(), keys.end(), [&](const QString& a, const QString& b) {
    const int countA = runsWithKey.value(a);
    const int countB = runsWithKey.value(b);
    return countA != countB ? countA > countB : a < b;
  });
  if (keys.size() > kMaxParamColumns) keys = keys.mid(0, kMaxParamColumns);
  std::sort(keys.begin(), keys.end());
  if (keys == paramKeys_) {
    // Only the rows whose values may differ, in blocks of adjacent rows: a refresh of one live
    // run among thousands must not make the proxy look at every row.
    if (paramKeys_.isEmpty()) return;
    for (size_t i = 0; i < changedRows.size();) {
      size_t j = i;
      while (j + 1 < changedRows.size() && changedRows[j + 1] == changedRows[j] + 1) ++j;
      emit dataChanged(index(changedRows[i], kColumnCount),
                       index(changedRows[j], columnCount() - 1));
      i = j + 1;
    }
    return;
  }
  // New keys: the columns change (rare: a run with other hyperparameters arrived).
  const int before = static_cast<int>(paramKeys_.size());
  if (before > 0) {
    beginRemoveColumns({}, kColumnCount, kColumnCount + before - 1);
    paramKeys_.clear();
    endRemoveColumns();
  }
  if (!keys.isEmpty()) {
    beginInsertColumns({}, kColumnCount, kColumnCount + static_cast<int>(keys.size()) - 1);
    paramKeys_ = keys;
    endInsertColumns();
  }
}

RunFilterProxy::RunFilterProxy(QObject* parent) : QSortFilterProxyModel(parent) {
  setSortRole(RunTableModel::kSortRole);
  setSortCaseSensitivity(Qt::CaseInsensitive);
  setSortLocaleAware(true);
  setDynamicSortFilter(true);
}

void RunFilterProxy::setTextFilter(const QString& text) {
  if (text == text_) return;
  text_ = text;
  invalidateFilter();
}

void RunFilterProxy::setStateFilter(StateFilter filter) {
  if (filter == state_) return;
  state_ = filter;
  invalidateFilter();
}

bool RunFilterProxy::filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const {
  auto* model = qobject_cast<const RunTableModel*>(sourceModel());
  const RunRecord* run = model != nullptr ? model->record(sourceRow) : nullptr;
  if (run == nullptr || sourceParent.isValid()) return false;
  switch (state_) {
    case StateFilter::kAll:
      break;
    case StateFilter::kActive:
      if (!isActive(run->state)) return false;
      break;
    case StateFilter::kCompleted:
      if (run->state != v1::COMPLETED) return false;
      break;
    case StateFilter::kFailed:
      if (run->state != v1::FAILED) return false;
      break;
    case StateFilter::kStopped:
      if (run->state != v1::STOPPED) return false;
      break;
  }
  const QString needle = text_.trimmed();
  if (needle.isEmpty()) return true;
  for (const QString* field : {&run->name, &run->runId, &run->tags, &run->notes}) {
    if (field->contains(needle, Qt::CaseInsensitive)) return true;
  }
  return false;
}

bool RunFilterProxy::lessThan(const QModelIndex& left, const QModelIndex& right) const {
  // N/A counts as smaller than every value (first ascending, last descending).
  const int order = compareSortValues(left.data(sortRole()), right.data(sortRole()));
  if (order != 0) return order < 0;
  // Ties keep a stable, newest-first order by start time.
  const auto* model = qobject_cast<const RunTableModel*>(sourceModel());
  const RunRecord* l = model != nullptr ? model->record(left.row()) : nullptr;
  const RunRecord* r = model != nullptr ? model->record(right.row()) : nullptr;
  if (l != nullptr && r != nullptr) return l->createdTime > r->createdTime;
  return false;
}

}  // namespace ringside::gui
