#include "ringside/agent/journal.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <set>
#include <unordered_map>
#include <utility>

#include "journal_schema.h"
#include "journal_sqlite.h"
#include "ringside/common/mutex.h"

namespace ringside::agent {

using sqlite::Connection;
using sqlite::Statement;

bool isEndedState(v1::RunState state) {
  return state == v1::COMPLETED || state == v1::FAILED || state == v1::STOPPED;
}

namespace {

constexpr const char* kEndedStates = "(4, 5, 6)";  // COMPLETED, FAILED, STOPPED

// A run as the write path sees it.
struct RunKey {
  int64_t key = 0;
  uint64_t lastSeq = 0;
};

Status prepareAll(sqlite3* db, std::initializer_list<std::pair<Statement*, const char*>> list) {
  for (const auto& [statement, sql] : list) {
    auto prepared = Statement::prepare(db, sql);
    if (!prepared.isOk()) return prepared.status();
    *statement = std::move(prepared).value();
  }
  return Status::ok();
}

const char* typeName(int sqliteType) {
  switch (sqliteType) {
    case SQLITE_INTEGER:
      return "an integer";
    case SQLITE_FLOAT:
      return "a real";
    case SQLITE_TEXT:
      return "text";
    case SQLITE_NULL:
      return "NULL";
    default:
      return "a blob";
  }
}

// The run of a `runs` row, or kCorruption saying why the row cannot be read (a damaged blob, a
// NULL or a value of the wrong type where the schema puts a value): bytes of the file changed
// after they were written. Columns from firstColumn: info, last_seq, pid, pgid, run_id.
Result<StoredRun> readRunRow(const Statement& row, int firstColumn, const std::string& path) {
  const std::string runId(row.columnText(firstColumn + 4));
  auto unreadable = [&](const std::string& why) {
    return Status::corruption("run " +
                              (runId.empty() ? std::string("with an empty run id") : runId) +
                              " in journal " + path + " cannot be read: " + why);
  };
  StoredRun run;
  if (row.columnType(firstColumn) != SQLITE_BLOB) {
    return unreadable(std::string("its info column holds ") +
                      typeName(row.columnType(firstColumn)) + ", not a RunInfo");
  }
  const std::string_view blob = row.columnBlob(firstColumn);
  if (!run.info.ParseFromArray(blob.data(), static_cast<int>(blob.size()))) {
    return unreadable("its RunInfo (" + std::to_string(blob.size()) + " bytes) does not parse");
  }
  if (run.info.run_id() != runId) {
    return unreadable("its RunInfo names run '" + run.info.run_id() + "'");
  }
  if (row.columnType(firstColumn + 1) != SQLITE_INTEGER) {
    return unreadable(std::string("its last_seq is ") + typeName(row.columnType(firstColumn + 1)) +
                      ", not an integer");
  }
  run.info.set_last_seq(static_cast<uint64_t>(row.columnInt(firstColumn + 1)));
  if (!row.columnIsNull(firstColumn + 2)) run.process.pid = row.columnInt(firstColumn + 2);
  if (!row.columnIsNull(firstColumn + 3)) run.process.pgid = row.columnInt(firstColumn + 3);
  return run;
}

// The default JournalOptions::log: the agent's log format on stderr.
void logToStderr(const char* level, const std::string& text) {
  std::fprintf(stderr, "ringside-agent %s: %s\n", level, text.c_str());
}

// The Status of an append's result, whichever type it is.
const Status& statusOf(const Status& status) { return status; }
template <typename T>
const Status& statusOf(const Result<T>& result) {
  return result.status();
}

// Ends a read transaction. A read has nothing to commit; should COMMIT fail, ROLLBACK so the
// connection's next read does not stay on this snapshot.
void endRead(Connection& reader) {
  if (!reader.exec("COMMIT").isOk()) (void)reader.exec("ROLLBACK");
}

}  // namespace

struct Journal::Impl {
  JournalOptions options;
  std::string path;
  // options.log, or logToStderr. Called with readMutex or writeMutex held: it must not call
  // back into the journal.
  std::function<void(const char*, const std::string&)> log;
  std::string quarantinedTo;  // set by open(), read-only afterwards

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
  // metric name -> key_id
  std::unordered_map<std::string, int64_t> keyIds GUARDED_BY(writeMutex);
  Statement findRun GUARDED_BY(writeMutex), insertRun GUARDED_BY(writeMutex),
      upsertRunFull GUARDED_BY(writeMutex), upsertRunInfo GUARDED_BY(writeMutex),
      updateLastSeq GUARDED_BY(writeMutex), findKey GUARDED_BY(writeMutex),
      insertKey GUARDED_BY(writeMutex), insertSample GUARDED_BY(writeMutex),
      insertLog GUARDED_BY(writeMutex), insertState GUARDED_BY(writeMutex),
      findRankBatch GUARDED_BY(writeMutex), countDuplicate GUARDED_BY(writeMutex),
      upsertRankBatch GUARDED_BY(writeMutex), deleteRun GUARDED_BY(writeMutex);

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
  Status insertSampleRow(int64_t runKey, uint64_t seq, const v1::MetricSample& sample,
                         int64_t keyId) REQUIRES(writeMutex);
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
    (void)writer.exec(nested ? "ROLLBACK TO journal_write" : "ROLLBACK");
    if (nested) (void)writer.exec("RELEASE journal_write");
    keyIds.clear();
  }
};

