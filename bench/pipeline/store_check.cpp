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

int indexOf(const char* name, const auto& names) {
  for (size_t i = 0; i < names.size(); ++i) {
    if (std::strcmp(name, names[i]) == 0) return static_cast<int>(i);
  }
  return -1;
}

// What one sample was sent as.
struct Sent {
  uint64_t slot = 0;  // index into the seen bitmap
  int64_t epoch = 0;
  double wallTime = 0;
  double value = 0;
};

// The sample a row claims to be, or nullopt when no rank sent such a (name, rank, step).
std::optional<Sent> sentSample(const SimulatedRanks& ranks, const char* name, int rank,
                               int64_t step) {
  const int64_t steps = ranks.steps();
  const auto& outcomes = ranks.outcomes();
  const uint64_t worldSize = outcomes.size();
  if (step < 1 || step > steps) return std::nullopt;
  const uint64_t at = static_cast<uint64_t>(step - 1);
  const int64_t epoch = (step - 1) / kStepsPerEpoch;
  if (rank >= 0) {
    const int field = indexOf(name, kRankRecord);
    if (field < 0 || static_cast<uint64_t>(rank) >= worldSize) return std::nullopt;
    return Sent{(rank * kRankRecord.size() + field) * steps + at, epoch,
                outcomes[rank].wallTimes[at], valueOf(rank, field, step)};
  }
  if (rank != -1) return std::nullopt;
  const uint64_t globalBase = worldSize * kRankRecord.size() * steps;
  if (const int field = indexOf(name, kGlobalRecord); field >= 0) {
    return Sent{globalBase + field * steps + at, epoch, outcomes[0].globalWallTimes[at],
                valueOf(-1, field, step)};
  }
  const uint64_t startBase = globalBase + kGlobalRecord.size() * steps;
  if (step != 1) return std::nullopt;
  if (std::strcmp(name, metric::kRunTotalSteps) == 0) {
    return Sent{startBase, 0, outcomes[0].startWallTime, static_cast<double>(steps)};
  }
  if (std::strcmp(name, metric::kRunStepsPerEpoch) == 0) {
    return Sent{startBase + 1, 0, outcomes[0].startWallTime, static_cast<double>(kStepsPerEpoch)};
  }
  return std::nullopt;
}

Status sqliteError(sqlite3* db, const char* what) {
  return Status::ioError(std::string("GUI database: ") + what + ": " +
                         (db != nullptr ? sqlite3_errmsg(db) : "out of memory"));
}

// Fills check's log* fields from the run's rows in table logs.
Status checkLogLines(sqlite3* db, const std::string& runId, const std::vector<uint64_t>& printed,
                     StoreCheck* check) {
  sqlite3_stmt* statement = nullptr;
  if (sqlite3_prepare_v2(db,
                         "SELECT l.text FROM logs l JOIN runs r ON r.run_key = l.run_key "
                         "WHERE r.run_id = ?1",
                         -1, &statement, nullptr) != SQLITE_OK) {
    return sqliteError(db, "prepare logs");
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
  if (stepped != SQLITE_DONE) return sqliteError(db, "read logs");
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

Result<StoreCheck> checkStore(const std::string& databasePath, const std::string& runId,
                              const SimulatedRanks& ranks, const std::vector<IngestEvent>& events) {
  sqlite3* raw = nullptr;
  const int opened = sqlite3_open_v2(databasePath.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr);
  std::unique_ptr<sqlite3, decltype(&sqlite3_close)> db(raw, sqlite3_close);
  if (opened != SQLITE_OK) return sqliteError(raw, "open");
  sqlite3_busy_timeout(raw, 10000);
  sqlite3_stmt* statement = nullptr;
  if (sqlite3_prepare_v2(raw,
                         "SELECT k.name, m.rank, m.step, m.epoch, m.wall_time, m.value, m.seq "
                         "FROM metrics m JOIN metric_keys k ON k.key_id = m.key_id "
                         "JOIN runs r ON r.run_key = m.run_key WHERE r.run_id = ?1",
                         -1, &statement, nullptr) != SQLITE_OK) {
    return sqliteError(raw, "prepare");
  }
  std::unique_ptr<sqlite3_stmt, decltype(&sqlite3_finalize)> query(statement, sqlite3_finalize);
  sqlite3_bind_text(statement, 1, runId.c_str(), -1, SQLITE_TRANSIENT);

  // The first event covering each seq: events are in commit order and lastSeq never decreases.
  std::vector<std::pair<uint64_t, double>> covers;  // (lastSeq, unix time)
  StoreCheck check;
  uint64_t previousSeq = 0;
  for (const IngestEvent& event : events) {
    if (static_cast<uint64_t>(event.newSamples) > event.lastSeq - previousSeq) {
      ++check.outOfOrderIngests;
    }
    if (event.lastSeq > previousSeq) covers.emplace_back(event.lastSeq, event.unixTime);
    previousSeq = std::max(previousSeq, event.lastSeq);
  }

  check.expected = ranks.expectedSamples();
  std::vector<bool> seen(check.expected, false);
  auto fail = [&check](uint64_t* counter, const std::string& what) {
    if (check.wrong + check.duplicates + check.missing == 0) check.firstError = what;
    ++*counter;
  };
  int stepped = SQLITE_ROW;
  while ((stepped = sqlite3_step(statement)) == SQLITE_ROW) {
    ++check.rows;
    const char* name = reinterpret_cast<const char*>(sqlite3_column_text(statement, 0));
    const int rank = sqlite3_column_int(statement, 1);
    const int64_t step = sqlite3_column_int64(statement, 2);
    const int64_t epoch = sqlite3_column_int64(statement, 3);
    const double wallTime = sqlite3_column_double(statement, 4);
    const double value = sqlite3_column_double(statement, 5);
    const auto seq = static_cast<uint64_t>(sqlite3_column_int64(statement, 6));
    const std::string where = std::string(name != nullptr ? name : "(null)") + " rank " +
                              std::to_string(rank) + " step " + std::to_string(step);
    const std::optional<Sent> sent = sentSample(ranks, name != nullptr ? name : "", rank, step);
    if (!sent) {
      fail(&check.wrong, "a row no rank sent: " + where);
      continue;
    }
    if (seen[sent->slot]) {
      fail(&check.duplicates, "stored twice: " + where);
      continue;
    }
    seen[sent->slot] = true;
    if (epoch != sent->epoch || wallTime != sent->wallTime || value != sent->value ||
        sqlite3_column_type(statement, 5) == SQLITE_NULL) {
      fail(&check.wrong, "not as sent: " + where);
      continue;
    }
    ++check.matched;
    auto cover = std::lower_bound(covers.begin(), covers.end(), std::make_pair(seq, 0.0));
    if (cover != covers.end()) check.latencies.push_back(cover->second - wallTime);
  }
  if (stepped != SQLITE_DONE) return sqliteError(raw, "read");
  for (uint64_t slot = 0; slot < check.expected; ++slot) {
    if (!seen[slot])
      fail(&check.missing, "a sample sent but not stored (slot " + std::to_string(slot) + ")");
  }
  std::sort(check.latencies.begin(), check.latencies.end());
  RINGSIDE_RETURN_IF_ERROR(checkLogLines(raw, runId, ranks.logLineHashes(), &check));
  return check;
}

}  // namespace ringside::bench
