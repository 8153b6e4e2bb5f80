// Sweeps through the real agent (docs/sweeps.md): an ASHA sweep of the trainer's MLP on 2 CPU
// slots completes with its losers stopped by the rule and the best trial named; kill -9 of the
// agent in the middle of a sweep, a restart, and the sweep finishes with no trial run twice;
// pause, resume and stop over the protocol.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <set>
#include <thread>

#include "agent_fixture.h"

namespace ringside::agent {
namespace {

class SweepProcessTest : public AgentProcessTest {
 protected:
  // Six learning rates of the MLP, 1 rank per trial, at most 2 at once, ASHA with eta 2 at
  // epochs 1 and 2 of 4. Each step takes 20 ms more (the trainer's inject_compute_delay), so that
  // an epoch lasts about a second on any machine and a stop lands before the trial's end.
  static v1::SweepSpec ashaSweep(int epochs = 4, int trainSamples = 6000) {
    v1::SweepSpec spec;
    spec.set_name("lr-search");
    spec.set_method(v1::GRID);
    spec.set_metric("test/accuracy");
    spec.set_goal(v1::MAXIMIZE);
    spec.set_max_concurrent(2);
    v1::RunSpec& base = *spec.mutable_base();
    base.set_name("mlp");
    base.set_ranks_per_node(1);
    auto config = trainerConfigFromJson(nlohmann::json{{"backend", "mpi"},
                                                       {"epochs", epochs},
                                                       {"train_samples", trainSamples},
                                                       {"test_samples", 500},
                                                       {"hidden", {64}},
                                                       {"log_every", 10},
                                                       {"inject_compute_delay", "0:20"},
                                                       {"quiet", true}}
                                            .dump());
    EXPECT_TRUE(config.isOk());
    *base.mutable_trainer()->mutable_config() = *config;
    v1::SweepParameter& lr = *spec.add_parameters();
    lr.set_name("lr");
    for (double value : {0.0003, 0.1, 0.001, 0.03, 0.0001, 0.01}) {
      lr.mutable_values()->add_values()->set_number_value(value);
    }
    v1::AshaRule& asha = *spec.mutable_early_stopping()->mutable_asha();
    asha.set_eta(2);
    asha.set_grace_period(1);
    return spec;
  }