Status Journal::Impl::prepareStatements() {
  RINGSIDE_RETURN_IF_ERROR(prepareAll(
      writer.get(),
      {
          {&findRun, "SELECT run_key, last_seq FROM runs WHERE run_id = ?1"},
          {&upsertRunFull,
           "INSERT INTO runs (run_id, info, state, created_time, end_time, run_dir, pid, pgid) "
           "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT (run_id) DO UPDATE SET "
           "info = excluded.info, state = excluded.state, created_time = excluded.created_time, "
           "end_time = excluded.end_time, run_dir = excluded.run_dir, pid = excluded.pid, "
           "pgid = excluded.pgid"},
          {&upsertRunInfo,
           "INSERT INTO runs (run_id, info, state, created_time, end_time, run_dir) "
           "VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (run_id) DO UPDATE SET "
           "info = excluded.info, state = excluded.state, created_time = excluded.created_time, "
           "end_time = excluded.end_time, run_dir = excluded.run_dir"},
          {&updateLastSeq, "UPDATE runs SET last_seq = ?2 WHERE run_key = ?1"},
          {&findKey, "SELECT key_id FROM metric_keys WHERE name = ?1"},
          {&insertKey, "INSERT INTO metric_keys (name) VALUES (?1)"},
          {&insertSample,
           "INSERT INTO metric_samples (run_key, seq, step, epoch, wall_time, rank, key_id, "
           "value) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"},
          {&insertLog,
           "INSERT INTO log_lines (run_key, seq, wall_time, stream, text) "
           "VALUES (?1, ?2, ?3, ?4, ?5)"},
          {&insertState, "INSERT INTO state_events (run_key, seq, info) VALUES (?1, ?2, ?3)"},
          {&findRankBatch,
           "SELECT last_batch_seq FROM rank_batches WHERE run_key = ?1 AND rank = ?2"},
          {&countDuplicate,
           "UPDATE rank_batches SET duplicates = duplicates + 1 WHERE run_key = ?1 AND rank = ?2"},
          {&upsertRankBatch,
           "INSERT INTO rank_batches (run_key, rank, last_batch_seq, batches, points, missing, "
           "dropped_total) VALUES (?1, ?2, ?3, 1, ?4, ?5, ?6) ON CONFLICT (run_key, rank) DO "
           "UPDATE SET last_batch_seq = excluded.last_batch_seq, batches = batches + 1, "
           "points = points + excluded.points, missing = missing + excluded.missing, "
           "dropped_total = excluded.dropped_total"},
          {&deleteRun, "DELETE FROM runs WHERE run_key = ?1"},
      }));
  return prepareAll(
      reader.get(),
      {
          {&readRun,
           "SELECT run_key, info, last_seq, pid, pgid, run_id FROM runs WHERE run_id = ?1"},
          {&readRuns,
           "SELECT run_key, info, last_seq, pid, pgid, run_id FROM runs ORDER BY run_key"},
          {&readActiveRuns,
           "SELECT run_key, info, last_seq, pid, pgid, run_id FROM runs "
           "WHERE state NOT IN (4, 5, 6) ORDER BY run_key"},
          {&readSamples,
           "SELECT s.seq, s.step, s.epoch, s.wall_time, s.rank, k.name, s.value "
           "FROM metric_samples s JOIN metric_keys k ON k.key_id = s.key_id "
           "WHERE s.run_key = ?1 AND s.seq > ?2 AND s.seq <= ?3 ORDER BY s.seq"},
          {&readLogs,
           "SELECT seq, wall_time, stream, text FROM log_lines "
           "WHERE run_key = ?1 AND seq > ?2 AND seq <= ?3 ORDER BY seq"},
          {&readStates,
           "SELECT seq, info FROM state_events WHERE run_key = ?1 AND seq > ?2 AND seq <= ?3 "
           "ORDER BY seq"},
          {&readDeliveries,
           "SELECT rank, last_batch_seq, batches, points, duplicates, missing, dropped_total "
           "FROM rank_batches WHERE run_key = ?1 ORDER BY rank"},
          {&readSampleKeys,
           "SELECT s.rank, s.step, k.name FROM metric_samples s "
           "JOIN metric_keys k ON k.key_id = s.key_id WHERE s.run_key = ?1"},
          // Each entry's size in a reply, from above (protobuf's fields and tags: at most 64
          // bytes besides a sample's name, 32 besides a line's stream and text, 16 besides a
          // state's RunInfo), for paging by bytes (fetchSince).
          {&readEntrySizes,
           "SELECT seq, size FROM ("
           " SELECT s.seq AS seq, length(CAST(k.name AS BLOB)) + 64 AS size"
           " FROM metric_samples s JOIN metric_keys k ON k.key_id = s.key_id"
           " WHERE s.run_key = ?1 AND s.seq > ?2 AND s.seq <= ?3"
           " UNION ALL SELECT seq, length(CAST(stream AS BLOB)) + length(CAST(text AS BLOB)) + 32"
           " FROM log_lines WHERE run_key = ?1 AND seq > ?2 AND seq <= ?3"
           " UNION ALL SELECT seq, length(info) + 16 FROM state_events"
           " WHERE run_key = ?1 AND seq > ?2 AND seq <= ?3) ORDER BY seq"},
      });
}

