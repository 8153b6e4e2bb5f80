// The GUI database's schema and its forward migrations (docs/gui-database.md). Private to the
// metrics store (metrics_store.cpp, store_*.cpp).
#pragma once

#include <QSqlDatabase>
#include <QSqlError>
#include <QString>

#include <string>

#include "ringside/common/status.h"

namespace ringside::gui::store {

// The schema version this build writes as PRAGMA user_version.
inline constexpr int kSchemaVersion = 5;

// The Status of a failed SQLite call that returned `code` (a primary or extended result code),
// with `message`: CORRUPT and NOTADB map to kCorruption, READONLY, IOERR, FULL and CANTOPEN to
// kIOError, the rest to kInternal. The store's one mapping of SQLite's errors: sqlError reads
// QtSql's through it, the metrics insert (SQLite's C API, store_database.cpp) its result codes.
Status sqliteStatus(int code, std::string message);

// Status for a failed QtSql call: "<what>: <driver message>", mapped by sqliteStatus from the
// driver's SQLite result code (QSqlError::nativeErrorCode).
Status sqlError(const QSqlError& error, const QString& what);

// What to do about the damaged database at `path` (one or more sentences, for the end of an
// error message): move it away, what comes back from the agents, how to save the rest.
QString damagedAdvice(const QString& path);

// The most problems checkDatabase reads from PRAGMA quick_check (its argument).
inline constexpr int kMaxQuickCheckProblems = 20;

// Checks the database open on `db` at `path` before anything uses it: PRAGMA quick_check
// (about 0.7 s per 130 MB, a database of 100 runs x 30,000 samples; docs/gui-database.md), then
// whether SQLite can write to it (a transaction that sets user_version and is rolled back;
// nothing is written). Errors: kCorruption when quick_check finds a problem or SQLite reports
// the file damaged, with a message naming `path`, the first problem and what to do; kIOError
// "<path> is read-only: ..." when SQLite cannot write to the file or create its -wal and -shm
// files beside it (readOnlyProblem); other SQLite errors.
Status checkDatabase(QSqlDatabase& db, const QString& path);

// Why the database at `path` cannot be written, from the file system's view (access(2), which
// also sees chattr +i and read-only mounts, even for root): the file is not writable, or it
// does not exist yet / lacks its -wal and -shm files and its folder is not writable. Returns the
// "<path> is read-only: <reason>. <what to do>" message, or an empty string when both are
// writable.
QString readOnlyProblem(const QString& path);

// Sets the connection's pragmas (WAL, synchronous=NORMAL, busy timeout, cache) and migrates the
// schema from its user_version to kSchemaVersion, each step in its own transaction.
// kFailedPrecondition when the file's version is newer than kSchemaVersion; the file is left
// untouched then.
Status prepareSchema(QSqlDatabase& db, const QString& path);

}  // namespace ringside::gui::store
