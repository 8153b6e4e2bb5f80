// The agent's durable journal (docs/design.md decisions 2 and 6; schema in docs/journal.md): one
// SQLite database in WAL mode holding the run records and, per run, every metric sample, log line
// and run state event under a per-run sequence number 1, 2, 3, ... with no gap, shared by the three
// kinds. The agent journals an entry before it publishes it, and fetch-since replays from here.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ringside/common/protocol.h"
#include "ringside/common/status.h"
#include "ringside/proto/ringside.pb.h"

namespace ringside::agent {

namespace v1 = ::ringside::v1;

struct JournalOptions {
  // How long a statement waits for a lock held by another connection, ms (PRAGMA busy_timeout).
  int busyTimeoutMs = 5000;
  // PRAGMA synchronous: false = NORMAL (a commit survives a crash of the agent, not of the OS or
  // a power loss; the WAL is fsynced at checkpoints), true = FULL (fsync at every commit).
  bool syncEveryCommit = false;
  // Entries per fetchSince page when the request asks for 0.
  uint32_t defaultPageSize = 5000;
  // Upper bound on a fetchSince page, whatever the request asks (keeps replies under the
  // transport's message size limit).
  uint32_t maxPageSize = 50000;
  // Bytes of entries per fetchSince page (their serialized size, estimated from above): the
  // page ends before the entry that would pass it, after at least one entry.
  size_t maxPageBytes = protocol::kMaxReplyPageBytes;
  // Where the journal reports what it found and what it did about it: a damaged file moved
  // aside at open, damage found while running, a run record or state event skipped because it
  // does not parse. `level` is "error" or "warning"; `text` says what, where and what to do.
  // Called on the thread of the call that found it, at most once per finding, with the
  // journal's locks held: it must not call back into the journal. Null: one line on stderr,
  // "ringside-agent <level>: <text>" (the agent's log format).
  std::function<void(const char* level, const std::string& text)> log;
};

// What the journal has found wrong with its file since open (Journal::health()).
struct JournalHealth {
  // Where open() moved a damaged file ("<path>.corrupt-<UTC time>"); empty when it did not.
  std::string quarantinedTo;
  // What open() found lost in a damaged write-ahead log (the transactions SQLite could not
  // replay, and where the damaged log was copied), in words; empty when it was sound.
  std::string walDamage;
  // Distinct runs whose record (RunInfo) does not parse: loadRuns skips them, findRun and
  // fetchSince answer kCorruption for them.
  uint64_t unreadableRuns = 0;
  // State events that fetchSince skipped because their RunInfo does not parse.
  uint64_t unreadableStateEvents = 0;
  // True once an SQLite call on the journal returned SQLITE_CORRUPT while running; every write
  // is refused from then on (kCorruption), and `damage` says what was found.
  bool damaged = false;
  std::string damage;
};

// The processes of a run, kept for re-adoption after an agent restart. Absent while unknown
// (queued, or not started yet).
struct ProcessIds {
  std::optional<int64_t> pid;   // mpirun (or the shim that runs it)
  std::optional<int64_t> pgid;  // the process group the ranks run in
};

// A run record as stored: its RunInfo (last_seq filled from the journal) and its processes.
struct StoredRun {
  v1::RunInfo info;
  ProcessIds process;
  int64_t runKey = 0;  // the run's key in the journal: runs are listed in key order (oldest first)
};

// Samples that an append left out while it journaled the others (Journal::appendRankMetrics,
// appendMetricSamples): a rank outside the run's world size, a step or epoch outside 0 to 2^53
// (kMaxMetricStep, common/run_limits.h).
struct SampleRefusal {
  uint64_t samples = 0;
  std::string reason;  // why the first of them was left out, e.g. "step -3 is outside 0 to 2^53"
};

// What appendRankMetrics did with one batch.
struct RankAppendResult {
  // True when the batch's batch_seq is <= the last one journaled for (run, rank): it was resent
  // after a reconnect and skipped, nothing was written and `samples` is empty.
  bool duplicate = false;
  // Batches the rank never delivered: batch_seq - last stored batch_seq - 1 when positive.
  uint64_t missingBatches = 0;
  // The journaled samples with their seqs, in seq order, one per point, with rank = -1 for a
  // point marked global; ready to publish.
  std::vector<v1::MetricSample> samples;
  // Points of the batch left out (their step or epoch is outside 0 to 2^53); the others are
  // journaled and the batch counts as delivered.
  SampleRefusal refused;
};

// Per-rank delivery counters of a run (the rank_batches table).
struct RankDelivery {
  int32_t rank = 0;
  uint64_t lastBatchSeq = 0;
  uint64_t batches = 0;         // batches journaled
  uint64_t points = 0;          // points journaled
  uint64_t duplicates = 0;      // resent batches skipped
  uint64_t missingBatches = 0;  // batch_seq gaps seen
  uint64_t droppedTotal = 0;    // the rank's own count of points it dropped (latest batch)
};

// Which ended runs applyRetention deletes. Runs that have not ended are never deleted.
struct RetentionPolicy {
  // Delete runs that ended more than this many days before `now`.
  std::optional<double> maxAgeDays;
  // Keep at most this many ended runs (the most recently ended ones).
  std::optional<uint32_t> maxEndedRuns;
};

struct RetentionReport {
  uint64_t runsDeleted = 0;
  uint64_t entriesDeleted = 0;  // samples + log lines + state events of those runs
};

// True for COMPLETED, FAILED and STOPPED.
bool isEndedState(v1::RunState state);

// Thread-safety: every method may be called from any thread. Writes are serialized on one write
// connection (a mutex); fetchSince, loadRuns, findRun and rankDeliveries use a second, read-only
// connection under its own mutex and see the last committed data (WAL readers never wait for the
// writer). Every append is one transaction, committed when the call returns: the caller may
// publish what it returns. JournalWriter batches many appends into one transaction instead.
//
// Damage (docs/journal.md, "Damaged journals"): open() checks the file and moves a damaged one
// aside before starting an empty journal. A call that meets SQLITE_CORRUPT later returns
// kCorruption with a message that names the file and says what to do, and from then on every
// write is refused with kCorruption, so nothing new is written into a damaged file. One run
// record that does not parse is skipped by loadRuns (reported once through
// JournalOptions::log, counted in health()), so the other runs stay listed.
class Journal {
 public:
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  // Opens or creates the journal at `path` (its directory must exist), sets WAL, synchronous,
  // busy_timeout and foreign keys, and migrates the schema forward. An existing file is checked
  // first with PRAGMA integrity_check (about 0.7 s per 128 MB): a damaged one is moved aside
  // with its -wal and -shm files to "<path>.corrupt-<UTC YYYYmmddTHHMMSSZ>" (quarantineJournal),
  // reported through options.log at level "error", and an empty journal is started in its place
  // (health().quarantinedTo names where it went).
  // Errors: kIOError when the file cannot be opened or created; kInvalidArgument when the file's
  // schema is newer than this code's (the message names both versions); kCorruption when the
  // file is not an SQLite database or not a Ringside journal (refused, never moved), when it is
  // damaged and cannot be moved aside (the message says why and what to do), or fails to read.
  static Result<std::unique_ptr<Journal>> open(const std::string& path,
                                               const JournalOptions& options = {});

