#include "store_schema.h"

#include <QFile>
#include <QFileInfo>
#include <QSqlQuery>
#include <QStringList>
#include <QVariant>

#include <sqlite3.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace ringside::gui::store {

namespace {

Status exec(QSqlDatabase& db, const QString& sql) {
  QSqlQuery query(db);
  if (!query.exec(sql)) return sqlError(query.lastError(), sql.simplified().left(80));
  return Status::ok();
}

// Version 0 -> 1: the initial schema.
Status createVersion1(QSqlDatabase& db) {
  const char* statements[] = {
      R"(CREATE TABLE nodes (
           node_id TEXT PRIMARY KEY,
           name TEXT NOT NULL DEFAULT '',
           address TEXT NOT NULL DEFAULT '',
           public_key TEXT NOT NULL DEFAULT '',
           added_time REAL NOT NULL DEFAULT 0))",
      R"(CREATE TABLE runs (
           run_key INTEGER PRIMARY KEY,
           run_id TEXT NOT NULL UNIQUE,
           node_id TEXT NOT NULL DEFAULT '',
           name TEXT NOT NULL DEFAULT '',
           state INTEGER NOT NULL DEFAULT 0,
           state_seq INTEGER NOT NULL DEFAULT 0,
           reason TEXT NOT NULL DEFAULT '',
           exit_code INTEGER NOT NULL DEFAULT 0,
           spec BLOB,
           config_json TEXT NOT NULL DEFAULT '{}',
           world_size INTEGER NOT NULL DEFAULT 0,
           created_time REAL NOT NULL DEFAULT 0,
           start_time REAL NOT NULL DEFAULT 0,
           end_time REAL NOT NULL DEFAULT 0,
           last_seq INTEGER NOT NULL DEFAULT 0,
           sample_count INTEGER NOT NULL DEFAULT 0,
           tags TEXT NOT NULL DEFAULT '',
           notes TEXT NOT NULL DEFAULT '',
           final_loss REAL,
           final_loss_step INTEGER,
           final_loss_seq INTEGER,
           best_accuracy REAL,
           samples_per_s_sum REAL NOT NULL DEFAULT 0,
           samples_per_s_count INTEGER NOT NULL DEFAULT 0))",
      "CREATE INDEX runs_created ON runs (created_time)",
      R"(CREATE TABLE metric_keys (
           key_id INTEGER PRIMARY KEY,
           name TEXT NOT NULL UNIQUE))",
      // The primary key is the series order, so "one key of one run (and rank) ordered by step"
      // is one range scan of the table itself. It also makes ingestion idempotent: a re-sent
      // sample has the same seq, and with it the same key, rank and step, so INSERT OR IGNORE
      // skips it. (A separate unique (run_key, seq) index cost ~25 % of the ingest rate.)
      R"(CREATE TABLE metrics (
           run_key INTEGER NOT NULL,
           key_id INTEGER NOT NULL,
           rank INTEGER NOT NULL,
           step INTEGER NOT NULL,
           seq INTEGER NOT NULL,
           epoch INTEGER NOT NULL,
           wall_time REAL NOT NULL,
           value REAL,
           PRIMARY KEY (run_key, key_id, rank, step, seq)) WITHOUT ROWID)",
      R"(CREATE TABLE logs (
           run_key INTEGER NOT NULL,
           seq INTEGER NOT NULL,
           wall_time REAL NOT NULL,
           stream TEXT NOT NULL,
           text TEXT NOT NULL,
           PRIMARY KEY (run_key, seq)) WITHOUT ROWID)",
  };
  for (const char* sql : statements) RINGSIDE_RETURN_IF_ERROR(exec(db, sql));
  return Status::ok();
}

