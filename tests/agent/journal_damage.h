// Damages an agent journal file the way a failing disk or a stray write does, and inspects it
// without changing it: the helpers of journal_corruption_test.cpp and
// journal_corruption_process_test.cpp. Thread-safety: a test's own thread only.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "ringside/agent/journal.h"

namespace ringside::agent::damage {

// An SQLite connection of the test's own. Closing it never checkpoints the WAL into the file,
// so inspecting a damaged file leaves it as it was.
class RawDb {
 public:
  explicit RawDb(const std::string& path) {
    if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
      ADD_FAILURE() << "cannot open " << path << ": " << sqlite3_errmsg(db_);
    }
    sqlite3_db_config(db_, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);
  }
  ~RawDb() { sqlite3_close_v2(db_); }
  RawDb(const RawDb&) = delete;
  RawDb& operator=(const RawDb&) = delete;

  // Runs `sql`, failing the test on an error.
  void exec(const std::string& sql) {
    char* message = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
      ADD_FAILURE() << sql << ": " << (message ? message : "");
    }
    sqlite3_free(message);
  }
  // The first column of every row `sql` yields, as text; an error ends the list with
  // "ERROR: <message>".
  std::vector<std::string> column(const std::string& sql) {
    std::vector<std::string> values;
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr);
    if (rc == SQLITE_OK) {
      while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
        values.emplace_back(text ? text : "NULL");
      }
    }
    if (rc != SQLITE_DONE) values.push_back(std::string("ERROR: ") + sqlite3_errmsg(db_));
    sqlite3_finalize(stmt);
    return values;
  }

 private:
  sqlite3* db_ = nullptr;
};

// PRAGMA integrity_check of the file: {"ok"} when sound.
inline std::vector<std::string> integrityCheck(const std::string& path) {
  RawDb db(path);
  return db.column("PRAGMA integrity_check");
}

inline bool isSound(const std::string& path) {
  return integrityCheck(path) == std::vector<std::string>{"ok"};
}

// Copies what the WAL holds into the file and empties the WAL, so that bytes changed in the file
// are the bytes SQLite reads.
inline void checkpoint(const std::string& path) {
  RawDb db(path);
  EXPECT_EQ(db.column("PRAGMA wal_checkpoint(TRUNCATE)").front(), "0");
}

inline int64_t pageSize(const std::string& path) {
  RawDb db(path);
  return std::stoll(db.column("PRAGMA page_size").front());
}

// The leaf pages of `table`'s b-tree in key order (the dbstat virtual table; SQLite built with
// SQLITE_ENABLE_DBSTAT_VTAB, as Debian's is).
inline std::vector<int64_t> leafPages(const std::string& path, const std::string& table) {
  RawDb db(path);
  std::vector<int64_t> pages;
  for (const std::string& page : db.column("SELECT pageno FROM dbstat WHERE name = '" + table +
                                           "' AND pagetype = 'leaf' ORDER BY path")) {
    if (page.rfind("ERROR", 0) == 0) {
      ADD_FAILURE() << "dbstat: " << page;
      return {};
    }
    pages.push_back(std::stoll(page));
  }
  return pages;
}

inline std::string readBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// Writes `bytes` at `offset` of the file in place, as a stray write would.
inline void writeAt(const std::string& path, int64_t offset, const std::string& bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0) << path;
  ASSERT_EQ(::pwrite(fd, bytes.data(), bytes.size(), offset), static_cast<ssize_t>(bytes.size()));
  ::close(fd);
}

// Flips every bit of the first 64 bytes of page `page` (1-based): its b-tree page header and
// cell pointers, which every read of the page checks.
inline void flipPageHeader(const std::string& path, int64_t page, int64_t pageSize) {
  const int64_t offset = (page - 1) * pageSize;
  std::string bytes = readBytes(path).substr(offset, 64);
  for (char& byte : bytes) byte = static_cast<char>(~byte);
  writeAt(path, offset, bytes);
}

// Offsets of `needle` in `haystack`.
inline std::vector<size_t> find(const std::string& haystack, const std::string& needle) {
  std::vector<size_t> offsets;
  for (size_t at = haystack.find(needle); at != std::string::npos;
       at = haystack.find(needle, at + 1)) {
    offsets.push_back(at);
  }
  return offsets;
}

// Damages the stored RunInfo of the one run whose spec name is `marker` (unique in the file):
// the protobuf tag byte in front of the name becomes 0x07 (field 0, wire type 7: never valid),
// so the blob no longer parses while SQLite's own structures stay intact.
inline void breakRunInfo(const std::string& path, const std::string& marker) {
  checkpoint(path);
  const std::vector<size_t> at = find(readBytes(path), marker);
  ASSERT_EQ(at.size(), 1u) << "the marker must occur once in " << path;
  // [tag][length < 128][marker]
  writeAt(path, static_cast<int64_t>(at.front()) - 2, std::string(1, '\x07'));
}

// Journals to damage.

inline double nowSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// The spec name of run i: unique in the file, so the tests can find its bytes.
inline std::string markerOf(int run) { return "spec-of-run-" + std::to_string(run) + "-MARKER"; }

// `runs` completed runs "run-0" ... (ended just now, so retention keeps them, and not active, so
// an agent adopts none), each with `samples` metric samples (rank batches of 500).
inline void fillJournal(const std::string& path, int runs, int samples) {
  auto journal = Journal::open(path);
  ASSERT_TRUE(journal.isOk()) << journal.status().toString();
  for (int r = 0; r < runs; ++r) {
    v1::RunInfo info;
    info.set_run_id("run-" + std::to_string(r));
    info.set_state(v1::RUNNING);  // COMPLETED once its samples are in
    info.set_created_time(nowSeconds() - 60);
    info.set_run_dir("/nonexistent/runs/run-" + std::to_string(r));
    info.mutable_spec()->set_name(markerOf(r));
    ASSERT_TRUE((*journal)->upsertRun(info).isOk());
    for (int sent = 0, batch = 1; sent < samples; ++batch) {
      v1::RankMetrics metrics;
      metrics.set_run_id(info.run_id());
      metrics.set_rank(0);
      metrics.set_batch_seq(batch);
      for (int i = 0; i < 500 && sent < samples; ++i, ++sent) {
        v1::RankMetricPoint* point = metrics.add_points();
        point->set_step(sent);
        point->set_wall_time(1.7e9 + sent);
        point->set_name(sent % 2 == 0 ? "train/loss" : "time/step_ms");
        point->set_value(0.001 * sent);
      }
      auto appended = (*journal)->appendRankMetrics(metrics);
      ASSERT_TRUE(appended.isOk()) << appended.status().toString();
    }
    info.set_state(v1::COMPLETED);
    info.set_end_time(nowSeconds());
    ASSERT_TRUE((*journal)->upsertRun(info).isOk());
  }
}

}  // namespace ringside::agent::damage
