// The journal's schema and its forward migrations (docs/journal.md), private to journal*.cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "journal_sqlite.h"
#include "ringside/common/status.h"

namespace ringside::agent {

// PRAGMA application_id of a Ringside journal ("RSJL"), so another SQLite file is not mistaken
// for one.
inline constexpr int32_t kJournalApplicationId = 0x52534a4c;

// The schema version this code writes (PRAGMA user_version), i.e. the number of migrations.
int journalSchemaVersion();

// Brings the database on `db` to journalSchemaVersion(): each missing migration runs in its own
// IMMEDIATE transaction that also sets user_version, so a crash leaves the last complete version.
// Errors: kCorruption when the file is not a Ringside journal, kInvalidArgument when its version
// is newer than this code's (naming both versions and `path`), SQLite errors otherwise.
Status migrateJournal(sqlite::Connection& db, const std::string& path);

// Integrity of the journal file (journal_integrity.cpp; docs/journal.md, "Damaged journals").

// The most problems checkJournalIntegrity reports (the argument of PRAGMA integrity_check).
inline constexpr int kMaxIntegrityProblems = 20;

// What PRAGMA integrity_check finds in the journal file at `path`: empty when the file is sound
// (or missing, or empty), else integrity_check's lines (at most kMaxIntegrityProblems), or the
// SQLITE_CORRUPT error that stopped the check (a damaged schema page). Runs on a connection of
// its own that leaves the file and its -wal untouched when it closes (no checkpoint), waiting up
// to `busyTimeoutMs` ms for another connection's lock. Takes about 0.7 s per 128 MB (a journal of
// 100 runs x 30,000 samples; docs/journal.md). Errors: kIOError when the file cannot be opened;
// kCorruption when it is not an SQLite database at all (SQLITE_NOTADB, e.g. a damaged header):
// such a file is refused, never moved aside, as it may not be a journal.
Result<std::vector<std::string>> checkJournalIntegrity(const std::string& path, int busyTimeoutMs);

// Moves the damaged journal at `path` aside, to "<path>.corrupt-<UTC time YYYYmmddTHHMMSSZ>"
// ("-2", "-3", ... appended should that name exist): first its -wal and -shm files, each to the
// new name plus the same suffix so that SQLite finds them beside it, then the file itself; then
// fsyncs the directory. Nothing is copied or deleted. Returns the new path. Errors: kIOError when
// a rename fails (the message names the file and the reason); the files already moved are moved
// back then, so the journal is either entirely moved or left where it was.
Result<std::string> quarantineJournal(const std::string& path);

// The time now in UTC as the names of set-aside files carry it: "20250301T101500Z".
std::string utcFileStamp();

// What checkJournalWal found wrong with a write-ahead log.
struct WalDamage {
  uint64_t replayedFrames = 0;  // the frames SQLite replays (up to the last commit before it)
  uint64_t badFrame = 0;        // the first frame SQLite stops at, 1-based
  uint64_t badOffset = 0;       // its byte offset in the file
  uint64_t lostFrames = 0;      // frames of this WAL after it: written, never replayed
  uint64_t lostCommits = 0;     // of which commit frames: transactions that are lost
  bool badHeader = false;       // the WAL's own header fails its checksum: nothing is replayed
};

// Reads `walPath` (a journal's "-wal" file) as SQLite's file format defines it (sqlite.org,
// "Database File Format", section 4 "The Write-Ahead Log"): a 32-byte header (magic
// 0x377f0682/3, whose low bit says the checksum's byte order, page size, salts, checksum),
// then frames of a 24-byte header (page number, database size for a commit frame, the salts,
// a checksum cumulative over the WAL header and every earlier frame) and one page. SQLite replays
// frames from the start while each carries the header's salts and a matching checksum, up to
// the last commit frame, and ignores the rest without a word. Frames with other salts after
// that point are stale (written before the WAL was last restarted) and normal; a frame with
// this WAL's salts after the first one that fails was written after it and is lost: that is
// damage (bytes changed on disk or in a crash that wrote out of order). Returns std::nullopt for
// a missing, empty or sound WAL; an error only when the file exists and cannot be read.
// Thread-safety: reads the file only.
Result<std::optional<WalDamage>> checkJournalWal(const std::string& walPath);

}  // namespace ringside::agent