  v1::SweepInfo launchSweep(const v1::SweepSpec& spec) {
    v1::Envelope envelope;
    *envelope.mutable_launch_sweep()->mutable_spec() = spec;
    const v1::Envelope reply = request(envelope);
    EXPECT_TRUE(reply.has_launch_sweep_reply()) << reply.DebugString();
    return reply.launch_sweep_reply().sweep();
  }
  v1::SweepInfo sweep(const std::string& id) {
    v1::Envelope envelope;
    envelope.mutable_list_sweeps()->set_include_ended(true);
    const v1::Envelope reply = request(envelope);
    for (const v1::SweepInfo& info : reply.list_sweeps_reply().sweeps()) {
      if (info.sweep_id() == id) return info;
    }
    ADD_FAILURE() << "sweep " << id << " not listed: " << reply.DebugString();
    return {};
  }
  v1::SweepInfo waitForSweep(const std::string& id, std::set<v1::SweepState> states,
                             int seconds = 300) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    v1::SweepInfo info;
    while (std::chrono::steady_clock::now() < deadline) {
      info = sweep(id);
      if (states.contains(info.state())) return info;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    ADD_FAILURE() << "sweep " << id << " stayed " << v1::SweepState_Name(info.state()) << "\n"
                  << info.DebugString() << agent_->errors();
    return info;
  }
  // Every run of the sweep the agent journaled, by (trial, attempt).
  std::map<std::pair<uint32_t, uint32_t>, v1::RunInfo> runsOf(const std::string& sweepId) {
    std::map<std::pair<uint32_t, uint32_t>, v1::RunInfo> out;
    std::string token;
    do {
      v1::Envelope envelope;
      envelope.mutable_list_runs()->set_include_ended(true);
      envelope.mutable_list_runs()->set_page_token(token);
      const v1::Envelope reply = request(envelope);
      for (const v1::RunInfo& run : reply.list_runs_reply().runs()) {
        const v1::SweepTrialRef& ref = run.spec().sweep_trial();
        if (ref.sweep_id() != sweepId) continue;
        EXPECT_TRUE(out.emplace(std::make_pair(ref.trial(), ref.attempt()), run).second)
            << "trial " << ref.trial() << " attempt " << ref.attempt() << " twice";
      }
      token = reply.list_runs_reply().next_page_token();
    } while (!token.empty());
    return out;
  }
};

TEST_F(SweepProcessTest, AnAshaSweepOfTheMlpStopsLosersByTheRuleAndNamesTheBest) {
  const v1::SweepInfo launched = launchSweep(ashaSweep());
  ASSERT_FALSE(launched.sweep_id().empty());
  EXPECT_EQ(launched.trials_size(), 2);
  const v1::SweepInfo done = waitForSweep(launched.sweep_id(), {v1::SWEEP_COMPLETED});
  ASSERT_EQ(done.state(), v1::SWEEP_COMPLETED) << done.DebugString();
  ASSERT_EQ(done.trials_size(), 6);
  const auto runs = runsOf(done.sweep_id());
  EXPECT_EQ(runs.size(), 6u) << "every trial once";
  int stoppedEarly = 0;
  for (const v1::SweepTrial& trial : done.trials()) {
    const v1::RunInfo& run = runs.at({trial.trial(), 1});
    EXPECT_EQ(run.run_id(), trial.run_id());
    // The trial's value is its run's parameter and its run spec's field.
    EXPECT_EQ(run.params().at("lr"), trial.params().at("lr"));
    EXPECT_EQ(run.spec().trainer().config().lr(), std::stod(trial.params().at("lr")));
    EXPECT_EQ(run.spec().name(), "lr-search #" + std::to_string(trial.trial()));
    if (trial.stopped_early()) {
      ++stoppedEarly;
      EXPECT_EQ(run.state(), v1::STOPPED);
      EXPECT_EQ(trial.reason().rfind("stopped at rung ", 0), 0u) << trial.reason();
      EXPECT_NE(trial.reason().find("below the cutoff"), std::string::npos) << trial.reason();
      // The run's reason is the rule's, and its ranks exited within the 5 s grace period.
      EXPECT_EQ(run.reason().rfind(trial.reason(), 0), 0u) << run.reason();
      EXPECT_NE(run.reason().find("the ranks checkpointed and exited"), std::string::npos)
          << run.reason();
      EXPECT_LT(trial.resource(), 4);
    } else {
      EXPECT_EQ(run.state(), v1::COMPLETED) << run.reason();
      EXPECT_NEAR(trial.resource(), 4, 1e-9);
    }
  }
  EXPECT_GE(stoppedEarly, 1) << done.DebugString();
  // The best trial is named, and it is the best of those that completed.
  ASSERT_GE(done.best_trial(), 0);
  const v1::SweepTrial& best = done.trials(done.best_trial());
  for (const v1::SweepTrial& trial : done.trials()) {
    EXPECT_LE(trial.best_value(), best.best_value());
  }
  EXPECT_FALSE(best.stopped_early());
  EXPECT_GT(best.best_value(), 0.5);
}

TEST_F(SweepProcessTest, AKilledAgentTakesTheSweepBackAndRunsNoTrialTwice) {
  const v1::SweepInfo launched = launchSweep(ashaSweep(/*epochs=*/5));
  const std::string id = launched.sweep_id();
  // Wait until the third trial is queued (two have ended), then kill the agent.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(180);
  while (sweep(id).trials_size() < 3 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_GE(sweep(id).trials_size(), 3);
  agent_->kill9();
  std::this_thread::sleep_for(std::chrono::seconds(2));  // the ranks go on without it
  agent_ = std::make_unique<AgentProcess>(state_, dir_.path(), agentArgs());
  connect();
  const v1::SweepInfo done = waitForSweep(id, {v1::SWEEP_COMPLETED});
  ASSERT_EQ(done.state(), v1::SWEEP_COMPLETED) << done.DebugString();
  EXPECT_EQ(done.trials_size(), 6);
  const auto runs = runsOf(id);
  std::set<uint32_t> trials;
  for (const auto& [key, run] : runs) {
    EXPECT_EQ(key.second, 1u) << "trial " << key.first << " ran again: " << run.reason();
    trials.insert(key.first);
  }
  EXPECT_EQ(trials.size(), 6u);
  for (const v1::SweepTrial& trial : done.trials()) {
    EXPECT_TRUE(trial.state() == v1::COMPLETED || trial.stopped_early())
        << "trial " << trial.trial() << " " << v1::RunState_Name(trial.state()) << " "
        << trial.reason();
  }
  EXPECT_NE(agent_->errors().find("took back sweep " + id), std::string::npos);
}

TEST_F(SweepProcessTest, PauseResumeAndStopOverTheProtocol) {
  v1::SweepSpec spec = ashaSweep(/*epochs=*/30);
  spec.clear_early_stopping();
  spec.set_max_concurrent(1);
  const v1::SweepInfo launched = launchSweep(spec);
  const std::string id = launched.sweep_id();
  auto control = [&](v1::SweepAction action) {
    v1::Envelope envelope;
    envelope.mutable_control_sweep()->set_sweep_id(id);
    envelope.mutable_control_sweep()->set_action(action);
    return request(envelope);
  };
  waitForState(launched.trials(0).run_id(), {v1::RUNNING});
  EXPECT_EQ(control(v1::PAUSE_SWEEP).control_sweep_reply().sweep().state(), v1::SWEEP_PAUSED);
  EXPECT_EQ(control(v1::PAUSE_SWEEP).error().code(), v1::ErrorReply::FAILED_PRECONDITION);
  EXPECT_EQ(control(v1::RESUME_SWEEP).control_sweep_reply().sweep().state(), v1::SWEEP_RUNNING);
  const v1::Envelope stopped = control(v1::STOP_SWEEP);
  EXPECT_EQ(stopped.control_sweep_reply().sweep().state(), v1::SWEEP_STOPPED);
  const v1::RunInfo run = waitForState(launched.trials(0).run_id(), {v1::STOPPED});
  EXPECT_EQ(run.reason().rfind("the sweep was stopped", 0), 0u) << run.reason();
  EXPECT_EQ(sweep(id).trials(0).state(), v1::STOPPED);
  EXPECT_EQ(sweep(id).trials_size(), 1);  // nothing queued after the stop
  // A bad request names what is wrong.
  v1::Envelope bad;
  bad.mutable_control_sweep()->set_sweep_id("s-none");
  bad.mutable_control_sweep()->set_action(v1::PAUSE_SWEEP);
  EXPECT_EQ(request(bad).error().code(), v1::ErrorReply::NOT_FOUND);
  v1::SweepSpec noMetric = ashaSweep();
  noMetric.clear_metric();
  v1::Envelope refused;
  *refused.mutable_launch_sweep()->mutable_spec() = noMetric;
  const v1::Envelope answer = request(refused);
  EXPECT_EQ(answer.error().code(), v1::ErrorReply::INVALID_ARGUMENT);
  EXPECT_NE(answer.error().message().find("names no metric"), std::string::npos);
}

}  // namespace
}  // namespace ringside::agent
