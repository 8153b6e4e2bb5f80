// The straggler verdict under a real agent (docs/metrics.md, "The straggler"): a 2-rank trainer
// run where rank 1 spends 15 ms more in every step's compute (the trainer's documented fault
// injection, inject_compute_delay) must be named by the owner agent, first and with the right
// stage, in the verdict samples it journals with the run.
#include <gtest/gtest.h>

#include <map>

#include "agent_fixture.h"
#include "ringside/common/metric_names.h"

namespace ringside::agent {
namespace {

TEST_F(AgentProcessTest, InjectedSlowRankIsNamedTheComputeStraggler) {
  nlohmann::json config = smallRun(1);
  config["inject_compute_delay"] = "1:15";
  const v1::RunInfo launched = launch(config);
  const v1::RunInfo run = waitForState(launched.run_id(), {v1::COMPLETED, v1::FAILED});
  ASSERT_EQ(run.state(), v1::COMPLETED) << run.reason();
  // The agent journals its verdict at every step where both ranks' timings are in.
  std::map<int64_t, std::map<std::string, double>> verdicts;
  for (const auto& sample : fetchAll(launched.run_id()).verdicts) {
    EXPECT_EQ(sample.rank(), -1);
    verdicts[sample.step()][sample.name()] = sample.value();
  }
  ASSERT_GE(verdicts.size(), 5u);
  size_t named = 0;
  for (const auto& [step, v] : verdicts) {
    ASSERT_EQ(v.size(), 5u) << "step " << step;
    if (v.at(metric::kStragglerRank) != 1.0) continue;
    ++named;
    EXPECT_EQ(v.at(metric::kStragglerStage), 2.0) << "step " << step;  // compute
    EXPECT_GE(v.at(metric::kStragglerStageMs) - v.at(metric::kStragglerMedianMs), 10.0);
    EXPECT_GE(v.at(metric::kStragglerOthersWaitMs), 7.5);
  }
  // Every verdict, bar a first one taken while the ranks' windows still fill, names rank 1.
  EXPECT_GE(named + 1, verdicts.size()) << named << " of " << verdicts.size();
}

}  // namespace
}  // namespace ringside::agent