  const std::string& path() const { return path_; }

  // Inserts the run or replaces its record (info without last_seq, which the journal keeps, and
  // processes). Does not journal a state event: use appendStateEvent for state changes.
  // Errors: kInvalidArgument for an empty run_id; SQLite errors.
  Status upsertRun(const v1::RunInfo& info, const ProcessIds& process = {});

  // Run records, oldest created first; activeOnly: only runs that have not ended (for re-adoption
  // after a restart). A record that does not parse (its RunInfo blob is damaged, does not name
  // the run, or a NULL stands where a value belongs) is skipped: reported once per run through
  // JournalOptions::log at level "warning" and counted in health().unreadableRuns; the other
  // runs are returned. Errors: kCorruption when SQLite finds the file damaged (the journal is
  // then marked damaged, see the class comment); other SQLite errors.
  Result<std::vector<StoredRun>> loadRuns(bool activeOnly);
  // The run records with a key above `afterRunKey` (StoredRun::runKey; 0: from the first), in
  // key order, handed to `take` one at a time until it returns false or none is left;
  // activeOnly and unreadable records as loadRuns. One read of the primary key's range, so a
  // caller that stops after k runs pays for about k records, however many the journal holds
  // (ListRuns pages, reply_pages.h). `take` runs with the read lock held: it must not call into
  // the journal. Errors: as loadRuns.
  Status forEachRunAfter(bool activeOnly, int64_t afterRunKey,
                         const std::function<bool(StoredRun&&)>& take);
  // One run record. Errors: kNotFound for an unknown run_id; kCorruption when its record does not
  // parse (the message names the run; other runs are unaffected) or the file is damaged.
  Result<StoredRun> findRun(const std::string& runId);

