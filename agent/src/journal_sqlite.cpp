#include "journal_sqlite.h"

#include <utility>

namespace ringside::agent::sqlite {

Status error(sqlite3* db, int rc, std::string_view what) {
  std::string message(what);
  message += ": ";
  message += db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  message += " (SQLite code " + std::to_string(rc) + ")";
  switch (rc & 0xff) {
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return Status::corruption(std::move(message));
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_CANTOPEN:
    case SQLITE_READONLY:
    case SQLITE_PERM:
      return Status::ioError(std::move(message));
    case SQLITE_CONSTRAINT:
      return Status::invalidArgument(std::move(message));
    default:
      return Status::internal(std::move(message));
  }
}

Connection::~Connection() { sqlite3_close_v2(db_); }

Connection& Connection::operator=(Connection&& other) noexcept {
  if (this != &other) {
    sqlite3_close_v2(db_);
    db_ = std::exchange(other.db_, nullptr);
  }
  return *this;
}

Result<Connection> Connection::open(const std::string& path, bool create) {
  sqlite3* db = nullptr;
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX;
  if (create) flags |= SQLITE_OPEN_CREATE;
  const int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    Status status = error(db, rc, "cannot open journal database " + path);
    sqlite3_close_v2(db);
    return status;
  }
  sqlite3_extended_result_codes(db, 1);
  return Connection(db);
}

Status Connection::exec(const char* sql) {
  char* message = nullptr;
  const int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &message);
  if (rc == SQLITE_OK) return Status::ok();
  std::string text = std::string("SQL failed: ") + sql + ": " + (message ? message : "");
  sqlite3_free(message);
  return error(db_, rc, text);
}

Result<int64_t> Connection::queryInt(const char* sql) {
  auto stmt = Statement::prepare(db_, sql);
  if (!stmt.isOk()) return stmt.status();
  auto row = stmt->step();
  if (!row.isOk()) return row.status();
  if (!row.value()) return Status::internal(std::string("no row from ") + sql);
  return stmt->columnInt(0);
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(stmt_);
    stmt_ = std::exchange(other.stmt_, nullptr);
  }
  return *this;
}

Result<Statement> Statement::prepare(sqlite3* db, const char* sql) {
  sqlite3_stmt* stmt = nullptr;
  const int rc = sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK) return error(db, rc, std::string("cannot prepare ") + sql);
  return Statement(stmt);
}

Result<bool> Statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return error(sqlite3_db_handle(stmt_), rc, std::string("SQL failed: ") + sqlite3_sql(stmt_));
}

Status Statement::run() {
  auto row = step();
  reset();
  return row.isOk() ? Status::ok() : row.status();
}

Status Statement::runKeepingBindings() {
  auto row = step();
  sqlite3_reset(stmt_);
  return row.isOk() ? Status::ok() : row.status();
}

Status Statement::forEachRow(const std::function<Status(const Statement&)>& takeRow) {
  Status status;
  while (true) {
    auto row = step();
    if (!row.isOk()) {
      status = row.status();
      break;
    }
    if (!row.value()) break;
    status = takeRow(*this);
    if (!status.isOk()) break;
  }
  reset();
  return status;
}

std::string_view Statement::columnText(int column) const {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
  return {text ? text : "", static_cast<size_t>(sqlite3_column_bytes(stmt_, column))};
}

std::string_view Statement::columnBlob(int column) const {
  const auto* bytes = static_cast<const char*>(sqlite3_column_blob(stmt_, column));
  return {bytes ? bytes : "", static_cast<size_t>(sqlite3_column_bytes(stmt_, column))};
}

}  // namespace ringside::agent::sqlite