namespace {

// Calls op(impl), whose REQUIRES(impl.writeMutex) the caller has ensured. The analysis is off for
// this one call only: clang 14 matches a lambda's REQUIRES against the lambda object rather than
// its argument, so it cannot see that the caller holds impl.writeMutex.
template <typename Op, typename Impl>
auto callWithWriteLock(Op& op, Impl& impl) NO_THREAD_SAFETY_ANALYSIS {
  return op(impl);
}

}  // namespace

template <typename Op>
auto Journal::Impl::write(Op&& op) -> decltype(op(*this)) {
  RecursiveMutexLock lock(writeMutex);
  // Nothing new goes into a damaged file.
  if (damaged.load()) return refusedWrite();
  const bool nested = groupDepth > 0;
  // On its own: an IMMEDIATE transaction (the write lock is taken up front, waiting up to
  // busy_timeout, so the read-then-write inside never fails to upgrade). Inside a group: a
  // savepoint, so a failing append undoes only itself.
  RINGSIDE_RETURN_IF_ERROR(damageOf(
      writer.exec(nested ? "SAVEPOINT journal_write" : "BEGIN IMMEDIATE"), "starting a write"));
  auto result = callWithWriteLock(op, *this);
  if (result.isOk()) {
    Status done = writer.exec(nested ? "RELEASE journal_write" : "COMMIT");
    if (done.isOk()) return result;
    // A failed COMMIT leaves the transaction open: undo it so the next write starts clean.
    undo(nested);
    return damageOf(done, "committing a write");
  }
  undo(nested);
  // Every kCorruption of a write comes from SQLite: the write path parses no stored blob.
  if (statusOf(result).code() == Status::Code::kCorruption) {
    return damageOf(statusOf(result), "writing");
  }
  return result;
}

Status Journal::Impl::damageOf(const Status& status, const std::string& doing) {
  if (status.code() != Status::Code::kCorruption) return status;
  std::string report = "journal " + path + " is damaged: " + doing + " failed: " + status.message();
  bool first = false;
  {
    MutexLock lock(damageMutex);
    if (damage.empty()) {
      damage = report;
      first = true;
    }
  }
  damaged.store(true);
  report +=
      ". The agent writes nothing more to it. Restart the agent: it checks the journal at start, "
      "moves a damaged one aside and starts an empty one (docs/journal.md, \"Damaged journals\")";
  if (first) log("error", report);
  return Status::corruption(report);
}

Status Journal::Impl::refusedWrite() {
  MutexLock lock(damageMutex);
  return Status::corruption(damage +
                            ". Nothing more is written to it: restart the agent, which moves a "
                            "damaged journal aside and starts an empty one (docs/journal.md, "
                            "\"Damaged journals\")");
}

void Journal::Impl::reportUnreadableRun(int64_t runKey, const Status& why) {
  if (!unreadableRuns.insert(runKey).second) return;
  log("warning", why.message() +
                     ". It is left out of run lists and cannot be fetched; the other runs are "
                     "unaffected. Bytes of the file changed after they were written (see "
                     "docs/journal.md, \"Damaged journals\")");
}

Result<RunKey> Journal::Impl::lookupRun(const std::string& runId) {
  findRun.bindText(1, runId);
  auto row = findRun.step();
  RunKey run;
  if (row.isOk() && row.value()) {
    run.key = findRun.columnInt(0);
    run.lastSeq = static_cast<uint64_t>(findRun.columnInt(1));
  }
  findRun.reset();
  if (!row.isOk()) return row.status();
  if (!row.value()) {
    return Status::notFound("run " + runId + " is not in the journal (launched by another agent?)");
  }
  return run;
}

Result<int64_t> Journal::Impl::keyId(const std::string& name) {
  if (auto it = keyIds.find(name); it != keyIds.end()) return it->second;
  findKey.bindText(1, name);
  auto row = findKey.step();
  const bool found = row.isOk() && row.value();
  int64_t id = found ? findKey.columnInt(0) : 0;
  findKey.reset();
  if (!row.isOk()) return row.status();
  if (!found) {
    insertKey.bindText(1, name);
    RINGSIDE_RETURN_IF_ERROR(insertKey.run());
    id = sqlite3_last_insert_rowid(writer.get());
  }
  keyIds.emplace(name, id);
  return id;
}

