// Early stopping (early_stopping.h) on synthetic learning curves: ASHA's stopping form keeps the
// best floor(n / eta) of the n trials recorded at a rung, as Li et al. (MLSys 2020) promote them,
// and the median rule stops a trial below the others' running averages.
#include "ringside/agent/sweep/early_stopping.h"

#include <gtest/gtest.h>

#include <optional>

namespace ringside::agent {
namespace {

v1::SweepInfo sweepWith(int trials, v1::MetricGoal goal) {
  v1::SweepInfo sweep;
  v1::SweepSpec& spec = *sweep.mutable_spec();
  spec.set_metric("test/accuracy");
  spec.set_goal(goal);
  v1::AshaRule& asha = *spec.mutable_early_stopping()->mutable_asha();
  asha.set_eta(3);
  asha.set_grace_period(1);
  asha.set_max_resource(9);
  for (int i = 0; i < trials; ++i) sweep.add_trials()->set_trial(static_cast<uint32_t>(i));
  return sweep;
}

TEST(AshaTest, RungsAreTheGracePeriodTimesPowersOfEtaBelowTheMaximum) {
  v1::AshaRule rule;
  rule.set_eta(4);
  rule.set_grace_period(1);
  EXPECT_EQ(ashaRungs(rule, 16), (std::vector<double>{1, 4}));
  EXPECT_EQ(ashaRungs(rule, 17), (std::vector<double>{1, 4, 16}));
  v1::AshaRule defaults;  // eta 3, grace period 1
  EXPECT_EQ(ashaRungs(defaults, 27), (std::vector<double>{1, 3, 9}));
}

TEST(AshaTest, ATrialGoesOnOnlyAmongTheBestThirdOfItsRung) {
  v1::SweepInfo sweep = sweepWith(9, v1::MAXIMIZE);
  // Nine trials reach rung 0 (1 epoch) one after another. With n recorded, the best floor(n/3)
  // go on; below eta values recorded, every trial goes on.
  const double values[] = {0.5, 0.6, 0.4, 0.7, 0.3, 0.65, 0.8, 0.2, 0.55};
  const bool stopped[] = {false, false, true, false, true, false, false, true, true};
  for (uint32_t t = 0; t < 9; ++t) {
    const StopVerdict verdict = judgeReport(&sweep, t, 1.0, values[t], values[t], values[t]);
    EXPECT_EQ(verdict.stop, stopped[t]) << "trial " << t;
    ASSERT_EQ(sweep.trials(static_cast<int>(t)).rungs_size(), 1);
    EXPECT_EQ(sweep.trials(static_cast<int>(t)).rungs(0).promoted(), !stopped[t]);
  }
  // The reason names the rung, the value, the cutoff and the count.
  const StopVerdict last = [&] {
    v1::SweepInfo copy = sweepWith(10, v1::MAXIMIZE);
    for (uint32_t t = 0; t < 9; ++t) judgeReport(&copy, t, 1.0, values[t], values[t], values[t]);
    return judgeReport(&copy, 9, 1.0, 0.62, 0.62, 0.62);
  }();
  EXPECT_TRUE(last.stop);
  EXPECT_EQ(last.reason,
            "stopped at rung 0 (1 epoch): test/accuracy 0.62, below the cutoff 0.65 (the best 3 "
            "of 10 trials at that rung go on)");
  // Rung 1 (3 epochs): trials 0, 1 and 3 reach it; then trial 5 falls below the best of four.
  EXPECT_FALSE(judgeReport(&sweep, 0, 3.0, 0.6, 0, 0).stop);
  EXPECT_FALSE(judgeReport(&sweep, 1, 3.0, 0.7, 0, 0).stop);
  EXPECT_FALSE(judgeReport(&sweep, 3, 3.0, 0.75, 0, 0).stop);  // n = 3, best 1: itself
  const StopVerdict rung1 = judgeReport(&sweep, 5, 3.0, 0.5, 0, 0);
  EXPECT_TRUE(rung1.stop);
  EXPECT_NE(rung1.reason.find("stopped at rung 1 (3 epochs)"), std::string::npos) << rung1.reason;
  // A report past both rungs at once is judged at each; one judged already is not judged again.
  EXPECT_FALSE(judgeReport(&sweep, 6, 3.5, 0.9, 0, 0).stop);
  EXPECT_EQ(sweep.trials(6).rungs_size(), 2);
  EXPECT_FALSE(judgeReport(&sweep, 2, 1.0, 0.0, 0, 0).stop);  // replayed: rung 0 was judged
  EXPECT_EQ(sweep.trials(2).rungs_size(), 1);
  // No rung at or past the maximum (9 epochs): the end of a trial is not judged.
  EXPECT_FALSE(judgeReport(&sweep, 0, 9.0, 0.0, 0, 0).stop);
}

// The promotion form, Li et al.'s Algorithm 2: trials pause at each rung; get_job promotes, from
// the top rung down, a paused trial among the best floor(n / eta) of its rung.
TEST(AshaPromotionTest, GetJobPromotesTheBestPausedTrialOfTheHighestRungItCan) {
  v1::SweepInfo sweep = sweepWith(7, v1::MAXIMIZE);
  sweep.mutable_spec()->mutable_base()->mutable_trainer();
  ASSERT_TRUE(ashaPromotes(sweep.spec()));
  auto pause = [&](uint32_t t, double resource, double value) {
    std::optional<uint32_t> rung = ashaPauseRung(&sweep, t, resource, value);
    if (rung) sweep.mutable_trials(static_cast<int>(t))->set_state(v1::STOPPED);
    return rung;
  };
  // Between rungs and below rung 0 nothing pauses.
  EXPECT_FALSE(pause(0, 0.5, 0.1).has_value());
  EXPECT_EQ(pause(0, 1.2, 0.5), 0u);
  EXPECT_EQ(pause(1, 1.0, 0.6), 0u);
  EXPECT_FALSE(ashaPromotion(sweep).has_value());  // 2 at rung 0: floor(2/3) = 0
  EXPECT_EQ(pause(2, 1.0, 0.4), 0u);
  EXPECT_EQ(ashaPromotion(sweep), 1u);              // the best of 3
  auto promote = [&](uint32_t t) {
    v1::SweepTrial& trial = *sweep.mutable_trials(static_cast<int>(t));
    trial.mutable_rungs(trial.rungs_size() - 1)->set_promoted(true);
    trial.set_state(v1::RUNNING);
  };
  promote(1);
  EXPECT_FALSE(ashaPromotion(sweep).has_value());  // trial 1 went on; 0 is not in the best 1
  EXPECT_EQ(pause(3, 1.0, 0.7), 0u);
  EXPECT_EQ(pause(4, 1.0, 0.2), 0u);
  EXPECT_EQ(pause(5, 1.0, 0.3), 0u);
  EXPECT_EQ(ashaPromotion(sweep), 3u);  // 6 at rung 0: the best 2 are 3 (0.7) and 1 (promoted)
  promote(3);
  // Trial 1 reaches rung 1 (3 epochs); alone there, it waits. A report past both rungs at once
  // pauses at the lower one it had not reached.
  EXPECT_EQ(pause(1, 3.0, 0.8), 1u);
  EXPECT_EQ(pause(6, 3.5, 0.9), 0u);
  EXPECT_EQ(sweep.trials(6).rungs_size(), 2);
  EXPECT_TRUE(isPausedAtRung(sweep.trials(1)));
  EXPECT_FALSE(isPausedAtRung(sweep.trials(3)));  // running
  // 7 at rung 0 (best 2: 6 with 0.9, 3 with 0.7): trial 6 paused at rung 1 (its last record), so
  // it is not promoted from rung 0; nothing at rung 1 qualifies (2 there: floor(2/3) = 0).
  EXPECT_FALSE(ashaPromotion(sweep).has_value());
  // The budget spent and nothing running: the best of the highest rung goes on to the end.
  sweep.mutable_trials(3)->set_state(v1::STOPPED);
  EXPECT_EQ(ashaFinalPromotion(sweep), 6u);
  sweep.mutable_trials(5)->set_state(v1::COMPLETED);
  EXPECT_FALSE(ashaFinalPromotion(sweep).has_value());  // one trained to the end already
  EXPECT_EQ(ashaLeftReason(sweep, sweep.trials(4)),
            "stopped at rung 0 (1 epoch): test/accuracy 0.2, below the cutoff 0.7 (the best 2 of "
            "7 trials at that rung went on)");
}

TEST(AshaTest, ToMinimizeTheLowestValuesGoOn) {
  v1::SweepInfo sweep = sweepWith(4, v1::MINIMIZE);
  sweep.mutable_spec()->set_metric("train/loss");
  EXPECT_FALSE(judgeReport(&sweep, 0, 1, 0.9, 0, 0).stop);
  EXPECT_FALSE(judgeReport(&sweep, 1, 1, 0.5, 0, 0).stop);
  EXPECT_FALSE(judgeReport(&sweep, 2, 1, 0.4, 0, 0).stop);  // n = 3: the best 1 (0.4) goes on
  const StopVerdict verdict = judgeReport(&sweep, 3, 1, 0.6, 0, 0);
  EXPECT_TRUE(verdict.stop);
  EXPECT_NE(verdict.reason.find("train/loss 0.6, above the cutoff 0.4"), std::string::npos)
      << verdict.reason;
}

TEST(MedianStoppingTest, ATrialWhoseBestIsBelowTheMedianOfTheOthersRunningAveragesStops) {
  v1::SweepInfo sweep;
  v1::SweepSpec& spec = *sweep.mutable_spec();
  spec.set_metric("test/accuracy");
  spec.mutable_early_stopping()->mutable_median()->set_grace_period(2);
  spec.mutable_early_stopping()->mutable_median()->set_min_trials(2);
  spec.mutable_early_stopping()->mutable_median()->set_unit(v1::STEPS);
  for (int i = 0; i < 4; ++i) sweep.add_trials()->set_trial(static_cast<uint32_t>(i));
  // Running averages at step 2: 0.6 and 0.8 (median 0.7). Too few before the second.
  EXPECT_FALSE(judgeReport(&sweep, 0, 2, 0.7, 0.6, 0.7).stop);
  EXPECT_FALSE(judgeReport(&sweep, 1, 2, 0.9, 0.8, 0.9).stop);
  // Best so far 0.72 >= 0.7: goes on; 0.65 < 0.7: stopped, with the median in the reason.
  EXPECT_FALSE(judgeReport(&sweep, 2, 2, 0.72, 0.7, 0.72).stop);
  const StopVerdict verdict = judgeReport(&sweep, 3, 2.5, 0.65, 0.6, 0.65);
  EXPECT_TRUE(verdict.stop);
  EXPECT_EQ(verdict.reason,
            "stopped at 2 steps by the median rule: best test/accuracy 0.65, below the median "
            "0.7 of 3 other trials' running averages there");
}

}  // namespace
}  // namespace ringside::agent
