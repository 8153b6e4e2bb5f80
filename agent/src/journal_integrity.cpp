// The journal file's integrity check at open and the quarantine of a damaged file
// (docs/journal.md, "Damaged journals"). Declared in journal_schema.h.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <utility>
#include <vector>

#include "journal_schema.h"

namespace ringside::agent {

namespace fs = std::filesystem;

namespace {

// One line of integrity_check's report, fit for a log line: without the "*** in database main
// ***" header SQLite puts before the first problem, and without line breaks.
std::string oneLine(std::string text) {
  const std::string header = "*** in database main ***";
  if (text.rfind(header, 0) == 0) text.erase(0, header.size());
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  const size_t first = text.find_first_not_of(' ');
  return first == std::string::npos ? std::string() : text.substr(first);
}

// Reads the file once from front to back. integrity_check reads the pages in b-tree order,
// which is not file order: on a cold page cache that is one random read per page. Read in order
// first, the same pages come from the cache (a 128 MB journal, cache dropped: 2.6 s for the
// check alone, 0.2 s + 0.6 s with this; docs/journal.md). Advisory: errors are ignored.
void readInOrder(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  (void)::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  std::vector<char> buffer(size_t{1} << 20);
  while (::read(fd, buffer.data(), buffer.size()) > 0) {
  }
  ::close(fd);
}

}  // namespace

Result<std::vector<std::string>> checkJournalIntegrity(const std::string& path, int busyTimeoutMs) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  // A missing file is created by the open that follows; one that cannot be stat-ed is reported
  // by that open, which names the reason.
  if (ec || size == 0) return std::vector<std::string>{};
  readInOrder(path);
  auto db = sqlite::Connection::open(path, /*create=*/false);
  if (!db.isOk()) return db.status();
  // A damaged file is moved aside as found: no checkpoint may write the WAL into it on close.
  db->keepWalOnClose();
  sqlite3_busy_timeout(db->get(), busyTimeoutMs);

  // integrity_check rather than quick_check: it also checks that the indexes of `runs` and
  // `metric_keys` (lookups by run id, state and metric name) agree with their rows, for about
  // 1.3x the time of quick_check on a journal, whose large tables have no secondary index
  // (docs/journal.md has the measurement).
  const std::string sql = "PRAGMA integrity_check(" + std::to_string(kMaxIntegrityProblems) + ")";
  std::vector<std::string> lines;
  sqlite3_stmt* check = nullptr;
  int rc = sqlite3_prepare_v2(db->get(), sql.c_str(), -1, &check, nullptr);
  while (rc == SQLITE_OK || rc == SQLITE_ROW) {
    rc = sqlite3_step(check);
    if (rc != SQLITE_ROW) break;
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(check, 0));
    lines.push_back(oneLine(text != nullptr ? text : ""));
  }
  const int failed = rc == SQLITE_DONE ? SQLITE_OK : db->errorCode();
  const std::string message = sqlite3_errmsg(db->get());
  sqlite3_finalize(check);

  if (failed == SQLITE_OK) {
    if (lines.size() == 1 && lines.front() == "ok") lines.clear();
    return lines;
  }
  if (sqlite::isCorruptCode(failed)) {
    // The check itself could not go on (e.g. the schema page is damaged): that is the finding.
    lines.push_back(message + " (SQLite code " + std::to_string(failed) + ")");
    return lines;
  }
  if ((failed & 0xff) == SQLITE_NOTADB) {
    return Status::corruption(
        "journal " + path + " is not an SQLite database (" + message +
        "): its header is damaged, or another file took its name. The agent does not move it "
        "aside, as it may not be a journal: move it away yourself (the agent then starts an "
        "empty journal), or pick another --state-dir");
  }
  return sqlite::error(db->get(), failed, "checking the integrity of journal " + path);
}

std::string utcFileStamp() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char stamp[32] = {};
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &utc);
  return stamp;
}

Result<std::string> quarantineJournal(const std::string& path) {
  const std::string base = path + ".corrupt-" + utcFileStamp();
  std::string target = base;
  std::error_code ec;
  for (int n = 2;
       fs::exists(target, ec) || fs::exists(target + "-wal", ec) || fs::exists(target + "-shm", ec);
       ++n) {
    target = base + "-" + std::to_string(n);
  }

  // The -wal first: a -wal left behind under the old name would be replayed into the empty
  // journal created next.
  std::vector<std::pair<std::string, std::string>> moved;
  for (const char* suffix : {"-wal", "-shm", ""}) {
    const std::string from = path + suffix;
    const std::string to = target + suffix;
    if (*suffix != '\0' && !fs::exists(from, ec)) continue;
    if (::rename(from.c_str(), to.c_str()) != 0) {
      const int error = errno;
      // Best effort: put back what was moved, so the journal is not split across two names.
      for (auto it = moved.rbegin(); it != moved.rend(); ++it) {
        (void)::rename(it->second.c_str(), it->first.c_str());
      }
      return Status::ioError("cannot move " + from + " to " + to + ": " + std::strerror(error));
    }
    moved.emplace_back(from, to);
  }
  // Make the renames durable before an empty journal takes the old name.
  const std::string dir = fs::path(path).parent_path().empty()
                              ? std::string(".")
                              : fs::path(path).parent_path().string();
  if (const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); fd >= 0) {
    (void)::fsync(fd);  // a failed directory sync leaves the renames to the next writeback
    ::close(fd);
  }
  return target;
}

}  // namespace ringside::agent