Status Journal::Impl::insertSampleRow(int64_t runKey, uint64_t seq, const v1::MetricSample& sample,
                                      int64_t keyId) {
  insertSample.bindInt(1, runKey);
  insertSample.bindInt(2, static_cast<int64_t>(seq));
  insertSample.bindInt(3, sample.step());
  insertSample.bindInt(4, sample.epoch());
  insertSample.bindDouble(5, sample.wall_time());
  insertSample.bindInt(6, sample.rank());
  insertSample.bindInt(7, keyId);
  // SQLite stores NaN as NULL; the read path turns NULL back into NaN.
  insertSample.bindDouble(8, sample.value());
  return insertSample.run();
}

Status Journal::Impl::setLastSeq(const RunKey& run) {
  updateLastSeq.bindInt(1, run.key);
  updateLastSeq.bindInt(2, static_cast<int64_t>(run.lastSeq));
  return updateLastSeq.run();
}

Status Journal::Impl::upsertRunRow(const v1::RunInfo& info, const ProcessIds* process) {
  if (info.run_id().empty()) return Status::invalidArgument("RunInfo has an empty run_id");
  v1::RunInfo stored = info;
  stored.set_last_seq(0);  // the last_seq column is the truth
  const std::string blob = stored.SerializeAsString();
  Statement& statement = process != nullptr ? upsertRunFull : upsertRunInfo;
  statement.bindText(1, info.run_id());
  statement.bindBlob(2, blob);
  statement.bindInt(3, info.state());
  statement.bindDouble(4, info.created_time());
  statement.bindDouble(5, info.end_time());
  statement.bindText(6, info.run_dir());
  if (process != nullptr) {
    process->pid ? statement.bindInt(7, *process->pid) : statement.bindNull(7);
    process->pgid ? statement.bindInt(8, *process->pgid) : statement.bindNull(8);
  }
  return statement.run();
}

Journal::Journal(std::string path, std::unique_ptr<Impl> impl)
    : path_(std::move(path)), impl_(std::move(impl)) {}

Journal::~Journal() = default;

Result<std::unique_ptr<Journal>> Journal::open(const std::string& path,
                                               const JournalOptions& options) {
  auto impl = std::make_unique<Impl>();
  // Not shared with any thread yet: the locks let the analysis check the set-up below.
  RecursiveMutexLock writeLock(impl->writeMutex);
  MutexLock readLock(impl->readMutex);
  impl->options = options;
  impl->path = path;
  impl->log = options.log ? options.log : logToStderr;

  // A damaged file is never written to: it is checked before anything else opens it, and moved
  // aside as found (docs/journal.md, "Damaged journals" says why aside rather than refused).
  auto problems = checkJournalIntegrity(path, options.busyTimeoutMs);
  if (!problems.isOk()) return problems.status();
  if (!problems->empty()) {
    const size_t count = problems->size();
    const std::string finding =
        "PRAGMA integrity_check found " +
        (count >= static_cast<size_t>(kMaxIntegrityProblems) ? "at least " : std::string()) +
        std::to_string(count) + (count == 1 ? " problem" : " problems") + ", the first: \"" +
        problems->front() + "\"";
    auto moved = quarantineJournal(path);
    if (!moved.isOk()) {
      return Status::corruption(
          "journal " + path + " is damaged (" + finding +
          ") and could not be moved aside: " + moved.status().message() +
          ". Move it away yourself, with its -wal and -shm files (the agent then starts an empty "
          "journal), or recover it as docs/journal.md, \"Damaged journals\", describes");
    }
    impl->quarantinedTo = *moved;
    std::string report = "journal " + path + " is damaged (" + finding + "): moved it, with its ";
    report += "-wal and -shm files, to " + *moved + " and started an empty journal. Runs ";
    report += "recorded only there are no longer listed, fetched or re-adopted; their run ";
    report += "directories are kept. To save what is readable: sqlite3 " + *moved;
    report += " .recover (docs/journal.md, \"Damaged journals\")";
    impl->log("error", report);
  }

  auto writer = Connection::open(path, /*create=*/true);
  if (!writer.isOk()) return writer.status();
  impl->writer = std::move(writer).value();
  Connection& db = impl->writer;
  sqlite3_busy_timeout(db.get(), options.busyTimeoutMs);
  // journal_mode=WAL is persistent in the file; the other pragmas are per connection.
  auto mode = Statement::prepare(db.get(), "PRAGMA journal_mode = WAL");
  if (!mode.isOk()) return mode.status().withContext(path);
  auto modeRow = mode->step();
  if (!modeRow.isOk()) return modeRow.status().withContext(path);
  if (!modeRow.value() || mode->columnText(0) != "wal") {
    return Status::ioError("journal " + path +
                           " cannot use WAL mode (a network file system?): put the agent's state "
                           "directory on a local disk");
  }
  mode = Statement();
  const std::string pragmas = std::string("PRAGMA synchronous = ") +
                              (options.syncEveryCommit ? "FULL" : "NORMAL") +
                              "; PRAGMA foreign_keys = ON";
  RINGSIDE_RETURN_IF_ERROR(db.exec(pragmas.c_str()));
  RINGSIDE_RETURN_IF_ERROR(migrateJournal(db, path));
  // last_seq is written in the same transaction as the entries; re-derive it from the entries
  // anyway so the next seq always continues after MAX(seq) stored.
  RINGSIDE_RETURN_IF_ERROR(db.exec(
      "UPDATE runs SET last_seq = max(last_seq,"
      " coalesce((SELECT max(seq) FROM metric_samples m WHERE m.run_key = runs.run_key), 0),"
      " coalesce((SELECT max(seq) FROM log_lines l WHERE l.run_key = runs.run_key), 0),"
      " coalesce((SELECT max(seq) FROM state_events e WHERE e.run_key = runs.run_key), 0))"));

  auto reader = Connection::open(path, /*create=*/false);
  if (!reader.isOk()) return reader.status();
  impl->reader = std::move(reader).value();
  sqlite3_busy_timeout(impl->reader.get(), options.busyTimeoutMs);
  RINGSIDE_RETURN_IF_ERROR(impl->reader.exec("PRAGMA query_only = ON"));
  RINGSIDE_RETURN_IF_ERROR(impl->prepareStatements().withContext(path));
  return std::unique_ptr<Journal>(new Journal(path, std::move(impl)));
}

