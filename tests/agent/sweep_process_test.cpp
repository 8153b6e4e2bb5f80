// Sweeps through the real agent (docs/sweeps.md): an ASHA sweep of the trainer's MLP on 2 CPU
// slots pauses its trials at the rungs, resumes the promoted ones from their checkpoints, and
// names the best; kill -9 of the agent in the middle of a sweep, a restart, and the sweep
// finishes with no trial run twice;
// pause, resume and stop over the protocol.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <set>
#include <thread>
#include <vector>

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
  // ASHA's promotion form as published (Li et al., "A System for Massively Parallel
  // Hyperparameter Tuning", MLSys 2020, Algorithm 2), checked on a finished sweep whatever order
  // its trials reached the rungs in. get_job promotes a trial from rung k while it is among the
  // best floor(m / eta) of the m values recorded there at that moment, so a trial promoted early
  // can be overtaken later and a rung can promote more than floor(n / eta) of its final n. What
  // holds in any order:
  //  - every run of the sweep is one of its trials' attempts, and each attempt one run;
  //  - every resume was a promotion (a trial has at least as many promoted rung records as
  //    earlier runs);
  //  - the best floor(n / eta) of each rung's n values went on (get_job left none behind);
  //  - a rung's worst value, below all others, was never promoted: at its promotion it would
  //    have had to beat a value recorded before it, which is still there.
  // A trial alone at the top rung may go on by the final promotion (ashaFinalPromotion).
  static void expectAshaPromotions(const v1::SweepInfo& done,
                                   const std::map<std::pair<uint32_t, uint32_t>, v1::RunInfo>& runs,
                                   double eta) {
    size_t attempts = 0;
    struct Record {
      double value;
      bool wentOn;
      bool promoted;
    };
    std::map<uint32_t, std::vector<Record>> rungs;
    for (const v1::SweepTrial& trial : done.trials()) {
      attempts += static_cast<size_t>(trial.earlier_run_ids_size()) + 1;
      int promoted = 0;
      for (int i = 0; i < trial.rungs_size(); ++i) {
        const v1::RungValue& record = trial.rungs(i);
        promoted += record.promoted() ? 1 : 0;
        // A trial went on from a rung when it was promoted there, or when its run went past it
        // without a pause (the agent was away when it reported).
        const bool wentOn =
            record.promoted() || i + 1 < trial.rungs_size() || trial.state() == v1::COMPLETED;
        rungs[record.rung()].push_back({record.value(), wentOn, record.promoted()});
      }
      EXPECT_GE(promoted, trial.earlier_run_ids_size()) << trial.DebugString();
    }
    EXPECT_EQ(runs.size(), attempts) << done.DebugString();
    for (auto& [rung, values] : rungs) {
      std::sort(values.begin(), values.end(),
                [](const Record& a, const Record& b) { return a.value > b.value; });
      const auto keep = static_cast<size_t>(std::floor(static_cast<double>(values.size()) / eta));
      for (size_t i = 0; i < keep; ++i) {
        // Ties with the first value left out may go either way.
        if (keep < values.size() && values[i].value <= values[keep].value) break;
        EXPECT_TRUE(values[i].wentOn) << "rung " << rung << ": the value " << values[i].value
                                      << " is among the best " << keep << " of " << values.size()
                                      << " and was not promoted\n"
                                      << done.DebugString();
      }
      if (values.size() >= 2 && values.back().value < values[values.size() - 2].value) {
        EXPECT_FALSE(values.back().promoted) << "rung " << rung << ": the worst value "
                                             << values.back().value << " was promoted\n"
                                             << done.DebugString();
      }
    }
  }
};

