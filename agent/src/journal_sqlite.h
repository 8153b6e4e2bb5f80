// Thin RAII wrappers over the sqlite3 C API, private to the journal (journal*.cpp).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "ringside/common/status.h"

namespace ringside::agent::sqlite {

// Status for a failed SQLite call: "<what>: <sqlite message> (code N)". SQLITE_CORRUPT and
// SQLITE_NOTADB map to kCorruption, SQLITE_IOERR/FULL/CANTOPEN/READONLY to kIOError, the rest to
// kInternal.
Status error(sqlite3* db, int rc, std::string_view what);

// True for a result code (primary or extended) that says the file's content is damaged:
// SQLITE_CORRUPT and its extended codes (SQLITE_CORRUPT_VTAB, _SEQUENCE, _INDEX).
inline bool isCorruptCode(int rc) { return (rc & 0xff) == SQLITE_CORRUPT; }

// An owned connection. Move-only; not thread-safe (one thread at a time).
class Connection {
 public:
  Connection() = default;
  ~Connection();
  Connection(Connection&& other) noexcept : db_(other.db_) { other.db_ = nullptr; }
  Connection& operator=(Connection&& other) noexcept;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Opens (creating when `create`) the database file at `path` in SQLITE_OPEN_NOMUTEX mode.
  static Result<Connection> open(const std::string& path, bool create);

  sqlite3* get() const { return db_; }
  // The extended result code of the connection's most recent API call (sqlite3_extended_errcode):
  // read it right after a failure, before another call on the connection replaces it.
  int errorCode() const { return sqlite3_extended_errcode(db_); }
  // Closing this connection will not checkpoint the WAL into the database file nor delete the
  // WAL (SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE): a file under inspection stays byte for byte as found.
  void keepWalOnClose() { sqlite3_db_config(db_, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr); }
  // Runs one or more statements without results; errors name `sql`.
  Status exec(const char* sql);
  // Returns the single integer the statement `sql` yields (e.g. a PRAGMA).
  Result<int64_t> queryInt(const char* sql);

 private:
  explicit Connection(sqlite3* db) : db_(db) {}
  sqlite3* db_ = nullptr;
};

// A prepared statement, reset (not finalized) between uses. Move-only; not thread-safe.
class Statement {
 public:
  Statement() = default;
  ~Statement();
  Statement(Statement&& other) noexcept : stmt_(other.stmt_) { other.stmt_ = nullptr; }
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Prepares `sql` with SQLITE_PREPARE_PERSISTENT (the statement is reused many times).
  static Result<Statement> prepare(sqlite3* db, const char* sql);

  bool valid() const { return stmt_ != nullptr; }
  sqlite3_stmt* get() const { return stmt_; }

  // Parameter indexes start at 1, as in sqlite3_bind_*. Text and blobs are copied only when the
  // statement outlives the argument (SQLITE_TRANSIENT); callers step before the argument dies.
  void bindInt(int index, int64_t value) { sqlite3_bind_int64(stmt_, index, value); }
  void bindDouble(int index, double value) { sqlite3_bind_double(stmt_, index, value); }
  void bindNull(int index) { sqlite3_bind_null(stmt_, index); }
  void bindText(int index, std::string_view text) {
    sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()), SQLITE_STATIC);
  }
  void bindBlob(int index, std::string_view bytes) {
    sqlite3_bind_blob(stmt_, index, bytes.data(), static_cast<int>(bytes.size()), SQLITE_STATIC);
  }

  // Steps once: true when a row is available, false when done; an error Status otherwise.
  Result<bool> step();
  // Steps a statement that yields no rows, then resets it.
  Status run();
  // run() without clearing the bindings (sqlite3_clear_bindings), for a statement whose every
  // parameter is bound again before its next step (the many-row sample INSERTs, up to 512
  // parameters). Bind only numbers to such a statement: a text or blob binding (SQLITE_STATIC)
  // would outlive its argument.
  Status runKeepingBindings();
  // Steps through every row, calling takeRow(*this) on each, then resets the statement. Stops
  // at the first error, of a step or of takeRow, and returns it.
  Status forEachRow(const std::function<Status(const Statement&)>& takeRow);
  // Resets the statement and clears its bindings.
  void reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }

  int64_t columnInt(int column) const { return sqlite3_column_int64(stmt_, column); }
  double columnDouble(int column) const { return sqlite3_column_double(stmt_, column); }
  bool columnIsNull(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }
  // SQLITE_INTEGER, SQLITE_FLOAT, SQLITE_TEXT, SQLITE_BLOB or SQLITE_NULL.
  int columnType(int column) const { return sqlite3_column_type(stmt_, column); }
  std::string_view columnText(int column) const;
  std::string_view columnBlob(int column) const;

 private:
  explicit Statement(sqlite3_stmt* stmt) : stmt_(stmt) {}
  sqlite3_stmt* stmt_ = nullptr;
};

}  // namespace ringside::agent::sqlite