Status Journal::upsertRun(const v1::RunInfo& info, const ProcessIds& process) {
  return impl_->write([&](Impl& impl)
                          REQUIRES(impl.writeMutex) { return impl.upsertRunRow(info, &process); });
}

Result<RankAppendResult> Journal::appendRankMetrics(const v1::RankMetrics& batch) {
  if (batch.batch_seq() == 0) {
    return Status::invalidArgument("rank " + std::to_string(batch.rank()) + " of run " +
                                   batch.run_id() + " sent batch_seq 0 (they start at 1)");
  }
  if (batch.rank() < 0) {
    return Status::invalidArgument("run " + batch.run_id() + " sent a batch for rank " +
                                   std::to_string(batch.rank()));
  }
  return impl_->write([&](Impl& impl) REQUIRES(impl.writeMutex) -> Result<RankAppendResult> {
    auto run = impl.lookupRun(batch.run_id());
    if (!run.isOk()) return run.status();
    impl.findRankBatch.bindInt(1, run->key);
    impl.findRankBatch.bindInt(2, batch.rank());
    auto row = impl.findRankBatch.step();
    const bool seen = row.isOk() && row.value();
    const uint64_t lastBatchSeq = seen ? impl.findRankBatch.columnInt(0) : 0;
    impl.findRankBatch.reset();
    if (!row.isOk()) return row.status();

    RankAppendResult result;
    if (batch.batch_seq() <= lastBatchSeq) {
      impl.countDuplicate.bindInt(1, run->key);
      impl.countDuplicate.bindInt(2, batch.rank());
      RINGSIDE_RETURN_IF_ERROR(impl.countDuplicate.run());
      result.duplicate = true;
      return result;
    }
    result.missingBatches = batch.batch_seq() - lastBatchSeq - 1;
    result.samples.reserve(batch.points_size());
    for (const v1::RankMetricPoint& point : batch.points()) {
      auto key = impl.keyId(point.name());
      if (!key.isOk()) return key.status();
      v1::MetricSample& sample = result.samples.emplace_back();
      sample.set_seq(++run->lastSeq);
      sample.set_step(point.step());
      sample.set_epoch(point.epoch());
      sample.set_wall_time(point.wall_time());
      sample.set_rank(point.global() ? -1 : batch.rank());
      sample.set_name(point.name());
      sample.set_value(point.value());
      RINGSIDE_RETURN_IF_ERROR(impl.insertSampleRow(run->key, sample.seq(), sample, key.value()));
    }
    Statement& upsert = impl.upsertRankBatch;
    upsert.bindInt(1, run->key);
    upsert.bindInt(2, batch.rank());
    upsert.bindInt(3, static_cast<int64_t>(batch.batch_seq()));
    upsert.bindInt(4, batch.points_size());
    upsert.bindInt(5, static_cast<int64_t>(result.missingBatches));
    upsert.bindInt(6, static_cast<int64_t>(batch.dropped_total()));
    RINGSIDE_RETURN_IF_ERROR(upsert.run());
    RINGSIDE_RETURN_IF_ERROR(impl.setLastSeq(run.value()));
    return result;
  });
}

Result<std::vector<v1::MetricSample>> Journal::appendMetricSamples(
    const std::string& runId, const std::vector<v1::MetricSample>& samples) {
  return impl_->write([&](Impl& impl) REQUIRES(
                          impl.writeMutex) -> Result<std::vector<v1::MetricSample>> {
    auto run = impl.lookupRun(runId);
    if (!run.isOk()) return run.status();
    std::vector<v1::MetricSample> stored = samples;
    for (v1::MetricSample& sample : stored) {
      auto key = impl.keyId(sample.name());
      if (!key.isOk()) return key.status();
      sample.set_seq(++run->lastSeq);
      RINGSIDE_RETURN_IF_ERROR(impl.insertSampleRow(run->key, sample.seq(), sample, key.value()));
    }
    RINGSIDE_RETURN_IF_ERROR(impl.setLastSeq(run.value()));
    return stored;
  });
}

