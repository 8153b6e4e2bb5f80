// ListRuns pages and TailLog replies within the byte budget.
#include "ringside/agent/reply_pages.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace ringside::agent {
namespace {

namespace fs = std::filesystem;

// ListRuns from the journal: the agent reads one page's runs per request, not
// every run it holds, and the pages together still list each run once, oldest first.
class JournalRunPagesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ringside_run_pages_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    auto opened = Journal::open((dir_ / "journal.sqlite").string());
    ASSERT_TRUE(opened.isOk()) << opened.status().toString();
    journal_ = std::move(opened).value();
  }
  void TearDown() override {
    journal_.reset();
    fs::remove_all(dir_);
  }

  // `count` runs in one transaction; every third one is still running, the others ended.
  void addRuns(int count) {
    ASSERT_TRUE(journal_
                    ->inTransaction([&] {
                      for (int i = 0; i < count; ++i) {
                        v1::RunInfo info;
                        info.set_run_id("run-" + std::to_string(i));
                        info.set_state(i % 3 == 0 ? v1::RUNNING : v1::COMPLETED);
                        info.set_created_time(1000 + i);
                        info.mutable_spec()->set_name(std::string(200, 'n'));
                        ASSERT_TRUE(journal_->upsertRun(info).isOk());
                      }
                    })
                    .isOk());
  }

  // `count` running runs whose spec names are `nameBytes` long (RunInfo of about that size),
  // ids "r0", "r1", ...
  void addRunsOfSize(int count, size_t nameBytes) {
    for (int i = 0; i < count; ++i) {
      v1::RunInfo info;
      std::string id = "r";  // (not "r" + ...: GCC 12's -Wrestrict false positive)
      id += std::to_string(i);
      info.set_run_id(id);
      info.set_state(v1::RUNNING);
      info.mutable_spec()->set_name(std::string(nameBytes, 'x'));
      ASSERT_TRUE(journal_->upsertRun(info).isOk());
    }
  }

  // The journal keys of its runs, oldest first.
  std::vector<int64_t> runKeys() {
    std::vector<int64_t> keys;
    EXPECT_TRUE(journal_
                    ->forEachRunAfter(false, 0,
                                      [&](StoredRun&& run) {
                                        keys.push_back(run.runKey);
                                        return true;
                                      })
                    .isOk());
    return keys;
  }

  // Every page from the first, as run ids in the order listed; the page count in *pages.
  std::vector<std::string> listAll(bool activeOnly, size_t budget, int* pages) {
    std::vector<std::string> listed;
    std::string token;
    *pages = 0;
    do {
      auto page = listRunsPage(*journal_, activeOnly, token, budget);
      EXPECT_TRUE(page.isOk()) << page.status().toString();
      if (!page.isOk()) break;
      ++*pages;
      EXPECT_GE(page->runs_size(), 1);
      EXPECT_LE(page->ByteSizeLong(), budget + 64);
      for (const auto& run : page->runs()) listed.push_back(run.run_id());
      token = page->next_page_token();
    } while (!token.empty());
    return listed;
  }

  fs::path dir_;
  std::unique_ptr<Journal> journal_;
};

TEST_F(JournalRunPagesTest, PagesStayWithinTheBudgetAndTogetherListEveryRunOnce) {
  addRunsOfSize(25, 100 * 1024);
  int pages = 0;
  // listAll checks each page: at least one run, within the budget.
  const std::vector<std::string> listed = listAll(false, 512 * 1024, &pages);
  ASSERT_EQ(listed.size(), 25u);
  for (size_t i = 0; i < listed.size(); ++i) {
    EXPECT_EQ(listed[i].substr(1), std::to_string(i)) << listed[i];  // "r<i>"
  }
  EXPECT_EQ(pages, 5);  // 4 runs of ~100 KiB per 512 KiB page... plus the rest
}

