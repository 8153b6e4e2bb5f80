#include "store_database.h"

#include <sqlite3.h>
#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSqlDriver>
#include <QSqlError>
#include <QVariant>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <limits>
#include <tuple>

#include "ringside/common/metric_names.h"
#include "ringside/common/run_spec.h"
#include "ringside/gui/queue_text.h"
#include "store_schema.h"

namespace ringside::gui {

namespace {

using store::sqlError;

// Rows per multi-row INSERT: one statement execution per chunk instead of per row (8 parameters
// per row; SQLite allows 32766 per statement).
constexpr int kChunkRows = 64;
constexpr int kSampleColumns = 8;

std::string sampleInsertSql(int rows) {
  std::string sql =
      "INSERT OR IGNORE INTO metrics "
      "(run_key, key_id, rank, step, seq, epoch, wall_time, value) VALUES ";
  for (int row = 0; row < rows; ++row) sql += row == 0 ? "(?,?,?,?,?,?,?,?)" : ",(?,?,?,?,?,?,?,?)";
  return sql;
}

// Binds one sample's row to parameters first .. first + 7 (1-based) of `statement`.
void bindSample(sqlite3_stmt* statement, int first, int64_t runKey, int64_t key,
                const v1::MetricSample& sample) {
  sqlite3_bind_int64(statement, first, runKey);
  sqlite3_bind_int64(statement, first + 1, key);
  sqlite3_bind_int64(statement, first + 2, sample.rank());
  sqlite3_bind_int64(statement, first + 3, sample.step());
  sqlite3_bind_int64(statement, first + 4, static_cast<int64_t>(sample.seq()));
  sqlite3_bind_int64(statement, first + 5, sample.epoch());
  sqlite3_bind_double(statement, first + 6, sample.wall_time());
  sqlite3_bind_double(statement, first + 7, sample.value());  // NaN is stored as NULL by SQLite
}

// A null QString binds as SQL NULL; text columns are NOT NULL, so bind "" instead.
QString text(const QString& value) { return value.isNull() ? QString("") : value; }
QString text(const std::string& value) {
  return value.empty() ? QString("") : QString::fromStdString(value);
}

// The spec's settings as one flat JSON object for the config diff: every key of the trainer's run
// spec with the value the run used (absent keys: their defaults), written by protobuf's JSON
// mapping (or "command" and "working_dir" for a custom command; "script", "args", "python",
// "working_dir" and "use_gpus" for a PyTorch script), plus "ranks_per_node" and "hosts", and the
// hyperparameters the run's script declared (RunInfo.params, "params.<dotted key>": each value
// parsed from its JSON text, so numbers compare as numbers). An old spec's config_json that is
// not a valid run spec shows as "config": why.
QString configJsonOf(const v1::RunSpec& spec,
                     const google::protobuf::Map<std::string, std::string>& params) {
  QJsonObject config;
  if (spec.has_trainer()) {
    const auto typed = trainerConfigOf(spec.trainer());
    if (typed.isOk()) {
      config = QJsonDocument::fromJson(QByteArray::fromStdString(
                                           trainerConfigToJson(withTrainerDefaults(typed.value()))))
                   .object();
    } else {
      config.insert("config", QString::fromStdString(typed.status().message()));
    }
  } else if (spec.has_command()) {
    QJsonArray argv;
    for (const auto& arg : spec.command().argv()) argv.append(QString::fromStdString(arg));
    config.insert("command", argv);
    config.insert("working_dir", QString::fromStdString(spec.command().working_dir()));
  } else if (spec.has_python()) {
    const v1::PythonScript& job = spec.python();
    config.insert("script", QString::fromStdString(job.script()));
    QJsonArray args;
    for (const auto& arg : job.args()) args.append(QString::fromStdString(arg));
    config.insert("args", args);
    config.insert("python", QString::fromStdString(job.python()));
    config.insert("working_dir", QString::fromStdString(job.working_dir()));
    config.insert("use_gpus", job.use_gpus());
  }
  for (const auto& [key, value] : params) {
    // A scalar's JSON text: wrapped in an array to parse it with Qt's document parser.
    const QJsonDocument parsed =
        QJsonDocument::fromJson("[" + QByteArray::fromStdString(value) + "]");
    const QJsonValue typed = parsed.isArray() && parsed.array().size() == 1
                                 ? parsed.array().at(0)
                                 : QJsonValue(QString::fromStdString(value));
    config.insert(QStringLiteral("params.") + QString::fromStdString(key), typed);
  }
  config.insert("ranks_per_node", static_cast<int>(spec.ranks_per_node()));
  QStringList hosts;
  for (const auto& host : spec.hosts()) {
    hosts << QString("%1:%2").arg(QString::fromStdString(host.host())).arg(host.ranks());
  }
  config.insert("hosts", hosts.join(","));
  return QString::fromUtf8(QJsonDocument(config).toJson(QJsonDocument::Compact));
}

QString tagsOf(const v1::RunSpec& spec) {
  QStringList tags;
  for (const auto& tag : spec.tags()) tags << QString::fromStdString(tag);
  // Never a null QString: QtSql binds that as NULL, and runs.tags is NOT NULL.
  return tags.isEmpty() ? QStringLiteral("") : tags.join(QStringLiteral(", "));
}

// Rolls back unless committed, then calls `onRollback` (which drops caches of rows that the
// rollback removed).
class Transaction {
 public:
  Transaction(QSqlDatabase& db, std::function<void()> onRollback)
      : db_(db), onRollback_(std::move(onRollback)) {}
  ~Transaction() {
    if (!active_) return;
    db_.rollback();
    onRollback_();
  }
  Status begin(const QString& what) {
    if (!db_.transaction()) return sqlError(db_.lastError(), "beginning " + what);
    active_ = true;
    return Status::ok();
  }
  Status commit(const QString& what) {
    if (!db_.commit()) return sqlError(db_.lastError(), "committing " + what);
    active_ = false;
    return Status::ok();
  }

