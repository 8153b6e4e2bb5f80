// ListRuns pages and TailLog replies within the byte budget (issue 12 item 8).
#include "ringside/agent/reply_pages.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

namespace ringside::agent {
namespace {

namespace fs = std::filesystem;

std::vector<StoredRun> runsOf(int count, size_t nameBytes) {
  std::vector<StoredRun> runs;
  for (int i = 0; i < count; ++i) {
    StoredRun run;
    run.runKey = 10 + 2 * i;  // keys need not be consecutive
    std::string id = "r";     // (not "r" + ...: GCC 12's -Wrestrict false positive)
    id += std::to_string(i);
    run.info.set_run_id(id);
    run.info.mutable_spec()->set_name(std::string(nameBytes, 'x'));
    runs.push_back(run);
  }
  return runs;
}

TEST(ListRunsPageTest, PagesStayWithinTheBudgetAndTogetherListEveryRunOnce) {
  const std::vector<StoredRun> runs = runsOf(25, 100 * 1024);
  const size_t budget = 512 * 1024;
  std::vector<std::string> listed;
  std::string token;
  int pages = 0;
  do {
    auto page = listRunsPage(runs, token, budget);
    ASSERT_TRUE(page.isOk()) << page.status().toString();
    ++pages;
    ASSERT_GE(page->runs_size(), 1);
    EXPECT_LE(page->ByteSizeLong(), budget + 64);
    for (const auto& run : page->runs()) listed.push_back(run.run_id());
    token = page->next_page_token();
  } while (!token.empty());
  ASSERT_EQ(listed.size(), runs.size());
  for (size_t i = 0; i < runs.size(); ++i) EXPECT_EQ(listed[i], runs[i].info.run_id());
  EXPECT_EQ(pages, 5);  // 4 runs of ~100 KiB per 512 KiB page... plus the rest
}

TEST(ListRunsPageTest, SmallListsAreOnePageAndARunOverTheBudgetComesAlone) {
  auto one = listRunsPage(runsOf(3, 10), "", 1 << 20);
  ASSERT_TRUE(one.isOk());
  EXPECT_EQ(one->runs_size(), 3);
  EXPECT_TRUE(one->next_page_token().empty());
  auto big = listRunsPage(runsOf(2, 4096), "", 1000);
  ASSERT_TRUE(big.isOk());
  EXPECT_EQ(big->runs_size(), 1);
  EXPECT_EQ(big->next_page_token(), "10");
  auto empty = listRunsPage({}, "", 1000);
  ASSERT_TRUE(empty.isOk());
  EXPECT_EQ(empty->runs_size(), 0);
}

TEST(ListRunsPageTest, ATokenNotWrittenByTheAgentIsInvalidArgument) {
  for (const char* token : {"x", "-1", "12abc", "99999999999999999999999"}) {
    auto page = listRunsPage(runsOf(2, 10), token, 1 << 20);
    EXPECT_EQ(page.status().code(), Status::Code::kInvalidArgument) << token;
  }
  // A token past the last run: an empty last page.
  auto past = listRunsPage(runsOf(2, 10), "1000", 1 << 20);
  ASSERT_TRUE(past.isOk());
  EXPECT_EQ(past->runs_size(), 0);
  EXPECT_TRUE(past->next_page_token().empty());
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
