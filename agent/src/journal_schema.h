// The journal's schema and its forward migrations (docs/journal.md), private to journal*.cpp.
#pragma once

#include <string>

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

}  // namespace ringside::agent