// Version 1 -> 2: per-node launch settings (network interface, mpirun options) and the client
// key file of a node reached with another keypair than the GUI's (--local-cluster).
Status addNodeSettings(QSqlDatabase& db) {
  for (const char* column : {"network_interface", "mpirun_options", "client_key_file"}) {
    RINGSIDE_RETURN_IF_ERROR(
        exec(db, QString("ALTER TABLE nodes ADD COLUMN %1 TEXT NOT NULL DEFAULT ''").arg(column)));
  }
  return Status::ok();
}

// Version 2 -> 3: where a run's ranks and GPUs are (RunInfo.placement), for the dashboard's GPU
// charts of every node of the run: a serialized ringside.v1.RunInfo holding only its placement;
// NULL until an agent that sends it reported the run.
Status addRunPlacement(QSqlDatabase& db) {
  return exec(db, "ALTER TABLE runs ADD COLUMN placement BLOB");
}

// Version 3 -> 4: node telemetry fetched from the agents' telemetry journals (docs/design.md
// decision 12): how far each run's telemetry from each node is held, and an index over the
// telemetry samples only (seq < 0: store_telemetry.cpp), so a reading stored live and fetched
// again is found in one look-up and stored once.
Status addRunNodeTelemetry(QSqlDatabase& db) {
  RINGSIDE_RETURN_IF_ERROR(exec(db, R"(CREATE TABLE run_node_telemetry (
           run_key INTEGER NOT NULL,
           node_id TEXT NOT NULL,
           fetched_through REAL NOT NULL,
           PRIMARY KEY (run_key, node_id)) WITHOUT ROWID)"));
  return exec(db,
              "CREATE INDEX metrics_telemetry ON metrics (run_key, key_id, rank, seq) "
              "WHERE seq < 0");
}

// Version 4 -> 5: the runs deleted in this GUI (History's Delete), so that an agent that still
// journals one does not bring it back with its next run list or catch-up: ensureRun refuses an
// id listed here. Bounded by MetricsStore::kMaxDeletedRuns, oldest first (deleted_time).
Status addDeletedRuns(QSqlDatabase& db) {
  RINGSIDE_RETURN_IF_ERROR(exec(db, R"(CREATE TABLE deleted_runs (
           run_id TEXT PRIMARY KEY,
           node_id TEXT NOT NULL,
           deleted_time REAL NOT NULL) WITHOUT ROWID)"));
  return exec(db, "CREATE INDEX deleted_runs_time ON deleted_runs (deleted_time)");
}

// migrations[v] takes the schema from version v to v + 1. Only ever append.
const std::vector<std::function<Status(QSqlDatabase&)>>& migrations() {
  static const std::vector<std::function<Status(QSqlDatabase&)>> kMigrations = {
      createVersion1, addNodeSettings, addRunPlacement, addRunNodeTelemetry, addDeletedRuns};
  return kMigrations;
}

}  // namespace

Status sqliteStatus(int code, std::string message) {
  switch (code & 0xff) {  // the primary result code
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return Status::corruption(std::move(message));
    case SQLITE_READONLY:
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_CANTOPEN:
      return Status::ioError(std::move(message));
    default:
      return Status::internal(std::move(message));
  }
}

Status sqlError(const QSqlError& error, const QString& what) {
  // The result code, not error.type(): QSQLITE reports every failed step as a ConnectionError.
  return sqliteStatus(error.nativeErrorCode().toInt(), (what + ": " + error.text()).toStdString());
}

