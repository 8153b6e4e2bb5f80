// Journal::Impl, private to the journal's sources: the state that journal.cpp (open, damage,
// health), journal_write.cpp (the write path) and journal_read.cpp (the read path) share. Two
// SQLite connections, each under its own mutex (thread-safety comment in journal.h).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "journal_sqlite.h"
#include "ringside/agent/journal.h"
#include "ringside/common/mutex.h"

namespace ringside::agent {

// Rows per execution of the journal's multi-row INSERTs into metric_samples, largest first (8
// parameters a row: 512 at most, SQLite allows 32,766). n samples take n / 64 statements of 64
// rows, then at most 3 each of 16, 4 and 1 rows for the rest: one statement's fixed cost (step,
// reset, the VDBE program's start) per 64 rows instead of per row (bench/README.md, "telemetry").
inline constexpr std::array<size_t, 4> kSampleInsertRows = {64, 16, 4, 1};

// A run as the write path sees it.
struct RunKey {
  int64_t key = 0;
  uint64_t lastSeq = 0;
  v1::RunState state = v1::RUN_STATE_UNSPECIFIED;  // as last stored
};

struct Journal::Impl {
  using Connection = sqlite::Connection;
  using Statement = sqlite::Statement;

  JournalOptions options;
  std::string path;
  // options.log, or logToStderr. Called with readMutex or writeMutex held: it must not call
  // back into the journal.
  std::function<void(const char*, const std::string&)> log;
  std::string quarantinedTo;  // set by open(), read-only afterwards
  std::string walDamage;      // set by open(), read-only afterwards (JournalHealth::walDamage)

  // Damage found while running (an SQLite call returned SQLITE_CORRUPT): set once, never
  // cleared; every write is refused from then on. `damage` is the first report.
  std::atomic<bool> damaged{false};
  Mutex damageMutex;  // a leaf: taken with readMutex or writeMutex held, never the reverse
  std::string damage GUARDED_BY(damageMutex);

  // Write path: one connection, serialized by writeMutex (recursive so that the appends made in
  // inTransaction's body re-enter it on the same thread).
  RecursiveMutex writeMutex;
  Connection writer GUARDED_BY(writeMutex);
  int groupDepth GUARDED_BY(writeMutex) = 0;  // > 0 inside inTransaction
  // metric name -> key_id: a cache, emptied when it reaches kMaxCachedKeys (names made up by the
  // million must not grow the agent; the metric_keys table is the record).
  static constexpr size_t kMaxCachedKeys = 100000;
  std::unordered_map<std::string, int64_t> keyIds GUARDED_BY(writeMutex);
  // run_key -> the key_ids of the names it logged, while it takes samples: at most
  // kMaxMetricNamesPerRun each (protocol_limits.h); forgotten when the run has ended.
  std::unordered_map<int64_t, std::unordered_set<int64_t>> runKeyIds GUARDED_BY(writeMutex);
  Statement findRun GUARDED_BY(writeMutex), insertRun GUARDED_BY(writeMutex),
      upsertRunFull GUARDED_BY(writeMutex), upsertRunInfo GUARDED_BY(writeMutex),
      updateLastSeq GUARDED_BY(writeMutex), findKey GUARDED_BY(writeMutex),
      insertKey GUARDED_BY(writeMutex), insertLog GUARDED_BY(writeMutex),
      insertState GUARDED_BY(writeMutex), findRankBatch GUARDED_BY(writeMutex),
      countDuplicate GUARDED_BY(writeMutex), upsertRankBatch GUARDED_BY(writeMutex),
      deleteRun GUARDED_BY(writeMutex), readRunInfo GUARDED_BY(writeMutex);
  // The write path's transaction control, prepared once: as sqlite3_exec each was parsed and
  // compiled anew, twice per rank batch inside a group (SAVEPOINT and RELEASE), ~7 % of the
  // owner's CPU with many ranks (bench/README.md, "scale").
  Statement beginWrite GUARDED_BY(writeMutex), commitWrite GUARDED_BY(writeMutex),
      rollbackWrite GUARDED_BY(writeMutex), savepointWrite GUARDED_BY(writeMutex),
      releaseWrite GUARDED_BY(writeMutex), rollbackToWrite GUARDED_BY(writeMutex);
  // insertSamples[i] inserts kSampleInsertRows[i] rows of metric_samples.
  std::array<Statement, kSampleInsertRows.size()> insertSamples GUARDED_BY(writeMutex);
  // run_id -> RunInfo.world_size (0: unknown), read from the record once per run. A run's world
  // size is set when it is first stored (QUEUED) and never changes, so an entry stays valid;
  // emptied when retention deletes runs.
  std::unordered_map<std::string, uint32_t> worldSizes GUARDED_BY(writeMutex);

