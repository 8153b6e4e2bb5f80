#include "sqlite_reference.h"

#include <sqlite3.h>

#include <algorithm>
#include <memory>

#include "telemetry_stream.h"

namespace ringside::bench {

namespace {

Status sqliteCheck(sqlite3* db, int rc, const char* what) {
  if (rc == SQLITE_OK || rc == SQLITE_DONE || rc == SQLITE_ROW) return Status::ok();
  return Status::ioError(std::string("SQLite reference: ") + what + ": " + sqlite3_errmsg(db));
}

}  // namespace

Result<SqliteReport> rawSqliteInserts(const Options& options, const std::string& path) {
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) {
    sqlite3_close(db);
    return Status::ioError("SQLite reference: cannot open " + path);
  }
  std::unique_ptr<sqlite3, decltype(&sqlite3_close)> owner(db, sqlite3_close);
  RINGSIDE_RETURN_IF_ERROR(sqliteCheck(
      db,
      sqlite3_exec(db,
                   "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;"
                   "CREATE TABLE metric_samples (run_key INTEGER NOT NULL, seq INTEGER NOT NULL,"
                   " step INTEGER NOT NULL, epoch INTEGER NOT NULL, wall_time REAL NOT NULL,"
                   " rank INTEGER NOT NULL, key_id INTEGER NOT NULL, value REAL,"
                   " PRIMARY KEY (run_key, seq)) WITHOUT ROWID;",
                   nullptr, nullptr, nullptr),
      "schema"));
  sqlite3_stmt* insert = nullptr;
  RINGSIDE_RETURN_IF_ERROR(sqliteCheck(
      db,
      sqlite3_prepare_v2(db,
                         "INSERT INTO metric_samples (run_key, seq, step, epoch, wall_time, rank,"
                         " key_id, value) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                         -1, &insert, nullptr),
      "prepare"));
  std::unique_ptr<sqlite3_stmt, decltype(&sqlite3_finalize)> statement(insert, sqlite3_finalize);

  const auto start = Clock::now();
  uint64_t seq = 0;
  // Rank by rank, batch by batch, as the journal sees them (interleaving does not change the cost:
  // seqs are appended in order either way).
  for (int rank = 0; rank < options.ranks; ++rank) {
    const uint64_t total = samplesOfRank(options, rank);
    for (uint64_t first = 0; first < total; first += options.batchPoints) {
      RINGSIDE_RETURN_IF_ERROR(
          sqliteCheck(db, sqlite3_exec(db, "BEGIN", nullptr, nullptr, nullptr), "BEGIN"));
      for (uint64_t i = first; i < std::min<uint64_t>(total, first + options.batchPoints); ++i) {
        const Point point = pointOf(rank, i);
        sqlite3_bind_int64(insert, 1, 1);
        sqlite3_bind_int64(insert, 2, static_cast<int64_t>(++seq));
        sqlite3_bind_int64(insert, 3, point.step);
        sqlite3_bind_int64(insert, 4, point.epoch);
        sqlite3_bind_double(insert, 5, point.wallTime);
        sqlite3_bind_int64(insert, 6, rank);
        sqlite3_bind_int64(insert, 7, static_cast<int64_t>(i % kMetricNames.size()) + 1);
        sqlite3_bind_double(insert, 8, point.value);
        RINGSIDE_RETURN_IF_ERROR(sqliteCheck(db, sqlite3_step(insert), "INSERT"));
        sqlite3_reset(insert);
      }
      RINGSIDE_RETURN_IF_ERROR(
          sqliteCheck(db, sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr), "COMMIT"));
    }
  }
  SqliteReport report;
  report.seconds = secondsSince(start);

  sqlite3_stmt* count = nullptr;
  RINGSIDE_RETURN_IF_ERROR(sqliteCheck(
      db, sqlite3_prepare_v2(db, "SELECT count(*) FROM metric_samples", -1, &count, nullptr),
      "count"));
  std::unique_ptr<sqlite3_stmt, decltype(&sqlite3_finalize)> counter(count, sqlite3_finalize);
  if (sqlite3_step(count) == SQLITE_ROW) {
    report.rowsStored = static_cast<uint64_t>(sqlite3_column_int64(count, 0));
  }
  return report;
}

}  // namespace ringside::bench
