#include "store_check.h"

#include <sqlite3.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>

#include "ringside/common/metric_names.h"

namespace ringside::bench {

namespace {

// Fills check's log* fields from the run's rows in table logs.
Status checkLogLines(sqlite3* db, const std::string& runId, const std::vector<uint64_t>& printed,
                     StoreCheck* check) {
  sqlite3_stmt* statement = nullptr;
  if (sqlite3_prepare_v2(db,
                         "SELECT l.text FROM logs l JOIN runs r ON r.run_key = l.run_key "
                         "WHERE r.run_id = ?1",
                         -1, &statement, nullptr) != SQLITE_OK) {
    return guiDatabaseError(db, "prepare logs");
  }
  std::unique_ptr<sqlite3_stmt, decltype(&sqlite3_finalize)> query(statement, sqlite3_finalize);
  sqlite3_bind_text(statement, 1, runId.c_str(), -1, SQLITE_TRANSIENT);
  std::vector<uint64_t> stored;
  int stepped = SQLITE_ROW;
  while ((stepped = sqlite3_step(statement)) == SQLITE_ROW) {
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(statement, 0));
    const int bytes = sqlite3_column_bytes(statement, 0);
    stored.push_back(std::hash<std::string_view>{}(
        std::string_view(text != nullptr ? text : "", static_cast<size_t>(bytes))));
  }
  if (stepped != SQLITE_DONE) return guiDatabaseError(db, "read logs");
  std::sort(stored.begin(), stored.end());
  check->logRows = stored.size();
  check->logExpected = printed.size();
  // A merge of the two sorted multisets.
  size_t p = 0, s = 0;
  while (p < printed.size() || s < stored.size()) {
    if (s == stored.size() || (p < printed.size() && printed[p] < stored[s])) {
      ++check->logMissing;
      ++p;
    } else if (p == printed.size() || stored[s] < printed[p]) {
      // Stored beyond its printed count: a duplicate when that text was printed at all.
      const bool printedOnce = std::binary_search(printed.begin(), printed.end(), stored[s]);
      ++(printedOnce ? check->logDuplicates : check->logOther);
      ++s;
    } else {
      ++check->logMatched;
      ++p;
      ++s;
    }
  }
  if (check->firstError.empty() && (check->logMissing > 0 || check->logDuplicates > 0)) {
    check->firstError = std::to_string(check->logMissing) + " printed lines not stored, " +
                        std::to_string(check->logDuplicates) + " stored twice";
  }
  return Status::ok();
}

}  // namespace

double quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const size_t at = static_cast<size_t>(q * static_cast<double>(sorted.size() - 1) + 0.5);
  return sorted[std::min(at, sorted.size() - 1)];
}

Status guiDatabaseError(sqlite3* db, const char* what) {
  return Status::ioError(std::string("GUI database: ") + what + ": " +
                         (db != nullptr ? sqlite3_errmsg(db) : "out of memory"));
}

Result<Database> openGuiDatabase(const std::string& path) {
  sqlite3* raw = nullptr;
  const int opened = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr);
  Database db(raw, sqlite3_close);
  if (opened != SQLITE_OK) return guiDatabaseError(raw, "open");
  sqlite3_busy_timeout(raw, 10000);
  return db;
}

Status forEachStoredRow(sqlite3* db, const std::string& runId,
                        const std::function<void(const StoredRow&)>& visit) {
  sqlite3_stmt* statement = nullptr;
  if (sqlite3_prepare_v2(db,
                         "SELECT k.name, m.rank, m.step, m.epoch, m.wall_time, m.value, m.seq "
                         "FROM metrics m JOIN metric_keys k ON k.key_id = m.key_id "
                         "JOIN runs r ON r.run_key = m.run_key WHERE r.run_id = ?1",
                         -1, &statement, nullptr) != SQLITE_OK) {
    return guiDatabaseError(db, "prepare");
  }
  std::unique_ptr<sqlite3_stmt, decltype(&sqlite3_finalize)> query(statement, sqlite3_finalize);
  sqlite3_bind_text(statement, 1, runId.c_str(), -1, SQLITE_TRANSIENT);
  int stepped = SQLITE_ROW;
  while ((stepped = sqlite3_step(statement)) == SQLITE_ROW) {
    StoredRow row;
    const auto* name = reinterpret_cast<const char*>(sqlite3_column_text(statement, 0));
    row.name = name != nullptr ? name : "";
    row.rank = sqlite3_column_int(statement, 1);
    row.step = sqlite3_column_int64(statement, 2);
    row.epoch = sqlite3_column_int64(statement, 3);
    row.wallTime = sqlite3_column_double(statement, 4);
    row.value = sqlite3_column_double(statement, 5);
    row.valueNull = sqlite3_column_type(statement, 5) == SQLITE_NULL;
    row.seq = static_cast<uint64_t>(sqlite3_column_int64(statement, 6));
    visit(row);
  }
  return stepped == SQLITE_DONE ? Status::ok() : guiDatabaseError(db, "read");
}