  // Read path: a second connection (query_only), serialized by readMutex.
  Mutex readMutex;
  Connection reader GUARDED_BY(readMutex);
  Statement readRun GUARDED_BY(readMutex), readRuns GUARDED_BY(readMutex),
      readActiveRuns GUARDED_BY(readMutex),
      readSamples GUARDED_BY(readMutex), readLogs GUARDED_BY(readMutex),
      readStates GUARDED_BY(readMutex), readDeliveries GUARDED_BY(readMutex),
      readEntrySizes GUARDED_BY(readMutex), readSampleKeys GUARDED_BY(readMutex);
  // Rows found unreadable, each reported once: runs by run_key, state events by (run_key, seq).
  std::set<int64_t> unreadableRuns GUARDED_BY(readMutex);
  std::set<std::pair<int64_t, uint64_t>> unreadableStates GUARDED_BY(readMutex);

  // `status` when it is not kCorruption. Otherwise SQLite found the file damaged while `doing`:
  // marks the journal damaged, reports it once through `log`, and returns kCorruption with a
  // message that names the file and says what to do. Apply to the results of SQLite calls only
  // (a row that does not parse is not damage of the whole file).
  Status damageOf(const Status& status, const std::string& doing);
  // The kCorruption a write gets once the journal is damaged.
  Status refusedWrite();
  // Reports (once per run) and counts a run record that cannot be read.
  void reportUnreadableRun(int64_t runKey, const Status& why) REQUIRES(readMutex);

  Status prepareStatements() REQUIRES(writeMutex, readMutex);
  Result<RunKey> lookupRun(const std::string& runId) REQUIRES(writeMutex);
  // The run `runId` through readRun, and its run_key in *runKey. NotFound when the journal has no
  // such run.
  Result<StoredRun> readRunById(const std::string& runId, int64_t* runKey) REQUIRES(readMutex);
  Result<int64_t> keyId(const std::string& name) REQUIRES(writeMutex);
  // keyId() of a name a run logs, when it is one (1 to kMaxMetricNameBytes bytes without control
  // characters) and the run has fewer than kMaxMetricNamesPerRun names or has logged it before;
  // otherwise *problem says why and the result is 0 (nothing is stored).
  Result<int64_t> runKeyId(int64_t runKey, const std::string& name, std::string* problem)
      REQUIRES(writeMutex);
  // OK when the journal takes samples for `run` now: FailedPrecondition once its final state
  // (COMPLETED, FAILED, STOPPED) is journaled. *worldSize: the run's world size (0: unknown).
  Status checkTakesSamples(const std::string& runId, const RunKey& run, uint32_t* worldSize)
      REQUIRES(writeMutex);
  // Inserts a metric_samples row of run `runKey` for each samples[i] (its seq already set) with
  // key_id keyIds[i], through insertSamples (kSampleInsertRows). keyIds.size() == samples.size().
  Status insertSampleRows(int64_t runKey, const std::vector<v1::MetricSample>& samples,
                          const std::vector<int64_t>& keyIds) REQUIRES(writeMutex);
  Status setLastSeq(const RunKey& run) REQUIRES(writeMutex);
  Status upsertRunRow(const v1::RunInfo& info, const ProcessIds* process) REQUIRES(writeMutex);

  // Runs `op` as one unit: a savepoint inside a group, otherwise its own IMMEDIATE transaction
  // committed before returning. On failure everything `op` wrote is undone and the caches are
  // dropped.
  template <typename Op>
  auto write(Op&& op) -> decltype(op(*this));

  // Undoes the write in progress (the savepoint when `nested`, else the transaction) and drops
  // the caches that may hold its ids. The write's own error is what the caller returns, so a
  // failure to undo is not reported separately (SQLite then rolls back when the connection's
  // next BEGIN fails or the connection closes).
  void undo(bool nested) REQUIRES(writeMutex) {
    (void)(nested ? rollbackToWrite : rollbackWrite).run();
    if (nested) (void)releaseWrite.run();
    keyIds.clear();
  }
};

}  // namespace ringside::agent
