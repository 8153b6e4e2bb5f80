// scanRankProcesses' cache (rank_processes.h): a process's environ is read once per exec, not at
// every scan (bench/scale: 64 agents reading 800 environs a second took a core), and an exec
// that gives the same pid a new environment is seen.
#include "ringside/agent/rank_processes.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "test_util.h"

namespace ringside::agent {
namespace {

using namespace std::string_literals;

// A fake /proc/PID: its stat (start time field 22, env_start 48, env_end 49) and environ.
void writeProcess(const std::string& dir, const std::string& pid, uint64_t startTicks,
                  uint64_t envStart, const std::string& environ) {
  std::filesystem::create_directories(dir + "/" + pid);
  std::string stat = pid;
  stat += " (a (b) c) S";
  for (int field = 4; field <= 52; ++field) {
    const uint64_t value = field == 22   ? startTicks
                           : field == 48 ? envStart
                           : field == 49 ? envStart + environ.size()
                                         : static_cast<uint64_t>(field);
    stat.append(" ").append(std::to_string(value));
  }
  std::ofstream(dir + "/" + pid + "/stat") << stat << "\n";
  std::ofstream(dir + "/" + pid + "/environ", std::ios::binary) << environ;
}

std::vector<int> ranksOf(const std::vector<RankProcess>& processes, const std::string& runId) {
  std::vector<int> ranks;
  for (const RankProcess& process : processes) {
    if (process.runId == runId) ranks.push_back(process.rank);
  }
  return ranks;
}

const std::string kRankEnv = "PATH=/bin\0RINGSIDE_RUN_ID=r1\0OMPI_COMM_WORLD_RANK=3\0"s;
const std::string kOtherEnv = "PATH=/bin\0HOME=/root\0"s;

TEST(ScanRankProcesses, anUnchangedProcessIsNotReadAgain) {
  trainer::TempDir dir;
  writeProcess(dir.path(), "200", 5000, 0x7ffd0000, kRankEnv);
  EXPECT_EQ(ranksOf(scanRankProcesses(dir.path()), "r1"), std::vector<int>{3});
  // Same pid, start time and environment place: the scan keeps what it read (its environ is
  // not read again, so a changed file is not seen).
  std::ofstream(dir.path() + "/200/environ", std::ios::binary) << kOtherEnv;
  EXPECT_EQ(ranksOf(scanRankProcesses(dir.path()), "r1"), std::vector<int>{3});
}

TEST(ScanRankProcesses, anExecWithANewEnvironmentIsReadAgain) {
  trainer::TempDir dir;
  writeProcess(dir.path(), "201", 5000, 0x7ffd0000, kOtherEnv);
  EXPECT_TRUE(scanRankProcesses(dir.path()).empty());
  // The same process after an exec: its environment lies elsewhere.
  writeProcess(dir.path(), "201", 5000, 0x7ffe1000, kRankEnv);
  EXPECT_EQ(ranksOf(scanRankProcesses(dir.path()), "r1"), std::vector<int>{3});
}

TEST(ScanRankProcesses, aReusedPidIsReadAgain) {
  trainer::TempDir dir;
  writeProcess(dir.path(), "202", 5000, 0x7ffd0000, kRankEnv);
  EXPECT_EQ(ranksOf(scanRankProcesses(dir.path()), "r1"), std::vector<int>{3});
  // Another process with the pid, started later, at the same environment address.
  writeProcess(dir.path(), "202", 9000, 0x7ffd0000, kOtherEnv);
  EXPECT_TRUE(scanRankProcesses(dir.path()).empty());
}

TEST(ScanRankProcesses, aProcessThatWentIsForgotten) {
  trainer::TempDir dir;
  writeProcess(dir.path(), "203", 5000, 0x7ffd0000, kRankEnv);
  EXPECT_EQ(scanRankProcesses(dir.path()).size(), 1u);
  std::filesystem::remove_all(dir.path() + "/203");
  EXPECT_TRUE(scanRankProcesses(dir.path()).empty());
  // Back with the same key but another environ: read afresh, not remembered.
  writeProcess(dir.path(), "203", 5000, 0x7ffd0000, kOtherEnv);
  EXPECT_TRUE(scanRankProcesses(dir.path()).empty());
}

// On the real /proc: a shell that becomes a rank by exec (as Open MPI's daemon's child does)
// is found once it has exec'd, though it was scanned (and was no rank) before, with the same pid.
TEST(ScanRankProcesses, aRealProcessFoundAfterItsExec) {
  int pipeFds[2];
  ASSERT_EQ(::pipe(pipeFds), 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipeFds[0], 0);
  posix_spawn_file_actions_addclose(&actions, pipeFds[1]);
  const std::string runId = "rank-processes-test-" + std::to_string(::getpid());
  const std::string script =
      "read line; exec env RINGSIDE_RUN_ID=" + runId + " OMPI_COMM_WORLD_RANK=7 sleep 30";
  const char* argv[] = {"/bin/sh", "-c", script.c_str(), nullptr};
  pid_t child = -1;
  ASSERT_EQ(posix_spawn(&child, "/bin/sh", &actions, nullptr, const_cast<char**>(argv), environ),
            0);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipeFds[0]);
  EXPECT_TRUE(ranksOf(scanRankProcesses(), runId).empty());
  EXPECT_TRUE(ranksOf(scanRankProcesses(), runId).empty());
  ASSERT_EQ(::write(pipeFds[1], "go\n", 3), 3);
  ::close(pipeFds[1]);
  std::vector<int> found;
  for (int i = 0; i < 1000 && found.empty(); ++i) {
    found = ranksOf(scanRankProcesses(), runId);
    if (found.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(found, std::vector<int>{7});
  for (const RankProcess& process : scanRankProcesses()) {
    if (process.runId == runId) {
      EXPECT_EQ(process.pid, child);
    }
  }
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_TRUE(ranksOf(scanRankProcesses(), runId).empty());
}

}  // namespace
}  // namespace ringside::agent