CommitCover::CommitCover(const std::vector<IngestEvent>& events) {
  // Events are in commit order and lastSeq never decreases.
  uint64_t previousSeq = 0;
  for (const IngestEvent& event : events) {
    if (static_cast<uint64_t>(event.newSamples) > event.lastSeq - previousSeq) ++outOfOrder_;
    if (event.lastSeq > previousSeq) covers_.emplace_back(event.lastSeq, event.unixTime);
    previousSeq = std::max(previousSeq, event.lastSeq);
  }
}

double CommitCover::at(uint64_t seq) const {
  auto cover = std::lower_bound(covers_.begin(), covers_.end(), std::make_pair(seq, 0.0));
  return cover != covers_.end() ? cover->second : -1.0;
}

Result<StoreCheck> checkStore(const std::string& databasePath, const std::string& runId,
                              const SimulatedRanks& ranks, const std::vector<IngestEvent>& events) {
  auto db = openGuiDatabase(databasePath);
  if (!db.isOk()) return db.status();
  const CommitCover cover(events);
  StoreCheck check;
  check.outOfOrderIngests = cover.outOfOrder();
  check.expected = ranks.expectedSamples();
  std::vector<bool> seen(check.expected, false);
  auto fail = [&check](uint64_t* counter, const std::string& what) {
    if (check.wrong + check.duplicates + check.missing == 0) check.firstError = what;
    ++*counter;
  };
  RINGSIDE_RETURN_IF_ERROR(forEachStoredRow(db->get(), runId, [&](const StoredRow& row) {
    ++check.rows;
    if (std::strncmp(row.name, "gpu", 3) == 0 || std::strncmp(row.name, "node/", 5) == 0) {
      ++check.telemetryRows;
      return;
    }
    if (metric::isAgentVerdict(row.name)) {
      ++check.agentRows;
      return;
    }
    const std::string where = std::string(row.name) + " rank " + std::to_string(row.rank) +
                              " step " + std::to_string(row.step);
    const std::optional<SentSample> sent =
        sentSample(ranks.outcomes(), ranks.steps(), row.name, row.rank, row.step,
                   [](int rank, int field, int64_t step) { return valueOf(rank, field, step); });
    if (!sent) {
      fail(&check.wrong, "a row no rank sent: " + where);
      return;
    }
    if (seen[sent->slot]) {
      fail(&check.duplicates, "stored twice: " + where);
      return;
    }
    seen[sent->slot] = true;
    if (row.epoch != sent->epoch || row.wallTime != sent->wallTime || row.value != sent->value ||
        row.valueNull) {
      fail(&check.wrong, "not as sent: " + where);
      return;
    }
    ++check.matched;
    check.lastRankSeq = std::max(check.lastRankSeq, row.seq);
    if (const double stored = cover.at(row.seq); stored >= 0) {
      check.latencies.push_back(stored - row.wallTime);
    }
  }));
  for (uint64_t slot = 0; slot < check.expected; ++slot) {
    if (!seen[slot])
      fail(&check.missing, "a sample sent but not stored (slot " + std::to_string(slot) + ")");
  }
  std::sort(check.latencies.begin(), check.latencies.end());
  RINGSIDE_RETURN_IF_ERROR(checkLogLines(db->get(), runId, ranks.logLineHashes(), &check));
  return check;
}

}  // namespace ringside::bench