 private:
  QSqlDatabase& db_;
  std::function<void()> onRollback_;
  bool active_ = false;
};

std::atomic<int> connectionCounter{0};

}  // namespace

// Summary values seen in the rows one batch newly stored.
struct MetricsStore::Database::Summary {
  bool any = false;
  std::optional<double> finalLoss;
  int64_t finalLossStep = 0;
  uint64_t finalLossSeq = 0;
  std::optional<double> bestAccuracy;
  double samplesPerSSum = 0.0;
  int64_t samplesPerSCount = 0;
};

MetricsStore::Database::Database(QString path)
    : path_(std::move(path)),
      connectionName_(QString("ringside-store-%1").arg(connectionCounter.fetch_add(1))) {}

void MetricsStore::Database::StatementFinalizer::operator()(sqlite3_stmt* statement) const {
  sqlite3_finalize(statement);
}

MetricsStore::Database::~Database() {
  statements_.clear();
  // Finalized before the connection closes (an unfinalized statement keeps it open).
  chunkInsert_.reset();
  singleInsert_.reset();
  handle_ = nullptr;
  if (db_.isValid()) {
    db_.close();
    db_ = QSqlDatabase();
    QSqlDatabase::removeDatabase(connectionName_);
  }
}

Status MetricsStore::Database::open() {
  if (open_) return Status::ok();
  const QFileInfo file(path_);
  if (!QDir().mkpath(file.absolutePath())) {
    return Status::ioError(QString("cannot create the folder %1 for the database; check its "
                                   "permissions or pass --data-dir")
                               .arg(file.absolutePath())
                               .toStdString());
  }
  if (!db_.isValid()) db_ = QSqlDatabase::addDatabase("QSQLITE", connectionName_);
  if (!db_.isValid()) {
    return Status::internal(
        "the Qt SQLite driver (QSQLITE) is not available; install the Qt 6 "
        "SQL SQLite plugin (libqt6sql6-sqlite)");
  }
  // SQLite opens a file it may not write read-only, without an error, and every write fails
  // later: refuse it here with the reason instead of showing empty dashboards.
  if (const QString readOnly = store::readOnlyProblem(path_); !readOnly.isEmpty()) {
    return Status::ioError(readOnly.toStdString());
  }
  db_.setDatabaseName(path_);
  if (!db_.open()) return sqlError(db_.lastError(), "opening " + path_);
  // Damage first: a damaged file is refused before anything reads or writes it.
  Status status = store::checkDatabase(db_, path_);
  if (status.isOk()) status = store::prepareSchema(db_, path_);
  if (!status.isOk()) {
    db_.close();
    return status;
  }
  const QVariant handle = db_.driver()->handle();
  if (!handle.isValid() || qstrcmp(handle.typeName(), "sqlite3*") != 0 ||
      *static_cast<sqlite3* const*>(handle.constData()) == nullptr) {
    db_.close();
    return Status::internal("the Qt SQLite driver (QSQLITE) gave no SQLite connection for " +
                            path_.toStdString() + "; reinstall libqt6sql6-sqlite");
  }
  handle_ = *static_cast<sqlite3* const*>(handle.constData());
  for (auto [statement, rows] :
       {std::pair{&chunkInsert_, kChunkRows}, std::pair{&singleInsert_, 1}}) {
    sqlite3_stmt* prepared = nullptr;
    const int code = sqlite3_prepare_v3(handle_, sampleInsertSql(rows).c_str(), -1,
                                        SQLITE_PREPARE_PERSISTENT, &prepared, nullptr);
    statement->reset(prepared);
    if (code != SQLITE_OK) {
      const Status failed = rawFail(code, "preparing the metrics insert");
      chunkInsert_.reset();
      singleInsert_.reset();
      handle_ = nullptr;
      db_.close();
      return failed;
    }
  }
  open_ = true;
  return Status::ok();
}

QSqlQuery& MetricsStore::Database::prepared(const char* sql) {
  auto& slot = statements_[sql];
  if (!slot) {
    slot = std::make_unique<QSqlQuery>(db_);
    slot->setForwardOnly(true);
    // A failed prepare shows on exec() as lastError(), where callers check it.
    slot->prepare(QString::fromUtf8(sql));
  }
  return *slot;
}

Status MetricsStore::Database::fail(const QSqlQuery& query, const QString& what) {
  return withDamageAdvice(sqlError(query.lastError(), what + " in " + path_));
}

Status MetricsStore::Database::rawFail(int code, const QString& what) {
  const QString message = what + " in " + path_ + ": " + QString::fromUtf8(sqlite3_errmsg(handle_));
  return withDamageAdvice(store::sqliteStatus(code, message.toStdString()));
}

Status MetricsStore::Database::withDamageAdvice(const Status& status) const {
  if (status.code() != Status::Code::kCorruption) return status;
  return Status::corruption(status.message() + ": the database is damaged. " +
                            store::damagedAdvice(path_).toStdString());
}

Status MetricsStore::Database::rowsDone(const QSqlQuery& query, const QString& what) {
  if (query.lastError().isValid()) return fail(query, what);
  return Status::ok();
}

// ---- Nodes

Status MetricsStore::Database::upsertNode(const NodeRecord& node) {
  QSqlQuery& query = prepared(
      "INSERT INTO nodes (node_id, name, address, public_key, added_time, network_interface, "
      "mpirun_options, client_key_file) VALUES (?,?,?,?,?,?,?,?) "
      "ON CONFLICT (node_id) DO UPDATE SET name = excluded.name, address = excluded.address, "
      "public_key = excluded.public_key, network_interface = excluded.network_interface, "
      "mpirun_options = excluded.mpirun_options, client_key_file = excluded.client_key_file");
  query.bindValue(0, text(node.nodeId));
  query.bindValue(1, text(node.name));
  query.bindValue(2, text(node.address));
  query.bindValue(3, text(node.publicKey));
  query.bindValue(4, node.addedTime);
  query.bindValue(5, text(node.networkInterface));
  query.bindValue(6, text(node.mpirunOptions));
  query.bindValue(7, text(node.clientKeyFile));
  if (!query.exec()) return fail(query, "saving node " + node.nodeId);
  return Status::ok();
}

Status MetricsStore::Database::removeNode(const QString& nodeId) {
  QSqlQuery& query = prepared("DELETE FROM nodes WHERE node_id = ?");
  query.bindValue(0, nodeId);
  if (!query.exec()) return fail(query, "removing node " + nodeId);
  return Status::ok();
}

Result<std::vector<NodeRecord>> MetricsStore::Database::nodes() {
  QSqlQuery& query = prepared(
      "SELECT node_id, name, address, public_key, added_time, network_interface, "
      "mpirun_options, client_key_file FROM nodes ORDER BY added_time, node_id");
  if (!query.exec()) return fail(query, "listing nodes");
  std::vector<NodeRecord> nodes;
  while (query.next()) {
    NodeRecord node;
    node.nodeId = query.value(0).toString();
    node.name = query.value(1).toString();
    node.address = query.value(2).toString();
    node.publicKey = query.value(3).toString();
    node.addedTime = query.value(4).toDouble();
    node.networkInterface = query.value(5).toString();
    node.mpirunOptions = query.value(6).toString();
    node.clientKeyFile = query.value(7).toString();
    nodes.push_back(std::move(node));
  }
  RINGSIDE_RETURN_IF_ERROR(rowsDone(query, "listing nodes"));
  query.finish();
  return nodes;
}

// ---- Runs

Result<std::optional<int64_t>> MetricsStore::Database::findRunKey(const QString& runId) {
  if (const auto it = runKeys_.constFind(runId); it != runKeys_.constEnd()) return {*it};
  QSqlQuery& query = prepared("SELECT run_key FROM runs WHERE run_id = ?");
  query.bindValue(0, runId);
  if (!query.exec()) return fail(query, "looking up run " + runId);
  std::optional<int64_t> key;
  if (query.next()) {
    key = query.value(0).toLongLong();
    runKeys_.insert(runId, *key);
  }
  RINGSIDE_RETURN_IF_ERROR(rowsDone(query, "looking up run " + runId));
  query.finish();
  return key;
}

Result<bool> MetricsStore::Database::isDeleted(const QString& runId) {
  QSqlQuery& query = prepared("SELECT 1 FROM deleted_runs WHERE run_id = ?");
  query.bindValue(0, runId);
  if (!query.exec()) return fail(query, "looking up deleted run " + runId);
  const bool deleted = query.next();
  RINGSIDE_RETURN_IF_ERROR(rowsDone(query, "looking up deleted run " + runId));
  query.finish();
  return deleted;
}

Result<std::optional<int64_t>> MetricsStore::Database::ensureRun(const QString& runId,
                                                                 const QString& nodeId) {
  auto found = findRunKey(runId);
  if (!found.isOk()) return found.status();
  if (found.value()) return found;
  // Only a run new to the table costs this look-up (stored ones are cached in runKeys_).
  auto deleted = isDeleted(runId);
  if (!deleted.isOk()) return deleted.status();
  if (*deleted) return std::optional<int64_t>();
  QSqlQuery& insert = prepared("INSERT INTO runs (run_id, node_id) VALUES (?, ?)");
  insert.bindValue(0, runId);
  insert.bindValue(1, text(nodeId));
  if (!insert.exec()) return fail(insert, "adding run " + runId);
  const int64_t key = insert.lastInsertId().toLongLong();
  runKeys_.insert(runId, key);
  return std::optional<int64_t>(key);
}

Status MetricsStore::Database::applyRunInfo(int64_t runKey, const v1::RunInfo& run,
                                            uint64_t stateSeq) {
  const auto seqGuard = static_cast<qlonglong>(stateSeq);
  if (run.has_spec()) {
    // Tags come from the spec once; afterwards they are the user's.
    QSqlQuery& tags =
        prepared("UPDATE runs SET tags = ? WHERE run_key = ? AND spec IS NULL AND tags = ''");
    tags.bindValue(0, tagsOf(run.spec()));
    tags.bindValue(1, qlonglong(runKey));
    if (!tags.exec())
      return fail(tags, "saving the tags of run " + QString::fromStdString(run.run_id()));

    QSqlQuery& spec = prepared(
        "UPDATE runs SET name = ?, spec = ?, config_json = ? WHERE run_key = ? AND state_seq <= ?");
    spec.bindValue(0, text(run.spec().name()));
    spec.bindValue(1, QByteArray::fromStdString(run.spec().SerializeAsString()));
    spec.bindValue(2, configJsonOf(run.spec(), run.params()));
    spec.bindValue(3, qlonglong(runKey));
    spec.bindValue(4, seqGuard);
    if (!spec.exec())
      return fail(spec, "saving the spec of run " + QString::fromStdString(run.run_id()));
  }
  if (run.placement_size() > 0) {
    v1::RunInfo placed;
    *placed.mutable_placement() = run.placement();
    QSqlQuery& placement = prepared("UPDATE runs SET placement = ? WHERE run_key = ?");
    placement.bindValue(0, QByteArray::fromStdString(placed.SerializeAsString()));
    placement.bindValue(1, qlonglong(runKey));
    if (!placement.exec()) {
      return fail(placement, "saving the placement of run " + QString::fromStdString(run.run_id()));
    }
  }
  QSqlQuery& query = prepared(
      "UPDATE runs SET state = ?, reason = ?, exit_code = ?, world_size = ?, created_time = ?, "
      "start_time = ?, end_time = ?, state_seq = MAX(state_seq, ?) "
      "WHERE run_key = ? AND state_seq <= ?");
  query.bindValue(0, static_cast<int>(run.state()));
  // A queued run's reason is why it waits and its place (the agent updates both as it moves).
  const QString queued = queuedText(run);
  query.bindValue(1, queued.isEmpty() ? text(run.reason()) : queued);
  query.bindValue(2, run.exit_code());
  query.bindValue(3, run.world_size());
  query.bindValue(4, run.created_time());
  query.bindValue(5, run.start_time());
  query.bindValue(6, run.end_time());
  query.bindValue(7, seqGuard);
  query.bindValue(8, qlonglong(runKey));
  query.bindValue(9, seqGuard);
  if (!query.exec()) return fail(query, "saving run " + QString::fromStdString(run.run_id()));
  return Status::ok();
}

Result<bool> MetricsStore::Database::upsertRun(const QString& nodeId, const v1::RunInfo& run) {
  const QString runId = QString::fromStdString(run.run_id());
  if (runId.isEmpty()) return Status::invalidArgument("upsertRun: the RunInfo has no run_id");
  Transaction transaction(db_, [this] { dropCaches(); });
  RINGSIDE_RETURN_IF_ERROR(transaction.begin("saving run " + runId));
  auto key = ensureRun(runId, nodeId);
  if (!key.isOk()) return key.status();
  if (!key->has_value()) {  // deleted in this GUI: stays deleted
    RINGSIDE_RETURN_IF_ERROR(transaction.commit("saving run " + runId));
    return false;
  }
  if (!nodeId.isEmpty()) {
    QSqlQuery& node = prepared("UPDATE runs SET node_id = ? WHERE run_key = ?");
    node.bindValue(0, nodeId);
    node.bindValue(1, qlonglong(**key));
    if (!node.exec()) return fail(node, "saving the node of run " + runId);
  }
  RINGSIDE_RETURN_IF_ERROR(applyRunInfo(**key, run, 0));
  RINGSIDE_RETURN_IF_ERROR(transaction.commit("saving run " + runId));
  return true;
}

Result<std::vector<std::optional<uint64_t>>> MetricsStore::Database::upsertRuns(
    const QString& nodeId, const std::vector<v1::RunInfo>& runs) {
  const QString what = QString("saving %1 runs of node %2").arg(runs.size()).arg(nodeId);
  Transaction transaction(db_, [this] { dropCaches(); });
  RINGSIDE_RETURN_IF_ERROR(transaction.begin(what));
  std::vector<std::optional<uint64_t>> lastSeqs;
  lastSeqs.reserve(runs.size());
  for (const v1::RunInfo& run : runs) {
    const QString runId = QString::fromStdString(run.run_id());
    if (runId.isEmpty()) return Status::invalidArgument("upsertRuns: a RunInfo has no run_id");
    auto key = ensureRun(runId, nodeId);
    if (!key.isOk()) return key.status();
    if (!key->has_value()) {  // deleted in this GUI: stays deleted
      lastSeqs.emplace_back();
      continue;
    }
    QSqlQuery& node = prepared("UPDATE runs SET node_id = ? WHERE run_key = ? RETURNING last_seq");
    node.bindValue(0, text(nodeId));
    node.bindValue(1, qlonglong(**key));
    if (!node.exec() || !node.next()) return fail(node, "saving the node of run " + runId);
    lastSeqs.emplace_back(node.value(0).toULongLong());
    node.finish();
    RINGSIDE_RETURN_IF_ERROR(applyRunInfo(**key, run, 0));
  }
  RINGSIDE_RETURN_IF_ERROR(transaction.commit(what));
  return lastSeqs;
}

// ---- Ingest

Result<std::optional<int64_t>> MetricsStore::Database::findKeyId(const QString& name) {
  QSqlQuery& query = prepared("SELECT key_id FROM metric_keys WHERE name = ?");
  query.bindValue(0, name);
  if (!query.exec()) return fail(query, "looking up metric name " + name);
  std::optional<int64_t> key;
  if (query.next()) key = query.value(0).toLongLong();
  RINGSIDE_RETURN_IF_ERROR(rowsDone(query, "looking up metric name " + name));
  query.finish();
  return key;
}

Result<int64_t> MetricsStore::Database::keyId(const std::string& name) {
  if (const auto it = keyIds_.find(name); it != keyIds_.end()) return it->second;
  const QString qname = QString::fromStdString(name);
  QSqlQuery& insert = prepared("INSERT OR IGNORE INTO metric_keys (name) VALUES (?)");
  insert.bindValue(0, qname);
  if (!insert.exec()) return fail(insert, "adding metric name " + qname);
  const auto key = findKeyId(qname);
  if (!key.isOk()) return key.status();
  if (!key.value()) return Status::internal("metric name " + name + " vanished from metric_keys");
  keyIds_.emplace(name, **key);
  return **key;
}

Status MetricsStore::Database::insertSamples(int64_t runKey,
                                             const std::vector<v1::MetricSample>& samples,
                                             Summary& summary, int64_t& inserted) {
  // Runs `statement` (bound), counting the rows it stored; a failure resets it and says why.
  const auto run = [this, &inserted](sqlite3_stmt* statement) -> Status {
    const int code = sqlite3_step(statement);
    sqlite3_reset(statement);
    if (code != SQLITE_DONE) return rawFail(code, "storing metric samples");
    inserted += sqlite3_changes(handle_);
    return Status::ok();
  };
  struct Row {
    int64_t key;
    const v1::MetricSample* sample;
  };
  std::vector<Row> rows;
  rows.reserve(samples.size());
  int64_t maxStep = 0;
  int64_t maxEpoch = 0;
  const std::string* lastName = nullptr;  // samples come in runs of a few names: skip the lookup
  int64_t lastKey = 0;
  for (const auto& sample : samples) {
    maxStep = std::max<int64_t>(maxStep, sample.step());
    maxEpoch = std::max<int64_t>(maxEpoch, sample.epoch());
    const std::string& name = sample.name();
    if (lastName == nullptr || *lastName != name) {
      auto key = keyId(name);
      if (!key.isOk()) return key.status();
      lastName = &name;
      lastKey = *key;
    }
    const bool summaryRow =
        sample.rank() == -1 && (name == metric::kTrainLoss || name == metric::kTestAccuracy ||
                                name == metric::kTrainSamplesPerS);
    if (!summaryRow) {
      rows.push_back(Row{lastKey, &sample});
      continue;
    }
    // Global summary metrics go one by one so that only newly stored rows count.
    bindSample(singleInsert_.get(), 1, runKey, lastKey, sample);
    const int64_t before = inserted;
    RINGSIDE_RETURN_IF_ERROR(run(singleInsert_.get()));
    if (inserted == before || std::isnan(sample.value())) continue;
    summary.any = true;
    const double value = sample.value();
    if (name == metric::kTrainLoss) {
      if (!summary.finalLoss || sample.step() > summary.finalLossStep ||
          (sample.step() == summary.finalLossStep && sample.seq() > summary.finalLossSeq)) {
        summary.finalLoss = value;
        summary.finalLossStep = sample.step();
        summary.finalLossSeq = sample.seq();
      }
    } else if (name == metric::kTestAccuracy) {
      summary.bestAccuracy = std::max(summary.bestAccuracy.value_or(value), value);
    } else {
      summary.samplesPerSSum += value;
      ++summary.samplesPerSCount;
    }
  }
  if (auto cached = lastSteps_.find(runKey); cached != lastSteps_.end()) {
    cached->second.first = std::max(cached->second.first, maxStep);
    cached->second.second = std::max(cached->second.second, maxEpoch);
  }
  // In primary-key order: one series' rows after each other, so that consecutive inserts land
  // on the same B-tree leaf instead of hopping between the series of the batch. Stable: of two
  // rows with the same key the first one sent is stored, as without the sort.
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    const v1::MetricSample& x = *a.sample;
    const v1::MetricSample& y = *b.sample;
    return std::tuple(a.key, x.rank(), x.step(), x.seq()) <
           std::tuple(b.key, y.rank(), y.step(), y.seq());
  });
  size_t next = 0;
  for (; next + kChunkRows <= rows.size(); next += kChunkRows) {
    for (int row = 0; row < kChunkRows; ++row) {
      bindSample(chunkInsert_.get(), 1 + row * kSampleColumns, runKey, rows[next + row].key,
                 *rows[next + row].sample);
    }
    RINGSIDE_RETURN_IF_ERROR(run(chunkInsert_.get()));
  }
  for (; next < rows.size(); ++next) {
    bindSample(singleInsert_.get(), 1, runKey, rows[next].key, *rows[next].sample);
    RINGSIDE_RETURN_IF_ERROR(run(singleInsert_.get()));
  }
  return Status::ok();
}

