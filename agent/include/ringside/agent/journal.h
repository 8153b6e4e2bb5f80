// The agent's durable journal (DESIGN.md decisions 2 and 6; schema in docs/journal.md): one SQLite
// database in WAL mode holding the run records and, per run, every metric sample, log line and
// run state event under a per-run sequence number 1, 2, 3, ... with no gap, shared by the three
// kinds. The agent journals an entry before it publishes it, and fetch-since replays from here.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

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
class Journal {
 public:
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  // Opens or creates the journal at `path` (its directory must exist), sets WAL, synchronous,
  // busy_timeout and foreign keys, and migrates the schema forward.
  // Errors: kIOError when the file cannot be opened or created; kInvalidArgument when the file's
  // schema is newer than this code's (the message names both versions); kCorruption when the
  // file is not a Ringside journal or fails to read.
  static Result<std::unique_ptr<Journal>> open(const std::string& path,
                                               const JournalOptions& options = {});

  const std::string& path() const { return path_; }

  // Inserts the run or replaces its record (info without last_seq, which the journal keeps, and
  // processes). Does not journal a state event: use appendStateEvent for state changes.
  // Errors: kInvalidArgument for an empty run_id; SQLite errors.
  Status upsertRun(const v1::RunInfo& info, const ProcessIds& process = {});

  // Run records, oldest created first; activeOnly: only runs that have not ended (for re-adoption
  // after a restart). Errors: kCorruption when a stored RunInfo does not parse.
  Result<std::vector<StoredRun>> loadRuns(bool activeOnly);
  // One run record. Errors: kNotFound for an unknown run_id.
  Result<StoredRun> findRun(const std::string& runId);

  // Journals one rank batch: skips it when (run_id, rank, batch_seq) was seen (batch_seq <= the
  // last stored one, see RankAppendResult::duplicate), otherwise assigns the next seqs of the
  // run, one per point, and stores them as metric samples. Errors: kNotFound for a run the
  // journal does not hold; kInvalidArgument for batch_seq 0 or a negative rank; SQLite errors
  // (nothing is written then).
  Result<RankAppendResult> appendRankMetrics(const v1::RankMetrics& batch);

  // Journals samples of a run that come from elsewhere (JSON Lines of a custom command, global
  // values): each gets the next seq (the input's seq is ignored). Returns them with their seqs.
  // Errors: kNotFound for an unknown run; SQLite errors (nothing is written then).
  Result<std::vector<v1::MetricSample>> appendMetricSamples(
      const std::string& runId, const std::vector<v1::MetricSample>& samples);

  // Journals log lines of a run (stdout/stderr, one line each, without newline), returning them
  // with their seqs. Errors as appendMetricSamples.
  Result<std::vector<v1::LogLine>> appendLogLines(const std::string& runId,
                                                  const std::vector<v1::LogLine>& lines);

  // Journals a state change: updates the run record (inserting it when new; processes are kept)
  // and stores the event with the next seq. The returned event's run.last_seq is that seq.
  // Errors: kInvalidArgument for an empty run_id; SQLite errors.
  Result<v1::RunStateEvent> appendStateEvent(const v1::RunInfo& info);

  // Everything journaled for `runId` with seq > afterSeq, at most maxEntries entries (0: the
  // default page size; capped at JournalOptions::maxPageSize), each kind in seq order; the
  // union of the kinds is exactly the seqs afterSeq+1 .. last_seq of the page. `more` is true
  // while the run holds higher seqs; `run` is the current record. Reads one consistent snapshot.
  // Errors: kNotFound for an unknown run; kCorruption for an unparsable stored RunInfo.
  Result<v1::FetchRunDataReply> fetchSince(const std::string& runId, uint64_t afterSeq,
                                           uint32_t maxEntries = 0);

  // Per-rank delivery counters of a run, by rank. Errors: kNotFound for an unknown run.
  Result<std::vector<RankDelivery>> rankDeliveries(const std::string& runId);

  // Deletes ended runs (record and all entries) that the policy selects; `now` in Unix seconds.
  // One transaction. Errors: SQLite errors (nothing is deleted then).
  Result<RetentionReport> applyRetention(const RetentionPolicy& policy, double now);

  // Group commit for JournalWriter: runs `body` (which calls the append methods above, on this
  // thread) inside one IMMEDIATE transaction and commits once, holding the write lock meanwhile.
  // The appends made inside are durable only when this returns OK; an append that fails inside
  // rolls back only its own changes (a savepoint). Returns the BEGIN's or COMMIT's status; when
  // the COMMIT fails every append made inside is undone.
  Status inTransaction(const std::function<void()>& body);

 private:
  struct Impl;
  Journal(std::string path, std::unique_ptr<Impl> impl);

  std::string path_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ringside::agent
