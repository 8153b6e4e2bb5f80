#include "journal_schema.h"

#include <array>

namespace ringside::agent {
namespace {

// Version 1: runs, metric keys, the three entry kinds and the rank batch dedupe table.
// Entry tables are WITHOUT ROWID with the primary key (run_key, seq): appends for a run land at
// the end of its key range, and fetch-since is a range scan.
constexpr const char* kSchemaV1 = R"sql(
CREATE TABLE runs (
  run_key      INTEGER PRIMARY KEY,
  run_id       TEXT NOT NULL UNIQUE,
  info         BLOB NOT NULL,
  state        INTEGER NOT NULL,
  created_time REAL NOT NULL,
  end_time     REAL NOT NULL DEFAULT 0,
  last_seq     INTEGER NOT NULL DEFAULT 0,
  pid          INTEGER,
  pgid         INTEGER,
  run_dir      TEXT NOT NULL DEFAULT ''
);
CREATE INDEX runs_by_state ON runs(state);
CREATE INDEX runs_by_end_time ON runs(end_time);

CREATE TABLE metric_keys (
  key_id INTEGER PRIMARY KEY,
  name   TEXT NOT NULL UNIQUE
);

CREATE TABLE metric_samples (
  run_key   INTEGER NOT NULL REFERENCES runs(run_key) ON DELETE CASCADE,
  seq       INTEGER NOT NULL,
  step      INTEGER NOT NULL,
  epoch     INTEGER NOT NULL,
  wall_time REAL NOT NULL,
  rank      INTEGER NOT NULL,
  key_id    INTEGER NOT NULL REFERENCES metric_keys(key_id),
  value     REAL,
  PRIMARY KEY (run_key, seq)
) WITHOUT ROWID;

CREATE TABLE log_lines (
  run_key   INTEGER NOT NULL REFERENCES runs(run_key) ON DELETE CASCADE,
  seq       INTEGER NOT NULL,
  wall_time REAL NOT NULL,
  stream    TEXT NOT NULL,
  text      TEXT NOT NULL,
  PRIMARY KEY (run_key, seq)
) WITHOUT ROWID;

CREATE TABLE state_events (
  run_key INTEGER NOT NULL REFERENCES runs(run_key) ON DELETE CASCADE,
  seq     INTEGER NOT NULL,
  info    BLOB NOT NULL,
  PRIMARY KEY (run_key, seq)
) WITHOUT ROWID;

CREATE TABLE rank_batches (
  run_key        INTEGER NOT NULL REFERENCES runs(run_key) ON DELETE CASCADE,
  rank           INTEGER NOT NULL,
  last_batch_seq INTEGER NOT NULL,
  batches        INTEGER NOT NULL DEFAULT 0,
  points         INTEGER NOT NULL DEFAULT 0,
  duplicates     INTEGER NOT NULL DEFAULT 0,
  missing        INTEGER NOT NULL DEFAULT 0,
  dropped_total  INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (run_key, rank)
) WITHOUT ROWID;
)sql";

struct Migration {
  int version;  // user_version after the migration
  const char* sql;
};

// Forward migrations, oldest first. Never edit a released entry: append a new one.
constexpr std::array kMigrations = {
    Migration{1, kSchemaV1},
};

}  // namespace

int journalSchemaVersion() { return kMigrations.back().version; }

Status migrateJournal(sqlite::Connection& db, const std::string& path) {
  auto version = db.queryInt("PRAGMA user_version");
  if (!version.isOk()) return version.status().withContext(path);
  auto applicationId = db.queryInt("PRAGMA application_id");
  if (!applicationId.isOk()) return applicationId.status().withContext(path);
  if (version.value() == 0) {
    auto tables = db.queryInt("SELECT count(*) FROM sqlite_schema");
    if (!tables.isOk()) return tables.status().withContext(path);
    if (tables.value() != 0) {
      return Status::corruption(path +
                                " holds tables but no Ringside journal schema version: it is "
                                "not a Ringside journal; move it away or pick another state "
                                "directory");
    }
  } else if (applicationId.value() != kJournalApplicationId) {
    return Status::corruption(
        path + " is an SQLite database but not a Ringside journal (application_id " +
        std::to_string(applicationId.value()) + "); move it away or pick another state directory");
  }
  if (version.value() > journalSchemaVersion()) {
    return Status::invalidArgument(
        "journal " + path + " has schema version " + std::to_string(version.value()) +
        ", newer than this agent's " + std::to_string(journalSchemaVersion()) +
        ": run a newer ringside-agent, or move the journal away to start an empty one");
  }
  for (const Migration& migration : kMigrations) {
    if (migration.version <= version.value()) continue;
    RINGSIDE_RETURN_IF_ERROR(db.exec("BEGIN IMMEDIATE"));
    Status status = db.exec(migration.sql);
    if (status.isOk()) {
      const std::string pragmas =
          "PRAGMA application_id = " + std::to_string(kJournalApplicationId) +
          "; PRAGMA user_version = " + std::to_string(migration.version);
      status = db.exec(pragmas.c_str());
    }
    if (status.isOk()) status = db.exec("COMMIT");
    if (!status.isOk()) {
      (void)db.exec("ROLLBACK");  // the migration's error is the one reported
      return status.withContext("migrating journal " + path + " to schema version " +
                                std::to_string(migration.version));
    }
  }
  return Status::ok();
}

}  // namespace ringside::agent
