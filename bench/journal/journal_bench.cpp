// journal_bench: appends N rank batches of P points to a fresh agent journal with
// Journal::appendRankMetrics (one transaction per batch, as the agent does for a lone batch) and
// inserts the same number of narrow rows into a bare SQLite table with one prepared INSERT and
// one transaction per P rows (the reference), both on this machine in this run, and prints
// samples/s for each and their ratio. Checks the answer: the journal's last_seq equals the
// number of samples and its entries are gap-free (read back with fetchSince).
// Usage: journal_bench [--batches N] [--points P] [--dir DIR]   (defaults 200, 1000, a temp dir)
#include <sqlite3.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "ringside/agent/journal.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using ringside::agent::Journal;
namespace v1 = ringside::v1;

v1::RankMetrics rankBatch(const std::string& runId, uint64_t batchSeq, int points) {
  v1::RankMetrics batch;
  batch.set_run_id(runId);
  batch.set_rank(0);
  batch.set_batch_seq(batchSeq);
  for (int i = 0; i < points; ++i) {
    v1::RankMetricPoint* point = batch.add_points();
    point->set_step(static_cast<int64_t>(batchSeq) * points + i);
    point->set_epoch(1);
    point->set_wall_time(1e9 + i);
    point->set_name(i % 2 == 0 ? "train/loss" : "time/step_ms");
    point->set_value(0.5 * i);
  }
  return batch;
}

double seconds(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

int fail(const std::string& message) {
  std::fprintf(stderr, "journal_bench: FAILED: %s\n", message.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  int batches = 200, points = 1000;
  std::string dir;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--batches" && i + 1 < argc) {
      batches = std::atoi(argv[++i]);
    } else if (arg == "--points" && i + 1 < argc) {
      points = std::atoi(argv[++i]);
    } else if (arg == "--dir" && i + 1 < argc) {
      dir = argv[++i];
    } else {
      std::fprintf(stderr, "usage: journal_bench [--batches N] [--points P] [--dir DIR]\n");
      return 2;
    }
  }
  if (batches < 1 || points < 1) return fail("--batches and --points must be at least 1");
  const bool ownDir = dir.empty();
  if (ownDir) dir = (fs::temp_directory_path() / ("journal_bench_" + std::to_string(getpid())));
  fs::create_directories(dir);
  const double total = static_cast<double>(batches) * points;

  auto journal = Journal::open(dir + "/journal.sqlite");
  if (!journal.isOk()) return fail(journal.status().toString());
  v1::RunInfo info;
  info.set_run_id("bench");
  info.set_state(v1::RUNNING);
  if (auto s = (*journal)->upsertRun(info); !s.isOk()) return fail(s.toString());
  std::vector<v1::RankMetrics> input;
  for (int b = 1; b <= batches; ++b) input.push_back(rankBatch("bench", b, points));
  auto start = Clock::now();
  for (const auto& batch : input) {
    if (auto appended = (*journal)->appendRankMetrics(batch); !appended.isOk()) {
      return fail(appended.status().toString());
    }
  }
  const double journalSeconds = seconds(start);

  // The reference: the same narrow row, same pragmas, no protocol, no dedupe, no foreign keys.
  sqlite3* db = nullptr;
  if (sqlite3_open((dir + "/raw.sqlite").c_str(), &db) != SQLITE_OK) return fail("sqlite3_open");
  sqlite3_exec(db,
               "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; "
               "CREATE TABLE samples (run_key INTEGER, seq INTEGER, step INTEGER, epoch INTEGER, "
               "wall_time REAL, rank INTEGER, key_id INTEGER, value REAL, "
               "PRIMARY KEY (run_key, seq)) WITHOUT ROWID",
               nullptr, nullptr, nullptr);
  sqlite3_stmt* insert = nullptr;
  sqlite3_prepare_v2(db, "INSERT INTO samples VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)", -1, &insert,
                     nullptr);
  start = Clock::now();
  int64_t seq = 0;
  for (int b = 0; b < batches; ++b) {
    sqlite3_exec(db, "BEGIN", nullptr, nullptr, nullptr);
    for (int i = 0; i < points; ++i) {
      sqlite3_bind_int64(insert, 1, 1);
      sqlite3_bind_int64(insert, 2, ++seq);
      sqlite3_bind_int64(insert, 3, i);
      sqlite3_bind_int64(insert, 4, 1);
      sqlite3_bind_double(insert, 5, 1e9 + i);
      sqlite3_bind_int64(insert, 6, 0);
      sqlite3_bind_int64(insert, 7, i % 2 + 1);
      sqlite3_bind_double(insert, 8, 0.5 * i);
      if (sqlite3_step(insert) != SQLITE_DONE) return fail(sqlite3_errmsg(db));
      sqlite3_reset(insert);
    }
    if (sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK) {
      return fail(sqlite3_errmsg(db));
    }
  }
  const double rawSeconds = seconds(start);
  sqlite3_finalize(insert);
  sqlite3_close(db);

  // Check: every sample journaled once, seqs 1..total without a gap.
  uint64_t expected = 1;
  for (uint64_t after = 0;;) {
    auto page = (*journal)->fetchSince("bench", after, 0);
    if (!page.isOk()) return fail(page.status().toString());
    for (const auto& sample : page->samples()) {
      if (sample.seq() != expected++) {
        return fail("seq " + std::to_string(sample.seq()) + " where " +
                    std::to_string(expected - 1) + " was due");
      }
    }
    after = page->last_seq();
    if (!page->more()) break;
  }
  const bool correct = static_cast<double>(expected - 1) == total;
  std::printf(
      "journal_bench: %d batches of %d points (%.0f samples)\n"
      "  Journal::appendRankMetrics  %10.0f samples/s\n"
      "  raw SQLite inserts (ref.)   %10.0f samples/s\n"
      "  ratio journal/raw           %10.2f\n"
      "  check: %s (%llu samples read back, seqs gap-free)\n",
      batches, points, total, total / journalSeconds, total / rawSeconds,
      rawSeconds / journalSeconds, correct ? "PASS" : "FAIL",
      static_cast<unsigned long long>(expected - 1));
  journal->reset();
  if (ownDir) fs::remove_all(dir);
  return correct ? 0 : 1;
}