Result<std::vector<v1::LogLine>> Journal::appendLogLines(const std::string& runId,
                                                         const std::vector<v1::LogLine>& lines) {
  return impl_->write([&](Impl& impl)
                          REQUIRES(impl.writeMutex) -> Result<std::vector<v1::LogLine>> {
                            auto run = impl.lookupRun(runId);
                            if (!run.isOk()) return run.status();
                            std::vector<v1::LogLine> stored = lines;
                            for (v1::LogLine& line : stored) {
                              line.set_seq(++run->lastSeq);
                              impl.insertLog.bindInt(1, run->key);
                              impl.insertLog.bindInt(2, static_cast<int64_t>(line.seq()));
                              impl.insertLog.bindDouble(3, line.wall_time());
                              impl.insertLog.bindText(4, line.stream());
                              impl.insertLog.bindText(5, line.text());
                              RINGSIDE_RETURN_IF_ERROR(impl.insertLog.run());
                            }
                            RINGSIDE_RETURN_IF_ERROR(impl.setLastSeq(run.value()));
                            return stored;
                          });
}

Result<v1::RunStateEvent> Journal::appendStateEvent(const v1::RunInfo& info) {
  return impl_->write([&](Impl& impl) REQUIRES(impl.writeMutex) -> Result<v1::RunStateEvent> {
    RINGSIDE_RETURN_IF_ERROR(impl.upsertRunRow(info, nullptr));
    auto run = impl.lookupRun(info.run_id());
    if (!run.isOk()) return run.status();
    v1::RunStateEvent event;
    event.set_seq(++run->lastSeq);
    *event.mutable_run() = info;
    event.mutable_run()->set_last_seq(event.seq());
    const std::string blob = event.run().SerializeAsString();
    impl.insertState.bindInt(1, run->key);
    impl.insertState.bindInt(2, static_cast<int64_t>(event.seq()));
    impl.insertState.bindBlob(3, blob);
    RINGSIDE_RETURN_IF_ERROR(impl.insertState.run());
    RINGSIDE_RETURN_IF_ERROR(impl.setLastSeq(run.value()));
    return event;
  });
}

Result<std::vector<StoredRun>> Journal::loadRuns(bool activeOnly) {
  Impl& impl = *impl_;
  MutexLock lock(impl.readMutex);
  Statement& query = activeOnly ? impl.readActiveRuns : impl.readRuns;
  std::vector<StoredRun> runs;
  // One record that cannot be read must not hide the others: skip it, report it after the scan.
  std::vector<std::pair<int64_t, Status>> unreadable;
  const Status status = query.forEachRow([&](const Statement& row) {
    auto run = readRunRow(row, 1, path_);
    if (run.isOk()) {
      run->runKey = row.columnInt(0);
      runs.push_back(std::move(run).value());
    } else {
      unreadable.emplace_back(row.columnInt(0), run.status());
    }
    return Status::ok();
  });
  for (const auto& [runKey, why] : unreadable) impl.reportUnreadableRun(runKey, why);
  if (status.code() == Status::Code::kCorruption) return impl.damageOf(status, "listing the runs");
  if (!status.isOk()) return status.withContext("loading runs from journal " + path_);
  return runs;
}

Result<StoredRun> Journal::Impl::readRunById(const std::string& runId, int64_t* runKey) {
  readRun.bindText(1, runId);
  auto row = readRun.step();
  Result<StoredRun> run = Status::notFound("run " + runId + " is not in the journal");
  if (!row.isOk()) {
    run = damageOf(row.status(), "reading run " + runId);
  } else if (row.value()) {
    *runKey = readRun.columnInt(0);
    run = readRunRow(readRun, 1, path);
    if (run.isOk()) run->runKey = *runKey;
    if (!run.isOk()) reportUnreadableRun(*runKey, run.status());
  }
  readRun.reset();
  return run;
}

Result<StoredRun> Journal::findRun(const std::string& runId) {
  MutexLock lock(impl_->readMutex);
  int64_t runKey = 0;
  return impl_->readRunById(runId, &runKey);
}

