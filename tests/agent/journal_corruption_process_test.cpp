// Regression tests of corruption that went unnoticed against the real
// ringside-agent: a journal with flipped bytes is moved aside at start and new runs go to an
// empty one (it used to start on the damaged file, fail every list_runs with "INTERNAL: RunInfo
// does not parse" and journal new runs into it), and one run record that does not parse is
// skipped while the other runs are listed.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "agent_fixture.h"
#include "journal_damage.h"
#include "ringside/agent/journal.h"

namespace ringside::agent {
namespace {

namespace fs = std::filesystem;
using damage::fillJournal;
using damage::markerOf;
using damage::nowSeconds;

size_t countOf(const std::string& text, const std::string& part) {
  return damage::find(text, part).size();
}

class JournalCorruptionProcessTest : public AgentProcessTest {
 protected:
  std::string journalPath() const { return state_ + "/journal.sqlite"; }

  // Kills the agent, lets `change` work on its journal, and starts it again on the same state.
  void restartAgentAfter(const std::function<void(const std::string& journal)>& change) {
    agent_->kill9();
    change(journalPath());
    if (HasFatalFailure()) return;
    agent_ = std::make_unique<AgentProcess>(state_, dir_.path());
    connect();
  }

  v1::Envelope listRuns() {
    v1::Envelope envelope;
    envelope.mutable_list_runs()->set_include_ended(true);
    return request(envelope);
  }

  v1::Envelope fetch(const std::string& runId) {
    v1::Envelope envelope;
    envelope.mutable_fetch_run_data()->set_run_id(runId);
    return request(envelope);
  }
};

TEST_F(JournalCorruptionProcessTest,
       FlippedBytesInTheJournalAreQuarantinedAtStartAndNewRunsJournaledFresh) {
  std::string damaged;
  restartAgentAfter([&](const std::string& path) {
    ASSERT_NO_FATAL_FAILURE(fillJournal(path, 10, 3000));
    damage::checkpoint(path);
    const std::vector<int64_t> pages = damage::leafPages(path, "metric_samples");
    ASSERT_GT(pages.size(), 4u);
    damage::flipPageHeader(path, pages[pages.size() / 2], damage::pageSize(path));
    ASSERT_FALSE(damage::isSound(path)) << "integrity_check must see the damage";
    damaged = damage::readBytes(path);
  });
  ASSERT_FALSE(HasFatalFailure());

  std::vector<std::string> moved;
  for (const auto& entry : fs::directory_iterator(state_)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("journal.sqlite.corrupt-", 0) == 0 && name.find("-wal") == std::string::npos &&
        name.find("-shm") == std::string::npos) {
      moved.push_back(entry.path().string());
    }
  }
  ASSERT_EQ(moved.size(), 1u);
  const std::string log = agent_->errors();
  EXPECT_NE(log.find("ringside-agent error: journal " + journalPath() +
                     " is damaged (PRAGMA "
                     "integrity_check found"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("to " + moved[0] + " and started an empty journal"), std::string::npos) << log;
  EXPECT_NE(log.find("sqlite3 " + moved[0] + " .recover"), std::string::npos) << log;

  const v1::Envelope empty = listRuns();
  ASSERT_TRUE(empty.has_list_runs_reply()) << empty.DebugString();
  EXPECT_EQ(empty.list_runs_reply().runs_size(), 0);

  // A new run goes to the empty journal, never into the damaged file.
  v1::Envelope launch;
  auto* spec = launch.mutable_launch_run()->mutable_spec();
  spec->set_name("after-the-damage");
  spec->set_ranks_per_node(1);
  for (const char* arg : {"sh", "-c", "echo still journaling"}) {
    spec->mutable_command()->add_argv(arg);
  }
  const v1::Envelope launched = request(launch);
  ASSERT_TRUE(launched.has_launch_run_reply()) << launched.DebugString();
  const std::string runId = launched.launch_run_reply().run().run_id();
  EXPECT_EQ(waitForState(runId, {v1::COMPLETED, v1::FAILED}).state(), v1::COMPLETED);
  const v1::Envelope listed = listRuns();
  ASSERT_EQ(listed.list_runs_reply().runs_size(), 1);
  EXPECT_EQ(listed.list_runs_reply().runs(0).run_id(), runId);

  EXPECT_EQ(damage::readBytes(moved[0]), damaged) << "the damaged file is kept as found";
  EXPECT_TRUE(damage::isSound(journalPath()));
  damage::RawDb journal(journalPath());
  EXPECT_EQ(journal.column("SELECT run_id FROM runs"), std::vector<std::string>{runId});
}

TEST_F(JournalCorruptionProcessTest,
       ListRunsSkipsTheOneRunWhoseRecordDoesNotParseAndListsTheOthers) {
  restartAgentAfter([&](const std::string& path) {
    ASSERT_NO_FATAL_FAILURE(fillJournal(path, 8, 50));
    ASSERT_NO_FATAL_FAILURE(damage::breakRunInfo(path, markerOf(5)));
    ASSERT_TRUE(damage::isSound(path)) << "one bad row, not a damaged file";
  });
  ASSERT_FALSE(HasFatalFailure());

  for (int listing = 0; listing < 2; ++listing) {
    const v1::Envelope reply = listRuns();
    ASSERT_TRUE(reply.has_list_runs_reply()) << reply.DebugString();
    std::vector<std::string> runIds;
    for (const auto& run : reply.list_runs_reply().runs()) runIds.push_back(run.run_id());
    EXPECT_EQ(runIds, (std::vector<std::string>{"run-0", "run-1", "run-2", "run-3", "run-4",
                                                "run-6", "run-7"}));
  }
  const std::string log = agent_->errors();
  EXPECT_EQ(countOf(log, "ringside-agent warning: run run-5 in journal " + journalPath() +
                             " cannot be read"),
            1u)
      << "reported once: " << log;

  const v1::Envelope good = fetch("run-4");
  ASSERT_TRUE(good.has_fetch_run_data_reply()) << good.DebugString();
  EXPECT_EQ(good.fetch_run_data_reply().samples_size(), 50);
  const v1::Envelope bad = fetch("run-5");
  ASSERT_TRUE(bad.has_error()) << bad.DebugString();
  EXPECT_NE(bad.error().message().find("run run-5 in journal " + journalPath() + " cannot be read"),
            std::string::npos)
      << bad.error().message();
  EXPECT_TRUE(damage::find(agent_->errors(), "is damaged").empty())
      << "one bad row does not mark the journal damaged";
}

}  // namespace
}  // namespace ringside::agent
