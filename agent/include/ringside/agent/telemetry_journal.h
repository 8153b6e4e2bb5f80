// The node's telemetry journal (docs/design.md decision 12; docs/journal.md, "Telemetry journal"):
// every NodeTelemetry reading the agent takes (CPU, memory, network, every GPU field, slots in
// use), numbered 1, 2, 3, ... and kept for a bounded time and size, so that a GUI that was
// closed, or connected to another node, fetches a run's window from every node of the run
// afterwards (FetchTelemetryRequest, docs/protocol.md).
//
// One SQLite database in WAL mode beside the run journal (<state dir>/telemetry.sqlite), with
// the journal's SQLite wrappers, integrity check and quarantine (journal_schema.h). Each
// reading is one committed transaction: a crash of the agent (kill -9) loses nothing committed;
// a torn WAL tail (a crash of the machine during a write) loses the readings of the torn frames
// only, never the earlier ones (SQLite ignores WAL frames past the first bad checksum). A file
// found damaged at open is moved aside and an empty journal started (telemetry is a record of
// the past, not a run's own data).
//
// Thread-safety: none; the agent's loop owns it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "ringside/common/protocol.h"
#include "ringside/common/protocol_limits.h"
#include "ringside/common/status.h"
#include "ringside/proto/ringside.pb.h"

namespace ringside::agent {

struct TelemetryJournalOptions {
  // Readings older than this many days are deleted by applyRetention (agent option
  // --telemetry-retention-days, default 7). <= 0: no age bound.
  double maxAgeDays = 7.0;
  // When the readings' serialized bytes pass this, applyRetention deletes the oldest until they
  // fit (agent option --telemetry-max-mib, default 512 MiB: a reading of a node with 8 GPUs and
  // every field is 833 bytes, so a week of 1 s readings is 480 MiB). 0: no size bound. The file
  // itself is larger by SQLite's overhead (pages, the time index).
  uint64_t maxBytes = uint64_t{512} * 1024 * 1024;
  // Page bounds of fetch(): entries when the request asks for 0, the most it may ask for, and
  // the serialized bytes of one page (the page ends before the reading that would pass it,
  // after at least one).
  uint32_t defaultPageSize = static_cast<uint32_t>(kDefaultTelemetryPageEntries);
  uint32_t maxPageSize = static_cast<uint32_t>(kMaxTelemetryPageEntries);
  size_t maxPageBytes = protocol::kMaxReplyPageBytes;
  // How long a statement waits for a lock held by another connection, ms.
  int busyTimeoutMs = 5000;
};

// What applyRetention deleted.
struct TelemetryRetentionReport {
  uint64_t byAge = 0;   // readings older than maxAgeDays
  uint64_t bySize = 0;  // the oldest readings past maxBytes
};

class TelemetryJournal {
 public:
  ~TelemetryJournal();
  TelemetryJournal(const TelemetryJournal&) = delete;
  TelemetryJournal& operator=(const TelemetryJournal&) = delete;

  // Opens or creates the journal at `path` (its directory must exist) in WAL mode with
  // synchronous NORMAL. A damaged file (PRAGMA integrity_check) is moved aside to
  // "<path>.corrupt-<UTC time>" with its -wal and -shm files and an empty journal started;
  // `*quarantinedTo` (when not null) then names where it went. Errors: kIOError when the file
  // cannot be opened or created or cannot use WAL; kCorruption when it is not an SQLite database
  // (refused, never moved) or is damaged and cannot be moved; kInvalidArgument for a schema
  // newer than this code's.
  static Result<std::unique_ptr<TelemetryJournal>> open(const std::string& path,
                                                        const TelemetryJournalOptions& options = {},
                                                        std::string* quarantinedTo = nullptr);

  // Journals one reading: sets telemetry.seq to the next seq (one more than the highest ever
  // stored, also after retention deleted it) and commits. Errors: SQLite errors (kIOError for a
  // full disk); telemetry.seq is then left 0 and nothing is stored.
  Status append(v1::NodeTelemetry& telemetry);

  // One page of the window (FetchTelemetryRequest): readings with seq > after_seq and from_time
  // <= wall_time <= to_time (to_time 0: no upper end), in seq order, bounded by the options'
  // page sizes. `more` is true while the window holds higher seqs; oldest_time is the oldest
  // reading held. A negative or non-finite time is kInvalidArgument. Errors: SQLite errors;
  // kCorruption when a stored reading does not parse (the message names its seq).
  Result<v1::FetchTelemetryReply> fetch(const v1::FetchTelemetryRequest& request);

  // Deletes what the age and size bounds select; `now` in Unix seconds. One transaction.
  // Errors: SQLite errors (nothing is deleted then).
  Result<TelemetryRetentionReport> applyRetention(double now);

  // The highest seq stored (0 when empty), the readings held and their serialized bytes.
  uint64_t lastSeq() const;
  uint64_t entries() const;
  uint64_t bytes() const;

  const std::string& path() const { return path_; }

 private:
  struct Impl;
  TelemetryJournal(std::string path, std::unique_ptr<Impl> impl);

  std::string path_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ringside::agent