Result<v1::FetchRunDataReply> Journal::fetchSince(const std::string& runId, uint64_t afterSeq,
                                                  uint32_t maxEntries) {
  Impl& impl = *impl_;
  const uint32_t pageSize = std::min(maxEntries == 0 ? impl.options.defaultPageSize : maxEntries,
                                     impl.options.maxPageSize);
  MutexLock lock(impl.readMutex);
  // One read transaction: the run's last_seq and the entries come from the same snapshot.
  RINGSIDE_RETURN_IF_ERROR(impl.damageOf(impl.reader.exec("BEGIN"), "starting a read"));
  auto body = [&]() REQUIRES(impl.readMutex) -> Result<v1::FetchRunDataReply> {
    v1::FetchRunDataReply reply;
    reply.set_run_id(runId);
    int64_t runKey = 0;
    Result<StoredRun> run = impl.readRunById(runId, &runKey);
    if (!run.isOk()) return run.status();
    const uint64_t lastSeq = run->info.last_seq();
    *reply.mutable_run() = std::move(run->info);
    uint64_t upper = afterSeq >= lastSeq ? afterSeq : std::min(lastSeq, afterSeq + pageSize);
    if (upper > afterSeq) {
      // Cut the page where its entries pass the byte budget (at least one entry): log lines of
      // 64 KiB or large state records would otherwise make a reply over the frame limit.
      size_t bytes = 0;
      uint64_t fits = afterSeq;
      Statement& sizes = impl.readEntrySizes;
      sizes.bindInt(1, runKey);
      sizes.bindInt(2, static_cast<int64_t>(afterSeq));
      sizes.bindInt(3, static_cast<int64_t>(upper));
      bool full = false;
      Status sized = sizes.forEachRow([&](const Statement& q) {
        bytes += static_cast<size_t>(q.columnInt(1));
        if (bytes > impl.options.maxPageBytes && fits > afterSeq) {
          full = true;
          return Status::aborted("the page is full");  // stops the scan
        }
        fits = static_cast<uint64_t>(q.columnInt(0));
        return Status::ok();
      });
      if (full) sized = Status::ok();
      RINGSIDE_RETURN_IF_ERROR(impl.damageOf(sized, "reading the entries of run " + runId));
      if (full) upper = fits;
    }
    reply.set_last_seq(upper);
    reply.set_more(upper < lastSeq);
    if (upper == afterSeq) return reply;

    auto scan = [&](Statement& query, const std::function<Status(const Statement&)>& takeRow) {
      query.bindInt(1, runKey);
      query.bindInt(2, static_cast<int64_t>(afterSeq));
      query.bindInt(3, static_cast<int64_t>(upper));
      return impl.damageOf(query.forEachRow(takeRow), "reading the entries of run " + runId);
    };
    RINGSIDE_RETURN_IF_ERROR(scan(impl.readSamples, [&](const Statement& q) {
      v1::MetricSample* sample = reply.add_samples();
      sample->set_seq(q.columnInt(0));
      sample->set_step(q.columnInt(1));
      sample->set_epoch(q.columnInt(2));
      sample->set_wall_time(q.columnDouble(3));
      sample->set_rank(static_cast<int32_t>(q.columnInt(4)));
      sample->set_name(std::string(q.columnText(5)));
      sample->set_value(q.columnIsNull(6) ? std::numeric_limits<double>::quiet_NaN()
                                          : q.columnDouble(6));
      return Status::ok();
    }));
    RINGSIDE_RETURN_IF_ERROR(scan(impl.readLogs, [&](const Statement& q) {
      v1::LogLine* line = reply.add_log_lines();
      line->set_seq(q.columnInt(0));
      line->set_wall_time(q.columnDouble(1));
      line->set_stream(std::string(q.columnText(2)));
      line->set_text(std::string(q.columnText(3)));
      return Status::ok();
    }));
    // A state event that does not parse is left out (one bad row must not make the run
    // unreadable); reported after the scan.
    std::vector<uint64_t> unreadable;
    RINGSIDE_RETURN_IF_ERROR(scan(impl.readStates, [&](const Statement& q) {
      v1::RunStateEvent event;
      event.set_seq(q.columnInt(0));
      const std::string_view blob = q.columnBlob(1);
      if (q.columnType(1) != SQLITE_BLOB ||
          !event.mutable_run()->ParseFromArray(blob.data(), static_cast<int>(blob.size()))) {
        unreadable.push_back(event.seq());
      } else {
        *reply.add_states() = std::move(event);
      }
      return Status::ok();
    }));
    for (uint64_t seq : unreadable) {
      if (!impl.unreadableStates.emplace(runKey, seq).second) continue;
      impl.log("warning", "state event " + std::to_string(seq) + " of run " + runId +
                              " in journal " + path_ +
                              " cannot be read: its RunInfo does not parse. Fetches of the run "
                              "leave it out; its other entries are served");
    }
    return reply;
  };
  auto reply = body();
  endRead(impl.reader);
  if (!reply.isOk()) return reply.status().withContext("fetching run data from " + path_);
  return reply;
}

Result<std::vector<RankDelivery>> Journal::rankDeliveries(const std::string& runId) {
  Impl& impl = *impl_;
  MutexLock lock(impl.readMutex);
  RINGSIDE_RETURN_IF_ERROR(impl.damageOf(impl.reader.exec("BEGIN"), "starting a read"));
  auto body = [&]() REQUIRES(impl.readMutex) -> Result<std::vector<RankDelivery>> {
    int64_t runKey = 0;
    if (auto run = impl.readRunById(runId, &runKey); !run.isOk()) return run.status();
    std::vector<RankDelivery> deliveries;
    Statement& query = impl.readDeliveries;
    query.bindInt(1, runKey);
    const Status scanned = query.forEachRow([&](const Statement& row) {
      RankDelivery& delivery = deliveries.emplace_back();
      delivery.rank = static_cast<int32_t>(row.columnInt(0));
      delivery.lastBatchSeq = row.columnInt(1);
      delivery.batches = row.columnInt(2);
      delivery.points = row.columnInt(3);
      delivery.duplicates = row.columnInt(4);
      delivery.missingBatches = row.columnInt(5);
      delivery.droppedTotal = row.columnInt(6);
      return Status::ok();
    });
    RINGSIDE_RETURN_IF_ERROR(impl.damageOf(scanned, "reading the rank deliveries of run " + runId));
    return deliveries;
  };
  auto deliveries = body();
  endRead(impl.reader);
  return deliveries;
}

