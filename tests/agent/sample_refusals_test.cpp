// SampleRefusals (sample_refusals.h): refused samples are counted per run and reported at once,
// then at most once a minute per run with the totals, and made-up run ids cannot grow it.
#include "ringside/agent/sample_refusals.h"

#include <gtest/gtest.h>

namespace ringside::agent {
namespace {

// Refusals are counted and logged at a bounded rate, not a line per batch.
TEST(SampleRefusalsTest, RefusedSamplesAreCountedAndReportedAtMostOnceAMinutePerRun) {
  SampleRefusals refusals;
  auto first = refusals.add("run-a", 0, 3, "rank 5 is outside the run's world size 2", 100.0);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->runId, "run-a");
  EXPECT_EQ(first->text,
            "refused 3 metric samples for run run-a (3 so far): rank 5 is outside the run's "
            "world size 2; further refusals like it are reported at most once a minute");
  // A flood within the minute: counted, not reported.
  for (int i = 0; i < 10000; ++i)
    EXPECT_FALSE(refusals.add("run-a", 0, 1, "step -1", 101.0 + i * 1e-3));
  EXPECT_TRUE(refusals.due(150.0).empty());
  // Another run is reported on its own.
  EXPECT_TRUE(refusals.add("run-b", 0, 1, "run run-b has ended (COMPLETED)", 120.0));
  // The minute passes: what was held back is reported with the total, once.
  auto due = refusals.due(160.5);
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].text, "refused 10000 metric samples for run run-a (10003 so far): step -1");
  EXPECT_TRUE(refusals.due(300.0).empty());
  EXPECT_EQ(refusals.refused("run-a"), 10003u);
  EXPECT_EQ(refusals.refusedTotal(), 10004u);
  // After a quiet minute the next refusal is reported at once.
  EXPECT_TRUE(refusals.add("run-a", 0, 2, "step -1", 400.0));
  // Another kind of refusal of the same run is reported at once.
  EXPECT_TRUE(refusals.add("run-a", 1, 1, "run run-a has ended (COMPLETED)", 400.5));
  EXPECT_EQ(refusals.refused("run-a"), 10006u);
}

TEST(SampleRefusalsTest, MadeUpRunIdsAreCountedTogetherPastTheBound) {
  SampleRefusals refusals;
  for (size_t i = 0; i < SampleRefusals::kMaxRuns + 5000; ++i) {
    (void)refusals.add("made-up-" + std::to_string(i), 5, 1, "the journal holds no run", 1.0);
  }
  EXPECT_EQ(refusals.refused(""), 5000u);
  EXPECT_EQ(refusals.refusedTotal(), SampleRefusals::kMaxRuns + 5000);
  auto report = refusals.add("made-up-x", 5, 1, "the journal holds no run made-up-x", 1000.0);
  ASSERT_TRUE(report);
  EXPECT_EQ(report->runId, "");
  EXPECT_NE(report->text.find("for other runs (5001 so far)"), std::string::npos) << report->text;
}

// Twenty run ids of 15 MiB from a hostile sender were kept as keys and written to the log.
// A run id that is no run id is counted under "other runs", and its text goes nowhere.
TEST(SampleRefusalsTest, RunIdsOverTheBoundAreNeitherKeptNorLogged) {
  SampleRefusals refusals;
  const std::string huge(15u << 20, 'x');
  auto report = refusals.add(huge, 1000, 1, "sent with another run's key", 1.0, "message");
  ASSERT_TRUE(report);
  EXPECT_EQ(report->runId, "");
  EXPECT_LT(report->text.size(), 300u);
  EXPECT_EQ(report->text.rfind("refused 1 message for other runs (1 so far)", 0), 0u)
      << report->text;
  (void)refusals.add(std::string("r1\nfake log line"), 1000, 1, "why", 2.0, "message");
  EXPECT_EQ(refusals.refused(""), 2u);
}

}  // namespace
}  // namespace ringside::agent
