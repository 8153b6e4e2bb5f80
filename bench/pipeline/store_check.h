// pipeline_bench's check (nccl-tests' -c): reads a run's rows back from the GUI's SQLite file
// (docs/gui-database.md, table metrics) and compares them with what the simulated ranks sent;
// also the latency of every row, from the rank's writeMetrics to the store's commit.
#pragma once

#include <sqlite3.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gui_harness.h"
#include "ringside/common/metric_names.h"
#include "ringside/common/status.h"
#include "simulated_ranks.h"

namespace ringside::bench {

struct StoreCheck {
  uint64_t rows = 0;        // the run's rows in the GUI store
  uint64_t expected = 0;    // samples the ranks sent
  uint64_t matched = 0;     // rows equal in every field (name, rank, step, epoch, wall_time,
                            // value) to a sample a rank sent, each sample counted once
  uint64_t duplicates = 0;  // rows of a sample already matched
  uint64_t wrong = 0;       // rows no rank sent, or with a field that differs
  uint64_t missing = 0;     // samples sent with no row
  // Rows of the run that no rank sends, counted apart: the node's GPU telemetry the GUI keeps
  // with a run that uses GPUs, and the owner agent's verdicts (metric::isAgentVerdict).
  uint64_t telemetryRows = 0;
  uint64_t agentRows = 0;
  uint64_t lastRankSeq = 0;  // the highest seq of a matched row (the ranks' last stored sample)
  std::string firstError;
  // Seconds from each matched row's wall_time (the rank's clock at writeMetrics) to the first
  // IngestEvent whose lastSeq covers its seq, sorted ascending.
  std::vector<double> latencies;
  // IngestEvents that stored more samples than their lastSeq advanced (a catch-up page filling
  // a gap): their rows' latency is under-estimated (shown as of an earlier commit).
  uint64_t outOfOrderIngests = 0;

  // The run's log lines (table logs) against the lines rank 0 printed, compared as hashes of
  // their text: matched once each, stored again, missing, or lines nobody printed (agent notes).
  uint64_t logRows = 0;
  uint64_t logExpected = 0;
  uint64_t logMatched = 0;
  uint64_t logDuplicates = 0;
  uint64_t logMissing = 0;
  uint64_t logOther = 0;

  bool ok() const {
    return matched == expected && duplicates == 0 && wrong == 0 && missing == 0 &&
           logMatched == logExpected && logDuplicates == 0 && logMissing == 0;
  }
};

// Reads run `runId` from the GUI database at `databasePath` (read-only, beside the store's own
// connection) and checks it against `ranks` (after join()) with `events` (GuiHarness::
// ingestEvents). Errors: kIOError naming the SQLite call that failed.
Result<StoreCheck> checkStore(const std::string& databasePath, const std::string& runId,
                              const SimulatedRanks& ranks, const std::vector<IngestEvent>& events);

// One row of a run in the GUI database's metrics table, as read back by forEachStoredRow.
struct StoredRow {
  const char* name = "";  // never null; valid during the visit only
  int rank = -1;
  int64_t step = 0, epoch = 0;
  double wallTime = 0, value = 0;
  bool valueNull = false;  // the value column is NULL
  uint64_t seq = 0;
};

using Database = std::unique_ptr<sqlite3, decltype(&sqlite3_close)>;
// The GUI database at `path`, read-only beside the store's own connection. Errors: kIOError.
Result<Database> openGuiDatabase(const std::string& path);
// kIOError "GUI database: <what>: <SQLite's message>".
Status guiDatabaseError(sqlite3* db, const char* what);
// Calls `visit` for every metrics row of run `runId`. Errors: kIOError naming the failed call.
Status forEachStoredRow(sqlite3* db, const std::string& runId,
                        const std::function<void(const StoredRow&)>& visit);

// When the store committed each seq: the first IngestEvent (in commit order) whose lastSeq
// covers it. Thread-safety: const after construction.
class CommitCover {
 public:
  explicit CommitCover(const std::vector<IngestEvent>& events);
  // The Unix time of the commit that covered `seq`; -1 when none did.
  double at(uint64_t seq) const;
  // Events that stored more samples than their lastSeq advanced (a catch-up page filling a gap).
  uint64_t outOfOrder() const { return outOfOrder_; }

 private:
  std::vector<std::pair<uint64_t, double>> covers_;  // (lastSeq, Unix time), ascending
  uint64_t outOfOrder_ = 0;
};

// What one simulated sample was sent as: its slot in a seen-bitmap of expected samples.
struct SentSample {
  uint64_t slot = 0;
  int64_t epoch = 0;
  double wallTime = 0;
  double value = 0;
};

// The sample a row (name, rank, step) claims to be among what `steps` steps of `outcomes`
// (RankOutcome-like: wallTimes, globalWallTimes, startWallTime) sent as kRankRecord,
// kGlobalRecord and the run/ samples, with values from `valueOf(rank, field, step)`; nullopt
// when no rank sent it.
template <typename Outcomes, typename ValueOf>
std::optional<SentSample> sentSample(const Outcomes& outcomes, int64_t steps, const char* name,
                                     int rank, int64_t step, ValueOf valueOf) {
  const auto indexOf = [name](const auto& names) {
    for (size_t i = 0; i < names.size(); ++i) {
      if (std::strcmp(name, names[i]) == 0) return static_cast<int>(i);
    }
    return -1;
  };
  const uint64_t worldSize = outcomes.size();
  if (step < 1 || step > steps) return std::nullopt;
  const auto at = static_cast<uint64_t>(step - 1);
  const int64_t epoch = (step - 1) / kStepsPerEpoch;
  if (rank >= 0) {
    const int field = indexOf(kRankRecord);
    if (field < 0 || static_cast<uint64_t>(rank) >= worldSize) return std::nullopt;
    return SentSample{(rank * kRankRecord.size() + field) * steps + at, epoch,
                      outcomes[rank].wallTimes[at], valueOf(rank, field, step)};
  }
  if (rank != -1) return std::nullopt;
  const uint64_t globalBase = worldSize * kRankRecord.size() * steps;
  if (const int field = indexOf(kGlobalRecord); field >= 0) {
    return SentSample{globalBase + field * steps + at, epoch, outcomes[0].globalWallTimes[at],
                      valueOf(-1, field, step)};
  }
  const uint64_t startBase = globalBase + kGlobalRecord.size() * steps;
  if (step != 1) return std::nullopt;
  if (std::strcmp(name, metric::kRunTotalSteps) == 0) {
    return SentSample{startBase, 0, outcomes[0].startWallTime, static_cast<double>(steps)};
  }
  if (std::strcmp(name, metric::kRunStepsPerEpoch) == 0) {
    return SentSample{startBase + 1, 0, outcomes[0].startWallTime,
                      static_cast<double>(kStepsPerEpoch)};
  }
  return std::nullopt;
}

// The q-quantile (0..1) of ascending `sorted`; 0 when empty.
double quantile(const std::vector<double>& sorted, double q);

}  // namespace ringside::bench