Status Journal::forEachSampleKey(
    const std::string& runId,
    const std::function<void(int32_t rank, int64_t step, std::string_view name)>& take) {
  Impl& impl = *impl_;
  MutexLock lock(impl.readMutex);
  RINGSIDE_RETURN_IF_ERROR(impl.damageOf(impl.reader.exec("BEGIN"), "starting a read"));
  auto body = [&]() REQUIRES(impl.readMutex) -> Status {
    int64_t runKey = 0;
    if (auto run = impl.readRunById(runId, &runKey); !run.isOk()) return run.status();
    Statement& query = impl.readSampleKeys;
    query.bindInt(1, runKey);
    return impl.damageOf(query.forEachRow([&](const Statement& row) {
      take(static_cast<int32_t>(row.columnInt(0)), row.columnInt(1), row.columnText(2));
      return Status::ok();
    }),
                         "reading the samples of run " + runId);
  };
  const Status status = body();
  endRead(impl.reader);
  return status;
}

Result<RetentionReport> Journal::applyRetention(const RetentionPolicy& policy, double now) {
  if (!policy.maxAgeDays && !policy.maxEndedRuns) return RetentionReport{};
  return impl_->write([&](Impl& impl) REQUIRES(impl.writeMutex) -> Result<RetentionReport> {
    // Selected ended runs: too old, or beyond the newest maxEndedRuns by end time.
    std::string sql = std::string("SELECT run_key, last_seq FROM runs WHERE state IN ") +
                      kEndedStates + " AND (0";
    if (policy.maxAgeDays) sql += " OR end_time < ?1";
    if (policy.maxEndedRuns) {
      sql += std::string(" OR run_key NOT IN (SELECT run_key FROM runs WHERE state IN ") +
             kEndedStates + " ORDER BY end_time DESC, run_key DESC LIMIT ?2)";
    }
    sql += ")";
    auto select = Statement::prepare(impl.writer.get(), sql.c_str());
    if (!select.isOk()) return select.status();
    if (policy.maxAgeDays) select->bindDouble(1, now - *policy.maxAgeDays * 86400.0);
    if (policy.maxEndedRuns) select->bindInt(2, *policy.maxEndedRuns);
    std::vector<RunKey> doomed;
    RINGSIDE_RETURN_IF_ERROR(select->forEachRow([&](const Statement& row) {
      doomed.push_back({row.columnInt(0), static_cast<uint64_t>(row.columnInt(1))});
      return Status::ok();
    }));
    select = Statement();
    RetentionReport report;
    for (const RunKey& run : doomed) {
      impl.deleteRun.bindInt(1, run.key);
      RINGSIDE_RETURN_IF_ERROR(impl.deleteRun.run());  // entries go by ON DELETE CASCADE
      ++report.runsDeleted;
      report.entriesDeleted += run.lastSeq;  // seqs are gap-free: last_seq entries
    }
    return report;
  });
}

Status Journal::inTransaction(const std::function<void()>& body) {
  RecursiveMutexLock lock(impl_->writeMutex);
  Connection& db = impl_->writer;
  if (impl_->groupDepth > 0) {  // nested: already inside the caller's transaction
    body();
    return Status::ok();
  }
  if (impl_->damaged.load()) return impl_->refusedWrite();
  RINGSIDE_RETURN_IF_ERROR(impl_->damageOf(db.exec("BEGIN IMMEDIATE"), "starting a write"));
  ++impl_->groupDepth;
  try {
    body();
  } catch (...) {
    // Leave no transaction open behind an escaping exception (e.g. std::bad_alloc).
    --impl_->groupDepth;
    // The exception is what the caller sees; a failed ROLLBACK cannot be reported beside it.
    (void)db.exec("ROLLBACK");
    impl_->keyIds.clear();
    throw;
  }
  --impl_->groupDepth;
  Status committed = db.exec("COMMIT");
  if (!committed.isOk()) {
    (void)db.exec("ROLLBACK");  // the COMMIT's error is the one returned
    impl_->keyIds.clear();
  }
  return impl_->damageOf(committed, "committing a write");
}

JournalHealth Journal::health() const {
  Impl& impl = *impl_;
  JournalHealth health;
  health.quarantinedTo = impl.quarantinedTo;
  {
    MutexLock lock(impl.readMutex);
    health.unreadableRuns = impl.unreadableRuns.size();
    health.unreadableStateEvents = impl.unreadableStates.size();
  }
  MutexLock lock(impl.damageMutex);
  health.damaged = impl.damaged.load();
  health.damage = impl.damage;
  return health;
}

}  // namespace ringside::agent