QString readOnlyProblem(const QString& path) {
  const QString advice = QStringLiteral(
      "Ringside writes every run it sees to this file: make the file and its folder writable "
      "(check their owner and mode, chattr -i, a read-only mount), or pass --data-dir with "
      "another folder.");
  // access(2) rather than the mode bits: it also refuses root on an immutable file or a
  // read-only mount.
  auto notWritable = [](const QString& file) -> QString {
    if (::access(QFile::encodeName(file).constData(), W_OK) == 0) return {};
    return QString::fromLocal8Bit(std::strerror(errno));
  };
  const QFileInfo info(path);
  bool creates = !info.exists();
  if (!creates) {
    if (const QString why = notWritable(path); !why.isEmpty()) {
      return QString("%1 is read-only: %2. %3").arg(path, why, advice);
    }
  }
  for (const char* suffix : {"-wal", "-shm"}) {
    const QString companion = path + QLatin1String(suffix);
    if (!QFileInfo::exists(companion)) {
      creates = true;
    } else if (const QString why = notWritable(companion); !why.isEmpty()) {
      return QString("%1 is read-only: %2 is not writable (%3). %4")
          .arg(path, companion, why, advice);
    }
  }
  if (creates) {
    if (const QString why = notWritable(info.absolutePath()); !why.isEmpty()) {
      return QString(
                 "%1 is read-only: its folder %2 is not writable (%3), and SQLite creates the "
                 "database's -wal and -shm files there. %4")
          .arg(path, info.absolutePath(), why, advice);
    }
  }
  return {};
}

QString damagedAdvice(const QString& path) {
  return QString(
             "Ringside does not use a damaged run database. Quit Ringside and move %1 away "
             "together with %1-wal and %1-shm: the next start creates an empty database, and "
             "each agent sends again the runs it still journals (tags, notes and the node list "
             "are only in the damaged file). To save what is readable: sqlite3 <the moved file> "
             ".recover (docs/gui-database.md, \"Damaged databases\").")
      .arg(path);
}

Status checkDatabase(QSqlDatabase& db, const QString& path) {
  const QString advice = damagedAdvice(path);
  // quick_check reads the pages in b-tree order, not file order: on a cold page cache that is
  // one random read per page. Read once in order first and the same pages come from the cache
  // (130 MB, cache dropped: 2.4 s for the check alone, 0.1-0.4 s + 1.0-1.2 s with this).
  // Advisory: a failed read only costs time.
  if (QFile file(path); file.open(QIODevice::ReadOnly)) {
    std::vector<char> buffer(size_t{1} << 20);
    while (file.read(buffer.data(), static_cast<qint64>(buffer.size())) > 0) {
    }
  }
  QStringList problems;
  QSqlQuery query(db);
  query.setForwardOnly(true);
  if (query.exec(QString("PRAGMA quick_check(%1)").arg(kMaxQuickCheckProblems))) {
    while (query.next()) problems << query.value(0).toString();
  }
  const QSqlError error = query.lastError();
  query.finish();
  if (error.isValid()) {
    const int code = error.nativeErrorCode().toInt() & 0xff;
    if (code == 26) {  // SQLITE_NOTADB
      return Status::corruption(QString("%1 is not an SQLite database (%2): its header is "
                                        "damaged, or another file took its name. %3")
                                    .arg(path, error.text(), advice)
                                    .toStdString());
    }
    const Status status = sqlError(error, "checking " + path);
    if (status.code() != Status::Code::kCorruption) {
      const QString readOnly = readOnlyProblem(path);
      if (status.code() == Status::Code::kIOError && !readOnly.isEmpty()) {
        return Status::ioError(readOnly.toStdString());
      }
      return status;
    }
    problems << error.text();  // the check itself stopped on the damage
  } else if (problems == QStringList{QStringLiteral("ok")}) {
    problems.clear();
  }
  if (!problems.isEmpty()) {
    const QString count = problems.size() >= kMaxQuickCheckProblems
                              ? QString("at least %1 problems").arg(problems.size())
                          : problems.size() == 1 ? QString("1 problem")
                                                 : QString("%1 problems").arg(problems.size());
    return Status::corruption(QString("%1 is damaged: SQLite's quick_check found %2, the first: "
                                      "\"%3\". %4")
                                  .arg(path, count, problems.front(), advice)
                                  .toStdString());
  }

  // SQLite opens a file it may not write read-only without saying so, and reads then work:
  // only a write tells. Set user_version to its own value and roll back: nothing is written.
  int version = 0;
  if (!query.exec("PRAGMA user_version") || !query.next()) {
    return sqlError(query.lastError(), "reading the schema version of " + path);
  }
  version = query.value(0).toInt();
  query.finish();
  if (!query.exec("BEGIN IMMEDIATE")) {
    return sqlError(query.lastError(), "checking that " + path + " is writable");
  }
  const bool wrote = query.exec(QString("PRAGMA user_version=%1").arg(version));
  const QSqlError writeError = query.lastError();
  QSqlQuery rollback(db);
  // A failed ROLLBACK of a transaction that wrote nothing leaves nothing to undo.
  (void)rollback.exec("ROLLBACK");
  if (!wrote) {
    const int code = writeError.nativeErrorCode().toInt() & 0xff;
    if (code == 8 || code == 14) {  // SQLITE_READONLY, SQLITE_CANTOPEN
      QString readOnly = readOnlyProblem(path);
      if (readOnly.isEmpty()) {
        readOnly = QString(
                       "%1 is read-only: SQLite cannot write to it (%2). Make the file and "
                       "its folder writable, or pass --data-dir with another folder.")
                       .arg(path, writeError.text());
      }
      return Status::ioError(readOnly.toStdString());
    }
    return sqlError(writeError, "checking that " + path + " is writable");
  }
  return Status::ok();
}