TEST_F(JournalRunPagesTest, SmallListsAreOnePageAndARunOverTheBudgetComesAlone) {
  auto empty = listRunsPage(*journal_, false, "", 1000);
  ASSERT_TRUE(empty.isOk());
  EXPECT_EQ(empty->runs_size(), 0);
  EXPECT_TRUE(empty->next_page_token().empty());
  addRunsOfSize(3, 10);
  auto one = listRunsPage(*journal_, false, "", 1 << 20);
  ASSERT_TRUE(one.isOk());
  EXPECT_EQ(one->runs_size(), 3);
  EXPECT_TRUE(one->next_page_token().empty());
  // Runs over the budget: one per page, each page's token naming its run.
  addRunsOfSize(2, 4096);  // ids r0 and r1 again: upserted, now 4 KiB each
  const std::vector<int64_t> keys = runKeys();
  ASSERT_EQ(keys.size(), 3u);
  auto big = listRunsPage(*journal_, false, "", 1000);
  ASSERT_TRUE(big.isOk());
  ASSERT_EQ(big->runs_size(), 1);
  EXPECT_EQ(big->runs(0).run_id(), "r0");
  EXPECT_EQ(big->next_page_token(), std::to_string(keys[0]));
}

TEST_F(JournalRunPagesTest, ATokenNotWrittenByTheAgentIsInvalidArgument) {
  addRunsOfSize(2, 10);
  for (const char* token : {"x", "-1", "12abc", "99999999999999999999999"}) {
    auto page = listRunsPage(*journal_, false, token, 1 << 20);
    EXPECT_EQ(page.status().code(), Status::Code::kInvalidArgument) << token;
  }
  // A token past the last run: an empty last page.
  auto past = listRunsPage(*journal_, false, "1000", 1 << 20);
  ASSERT_TRUE(past.isOk());
  EXPECT_EQ(past->runs_size(), 0);
  EXPECT_TRUE(past->next_page_token().empty());
}

TEST_F(JournalRunPagesTest, ManyRunsArePagedEachOnceInOrderAndTheActiveFilterHolds) {
  const int kRuns = 3000;
  addRuns(kRuns);
  int pages = 0;
  const std::vector<std::string> all = listAll(false, 16 * 1024, &pages);
  ASSERT_EQ(all.size(), size_t{kRuns});
  for (int i = 0; i < kRuns; ++i) ASSERT_EQ(all[i], "run-" + std::to_string(i)) << i;
  EXPECT_GT(pages, 30);  // ~70 runs of ~230 bytes per 16 KiB page
  const std::vector<std::string> active = listAll(true, 16 * 1024, &pages);
  ASSERT_EQ(active.size(), size_t{kRuns / 3});
  for (size_t i = 0; i < active.size(); ++i) {
    ASSERT_EQ(active[i], "run-" + std::to_string(3 * i)) << i;
  }
  // One page of the whole list at the protocol's budget.
  auto one = listRunsPage(*journal_, false, "", protocol::kMaxReplyPageBytes);
  ASSERT_TRUE(one.isOk());
  EXPECT_EQ(one->runs_size(), kRuns);
  EXPECT_TRUE(one->next_page_token().empty());
}

TEST_F(JournalRunPagesTest, RunsDeletedOrAddedBetweenPagesDoNotDisturbTheListing) {
  addRuns(300);
  auto first = listRunsPage(*journal_, false, "", 8 * 1024);
  ASSERT_TRUE(first.isOk());
  ASSERT_FALSE(first->next_page_token().empty());
  const int firstCount = first->runs_size();
  // Retention deletes every ended run, the page's last one included; a new run is added.
  auto report = journal_->applyRetention({.maxAgeDays = std::nullopt, .maxEndedRuns = 0}, 0);
  ASSERT_TRUE(report.isOk()) << report.status().toString();
  EXPECT_EQ(report->runsDeleted, 200u);
  v1::RunInfo added;
  added.set_run_id("added");
  added.set_state(v1::QUEUED);
  ASSERT_TRUE(journal_->upsertRun(added).isOk());
  std::vector<std::string> rest;
  std::string token = first->next_page_token();
  while (!token.empty()) {
    auto page = listRunsPage(*journal_, false, token, 8 * 1024);
    ASSERT_TRUE(page.isOk()) << page.status().toString();
    for (const auto& run : page->runs()) rest.push_back(run.run_id());
    token = page->next_page_token();
  }
  // The running runs after the first page (every third run), then the new one, each once.
  std::vector<std::string> expected;
  for (int i = firstCount; i < 300; ++i) {
    if (i % 3 == 0) expected.push_back("run-" + std::to_string(i));
  }
  expected.push_back("added");
  EXPECT_EQ(rest, expected);
}