Status MetricsStore::Database::insertLogLines(int64_t runKey, const std::vector<v1::LogLine>& lines,
                                              int64_t& inserted) {
  QSqlQuery& query = prepared(
      "INSERT OR IGNORE INTO logs (run_key, seq, wall_time, stream, text) VALUES (?,?,?,?,?)");
  for (const auto& line : lines) {
    query.bindValue(0, qlonglong(runKey));
    query.bindValue(1, qlonglong(line.seq()));
    query.bindValue(2, line.wall_time());
    query.bindValue(3, text(line.stream()));
    query.bindValue(4, text(line.text()));
    if (!query.exec()) return fail(query, "storing log lines");
    inserted += query.numRowsAffected();
  }
  return Status::ok();
}

Result<IngestResult> MetricsStore::Database::ingest(const IngestBatch& batch) {
  if (batch.runId.isEmpty()) return Status::invalidArgument("ingest: the batch has no run id");
  const QString what = "ingesting into run " + batch.runId;
  Transaction transaction(db_, [this] { dropCaches(); });
  RINGSIDE_RETURN_IF_ERROR(transaction.begin(what));
  auto foundKey = ensureRun(batch.runId, batch.nodeId);
  if (!foundKey.isOk()) return foundKey.status();
  if (!foundKey->has_value()) {  // deleted in this GUI: nothing stored
    RINGSIDE_RETURN_IF_ERROR(transaction.commit(what));
    return IngestResult{.deleted = true};
  }
  const int64_t runKey = **foundKey;

  uint64_t maxSeq = 0;
  for (const auto& state : batch.states) {
    RINGSIDE_RETURN_IF_ERROR(applyRunInfo(runKey, state.run(), state.seq()));
    maxSeq = std::max<uint64_t>(maxSeq, state.seq());
  }
  IngestResult result;
  Summary summary;
  RINGSIDE_RETURN_IF_ERROR(insertSamples(runKey, batch.samples, summary, result.newSamples));
  RINGSIDE_RETURN_IF_ERROR(insertLogLines(runKey, batch.logLines, result.newLogLines));
  for (const auto& sample : batch.samples) maxSeq = std::max<uint64_t>(maxSeq, sample.seq());
  for (const auto& line : batch.logLines) maxSeq = std::max<uint64_t>(maxSeq, line.seq());

  if (summary.any) {
    QSqlQuery& read = prepared(
        "SELECT final_loss, final_loss_step, final_loss_seq, best_accuracy FROM runs "
        "WHERE run_key = ?");
    read.bindValue(0, qlonglong(runKey));
    if (!read.exec() || !read.next()) return fail(read, what);
    if (!read.value(0).isNull() && summary.finalLoss) {
      const int64_t storedStep = read.value(1).toLongLong();
      const uint64_t storedSeq = read.value(2).toULongLong();
      if (storedStep > summary.finalLossStep ||
          (storedStep == summary.finalLossStep && storedSeq > summary.finalLossSeq)) {
        summary.finalLoss.reset();  // the stored value is later
      }
    }
    if (!read.value(3).isNull() && summary.bestAccuracy) {
      summary.bestAccuracy = std::max(*summary.bestAccuracy, read.value(3).toDouble());
    }
    read.finish();
    QSqlQuery& write = prepared(
        "UPDATE runs SET "
        "final_loss = CASE WHEN ? THEN ? ELSE final_loss END, "
        "final_loss_step = CASE WHEN ? THEN ? ELSE final_loss_step END, "
        "final_loss_seq = CASE WHEN ? THEN ? ELSE final_loss_seq END, "
        "best_accuracy = COALESCE(?, best_accuracy), "
        "samples_per_s_sum = samples_per_s_sum + ?, "
        "samples_per_s_count = samples_per_s_count + ? WHERE run_key = ?");
    const bool loss = summary.finalLoss.has_value();
    write.bindValue(0, loss);
    write.bindValue(1, summary.finalLoss.value_or(0.0));
    write.bindValue(2, loss);
    write.bindValue(3, qlonglong(summary.finalLossStep));
    write.bindValue(4, loss);
    write.bindValue(5, qlonglong(summary.finalLossSeq));
    write.bindValue(6, summary.bestAccuracy ? QVariant(*summary.bestAccuracy) : QVariant());
    write.bindValue(7, summary.samplesPerSSum);
    write.bindValue(8, qlonglong(summary.samplesPerSCount));
    write.bindValue(9, qlonglong(runKey));
    if (!write.exec()) return fail(write, what);
  }

  QSqlQuery& update = prepared(
      "UPDATE runs SET last_seq = MAX(last_seq, ?), sample_count = sample_count + ? "
      "WHERE run_key = ? RETURNING last_seq");
  update.bindValue(0, qlonglong(maxSeq));
  update.bindValue(1, qlonglong(result.newSamples));
  update.bindValue(2, qlonglong(runKey));
  if (!update.exec() || !update.next()) return fail(update, what);
  result.lastSeq = update.value(0).toULongLong();
  update.finish();
  RINGSIDE_RETURN_IF_ERROR(transaction.commit(what));
  return result;
}

