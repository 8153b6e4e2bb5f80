#include "scale_check.h"

#include <sqlite3.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>

#include "ringside/common/metric_names.h"

namespace ringside::bench {

namespace {

int indexOf(const char* name, const auto& names) {
  for (size_t i = 0; i < names.size(); ++i) {
    if (std::strcmp(name, names[i]) == 0) return static_cast<int>(i);
  }
  return -1;
}

struct Sent {
  uint64_t slot = 0;  // index into the seen bitmap
  int64_t epoch = 0;
  double wallTime = 0;
  double value = 0;
};

std::optional<Sent> sentSample(const ScaleRanks& ranks, const char* name, int rank, int64_t step) {
  const int64_t steps = ranks.steps();
  const auto& outcomes = ranks.outcomes();
  const uint64_t world = outcomes.size();
  if (step < 1 || step > steps) return std::nullopt;
  const auto at = static_cast<uint64_t>(step - 1);
  const int64_t epoch = (step - 1) / kStepsPerEpoch;
  if (rank >= 0) {
    const int field = indexOf(name, kRankRecord);
    if (field < 0 || static_cast<uint64_t>(rank) >= world) return std::nullopt;
    return Sent{(rank * kRankRecord.size() + field) * steps + at, epoch,
                outcomes[rank].wallTimes[at], ranks.valueOf(rank, field, step)};
  }
  if (rank != -1) return std::nullopt;
  const uint64_t globalBase = world * kRankRecord.size() * steps;
  if (const int field = indexOf(name, kGlobalRecord); field >= 0) {
    return Sent{globalBase + field * steps + at, epoch, outcomes[0].globalWallTimes[at],
                ranks.valueOf(-1, field, step)};
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

}  // namespace

Result<ScaleCheck> checkScaleStore(const std::string& databasePath, const std::string& runId,
                                   const ScaleRanks& ranks,
                                   const std::vector<IngestEvent>& events) {
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

  // The first commit covering each seq: events are in commit order, lastSeq never decreases.
  std::vector<std::pair<uint64_t, double>> covers;  // (lastSeq, Unix time)
  uint64_t previousSeq = 0;
  for (const IngestEvent& event : events) {
    if (event.lastSeq > previousSeq) covers.emplace_back(event.lastSeq, event.unixTime);
    previousSeq = std::max(previousSeq, event.lastSeq);
  }
  auto coverOf = [&covers](uint64_t seq) {
    auto cover = std::lower_bound(covers.begin(), covers.end(), std::make_pair(seq, 0.0));
    return cover != covers.end() ? cover->second : -1.0;
  };

  ScaleCheck check;
  check.expected = ranks.expectedSamples();
  check.latencies.resize(ranks.options().phases.size());
  std::vector<bool> seen(check.expected, false);
  auto fail = [&check](uint64_t* counter, const std::string& what) {
    if (check.wrong + check.duplicates + check.missing == 0) check.firstError = what;
    ++*counter;
  };
  int stepped = SQLITE_ROW;
  while ((stepped = sqlite3_step(statement)) == SQLITE_ROW) {
    ++check.rows;
    const char* text = reinterpret_cast<const char*>(sqlite3_column_text(statement, 0));
    const char* name = text != nullptr ? text : "";
    const int rank = sqlite3_column_int(statement, 1);
    const int64_t step = sqlite3_column_int64(statement, 2);
    const int64_t epoch = sqlite3_column_int64(statement, 3);
    const double wallTime = sqlite3_column_double(statement, 4);
    const double value = sqlite3_column_double(statement, 5);
    const auto seq = static_cast<uint64_t>(sqlite3_column_int64(statement, 6));
    if (std::strncmp(name, "gpu", 3) == 0 || std::strncmp(name, "node/", 5) == 0) {
      ++check.telemetryRows;  // the nodes' GPU telemetry the GUI keeps with the run
      continue;
    }
    if (metric::isAgentVerdict(name)) {
      ++check.agentRows;
      if (std::strcmp(name, metric::kStragglerRank) == 0) {
        check.verdicts.push_back({step, value, wallTime, coverOf(seq)});
      }
      continue;
    }
    const std::string where =
        std::string(name) + " rank " + std::to_string(rank) + " step " + std::to_string(step);
    const std::optional<Sent> sent = sentSample(ranks, name, rank, step);
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
    if (const double stored = coverOf(seq); stored >= 0) {
      check.latencies[ranks.phaseOf(step)].push_back(stored - wallTime);
      if (stored - wallTime > check.slowest.latency) {
        check.slowest = {stored - wallTime, where, seq};
      }
    }
  }
  if (stepped != SQLITE_DONE) return sqliteError(raw, "read");
  for (uint64_t slot = 0; slot < check.expected; ++slot) {
    if (!seen[slot]) {
      fail(&check.missing, "a sample sent but not stored (slot " + std::to_string(slot) + ")");
    }
  }
  for (auto& phase : check.latencies) std::sort(phase.begin(), phase.end());
  std::sort(check.verdicts.begin(), check.verdicts.end(),
            [](const VerdictRow& a, const VerdictRow& b) { return a.step < b.step; });
  return check;
}

}  // namespace ringside::bench