// The bug this pins: each ListRuns page loaded every run of the journal (quadratic in the runs
// over a whole listing). A scan from a key visits the runs after it, and stops when told.
TEST_F(JournalRunPagesTest, ListRunsPagesLoadedEveryRunOfTheJournal) {
  addRuns(1000);
  std::vector<int64_t> keys;
  ASSERT_TRUE(journal_
                  ->forEachRunAfter(false, 0,
                                    [&](StoredRun&& run) {
                                      keys.push_back(run.runKey);
                                      return true;
                                    })
                  .isOk());
  ASSERT_EQ(keys.size(), 1000u);
  int offered = 0;
  ASSERT_TRUE(journal_
                  ->forEachRunAfter(false, keys[899],
                                    [&](StoredRun&& run) {
                                      EXPECT_GT(run.runKey, keys[899]);
                                      return ++offered < 10;
                                    })
                  .isOk());
  EXPECT_EQ(offered, 10);
  // A page of k runs reads k + 1 (the one that did not fit): a page's cost is its size.
  auto page = listRunsPage(*journal_, false, std::to_string(keys[499]), 4 * 1024);
  ASSERT_TRUE(page.isOk());
  ASSERT_GE(page->runs_size(), 1);
  EXPECT_EQ(page->runs(0).run_id(), "run-500");
  EXPECT_LT(page->runs_size(), 30);
  EXPECT_EQ(page->next_page_token(), std::to_string(keys[499 + page->runs_size()]));
  EXPECT_EQ(listRunsPage(*journal_, false, "x", 4096).status().code(),
            Status::Code::kInvalidArgument);
}

class TailLogReplyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ringside_tail_" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(TailLogReplyTest, LastLinesOfBothStreamsWithRankTagsShown) {
  {
    std::ofstream out(dir_ / "stdout.log");
    for (int i = 0; i < 250; ++i) out << "[1,0]<stdout>:line " << i << "\n";
    std::ofstream(dir_ / "stderr.log") << "[1,1]<stderr>:oops\nmpirun: done\n";
  }
  const v1::TailLogReply reply = tailLogReply("r", dir_.string(), 0, 1 << 20);
  ASSERT_EQ(reply.lines_size(), 102);  // 100 of stdout (the default), 2 of stderr
  EXPECT_EQ(reply.lines(0).text(), "[rank 0] line 150");
  EXPECT_EQ(reply.lines(99).text(), "[rank 0] line 249");
  EXPECT_EQ(reply.lines(100).stream(), "stderr");
  EXPECT_EQ(reply.lines(100).text(), "[rank 1] oops");
  EXPECT_EQ(reply.lines(101).text(), "mpirun: done");
}

// 40 lines of 900 KB asked for with max_lines 4 billion: the newest lines that fit the budget.
TEST_F(TailLogReplyTest, HugeLinesAndLineCountsStayWithinTheBudget) {
  {
    std::ofstream out(dir_ / "stdout.log");
    for (int i = 0; i < 40; ++i)
      out << std::string(900 * 1000, static_cast<char>('a' + i % 26)) << "\n";
  }
  const size_t budget = 1 << 20;
  const v1::TailLogReply reply = tailLogReply("r", dir_.string(), 4'000'000'000u, budget);
  ASSERT_GE(reply.lines_size(), 1);
  EXPECT_LE(reply.ByteSizeLong(), budget);
  EXPECT_EQ(reply.lines(reply.lines_size() - 1).text().front(), 'a' + 39 % 26);
  EXPECT_TRUE(reply.lines(0).text().ends_with("kept the first 65536]"));
}

}  // namespace
}  // namespace ringside::agent