Status prepareSchema(QSqlDatabase& db, const QString& path) {
  static_assert(kSchemaVersion >= 1);
  QSqlQuery query(db);
  if (!query.exec("PRAGMA user_version") || !query.next()) {
    return sqlError(query.lastError(), "reading the schema version of " + path);
  }
  const int version = query.value(0).toInt();
  query.finish();
  if (version > kSchemaVersion) {
    return Status::failedPrecondition(
        QString("%1 has schema version %2, newer than the %3 this ringside knows: a newer "
                "ringside wrote it. Upgrade ringside, or pass --data-dir with another folder.")
            .arg(path)
            .arg(version)
            .arg(kSchemaVersion)
            .toStdString());
  }

  if (!query.exec("PRAGMA journal_mode=WAL") || !query.next() ||
      query.value(0).toString().compare("wal", Qt::CaseInsensitive) != 0) {
    return Status::ioError(
        QString("%1: cannot switch to WAL journal mode (%2); is the folder writable and local?")
            .arg(path, query.lastError().text())
            .toStdString());
  }
  query.finish();
  // wal_autocheckpoint: a checkpoint copies the newest version of every page in the WAL into the
  // database file (and syncs it). A live run rewrites the same pages, the last leaf of each series
  // (run, key, rank), at every commit: at SQLite's default of 1,000 pages a checkpoint followed
  // nearly every commit at 128 ranks and copied each page again; at 10,000 (~40 MiB of WAL at
  // most) one checkpoint copies a page once for ~10 commits (bench/README.md, "scale").
  for (const char* pragma :
       {"PRAGMA synchronous=NORMAL", "PRAGMA busy_timeout=5000", "PRAGMA cache_size=-65536",
        "PRAGMA temp_store=MEMORY", "PRAGMA wal_autocheckpoint=10000"}) {
    RINGSIDE_RETURN_IF_ERROR(exec(db, pragma));
  }

  for (int from = version; from < kSchemaVersion; ++from) {
    const QString step =
        QString("migrating %1 from schema version %2 to %3").arg(path).arg(from).arg(from + 1);
    if (!db.transaction()) return sqlError(db.lastError(), step);
    Status status = migrations()[from](db);
    if (status.isOk()) status = exec(db, QString("PRAGMA user_version=%1").arg(from + 1));
    if (!status.isOk()) {
      db.rollback();
      return status.withContext(step.toStdString());
    }
    if (!db.commit()) return sqlError(db.lastError(), step);
  }
  return Status::ok();
}

}  // namespace ringside::gui::store
