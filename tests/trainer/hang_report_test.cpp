// describeCollectiveTimeout (hang_report.h) on recorded answers of the other ranks.
#include "ringside/trainer/hang_report.h"

#include <gtest/gtest.h>

namespace ringside::trainer {
namespace {

RankActivity::Snapshot waiting(uint64_t collective, int64_t step, double seconds) {
  RankActivity::Snapshot s;
  s.phase = v1::ALLREDUCE;
  s.bucket = 0;
  s.step = step;
  s.waitingIn = kWaitAllreduce;
  s.waitingCollective = collective;
  s.waitingSeconds = seconds;
  return s;
}

TEST(HangReportTest, SilentRankAndBusyRankAreNamedWaitingRanksAreNot) {
  const std::vector<std::string> hosts = {"node-1", "node-1", "node-2", "node-2"};
  RankActivity::Snapshot busy;
  busy.phase = v1::DATA;
  busy.step = 1751;
  busy.phaseSeconds = 903.4;
  std::vector<std::optional<RankReport>> peers(4);
  peers[1] = RankReport{1, "node-1", waiting(42, 1751, 900.2)};  // waits with rank 0
  peers[2] = RankReport{2, "node-2", busy};                      // never arrived
  // peers[3]: no answer
  const std::string text = describeCollectiveTimeout(
      RankReport{0, "node-1", waiting(42, 1751, 900.4)}, peers, hosts, 900.0, 10.0);
  EXPECT_EQ(text,
            "rank 0 (node-1) waited 900 s in the all-reduce of bucket 0 of step 1752 (collective "
            "timeout 900 s); rank 2 (node-2) did not arrive: it has been in the data phase of "
            "step 1752 for 903 s; rank 3 (node-2) did not answer within 10 s (its process is "
            "stopped, its node is frozen or the network is down); every rank of the run aborts");
}

TEST(HangReportTest, EveryRankInTheSameCollectiveBlamesTheTransport) {
  std::vector<std::optional<RankReport>> peers(2);
  peers[1] = RankReport{1, "b", waiting(7, 10, 60.0)};
  const std::string text = describeCollectiveTimeout(RankReport{0, "a", waiting(7, 10, 61.0)},
                                                     peers, {"a", "b"}, 60.0, 10.0);
  EXPECT_NE(text.find("every rank waits in it, so the collective itself hung"), std::string::npos)
      << text;
}

TEST(HangReportTest, RankInAnotherCollectiveDidNotArrive) {
  std::vector<std::optional<RankReport>> peers(2);
  peers[1] = RankReport{1, "b", waiting(6, 9, 70.0)};
  const std::string text = describeCollectiveTimeout(RankReport{0, "a", waiting(7, 10, 61.0)},
                                                     peers, {"a", "b"}, 60.0, 10.0);
  EXPECT_NE(text.find("rank 1 (b) did not arrive: it waits in the all-reduce of bucket 0 of step "
                      "10 (another collective)"),
            std::string::npos)
      << text;
}

TEST(HangReportTest, WaitKindsCrossAsIndices) {
  for (const char* kind : kWaitKinds) EXPECT_EQ(kWaitKinds[waitKindIndex(kind)], kind);
  EXPECT_EQ(waitKindIndex(nullptr), -1);
  EXPECT_EQ(waitKindIndex("something else"), -1);
}

}  // namespace
}  // namespace ringside::trainer
