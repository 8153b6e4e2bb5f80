// Failure reasons from stderr.log texts as Open MPI 4.1's mpirun --tag-output
// wrote them on this machine (recorded, then shortened).
#include "ringside/agent/failure_reason.h"

#include <gtest/gtest.h>

#include <string>

namespace ringside::agent {
namespace {

google::protobuf::RepeatedPtrField<v1::HostSlots> placement(
    std::initializer_list<std::pair<const char*, uint32_t>> hosts) {
  google::protobuf::RepeatedPtrField<v1::HostSlots> slots;
  for (const auto& [host, ranks] : hosts) {
    v1::HostSlots* entry = slots.Add();
    entry->set_host(host);
    entry->set_ranks(ranks);
  }
  return slots;
}

// `mpirun --tag-output -np 2 ringside-trainer --global-batch 127`.
constexpr const char* kIndivisibleBatch =
    "[1,0]<stderr>:ringside-trainer: error on rank 0 (vm): --global-batch 127 is not divisible "
    "by the world size 2: use a multiple of 2 (local batch = global batch / world size)\n"
    "--------------------------------------------------------------------------\n"
    "Primary job  terminated normally, but 1 process returned\n"
    "a non-zero exit code. Per user-direction, the job has been aborted.\n"
    "--------------------------------------------------------------------------\n"
    "[1,1]<stderr>:ringside-trainer: error on rank 1 (vm): --global-batch 127 is not divisible "
    "by the world size 2: use a multiple of 2 (local batch = global batch / world size)\n"
    "--------------------------------------------------------------------------\n"
    "mpirun detected that one or more processes exited with non-zero status, thus causing\n"
    "the job to be terminated. The first process to do so was:\n"
    "\n"
    "  Process name: [[27073,1],0]\n"
    "  Exit code:    2\n"
    "--------------------------------------------------------------------------\n";

TEST(FailureReasonTest, RankErrorLineWithNodeAndRankForAnIndivisibleGlobalBatch) {
  const std::string reason =
      runFailureReason(kIndivisibleBatch, placement({{"vm", 2}}), /*statusKnown=*/true, 2);
  EXPECT_EQ(reason,
            "rank 0 on node vm exited with status 2: ringside-trainer: error on rank 0 (vm): "
            "--global-batch 127 is not divisible by the world size 2: use a multiple of 2 "
            "(local batch = global batch / world size)");
}

// As recorded: only rank 0 printed the error, and mpirun names rank 1 as the first to exit.
TEST(FailureReasonTest, ARankThatPrintedNothingGetsAnotherRanksErrorLineNamingIt) {
  std::string text = kIndivisibleBatch;
  text.replace(text.find("[[27073,1],0]"), 13, "[[27073,1],1]");
  text.erase(text.find("[1,1]<stderr>:"),
             text.find('\n', text.find("[1,1]<stderr>:")) + 1 - text.find("[1,1]<stderr>:"));
  EXPECT_EQ(runFailureReason(text, placement({{"vm", 2}}), true, 2),
            "rank 1 on node vm exited with status 2; rank 0 on node vm: ringside-trainer: error "
            "on rank 0 (vm): --global-batch 127 is not divisible by the world size 2: use a "
            "multiple of 2 (local batch = global batch / world size)");
}

TEST(FailureReasonTest, NodeOfTheRankComesFromThePlacement) {
  std::string text = kIndivisibleBatch;
  text.replace(text.find("[[27073,1],0]"), 13, "[[27073,1],3]");
  text +=
      "[1,3]<stderr>:Traceback (most recent call last):\n"
      "[1,3]<stderr>:  File \"train.py\", line 3, in <module>\n"
      "[1,3]<stderr>:    raise ValueError(\"bad learning rate\")\n"
      "[1,3]<stderr>:ValueError: bad learning rate\n";
  EXPECT_EQ(runFailureReason(text, placement({{"node-1", 2}, {"node-2", 2}}), true, 1),
            "rank 3 on node node-2 exited with status 2: ValueError: bad learning rate");
}

// Its last line is not quoted: a rank killed by a signal did not end itself.
TEST(FailureReasonTest, SignalledRank) {
  const std::string text =
      "[1,1]<stderr>:step 10\n"
      "mpirun noticed that process rank 1 with PID 0 on node vm exited on signal 9 (Killed).\n";
  EXPECT_EQ(runFailureReason(text, placement({{"vm", 2}}), true, 137),
            "rank 1 on node vm was killed by signal 9 (Killed)");
}

TEST(FailureReasonTest, ARankThatCouldNotStartQuotesMpirunsExplanation) {
  // `mpirun --tag-output --wdir /nonexistent -np 2 true`.
  const std::string text =
      "--------------------------------------------------------------------------\n"
      "mpirun was unable to launch the specified application as it could not\n"
      "change to the specified working directory:\n"
      "\n"
      "Working directory: /nonexistent\n"
      "Node: vm\n"
      "\n"
      "while attempting to start process rank 0.\n"
      "--------------------------------------------------------------------------\n"
      "2 total processes failed to start\n";
  EXPECT_EQ(runFailureReason(text, placement({{"vm", 2}}), true, 1),
            "rank 0 on node vm could not start: mpirun was unable to launch the specified "
            "application as it could not change to the specified working directory: Working "
            "directory: /nonexistent Node: vm");
}

TEST(FailureReasonTest, NoRankNamedByMpirunTakesTheFirstRankThatPrintedAnError) {
  const std::string text =
      "[1,1]<stderr>:loading data\n"
      "[1,1]<stderr>:RuntimeError: CUDA out of memory\n"
      "[warn] Epoll MOD(1) on fd 25 failed. Old events were 6; read change was 0 (none); write "
      "change was 2 (del): Bad file descriptor\n";
  EXPECT_EQ(runFailureReason(text, placement({{"a", 1}, {"b", 1}}), true, 1),
            "mpirun exited with status 1: rank 1 on node b: RuntimeError: CUDA out of memory");
}

TEST(FailureReasonTest, WithoutRankOutputMpirunsLastLineIsQuotedAndWarningsSkipped) {
  const std::string text =
      "cannot change to the run's working directory /gone: it does not exist or cannot be "
      "entered\n"
      "[warn] Epoll MOD(1) on fd 25 failed.\n";
  EXPECT_EQ(runFailureReason(text, placement({}), true, 126),
            "mpirun exited with status 126: cannot change to the run's working directory /gone: "
            "it does not exist or cannot be entered");
  EXPECT_EQ(runFailureReason("", placement({}), false, 0),
            "the run's processes ended without an exit status");
}

TEST(FailureReasonTest, ARankWithoutAnErrorWordGivesItsLastLine) {
  EXPECT_EQ(firstErrorLine("[1,0]<stderr>:starting\n[1,0]<stderr>:gave up at step 3\n"
                           "[1,1]<stderr>:other rank\n",
                           0),
            "gave up at step 3");
  EXPECT_EQ(firstErrorLine("[1,0]<stdout>:only stdout\n", 1), "");
}

TEST(FailureReasonTest, QuotedLinesAreBoundedAndValidUtf8) {
  const std::string line = "[1,0]<stderr>:error: " + std::string(100000, 'x') + "\xe9\n";
  const std::string quoted = firstErrorLine(line, 0);
  EXPECT_LE(quoted.size(), kMaxQuotedErrorBytes + 4);
  EXPECT_TRUE(quoted.ends_with(" ..."));
}

TEST(FailureReasonTest, HostOfRankFollowsThePlacementOrder) {
  const auto hosts = placement({{"a", 2}, {"b", 3}});
  EXPECT_EQ(hostOfRank(hosts, 0), "a");
  EXPECT_EQ(hostOfRank(hosts, 1), "a");
  EXPECT_EQ(hostOfRank(hosts, 2), "b");
  EXPECT_EQ(hostOfRank(hosts, 4), "b");
  EXPECT_EQ(hostOfRank(hosts, 5), "");
  EXPECT_EQ(hostOfRank(hosts, -1), "");
}

}  // namespace
}  // namespace ringside::agent
