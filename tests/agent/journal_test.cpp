// Tests of the agent's journal (agent/include/ringside/agent/journal.h, docs/journal.md).
#include "ringside/agent/journal.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include "ringside/common/protocol_limits.h"
#include "ringside/common/run_limits.h"

namespace ringside::agent {
namespace {

namespace fs = std::filesystem;

class JournalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("ringside_journal_" + std::string(info->name()) + "_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    path_ = (dir_ / "journal.sqlite").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::unique_ptr<Journal> open(const JournalOptions& options = {}) {
    auto journal = Journal::open(path_, options);
    EXPECT_TRUE(journal.isOk()) << journal.status().toString();
    return journal.isOk() ? std::move(journal).value() : nullptr;
  }

  static v1::RunInfo runInfo(const std::string& runId, v1::RunState state = v1::RUNNING,
                             double endTime = 0) {
    v1::RunInfo info;
    info.set_run_id(runId);
    info.set_state(state);
    info.set_created_time(1000);
    info.set_end_time(endTime);
    info.set_run_dir("/runs/" + runId);
    info.mutable_spec()->set_name("spec of " + runId);
    return info;
  }

  static v1::RankMetrics rankBatch(const std::string& runId, int rank, uint64_t batchSeq,
                                   int points, int64_t firstStep = 0) {
    v1::RankMetrics batch;
    batch.set_run_id(runId);
    batch.set_rank(rank);
    batch.set_batch_seq(batchSeq);
    for (int i = 0; i < points; ++i) {
      v1::RankMetricPoint* point = batch.add_points();
      point->set_step(firstStep + i);
      point->set_epoch(1);
      point->set_wall_time(1e9 + i);
      point->set_name(i % 2 == 0 ? "train/loss" : "time/step_ms");
      point->set_value(0.5 * i);
      point->set_global(i % 10 == 9);
    }
    return batch;
  }

  // Every seq of the run fetched page by page; checks order within kinds and paging fields.
  static std::vector<uint64_t> fetchAllSeqs(Journal& journal, const std::string& runId,
                                            uint32_t pageSize) {
    std::vector<uint64_t> seqs;
    uint64_t after = 0;
    while (true) {
      auto page = journal.fetchSince(runId, after, pageSize);
      EXPECT_TRUE(page.isOk()) << page.status().toString();
      if (!page.isOk()) break;
      std::vector<uint64_t> pageSeqs;
      for (const auto& sample : page->samples()) pageSeqs.push_back(sample.seq());
      for (const auto& line : page->log_lines()) pageSeqs.push_back(line.seq());
      for (const auto& state : page->states()) pageSeqs.push_back(state.seq());
      EXPECT_LE(pageSeqs.size(), pageSize);
      std::sort(pageSeqs.begin(), pageSeqs.end());
      if (!pageSeqs.empty()) {
        EXPECT_EQ(pageSeqs.front(), after + 1);
        EXPECT_EQ(pageSeqs.back(), page->last_seq());
      }
      seqs.insert(seqs.end(), pageSeqs.begin(), pageSeqs.end());
      if (!page->more()) break;
      EXPECT_GT(page->last_seq(), after);
      after = page->last_seq();
    }
    return seqs;
  }

  static void expectGapFree(const std::vector<uint64_t>& seqs, uint64_t count) {
    ASSERT_EQ(seqs.size(), count);
    for (uint64_t i = 0; i < count; ++i) ASSERT_EQ(seqs[i], i + 1) << "at index " << i;
  }

  fs::path dir_;
  std::string path_;
};

int64_t pragma(const std::string& path, const char* sql) {
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  sqlite3_stmt* stmt = nullptr;
  sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr);
  int64_t value = -1;
  if (sqlite3_step(stmt) == SQLITE_ROW) value = sqlite3_column_int64(stmt, 0);
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return value;
}

std::string integrityCheck(const std::string& path) {
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  sqlite3_stmt* stmt = nullptr;
  sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &stmt, nullptr);
  std::string result;
  while (sqlite3_step(stmt) == SQLITE_ROW) {
    result += reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return result;
}