TEST_F(SweepProcessTest, AnAshaSweepOfTheMlpPausesPromotesAndNamesTheBest) {
  // Trainer trials resume from their checkpoints: ASHA's promotion form. Six trials pause at
  // rung 0 (1 epoch); the best three (floor(6/2)) are promoted to rung 1 (2 epochs), where the
  // best of them (floor(3/2)) is promoted to the end (4 epochs).
  const v1::SweepInfo launched = launchSweep(ashaSweep());
  ASSERT_FALSE(launched.sweep_id().empty());
  EXPECT_EQ(launched.trials_size(), 2);
  const v1::SweepInfo done = waitForSweep(launched.sweep_id(), {v1::SWEEP_COMPLETED});
  ASSERT_EQ(done.state(), v1::SWEEP_COMPLETED) << done.DebugString();
  ASSERT_EQ(done.trials_size(), 6);
  const auto runs = runsOf(done.sweep_id());  // no (trial, attempt) twice
  int stoppedEarly = 0, completed = 0;
  for (const v1::SweepTrial& trial : done.trials()) {
    const uint32_t attempts = static_cast<uint32_t>(trial.earlier_run_ids_size()) + 1;
    for (uint32_t attempt = 1; attempt <= attempts; ++attempt) {
      ASSERT_TRUE(runs.contains({trial.trial(), attempt})) << trial.DebugString();
      const v1::RunInfo& run = runs.at({trial.trial(), attempt});
      // The trial's value is its run's parameter and its run spec's field.
      EXPECT_EQ(run.params().at("lr"), trial.params().at("lr"));
      EXPECT_EQ(run.spec().trainer().config().lr(), std::stod(trial.params().at("lr")));
      EXPECT_EQ(run.spec().name(), "lr-search #" + std::to_string(trial.trial()));
      if (attempt < attempts) {
        // Paused at a rung: stopped after its checkpoint, then resumed from it.
        EXPECT_EQ(run.state(), v1::STOPPED);
        EXPECT_EQ(run.reason().rfind("paused at rung ", 0), 0u) << run.reason();
        EXPECT_NE(run.reason().find("the ranks checkpointed and exited"), std::string::npos)
            << run.reason();
        const v1::RunInfo& next = runs.at({trial.trial(), attempt + 1});
        EXPECT_EQ(next.spec().trainer().config().resume(), run.run_dir() + "/checkpoints");
      }
    }
    EXPECT_EQ(runs.at({trial.trial(), attempts}).run_id(), trial.run_id());
    if (trial.stopped_early()) {
      ++stoppedEarly;
      EXPECT_EQ(trial.state(), v1::STOPPED);
      EXPECT_EQ(trial.reason().rfind("stopped at rung ", 0), 0u) << trial.reason();
      EXPECT_LT(trial.resource(), 4);
    } else {
      ++completed;
      EXPECT_EQ(trial.state(), v1::COMPLETED) << trial.reason();
      EXPECT_NEAR(trial.resource(), 4, 1e-9);
      EXPECT_EQ(trial.earlier_run_ids_size(), 2);  // paused at both rungs, resumed twice
    }
  }
  // In the usual order of arrival: six runs, three promotions from rung 0 and one from rung 1
  // (10 runs, one trial to the end); a better trial that reaches rung 1 after a promotion from
  // it is promoted too (Algorithm 2), so more in another order.
  EXPECT_GE(completed, 1) << done.DebugString();
  EXPECT_EQ(stoppedEarly + completed, 6);
  EXPECT_GE(runs.size(), 6u + 3u + 1u);
  expectAshaPromotions(done, runs, /*eta=*/2);
  // The best trial is named: the one that trained to the end, better than every trial's best
  // at the rungs they reached.
  ASSERT_GE(done.best_trial(), 0);
  const v1::SweepTrial& best = done.trials(done.best_trial());
  EXPECT_EQ(best.state(), v1::COMPLETED);
  for (const v1::SweepTrial& trial : done.trials()) {
    EXPECT_LE(trial.best_value(), best.best_value());
  }
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
  // Each trial's runs are its attempts 1, 2, ... (a promotion is one more), none twice and none
  // failed: nothing was started again after the restart.
  const auto runs = runsOf(id);
  std::map<uint32_t, uint32_t> attempts;
  for (const auto& [key, run] : runs) {
    EXPECT_NE(run.state(), v1::FAILED) << run.reason();
    attempts[key.first] = std::max(attempts[key.first], key.second);
  }
  EXPECT_EQ(attempts.size(), 6u);
  for (const v1::SweepTrial& trial : done.trials()) {
    EXPECT_EQ(attempts[trial.trial()], static_cast<uint32_t>(trial.earlier_run_ids_size()) + 1);
  }
  // Rungs at 1, 2 and 4 of 5 epochs. How many promotions depends on the order the trials reach
  // the rungs in, which the restart changes; ASHA's rules hold in any order.
  EXPECT_GE(runs.size(), 6u + 3u + 1u) << done.DebugString() << agent_->errors();
  expectAshaPromotions(done, runs, /*eta=*/2);
  EXPECT_TRUE(std::any_of(done.trials().begin(), done.trials().end(),
                          [](const v1::SweepTrial& t) { return t.state() == v1::COMPLETED; }));
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
