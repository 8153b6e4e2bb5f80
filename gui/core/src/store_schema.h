// The GUI database's schema and its forward migrations (docs/gui-database.md). Private to the
// metrics store (metrics_store.cpp, store_*.cpp).
#pragma once

#include <QSqlDatabase>
#include <QSqlError>
#include <QString>

#include "ringside/common/status.h"

namespace ringside::gui::store {

// The schema version this build writes as PRAGMA user_version.
inline constexpr int kSchemaVersion = 3;

// Status for a failed QtSql call: "<what>: <driver message>". SQLite's CORRUPT (11) and NOTADB
// (26) map to kCorruption, connection failures and IOERR/FULL/CANTOPEN/READONLY to kIOError,
// the rest to kInternal.
Status sqlError(const QSqlError& error, const QString& what);

// Sets the connection's pragmas (WAL, synchronous=NORMAL, busy timeout, cache) and migrates the
// schema from its user_version to kSchemaVersion, each step in its own transaction.
// kFailedPrecondition when the file's version is newer than kSchemaVersion; the file is left
// untouched then.
Status prepareSchema(QSqlDatabase& db, const QString& path);

}  // namespace ringside::gui::store