TEST_F(JournalTest, MigratesEmptyFileToCurrentVersionInWalMode) {
  auto journal = open();
  ASSERT_NE(journal, nullptr);
  journal.reset();
  EXPECT_EQ(pragma(path_, "PRAGMA user_version"), 1);
  EXPECT_EQ(pragma(path_, "PRAGMA application_id"), 0x52534a4c);
  EXPECT_EQ(pragma(path_,
                   "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name IN "
                   "('runs', 'metric_keys', 'metric_samples', 'log_lines', 'state_events', "
                   "'rank_batches')"),
            6);
  // Reopening an up-to-date journal migrates nothing and keeps the data.
  journal = open();
  ASSERT_NE(journal, nullptr);
  ASSERT_TRUE(journal->upsertRun(runInfo("r1")).isOk());
  journal.reset();
  journal = open();
  ASSERT_NE(journal, nullptr);
  EXPECT_EQ(journal->loadRuns(false)->size(), 1u);
}

TEST_F(JournalTest, RefusesJournalWithNewerSchemaVersion) {
  ASSERT_NE(open(), nullptr);
  sqlite3* db = nullptr;
  sqlite3_open(path_.c_str(), &db);
  sqlite3_exec(db, "PRAGMA user_version = 7", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  auto journal = Journal::open(path_);
  ASSERT_FALSE(journal.isOk());
  EXPECT_EQ(journal.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(journal.status().message().find("schema version 7"), std::string::npos)
      << journal.status().message();
  EXPECT_NE(journal.status().message().find("newer ringside-agent"), std::string::npos);
}

TEST_F(JournalTest, RefusesADatabaseThatIsNotAJournal) {
  sqlite3* db = nullptr;
  sqlite3_open(path_.c_str(), &db);
  sqlite3_exec(db, "CREATE TABLE other (x)", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  auto journal = Journal::open(path_);
  ASSERT_FALSE(journal.isOk());
  EXPECT_EQ(journal.status().code(), Status::Code::kCorruption);
}

TEST_F(JournalTest, RunRecordsRoundTripWithProcessIds) {
  auto journal = open();
  ASSERT_TRUE(journal->upsertRun(runInfo("active"), ProcessIds{1234, 1234}).isOk());
  ASSERT_TRUE(journal->upsertRun(runInfo("queued", v1::QUEUED)).isOk());
  ASSERT_TRUE(journal->upsertRun(runInfo("done", v1::COMPLETED, 2000)).isOk());
  auto active = journal->loadRuns(/*activeOnly=*/true);
  ASSERT_TRUE(active.isOk());
  ASSERT_EQ(active->size(), 2u);
  EXPECT_EQ((*active)[0].info.run_id(), "active");
  EXPECT_EQ((*active)[0].info.spec().name(), "spec of active");
  EXPECT_EQ((*active)[0].process.pid, 1234);
  EXPECT_EQ((*active)[0].process.pgid, 1234);
  EXPECT_FALSE((*active)[1].process.pid.has_value());
  EXPECT_EQ(journal->loadRuns(false)->size(), 3u);
  EXPECT_EQ(journal->findRun("missing").status().code(), Status::Code::kNotFound);

  // A state event keeps the processes; upsertRun replaces them.
  ASSERT_TRUE(journal->appendStateEvent(runInfo("active", v1::COMPLETED, 3000)).isOk());
  auto run = journal->findRun("active");
  ASSERT_TRUE(run.isOk());
  EXPECT_EQ(run->info.state(), v1::COMPLETED);
  EXPECT_EQ(run->info.last_seq(), 1u);
  EXPECT_EQ(run->process.pid, 1234);
  ASSERT_TRUE(journal->upsertRun(run->info, ProcessIds{}).isOk());
  EXPECT_FALSE(journal->findRun("active")->process.pid.has_value());
  EXPECT_EQ(journal->findRun("active")->info.last_seq(), 1u);  // kept by the journal
}

TEST_F(JournalTest, SeqsAreGapFreeAcrossKindsAndContinueAfterReopen) {
  auto journal = open();
  ASSERT_TRUE(journal->upsertRun(runInfo("r1")).isOk());
  ASSERT_TRUE(journal->upsertRun(runInfo("r2")).isOk());
  auto state = journal->appendStateEvent(runInfo("r1", v1::RUNNING));
  ASSERT_TRUE(state.isOk());
  EXPECT_EQ(state->seq(), 1u);
  EXPECT_EQ(state->run().last_seq(), 1u);
  auto rank = journal->appendRankMetrics(rankBatch("r1", 0, 1, 5));
  ASSERT_TRUE(rank.isOk()) << rank.status().toString();
  ASSERT_EQ(rank->samples.size(), 5u);
  EXPECT_EQ(rank->samples.front().seq(), 2u);
  EXPECT_EQ(rank->samples.back().seq(), 6u);
  EXPECT_EQ(rank->samples[9 % 5].rank(), 0);
  v1::LogLine line;
  line.set_stream("stdout");
  line.set_text("epoch 1");
  auto logs = journal->appendLogLines("r1", {line, line});
  ASSERT_TRUE(logs.isOk());
  EXPECT_EQ((*logs)[1].seq(), 8u);
  // Another run has its own numbering.
  auto other = journal->appendLogLines("r2", {line});
  ASSERT_TRUE(other.isOk());
  EXPECT_EQ((*other)[0].seq(), 1u);

  journal.reset();
  journal = open();
  v1::MetricSample sample;
  sample.set_name("test/accuracy");
  sample.set_rank(-1);
  sample.set_value(0.9);
  sample.set_seq(12345);  // ignored
  auto samples = journal->appendMetricSamples("r1", {sample});
  ASSERT_TRUE(samples.isOk());
  EXPECT_EQ((*samples)[0].seq(), 9u);
  expectGapFree(fetchAllSeqs(*journal, "r1", 3), 9);
  EXPECT_EQ(journal->findRun("r1")->info.last_seq(), 9u);
}

TEST_F(JournalTest, AppendsToAnUnknownRunFailWithNotFound) {
  auto journal = open();
  EXPECT_EQ(journal->appendRankMetrics(rankBatch("nope", 0, 1, 2)).status().code(),
            Status::Code::kNotFound);
  EXPECT_EQ(journal->appendLogLines("nope", {v1::LogLine()}).status().code(),
            Status::Code::kNotFound);
  EXPECT_EQ(journal->appendRankMetrics(rankBatch("nope", 0, 0, 2)).status().code(),
            Status::Code::kInvalidArgument);
  EXPECT_EQ(journal->fetchSince("nope", 0).status().code(), Status::Code::kNotFound);
}

// A completed 2-rank run accepted rank 5 and step 1e15 on ranks.sock, and with
// the run's own key ranks 77 and 2^31-1 were journaled; a connection opened during a run kept
// journaling after it was stopped. The journal now refuses them; NaN values stay values.
TEST_F(JournalTest, EndedRunsJournalStillTookSamplesAndRanksOutsideTheWorldSize) {
  auto journal = open();
  v1::RunInfo run = runInfo("r");
  run.set_world_size(2);
  ASSERT_TRUE(journal->upsertRun(run).isOk());

  // Ranks outside [0, world_size): the whole batch, nothing written.
  for (int rank : {2, 5, 77, 2147483647}) {
    auto refused = journal->appendRankMetrics(rankBatch("r", rank, 1, 3));
    EXPECT_EQ(refused.status().code(), Status::Code::kInvalidArgument) << rank;
    EXPECT_NE(refused.status().message().find("outside the run's world size 2"), std::string::npos)
        << refused.status().message();
  }
  // Steps and epochs outside 0 to 2^53: those points only; a NaN value is journaled.
  v1::RankMetrics batch = rankBatch("r", 1, 1, 4);
  batch.mutable_points(1)->set_step(1000000000000000);  // 1e15 is within 2^53: kept
  batch.mutable_points(2)->set_step(-1);
  batch.mutable_points(3)->set_step(kMaxMetricStep + 1);
  batch.mutable_points(0)->set_value(std::nan(""));
  auto appended = journal->appendRankMetrics(batch);
  ASSERT_TRUE(appended.isOk()) << appended.status().toString();
  ASSERT_EQ(appended->samples.size(), 2u);
  EXPECT_TRUE(std::isnan(appended->samples[0].value()));
  EXPECT_EQ(appended->samples[1].step(), 1000000000000000);
  EXPECT_EQ(appended->refused.samples, 2u);
  EXPECT_EQ(appended->refused.reason, "step -1 is outside 0 to 2^53");
  SampleRefusal refusal;
  v1::MetricSample sample;
  sample.set_name("train/loss");
  for (int rank : {-1, 0, 1, 2, -2}) {
    sample.set_rank(rank);
    auto samples = journal->appendMetricSamples("r", {sample}, &refusal);
    ASSERT_TRUE(samples.isOk());
    EXPECT_EQ(samples->size(), rank >= -1 && rank < 2 ? 1u : 0u) << rank;
  }
  sample.set_rank(0);
  sample.set_epoch(-4);
  EXPECT_TRUE(journal->appendMetricSamples("r", {sample}, &refusal)->empty());
  EXPECT_EQ(refusal.reason, "epoch -4 is outside 0 to 2^53");
  const uint64_t lastSeq = journal->findRun("r")->info.last_seq();
  EXPECT_EQ(lastSeq, 5u);  // 2 rank points and 3 samples

  // After the final state, nothing more: neither rank batches nor other samples.
  run.set_state(v1::STOPPED);
  ASSERT_TRUE(journal->appendStateEvent(run).isOk());
  auto late = journal->appendRankMetrics(rankBatch("r", 0, 7, 3));
  EXPECT_EQ(late.status().code(), Status::Code::kFailedPrecondition);
  EXPECT_EQ(late.status().message(),
            "run r has ended (STOPPED): the journal takes no more samples for it");
  EXPECT_EQ(journal->appendMetricSamples("r", {sample}).status().code(),
            Status::Code::kFailedPrecondition);
  EXPECT_EQ(journal->findRun("r")->info.last_seq(), lastSeq + 1);  // the state event only
  // ... also after a restart of the agent (the state is read from the file).
  journal.reset();
  journal = open();
  EXPECT_EQ(journal->appendRankMetrics(rankBatch("r", 1, 9, 3)).status().code(),
            Status::Code::kFailedPrecondition);
}

// A rank sent metric names with control characters (journaled, then dropped by the GUI, which
// blamed the node) and a million distinct names (+111 MB in the agent until it restarted). Names
// are checked before anything is stored, and a run keeps at most kMaxMetricNamesPerRun.
TEST_F(JournalTest, MetricNamesAreCheckedAndBoundedPerRun) {
  auto journal = open();
  v1::RunInfo run = runInfo("r");
  run.set_world_size(1);
  ASSERT_TRUE(journal->upsertRun(run).isOk());
  v1::RankMetrics batch = rankBatch("r", 0, 1, 3);
  batch.mutable_points(0)->set_name("train/\nloss");
  batch.mutable_points(1)->set_name(std::string(kMaxMetricNameBytes + 1, 'n'));
  auto appended = journal->appendRankMetrics(batch);
  ASSERT_TRUE(appended.isOk()) << appended.status().toString();
  EXPECT_EQ(appended->samples.size(), 1u);
  EXPECT_EQ(appended->refused.samples, 2u);
  EXPECT_EQ(appended->refused.reason, "a metric name with a control character");

  SampleRefusal refusal;
  std::vector<v1::MetricSample> many;
  for (size_t i = 0; i < kMaxMetricNamesPerRun + 10; ++i) {
    v1::MetricSample& sample = many.emplace_back();
    sample.set_name("made-up/" + std::to_string(i));
  }
  auto stored = journal->appendMetricSamples("r", many, &refusal);
  ASSERT_TRUE(stored.isOk());
  // The name rank 0's batch already logged counts: one fewer made-up name fits.
  EXPECT_EQ(stored->size(), kMaxMetricNamesPerRun - 1);
  EXPECT_EQ(refusal.samples, 11u);
  EXPECT_NE(refusal.reason.find("distinct metric names"), std::string::npos) << refusal.reason;
  // A name it has is still taken.
  v1::MetricSample again;
  again.set_name("made-up/7");
  EXPECT_EQ(journal->appendMetricSamples("r", {again})->size(), 1u);
}

TEST_F(JournalTest, ResentRankBatchIsSkippedAndCounted) {
  auto journal = open();
  ASSERT_TRUE(journal->upsertRun(runInfo("r1")).isOk());
  ASSERT_FALSE(journal->appendRankMetrics(rankBatch("r1", 0, 1, 10))->duplicate);
  ASSERT_FALSE(journal->appendRankMetrics(rankBatch("r1", 1, 1, 10))->duplicate);
  ASSERT_FALSE(journal->appendRankMetrics(rankBatch("r1", 0, 2, 10))->duplicate);
  // Rank 0 resends batches 1 and 2 after a reconnect: skipped; rank 1's batch 1 is not.
  auto resent = journal->appendRankMetrics(rankBatch("r1", 0, 2, 10));
  ASSERT_TRUE(resent.isOk());
  EXPECT_TRUE(resent->duplicate);
  EXPECT_TRUE(resent->samples.empty());
  EXPECT_TRUE(journal->appendRankMetrics(rankBatch("r1", 0, 1, 10))->duplicate);
  // Batch 5 after 2: batches 3 and 4 never arrived.
  auto v1Batch = rankBatch("r1", 0, 5, 10);
  v1Batch.set_dropped_total(42);
  auto gap = journal->appendRankMetrics(v1Batch);
  ASSERT_TRUE(gap.isOk());
  EXPECT_FALSE(gap->duplicate);
  EXPECT_EQ(gap->missingBatches, 2u);

  expectGapFree(fetchAllSeqs(*journal, "r1", 1000), 40);
  auto deliveries = journal->rankDeliveries("r1");
  ASSERT_TRUE(deliveries.isOk());
  ASSERT_EQ(deliveries->size(), 2u);
  const RankDelivery& rank0 = (*deliveries)[0];
  EXPECT_EQ(rank0.rank, 0);
  EXPECT_EQ(rank0.lastBatchSeq, 5u);
  EXPECT_EQ(rank0.batches, 3u);
  EXPECT_EQ(rank0.points, 30u);
  EXPECT_EQ(rank0.duplicates, 2u);
  EXPECT_EQ(rank0.missingBatches, 2u);
  EXPECT_EQ(rank0.droppedTotal, 42u);
  EXPECT_EQ((*deliveries)[1].points, 10u);

  // The dedupe state survives a restart.
  journal.reset();
  journal = open();
  EXPECT_TRUE(journal->appendRankMetrics(rankBatch("r1", 0, 5, 10))->duplicate);
}

TEST_F(JournalTest, FetchSinceReturnsEverythingOnceInSeqOrderAcrossKinds) {
  auto journal = open();
  ASSERT_TRUE(journal->upsertRun(runInfo("r1")).isOk());
  std::map<uint64_t, std::string> expected;  // seq -> kind and content
  for (int round = 0; round < 20; ++round) {
    auto batch = journal->appendRankMetrics(rankBatch("r1", round % 2, round / 2 + 1, 7, round));
    ASSERT_TRUE(batch.isOk());
    for (const auto& s : batch->samples) {
      expected[s.seq()] = "m" + s.name() + std::to_string(s.step()) + "/" +
                          std::to_string(s.rank()) + "/" + std::to_string(s.value());
    }
    v1::LogLine line;
    line.set_stream(round % 2 ? "stderr" : "stdout");
    line.set_text("line " + std::to_string(round));
    line.set_wall_time(round);
    auto lines = journal->appendLogLines("r1", {line});
    ASSERT_TRUE(lines.isOk());
    for (const auto& l : lines.value()) {
      expected[l.seq()] = "l" + l.stream() + l.text();
    }
    if (round % 5 == 0) {
      auto event = journal->appendStateEvent(runInfo("r1", v1::RUNNING));
      ASSERT_TRUE(event.isOk());
      expected[event->seq()] = "s" + std::to_string(event->seq());
    }
  }
  v1::MetricSample nanSample;
  nanSample.set_name("train/loss");
  nanSample.set_value(std::nan(""));
  const uint64_t nanSeq = journal->appendMetricSamples("r1", {nanSample})->front().seq();
  expected[nanSeq] = "nan";

  for (uint32_t pageSize : {1u, 7u, 64u, 100000u}) {
    std::map<uint64_t, std::string> got;
    uint64_t after = 0;
    int pages = 0;
    while (true) {
      auto page = journal->fetchSince("r1", after, pageSize);
      ASSERT_TRUE(page.isOk());
      ++pages;
      EXPECT_EQ(page->run().run_id(), "r1");
      EXPECT_EQ(page->run().last_seq(), expected.size());
      uint64_t previous = 0;
      for (const auto& s : page->samples()) {
        ASSERT_GT(s.seq(), previous);
        previous = s.seq();
        const std::string content =
            std::isnan(s.value()) ? "nan"
                                  : "m" + s.name() + std::to_string(s.step()) + "/" +
                                        std::to_string(s.rank()) + "/" + std::to_string(s.value());
        ASSERT_TRUE(got.emplace(s.seq(), content).second) << "seq twice: " << s.seq();
      }
      previous = 0;
      for (const auto& l : page->log_lines()) {
        ASSERT_GT(l.seq(), previous);
        previous = l.seq();
        ASSERT_TRUE(got.emplace(l.seq(), "l" + l.stream() + l.text()).second);
      }
      for (const auto& s : page->states()) {
        EXPECT_EQ(s.run().last_seq(), s.seq());
        ASSERT_TRUE(got.emplace(s.seq(), "s" + std::to_string(s.seq())).second);
      }
      if (!page->more()) break;
      after = page->last_seq();
    }
    EXPECT_EQ(got, expected) << "page size " << pageSize;
    if (pageSize == 1) {
      EXPECT_EQ(pages, static_cast<int>(expected.size()));
    }
  }
  // Past the end: an empty page that echoes after_seq.
  auto end = journal->fetchSince("r1", expected.size() + 5, 10);
  ASSERT_TRUE(end.isOk());
  EXPECT_EQ(end->last_seq(), expected.size() + 5);
  EXPECT_FALSE(end->more());
  EXPECT_EQ(end->samples_size() + end->log_lines_size() + end->states_size(), 0);
}

// 40 lines of 900 KB made a 36 MB fetch page, which the GUI dropped. Pages
// are cut by bytes too: every page stays within the budget (with one entry at least), and the
// pages together still hold every entry once.
TEST_F(JournalTest, FetchPagesAreCutByBytesAndStillCoverEverything) {
  JournalOptions options;
  options.maxPageBytes = 256 * 1024;
  auto journal = open(options);
  ASSERT_TRUE(journal->upsertRun(runInfo("r1")).isOk());
  std::set<uint64_t> expected;
  for (int i = 0; i < 40; ++i) {
    v1::LogLine line;
    line.set_stream("stdout");
    line.set_text(std::string(60 * 1024, static_cast<char>('a' + i % 26)));
    auto lines = journal->appendLogLines("r1", {line});
    ASSERT_TRUE(lines.isOk());
    expected.insert(lines->front().seq());
    auto batch = journal->appendRankMetrics(rankBatch("r1", 0, i + 1, 3, i));
    ASSERT_TRUE(batch.isOk());
    for (const auto& sample : batch->samples) expected.insert(sample.seq());
  }
  // A state record larger than the whole budget still comes, alone.
  v1::RunInfo big = runInfo("r1");
  big.mutable_spec()->set_name(std::string(300 * 1024, 'n'));
  auto event = journal->appendStateEvent(big);
  ASSERT_TRUE(event.isOk());
  expected.insert(event->seq());

  std::set<uint64_t> got;
  uint64_t after = 0;
  int pages = 0;
  while (true) {
    auto page = journal->fetchSince("r1", after, 50000);
    ASSERT_TRUE(page.isOk()) << page.status().toString();
    ++pages;
    const int entries = page->samples_size() + page->log_lines_size() + page->states_size();
    ASSERT_GE(entries, 1);
    if (entries > 1) {
      EXPECT_LE(page->ByteSizeLong() - page->run().ByteSizeLong(), options.maxPageBytes)
          << "page " << pages;
    }
    for (const auto& s : page->samples()) ASSERT_TRUE(got.insert(s.seq()).second);
    for (const auto& l : page->log_lines()) ASSERT_TRUE(got.insert(l.seq()).second);
    for (const auto& st : page->states()) ASSERT_TRUE(got.insert(st.seq()).second);
    EXPECT_EQ(*got.rbegin(), page->last_seq());
    if (!page->more()) break;
    after = page->last_seq();
  }
  EXPECT_EQ(got, expected);
  // 40 lines of 60 KiB in pages of 256 KiB: about 4 lines a page.
  EXPECT_GE(pages, 10);
}

TEST_F(JournalTest, ConcurrentFetchWhileWritingSeesAConsistentPrefix) {
  auto journal = open();
  ASSERT_TRUE(journal->upsertRun(runInfo("r1")).isOk());
  constexpr int kBatches = 200;
  std::atomic<bool> done{false};
  std::thread writer([&] {
    for (int b = 1; b <= kBatches; ++b) {
      ASSERT_TRUE(journal->appendRankMetrics(rankBatch("r1", 0, b, 50)).isOk());
      if (b % 10 == 0) {
        v1::LogLine line;
        line.set_text("b" + std::to_string(b));
        ASSERT_TRUE(journal->appendLogLines("r1", {line}).isOk());
      }
    }
    done = true;
  });
  // Follow the run like a GUI does: always fetch after the last seq received.
  uint64_t after = 0;
  uint64_t received = 0;
  while (true) {
    const bool finished = done.load();
    auto page = journal->fetchSince("r1", after, 333);
    ASSERT_TRUE(page.isOk());
    const uint64_t count = page->samples_size() + page->log_lines_size();
    ASSERT_EQ(count, page->last_seq() - after) << "a page with a gap";
    received += count;
    after = page->last_seq();
    if (finished && !page->more()) break;
  }
  writer.join();
  EXPECT_EQ(received, kBatches * 50u + kBatches / 10);
}

TEST_F(JournalTest, RetentionDeletesOldAndExcessEndedRunsOnly) {
  auto journal = open();
  const double day = 86400;
  const double now = 100 * day;
  // Each run takes its samples while it runs, then ends (after its end it would refuse them).
  for (const char* run : {"running", "old", "recent1", "recent2", "recent3"}) {
    ASSERT_TRUE(journal->upsertRun(runInfo(run)).isOk());
    ASSERT_TRUE(journal->appendRankMetrics(rankBatch(run, 0, 1, 10)).isOk());
  }
  ASSERT_TRUE(journal->upsertRun(runInfo("old", v1::COMPLETED, now - 40 * day)).isOk());
  ASSERT_TRUE(journal->upsertRun(runInfo("recent1", v1::FAILED, now - 3 * day)).isOk());
  ASSERT_TRUE(journal->upsertRun(runInfo("recent2", v1::STOPPED, now - 2 * day)).isOk());
  ASSERT_TRUE(journal->upsertRun(runInfo("recent3", v1::COMPLETED, now - 1 * day)).isOk());

  EXPECT_EQ(journal->applyRetention({}, now)->runsDeleted, 0u);
  auto report = journal->applyRetention({.maxAgeDays = 30, .maxEndedRuns = std::nullopt}, now);
  ASSERT_TRUE(report.isOk()) << report.status().toString();
  EXPECT_EQ(report->runsDeleted, 1u);
  EXPECT_EQ(report->entriesDeleted, 10u);
  EXPECT_EQ(journal->findRun("old").status().code(), Status::Code::kNotFound);

  report = journal->applyRetention({.maxAgeDays = std::nullopt, .maxEndedRuns = 2}, now);
  ASSERT_TRUE(report.isOk());
  EXPECT_EQ(report->runsDeleted, 1u);
  EXPECT_EQ(journal->findRun("recent1").status().code(), Status::Code::kNotFound);
  EXPECT_TRUE(journal->findRun("recent2").isOk());
  EXPECT_TRUE(journal->findRun("running").isOk());

  report = journal->applyRetention({.maxAgeDays = 0, .maxEndedRuns = 0}, now);
  ASSERT_TRUE(report.isOk());
  EXPECT_EQ(report->runsDeleted, 2u);
  auto left = journal->loadRuns(false);
  ASSERT_EQ(left->size(), 1u);
  EXPECT_EQ((*left)[0].info.run_id(), "running");
  journal.reset();
  // The entries went with the runs (ON DELETE CASCADE).
  EXPECT_EQ(pragma(path_, "SELECT count(*) FROM metric_samples"), 10);
  EXPECT_EQ(pragma(path_, "SELECT count(*) FROM rank_batches"), 1);
}

// Fault injection: a child journals in a loop and is killed with SIGKILL mid-write; the journal
// must reopen intact with every committed seq and no gap, and go on numbering after it.
TEST_F(JournalTest, SigkillMidWriteLeavesAnIntactGapFreeJournal) {
  {
    auto journal = open();
    ASSERT_TRUE(journal->upsertRun(runInfo("r1")).isOk());
  }
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(ready[0]);
    auto journal = Journal::open(path_);
    if (!journal.isOk()) _exit(2);
    for (uint64_t batch = 1;; ++batch) {
      if (!journal.value()->appendRankMetrics(rankBatch("r1", 0, batch, 100)).isOk()) _exit(3);
      v1::LogLine line;
      line.set_text(std::string(200, 'x'));
      if (!journal.value()->appendLogLines("r1", {line}).isOk()) _exit(4);
      if (batch == 20) {
        const char byte = 1;
        if (write(ready[1], &byte, 1) != 1) _exit(5);
      }
    }
  }
  close(ready[1]);
  char byte = 0;
  ASSERT_EQ(read(ready[0], &byte, 1), 1) << "the child failed before writing";
  close(ready[0]);
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  ASSERT_EQ(kill(child, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << "child exited with " << WEXITSTATUS(status);

  EXPECT_EQ(integrityCheck(path_), "ok");
  auto journal = open();
  ASSERT_NE(journal, nullptr);
  auto run = journal->findRun("r1");
  ASSERT_TRUE(run.isOk());
  const uint64_t lastSeq = run->info.last_seq();
  EXPECT_GE(lastSeq, 20u * 101u);
  expectGapFree(fetchAllSeqs(*journal, "r1", 5000), lastSeq);
  auto deliveries = journal->rankDeliveries("r1");
  ASSERT_TRUE(deliveries.isOk());
  ASSERT_EQ(deliveries->size(), 1u);
  EXPECT_EQ((*deliveries)[0].points, (*deliveries)[0].batches * 100);
  auto next = journal->appendLogLines("r1", {v1::LogLine()});
  ASSERT_TRUE(next.isOk());
  EXPECT_EQ((*next)[0].seq(), lastSeq + 1);
  EXPECT_EQ(integrityCheck(path_), "ok");
}

// The journal inserts samples 64, 16, 4 and 1 rows per statement (kSampleInsertRows): every batch
// size, with refused points among them (a refused point must not shift the rows after it onto
// another point's key), is stored row for row as sent, NaN included.
TEST_F(JournalTest, EveryBatchSizeIsStoredRowForRowAsSent) {
  auto journal = open();
  v1::RunInfo info = runInfo("r1");
  info.set_world_size(2);
  ASSERT_TRUE(journal->upsertRun(info).isOk());
  std::vector<v1::MetricSample> expected;
  uint64_t batchSeq = 0;
  int64_t step = 0;
  for (const int points : {1, 3, 4, 5, 15, 16, 17, 21, 63, 64, 65, 84, 85, 128, 1000}) {
    v1::RankMetrics batch = rankBatch("r1", 1, ++batchSeq, points, step);
    for (int i = 0; i < points; ++i) {
      v1::RankMetricPoint& point = *batch.mutable_points(i);
      std::string name = "key";  // (not "key" + ...: GCC 12's -Wrestrict false positive)
      name += std::to_string(i % 7);
      point.set_name(name);
      if (i % 11 == 5) point.set_value(std::nan(""));
      if (i % 13 == 7) point.set_step(-1);  // refused
    }
    auto appended = journal->appendRankMetrics(batch);
    ASSERT_TRUE(appended.isOk()) << appended.status().toString();
    for (const v1::RankMetricPoint& point : batch.points()) {
      if (point.step() < 0) continue;
      v1::MetricSample& sample = expected.emplace_back();
      sample.set_seq(expected.size());
      sample.set_step(point.step());
      sample.set_epoch(point.epoch());
      sample.set_wall_time(point.wall_time());
      sample.set_rank(point.global() ? -1 : 1);
      sample.set_name(point.name());
      sample.set_value(point.value());
    }
    EXPECT_EQ(appended->samples.size() + appended->refused.samples, static_cast<size_t>(points));
    // The same points through appendMetricSamples (the tailer's and the recovery's path).
    std::vector<v1::MetricSample> samples;
    for (const v1::RankMetricPoint& point : batch.points()) {
      v1::MetricSample& sample = samples.emplace_back();
      sample.set_step(point.step() < 0 ? -1 : point.step() + 1000000);
      sample.set_epoch(2);
      sample.set_wall_time(point.wall_time() + 0.5);
      sample.set_rank(0);
      sample.set_name(point.name() + "/again");
      sample.set_value(point.value());
    }
    auto stored = journal->appendMetricSamples("r1", samples);
    ASSERT_TRUE(stored.isOk()) << stored.status().toString();
    for (v1::MetricSample sample : samples) {
      if (sample.step() < 0) continue;
      sample.set_seq(expected.size() + 1);
      expected.push_back(sample);
    }
    step += points;
  }
  std::vector<v1::MetricSample> fetched;
  uint64_t after = 0;
  while (true) {
    auto page = journal->fetchSince("r1", after, 5000);
    ASSERT_TRUE(page.isOk()) << page.status().toString();
    fetched.insert(fetched.end(), page->samples().begin(), page->samples().end());
    if (!page->more()) break;
    after = page->last_seq();
  }
  ASSERT_EQ(fetched.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    const v1::MetricSample& want = expected[i];
    const v1::MetricSample& got = fetched[i];
    ASSERT_EQ(got.seq(), want.seq()) << "at " << i;
    ASSERT_EQ(got.step(), want.step()) << "at seq " << want.seq();
    ASSERT_EQ(got.epoch(), want.epoch()) << "at seq " << want.seq();
    ASSERT_EQ(got.wall_time(), want.wall_time()) << "at seq " << want.seq();
    ASSERT_EQ(got.rank(), want.rank()) << "at seq " << want.seq();
    ASSERT_EQ(got.name(), want.name()) << "at seq " << want.seq();
    if (std::isnan(want.value())) {
      ASSERT_TRUE(std::isnan(got.value())) << "at seq " << want.seq();
    } else {
      ASSERT_EQ(got.value(), want.value()) << "at seq " << want.seq();
    }
  }
  EXPECT_EQ(integrityCheck(path_), "ok");
}

}  // namespace
}  // namespace ringside::agent
