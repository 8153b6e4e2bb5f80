// The journal's set-up and its findings: open() (integrity check, quarantine, pragmas, schema,
// statements), damage reports and health(). The write path is in journal_write.cpp, the read
// path in journal_read.cpp; Journal::Impl in journal_impl.h.
#include "ringside/agent/journal.h"

#include <cstdio>
#include <filesystem>
#include <string>
#include <utility>

#include "journal_impl.h"
#include "journal_schema.h"

namespace ringside::agent {

using sqlite::Connection;
using sqlite::Statement;

bool isEndedState(v1::RunState state) {
  return state == v1::COMPLETED || state == v1::FAILED || state == v1::STOPPED;
}

namespace {

Status prepareAll(sqlite3* db, std::initializer_list<std::pair<Statement*, const char*>> list) {
  for (const auto& [statement, sql] : list) {
    auto prepared = Statement::prepare(db, sql);
    if (!prepared.isOk()) return prepared.status();
    *statement = std::move(prepared).value();
  }
  return Status::ok();
}

// The default JournalOptions::log: the agent's log format on stderr.
void logToStderr(const char* level, const std::string& text) {
  std::fprintf(stderr, "ringside-agent %s: %s\n", level, text.c_str());
}

// An INSERT of `rows` rows into metric_samples; row r's columns are parameters 8r+1 to 8r+8.
std::string sampleInsertSql(size_t rows) {
  std::string sql =
      "INSERT INTO metric_samples (run_key, seq, step, epoch, wall_time, rank, key_id, value) "
      "VALUES ";
  for (size_t row = 0; row < rows; ++row) {
    sql += row == 0 ? "(?,?,?,?,?,?,?,?)" : ",(?,?,?,?,?,?,?,?)";
  }
  return sql;
}

}  // namespace

Status Journal::Impl::prepareStatements() {
  RINGSIDE_RETURN_IF_ERROR(prepareAll(
      writer.get(),
      {
          {&findRun, "SELECT run_key, last_seq, state FROM runs WHERE run_id = ?1"},
          {&readRunInfo, "SELECT info FROM runs WHERE run_key = ?1"},
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
          {&beginWrite, "BEGIN IMMEDIATE"},
          {&commitWrite, "COMMIT"},
          {&rollbackWrite, "ROLLBACK"},
          {&savepointWrite, "SAVEPOINT journal_write"},
          {&releaseWrite, "RELEASE journal_write"},
          {&rollbackToWrite, "ROLLBACK TO journal_write"},
      }));
  for (size_t i = 0; i < kSampleInsertRows.size(); ++i) {
    auto prepared = Statement::prepare(writer.get(), sampleInsertSql(kSampleInsertRows[i]).c_str());
    if (!prepared.isOk()) return prepared.status();
    insertSamples[i] = std::move(prepared).value();
  }
  return prepareAll(
      reader.get(),
      {
          {&readRun,
           "SELECT run_key, info, last_seq, pid, pgid, run_id FROM runs WHERE run_id = ?1"},
          // A range of the primary key from ?1 on: a page of a long run list reads that page.
          {&readRuns,
           "SELECT run_key, info, last_seq, pid, pgid, run_id FROM runs WHERE run_key > ?1 "
           "ORDER BY run_key"},
          {&readActiveRuns,
           "SELECT run_key, info, last_seq, pid, pgid, run_id FROM runs "
           "WHERE run_key > ?1 AND state NOT IN (4, 5, 6) ORDER BY run_key"},
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

  // A damaged write-ahead log loses, without a word from SQLite, every transaction after the
  // damage: found before anything opens the journal, said, and kept as a copy; the journal goes
  // on from what SQLite replays (docs/journal.md, "Damaged journals").
  auto wal = checkJournalWal(path + "-wal");
  if (!wal.isOk()) return wal.status();
  if (wal->has_value()) {
    const WalDamage& damage = **wal;
    const std::string copy = path + "-wal.damaged-" + utcFileStamp();
    std::error_code ec;
    std::filesystem::copy_file(path + "-wal", copy,
                               std::filesystem::copy_options::overwrite_existing, ec);
    std::string report = "journal " + path + ": its write-ahead log " + path + "-wal is damaged: ";
    if (damage.badHeader) {
      report += "its header fails its checksum, so none of its " +
                std::to_string(damage.lostFrames) + " frames can be replayed";
    } else {
      report += "frame " + std::to_string(damage.badFrame) + " (byte " +
                std::to_string(damage.badOffset) + ") fails its checksum, and " +
                std::to_string(damage.lostCommits) +
                (damage.lostCommits == 1 ? " transaction" : " transactions") + " (" +
                std::to_string(damage.lostFrames) + " frames) written after it cannot be replayed";
    }
    report += ": what they recorded (run states, samples, log lines of the last moments before "
              "the agent stopped) is lost, and the journal goes on from the " +
              std::to_string(damage.replayedFrames) + " frames before the damage. ";
    report += ec ? "The damaged log could not be copied aside (" + ec.message() + ")."
                 : "The damaged log is kept as " + copy + ".";
    report += " (docs/journal.md, \"Damaged journals\")";
    impl->walDamage = report;
    impl->log("error", report);
  }
  const bool checkpointDamagedWal = wal->has_value();

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
  // After a damaged log, what SQLite replayed goes into the main file and the log starts over:
  // the damaged frames past the replayed ones would otherwise stay in it, be found again at the
  // next open and reported as a second loss.
  if (checkpointDamagedWal) {
    RINGSIDE_RETURN_IF_ERROR(db.exec("PRAGMA wal_checkpoint(TRUNCATE)"));
  }
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

JournalHealth Journal::health() const {
  Impl& impl = *impl_;
  JournalHealth health;
  health.quarantinedTo = impl.quarantinedTo;
  health.walDamage = impl.walDamage;
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