  // Journals one rank batch: skips it when (run_id, rank, batch_seq) was seen (batch_seq <= the
  // last stored one, see RankAppendResult::duplicate), otherwise assigns the next seqs of the
  // run, one per point, and stores them as metric samples; a point whose step or epoch is
  // outside 0 to 2^53 is left out (RankAppendResult::refused). A NaN or infinite value is a
  // value (docs/metrics.md: a value that is not finite) and is journaled. Errors: kNotFound for
  // a run the journal does not hold; kFailedPrecondition for a run whose final state is
  // journaled (a run takes no samples after it ended: its final state is the last word on it,
  // docs/journal.md); kInvalidArgument for batch_seq 0, a negative rank or a rank outside the
  // run's world size (RunInfo.world_size, when known); SQLite errors. Nothing is written on an
  // error.
  Result<RankAppendResult> appendRankMetrics(const v1::RankMetrics& batch);

  // Journals samples of a run that come from elsewhere (JSON Lines of a custom command, global
  // values, metrics recovered from stdout.log): each gets the next seq (the input's seq is
  // ignored). Returns them with their seqs. A sample whose rank is neither -1 (global) nor in the
  // world size, or whose step or epoch is outside 0 to 2^53, is left out and counted in
  // *refused (when not null). Errors: kNotFound for an unknown run; kFailedPrecondition for a
  // run whose final state is journaled; SQLite errors (nothing is written then).
  Result<std::vector<v1::MetricSample>> appendMetricSamples(
      const std::string& runId, const std::vector<v1::MetricSample>& samples,
      SampleRefusal* refused = nullptr);

  // Journals log lines of a run (stdout/stderr, one line each, without newline), returning them
  // with their seqs. Errors as appendMetricSamples.
  Result<std::vector<v1::LogLine>> appendLogLines(const std::string& runId,
                                                  const std::vector<v1::LogLine>& lines);

  // Journals a state change: updates the run record (inserting it when new; processes are kept)
  // and stores the event with the next seq. The returned event's run.last_seq is that seq.
  // Errors: kInvalidArgument for an empty run_id; SQLite errors.
  Result<v1::RunStateEvent> appendStateEvent(const v1::RunInfo& info);

  // Everything journaled for `runId` with seq > afterSeq, at most maxEntries entries (0: the
  // default page size; capped at JournalOptions::maxPageSize) and at most
  // JournalOptions::maxPageBytes of them (at least one), each kind in seq order; the
  // union of the kinds is exactly the seqs afterSeq+1 .. last_seq of the page. `more` is true
  // while the run holds higher seqs; `run` is the current record. Reads one consistent snapshot.
  // A state event whose RunInfo does not parse is left out of the page (its seq is then missing
  // from the union; reported once per run through JournalOptions::log, counted in health()).
  // Errors: kNotFound for an unknown run; kCorruption when the run's record does not parse or
  // the file is damaged.
  Result<v1::FetchRunDataReply> fetchSince(const std::string& runId, uint64_t afterSeq,
                                           uint32_t maxEntries = 0);

  // Per-rank delivery counters of a run, by rank. Errors: kNotFound for an unknown run.
  Result<std::vector<RankDelivery>> rankDeliveries(const std::string& runId);

  // Calls take(rank, step, name) for every metric sample journaled for `runId` (in no particular
  // order), from one read snapshot; `name` is valid during the call only. Errors: kNotFound for
  // an unknown run; kCorruption for a damaged file.
  Status forEachSampleKey(
      const std::string& runId,
      const std::function<void(int32_t rank, int64_t step, std::string_view name)>& take);

  // Deletes ended runs (record and all entries) that the policy selects; `now` in Unix seconds.
  // One transaction. Errors: SQLite errors (nothing is deleted then).
  Result<RetentionReport> applyRetention(const RetentionPolicy& policy, double now);

  // Group commit for JournalWriter: runs `body` (which calls the append methods above, on this
  // thread) inside one IMMEDIATE transaction and commits once, holding the write lock meanwhile.
  // The appends made inside are durable only when this returns OK; an append that fails inside
  // rolls back only its own changes (a savepoint). Returns the BEGIN's or COMMIT's status; when
  // the COMMIT fails every append made inside is undone. A damaged journal (health().damaged)
  // does not run `body` and returns kCorruption.
  Status inTransaction(const std::function<void()>& body);

  // What the journal has found wrong with its file since open (a snapshot).
  JournalHealth health() const;

 private:
  struct Impl;
  Journal(std::string path, std::unique_ptr<Impl> impl);

  std::string path_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ringside::agent