Status MetricsStore::Database::setText(const QString& runId, const char* column,
                                       const QString& text) {
  QSqlQuery query(db_);
  query.prepare(QString("UPDATE runs SET %1 = ? WHERE run_id = ?").arg(column));
  query.bindValue(0, gui::text(text));
  query.bindValue(1, runId);
  if (!query.exec()) return fail(query, QString("saving the %1 of run %2").arg(column, runId));
  if (query.numRowsAffected() == 0) {
    return Status::notFound("no run " + runId.toStdString() + " in " + path_.toStdString());
  }
  return Status::ok();
}

Status MetricsStore::Database::deleteRun(const QString& runId, int maxDeletedRuns) {
  auto key = findRunKey(runId);
  if (!key.isOk()) return key.status();
  if (!key.value()) return Status::notFound("no run " + runId.toStdString() + " to delete");
  const QString what = "deleting run " + runId;
  QSqlQuery& state = prepared("SELECT state, node_id FROM runs WHERE run_key = ?");
  state.bindValue(0, qlonglong(**key));
  if (!state.exec() || !state.next()) return fail(state, what);
  const auto runState = static_cast<v1::RunState>(state.value(0).toInt());
  const QString nodeId = state.value(1).toString();
  state.finish();
  if (runState == v1::QUEUED || runState == v1::STARTING || runState == v1::RUNNING) {
    return Status::failedPrecondition("run " + runId.toStdString() + " is " +
                                      v1::RunState_Name(runState) +
                                      ": stop it and wait until it has ended before deleting it");
  }
  Transaction transaction(db_, [this] { dropCaches(); });
  RINGSIDE_RETURN_IF_ERROR(transaction.begin(what));
  for (const char* sql :
       {"DELETE FROM metrics WHERE run_key = ?", "DELETE FROM logs WHERE run_key = ?",
        "DELETE FROM run_node_telemetry WHERE run_key = ?", "DELETE FROM runs WHERE run_key = ?"}) {
    QSqlQuery& query = prepared(sql);
    query.bindValue(0, qlonglong(**key));
    if (!query.exec()) return fail(query, what);
  }
  // Remembered, so the agent's next run list or catch-up does not bring the run back.
  QSqlQuery& remember = prepared(
      "INSERT OR REPLACE INTO deleted_runs (run_id, node_id, deleted_time) VALUES (?, ?, ?)");
  remember.bindValue(0, runId);
  remember.bindValue(1, text(nodeId));
  remember.bindValue(2, static_cast<double>(QDateTime::currentMSecsSinceEpoch()) / 1000.0);
  if (!remember.exec()) return fail(remember, what);
  // Bounded: the oldest are forgotten (an agent that still journals one lists it again).
  QSqlQuery& prune = prepared(
      "DELETE FROM deleted_runs WHERE run_id IN (SELECT run_id FROM deleted_runs "
      "ORDER BY deleted_time DESC, run_id LIMIT -1 OFFSET ?)");
  prune.bindValue(0, std::max(maxDeletedRuns, 1));
  if (!prune.exec()) return fail(prune, what);
  RINGSIDE_RETURN_IF_ERROR(transaction.commit(what));
  runKeys_.remove(runId);
  return Status::ok();
}

}  // namespace ringside::gui
