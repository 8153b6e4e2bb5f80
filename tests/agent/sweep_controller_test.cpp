// SweepController (sweep_controller.h) over a fake node whose trials follow synthetic learning
// curves: trials queued up to the concurrency, judged at their rungs and stopped with the rule's
// reason, failed ones retried, pause, resume, extend, rerun and stop, and a restarted controller
// that takes its sweeps back and queues no trial twice.
#include "ringside/agent/sweep/sweep_controller.h"

#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>

namespace ringside::agent {
namespace {

namespace fs = std::filesystem;

// A node with `slots` CPU slots whose runs are kept in memory; states go to the controller as the
// agent journals them (synchronously, also from inside a launch).
class FakeNode : public TrialRunner {
 public:
  SweepController* controller = nullptr;
  uint32_t slots = 2;
  std::map<std::string, v1::RunInfo> runs;
  std::map<std::string, std::vector<v1::MetricSample>> samples;
  std::map<std::string, std::string> stopReasons;
  std::vector<std::string> launched;  // run ids in launch order
  int next = 0;
  std::string refuse;  // a launch is refused with this, when set

  Result<v1::RunInfo> launchTrial(const v1::RunSpec& spec) override {
    if (!refuse.empty()) return Status::invalidArgument(refuse);
    v1::RunInfo run;
    run.set_run_id("run-" + std::to_string(next++));
    run.set_run_dir("/runs/" + run.run_id());
    *run.mutable_spec() = spec;
    run.set_state(v1::QUEUED);
    runs[run.run_id()] = run;
    launched.push_back(run.run_id());
    if (controller) controller->onRunState(run);
    return run;
  }
  Status stopTrial(const std::string& runId, double, const std::string& reason) override {
    stopReasons[runId] = reason;
    return Status::ok();
  }
  std::optional<v1::RunInfo> findRun(const std::string& runId) override {
    auto it = runs.find(runId);
    if (it == runs.end()) return std::nullopt;
    return it->second;
  }
  std::vector<v1::RunInfo> runsOfSweep(const std::string& sweepId) override {
    std::vector<v1::RunInfo> out;
    for (const auto& [id, run] : runs) {
      if (run.spec().sweep_trial().sweep_id() == sweepId) out.push_back(run);
    }
    return out;
  }
  Status forEachSample(const std::string& runId,
                       const std::function<void(const v1::MetricSample&)>& take) override {
    for (const v1::MetricSample& sample : samples[runId]) take(sample);
    return Status::ok();
  }
  // Runs whose processes ended but whose final state is not journaled yet.
  std::set<std::string> exited;
  bool processesEnded(const std::string& runId) override { return exited.contains(runId); }
  uint32_t slotsFor(const v1::RunSpec&) override { return slots; }

  void setState(const std::string& runId, v1::RunState state, const std::string& reason = {}) {
    v1::RunInfo& run = runs.at(runId);
    run.set_state(state);
    run.set_reason(reason);
    if (state == v1::RUNNING) run.set_start_time(1000);
    controller->onRunState(run);
  }
  // Rank 0's end-of-epoch value: steps_per_epoch 10, the value at step 10 * epochs.
  void report(const std::string& runId, int epochs, double value) {
    std::vector<v1::MetricSample> batch;
    if (samples[runId].empty()) {
      v1::MetricSample spe;
      spe.set_name("run/steps_per_epoch");
      spe.set_rank(-1);
      spe.set_value(10);
      batch.push_back(spe);
    }
    v1::MetricSample sample;
    sample.set_name("test/accuracy");
    sample.set_rank(-1);
    sample.set_step(10 * epochs);
    sample.set_epoch(epochs - 1);
    sample.set_value(value);
    batch.push_back(sample);
    for (const auto& s : batch) samples[runId].push_back(s);
    controller->onSamples(runId, batch);
  }
  std::vector<std::string> active() const {
    std::vector<std::string> out;
    for (const auto& [id, run] : runs) {
      if (run.state() == v1::QUEUED || run.state() == v1::STARTING ||
          run.state() == v1::RUNNING) {
        out.push_back(id);
      }
    }
    return out;
  }
};

class SweepControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/ringside-sweeps-XXXXXX";
    dir_ = mkdtemp(pattern);
    makeController();
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  void makeController() {
    SweepControllerOptions options;
    options.sweepsDir = dir_ + "/sweeps";
    options.now = [this] { return clock_; };
    options.onChange = [this](const v1::SweepInfo&) { ++reports_; };
    controller_ = std::make_unique<SweepController>(options, node_);
    node_.controller = controller_.get();
  }
  static v1::SweepSpec specOf(const std::string& json) {
    v1::SweepSpec spec;
    EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(json, &spec).ok()) << json;
    return spec;
  }
  // Six trials of quality 0.1 .. 0.6 (the "q" values, in grid order), 9 epochs, ASHA eta 3.
  static v1::SweepSpec ashaSpec() {
    return specOf(R"({
      "name": "tune", "method": "GRID", "metric": "test/accuracy", "goal": "MAXIMIZE",
      "base": {"name": "mlp", "ranksPerNode": 1, "trainer": {"config": {"epochs": 9}}},
      "parameters": [{"name": "lr", "values": [0.3, 0.1, 0.5, 0.2, 0.6, 0.4]}],
      "earlyStopping": {"asha": {"eta": 3, "gracePeriod": 1}}})");
  }
  // Runs every active trial one epoch further on a curve that rises to its lr (its quality);
  // a stopped trial ends STOPPED, one at its last epoch COMPLETED.
  void advance() {
    for (const std::string& id : node_.active()) {
      v1::RunInfo& run = node_.runs.at(id);
      if (node_.stopReasons.contains(id)) {
        node_.setState(id, v1::STOPPED, node_.stopReasons[id] + "; the ranks checkpointed and exited");
        continue;
      }
      if (run.state() == v1::QUEUED) {
        node_.setState(id, v1::RUNNING);
        continue;
      }
      const double quality = std::stod(run.spec().sweep_trial().params().at("lr"));
      const std::string& resume = run.spec().trainer().config().resume();
      if (!epochs_.contains(id) && !resume.empty()) {
        // Resumed from the paused run's checkpoint folder (<its run dir>/checkpoints).
        const std::string from = resume.substr(std::string("/runs/").size());
        epochs_[id] = epochs_.at(from.substr(0, from.find('/')));
        ++resumed_;
      }
      const int epoch = ++epochs_[id];
      node_.report(id, epoch, quality * epoch / 9.0);
      if (epoch == 9) node_.setState(id, v1::COMPLETED);
    }
    controller_->tick(true);
    maxActive_ = std::max(maxActive_, node_.active().size());
  }
  const v1::SweepInfo& only() {
    auto all = controller_->list(true);
    EXPECT_EQ(all.size(), 1u);
    return *controller_->find(all.at(0).sweep_id());
  }

  std::string dir_;
  FakeNode node_;
  std::unique_ptr<SweepController> controller_;
  double clock_ = 1000;
  int reports_ = 0;
  std::map<std::string, int> epochs_;
  size_t maxActive_ = 0;
  int resumed_ = 0;
};

TEST_F(SweepControllerTest, AnAshaSweepPausesTrialsAtRungsPromotesTheBestAndNamesIt) {
  // Li et al.'s Algorithm 2 on six trials of quality 0.3, 0.1, 0.5, 0.2, 0.6, 0.4 (eta 3, rungs at
  // 1 and 3 of 9 epochs): every trial pauses at rung 0; once three are there the best (0.5) is
  // promoted, once six are, the second best (0.6); the two at rung 1 are fewer than eta, so with
  // the budget spent the best of them (0.6) goes on to the end.
  auto sweep = controller_->launch(ashaSpec(), true);
  ASSERT_TRUE(sweep.isOk()) << sweep.status().toString();
  EXPECT_EQ(sweep->trials_size(), 2);  // as many as the 2 slots take
  for (int i = 0; i < 300 && only().state() == v1::SWEEP_RUNNING; ++i) advance();
  const v1::SweepInfo& done = only();
  ASSERT_EQ(done.state(), v1::SWEEP_COMPLETED) << done.DebugString();
  EXPECT_EQ(done.reason(), "all 6 trials ended");
  EXPECT_EQ(done.trials_size(), 6);
  EXPECT_LE(maxActive_, 2u);
  EXPECT_EQ(node_.launched.size(), 9u);  // 6 trials, 2 promotions from rung 0, 1 from rung 1
  EXPECT_EQ(resumed_, 3);
  EXPECT_EQ(done.best_trial(), 4);
  const v1::SweepTrial& best = done.trials(4);
  EXPECT_EQ(best.state(), v1::COMPLETED);
  EXPECT_NEAR(best.best_value(), 0.6, 1e-12);
  EXPECT_EQ(best.earlier_run_ids_size(), 2);  // paused at rungs 0 and 1, resumed twice
  ASSERT_EQ(best.rungs_size(), 2);
  EXPECT_TRUE(best.rungs(0).promoted() && best.rungs(1).promoted());
  const v1::SweepTrial& second = done.trials(2);  // lr 0.5: promoted once, left at rung 1
  EXPECT_TRUE(second.stopped_early());
  EXPECT_EQ(second.rungs_size(), 2);
  EXPECT_EQ(second.reason(),
            "stopped at rung 1 (3 epochs): test/accuracy 0.1667, not promoted: fewer than eta (3) "
            "trials reached that rung");
  for (uint32_t t : {0u, 1u, 3u, 5u}) {
    const v1::SweepTrial& left = done.trials(static_cast<int>(t));
    EXPECT_TRUE(left.stopped_early()) << t;
    EXPECT_EQ(left.rungs_size(), 1) << t;
    EXPECT_EQ(left.reason().rfind("stopped at rung 0 (1 epoch): test/accuracy ", 0), 0u)
        << left.reason();
    EXPECT_NE(left.reason().find("(the best 2 of 6 trials at that rung went on)"),
              std::string::npos)
        << left.reason();
  }
  // A promoted run resumes from the paused run's checkpoints, with the same spec otherwise.
  const v1::RunInfo& resumed = node_.runs.at(best.run_id());
  EXPECT_EQ(resumed.spec().trainer().config().resume(),
            "/runs/" + best.earlier_run_ids(1) + "/checkpoints");
  EXPECT_EQ(resumed.spec().sweep_trial().attempt(), 3u);
  EXPECT_EQ(node_.stopReasons.at(best.earlier_run_ids(0)).rfind("paused at rung 0 (1 epoch)", 0),
            0u);
  // The trials' runs carry their values and the sweep's name.
  const v1::RunInfo& first = node_.runs.at(done.trials(0).run_id());
  EXPECT_EQ(first.spec().name(), "tune #0");
  EXPECT_EQ(first.spec().trainer().config().lr(), 0.3);
  EXPECT_GT(reports_, 0);
  EXPECT_TRUE(fs::exists(dir_ + "/sweeps/" + done.sweep_id() + ".json"));
}

TEST_F(SweepControllerTest, TheStoppingFormForScriptsStopsLosersAtTheirRungAndNamesTheBest) {
  // A script cannot resume from a checkpoint: ASHA decides at the rung whether it goes on.
  v1::SweepSpec spec = ashaSpec();
  spec.mutable_base()->mutable_python()->set_script("/bin/true");
  spec.mutable_early_stopping()->mutable_asha()->set_max_resource(9);
  auto sweep = controller_->launch(spec, true);
  ASSERT_TRUE(sweep.isOk()) << sweep.status().toString();
  EXPECT_EQ(sweep->state(), v1::SWEEP_RUNNING);
  EXPECT_EQ(sweep->trials_size(), 2);  // as many as the 2 slots take
  for (int i = 0; i < 200 && only().state() == v1::SWEEP_RUNNING; ++i) advance();
  const v1::SweepInfo& done = only();
  ASSERT_EQ(done.state(), v1::SWEEP_COMPLETED) << done.DebugString();
  EXPECT_EQ(done.reason(), "all 6 trials ended");
  EXPECT_EQ(done.trials_size(), 6);
  EXPECT_EQ(node_.launched.size(), 6u);  // each trial once
  EXPECT_LE(maxActive_, 2u);
  // Trial 4 (lr 0.6) is the best, and completed.
  EXPECT_EQ(done.best_trial(), 4);
  EXPECT_EQ(done.trials(4).state(), v1::COMPLETED);
  EXPECT_NEAR(done.trials(4).best_value(), 0.6, 1e-12);
  int stoppedEarly = 0;
  for (const v1::SweepTrial& trial : done.trials()) {
    if (!trial.stopped_early()) continue;
    ++stoppedEarly;
    EXPECT_EQ(trial.state(), v1::STOPPED);
    EXPECT_EQ(trial.reason().rfind("stopped at rung ", 0), 0u) << trial.reason();
    EXPECT_EQ(trial.reason().find("checkpointed"), std::string::npos) << trial.reason();
    EXPECT_LT(trial.resource(), 9);
  }
  // In order 0.3, 0.1, 0.5, 0.2, 0.6, 0.4: the third trial at rung 0 (n = 3) keeps only the best,
  // so 0.1 or 0.2 stop, and at least two trials stop in all.
  EXPECT_GE(stoppedEarly, 2);
  EXPECT_TRUE(done.trials(3).stopped_early());  // lr 0.2: below 0.3, 0.5 and 0.1's rung-0 record
  EXPECT_EQ(resumed_, 0);
  EXPECT_GT(reports_, 0);
  // The sweep is kept on disk as JSON.
  EXPECT_TRUE(fs::exists(dir_ + "/sweeps/" + done.sweep_id() + ".json"));
}

TEST_F(SweepControllerTest, AFailedTrialIsRetriedThenRecordedAsFailedAndTheSweepGoesOn) {
  v1::SweepSpec spec = ashaSpec();
  spec.clear_early_stopping();
  spec.set_max_trials(2);
  spec.set_max_retries(1);
  auto sweep = controller_->launch(spec, true);
  ASSERT_TRUE(sweep.isOk());
  const std::string first = sweep->trials(0).run_id();
  node_.setState(first, v1::FAILED, "rank 0 exited with status 1");
  controller_->tick(true);
  const v1::SweepTrial& retried = controller_->find(sweep->sweep_id())->trials(0);
  ASSERT_NE(retried.run_id(), first);
  EXPECT_EQ(retried.earlier_run_ids(0), first);
  EXPECT_EQ(node_.runs.at(retried.run_id()).spec().sweep_trial().attempt(), 2u);
  EXPECT_NE(retried.reason().find("attempt 1 failed: rank 0 exited with status 1; queued again"),
            std::string::npos);
  node_.setState(retried.run_id(), v1::FAILED, "rank 0 exited with status 1");
  controller_->tick(true);
  const v1::SweepInfo& after = *controller_->find(sweep->sweep_id());
  EXPECT_EQ(after.trials(0).state(), v1::FAILED);
  EXPECT_EQ(after.trials(0).reason(), "rank 0 exited with status 1");
  EXPECT_EQ(after.state(), v1::SWEEP_RUNNING);  // trial 1 goes on
  node_.setState(after.trials(1).run_id(), v1::COMPLETED);
  controller_->tick(true);
  EXPECT_EQ(controller_->find(sweep->sweep_id())->state(), v1::SWEEP_COMPLETED);
  EXPECT_EQ(node_.launched.size(), 3u);
}

TEST_F(SweepControllerTest, ARestartedControllerTakesTheSweepBackAndQueuesNoTrialTwice) {
  auto sweep = controller_->launch(ashaSpec(), true);
  ASSERT_TRUE(sweep.isOk());
  for (int i = 0; i < 6; ++i) advance();  // some epochs, some rungs
  // The agent stops; one more run was queued just before, which the kept file does not name.
  const std::string id = sweep->sweep_id();
  const std::string file = dir_ + "/sweeps/" + id + ".json";
  v1::SweepInfo kept;
  {
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(text.str(), &kept).ok());
  }
  const int lastTrial = kept.trials_size() - 1;
  const std::string lost = kept.trials(lastTrial).run_id();
  ASSERT_FALSE(lost.empty());
  kept.mutable_trials(lastTrial)->clear_run_id();
  kept.mutable_trials(lastTrial)->set_state(v1::RUN_STATE_UNSPECIFIED);
  {
    std::string text;
    ASSERT_TRUE(google::protobuf::util::MessageToJsonString(kept, &text).ok());
    std::ofstream(file) << text;
  }
  // Meanwhile one running trial completed (its last samples and state are in the journal).
  const size_t launchedBefore = node_.launched.size();
  controller_.reset();
  node_.controller = nullptr;
  makeController();
  ASSERT_TRUE(controller_->load().isOk());
  const v1::SweepInfo& back = *controller_->find(id);
  EXPECT_EQ(back.state(), v1::SWEEP_RUNNING);
  EXPECT_EQ(back.trials(lastTrial).run_id(), lost);  // found again by its sweep_trial
  controller_->tick(true);
  EXPECT_EQ(node_.launched.size(), launchedBefore);  // nothing queued again
  for (int i = 0; i < 200 && only().state() == v1::SWEEP_RUNNING; ++i) advance();
  EXPECT_EQ(only().state(), v1::SWEEP_COMPLETED);
  std::set<std::pair<uint32_t, uint32_t>> attempts;
  for (const auto& [runId, run] : node_.runs) {
    EXPECT_TRUE(attempts.insert({run.spec().sweep_trial().trial(),
                                 run.spec().sweep_trial().attempt()}).second)
        << "trial " << run.spec().sweep_trial().trial() << " queued twice";
  }
  EXPECT_EQ(node_.launched.size(), 9u);  // as without the restart
  // The rung records survived: a replayed trial is not judged twice at a rung.
  for (const v1::SweepTrial& trial : only().trials()) {
    std::set<uint32_t> rungs;
    for (const v1::RungValue& rung : trial.rungs()) EXPECT_TRUE(rungs.insert(rung.rung()).second);
  }
}

TEST_F(SweepControllerTest, PauseResumeExtendRerunAndStop) {
  v1::SweepSpec spec = ashaSpec();
  spec.clear_early_stopping();
  spec.set_max_trials(3);
  spec.set_max_concurrent(1);
  auto sweep = controller_->launch(spec, true);
  ASSERT_TRUE(sweep.isOk());
  const std::string id = sweep->sweep_id();
  auto control = [&](v1::SweepAction action, uint32_t trials = 0, uint32_t trial = 0) {
    v1::ControlSweepRequest request;
    request.set_sweep_id(id);
    request.set_action(action);
    request.set_trials(trials);
    request.set_trial(trial);
    return controller_->control(request);
  };
  // Pause: the queued trial leaves the queue; nothing new is queued.
  ASSERT_TRUE(control(v1::PAUSE_SWEEP).isOk());
  const std::string unqueued = controller_->find(id)->trials(0).run_id();
  EXPECT_EQ(node_.stopReasons.at(unqueued), "unqueued: the sweep is paused");
  node_.setState(unqueued, v1::STOPPED, "cancelled while queued: it never started");
  controller_->tick(true);
  EXPECT_EQ(controller_->find(id)->state(), v1::SWEEP_PAUSED);
  EXPECT_TRUE(node_.active().empty());
  EXPECT_FALSE(control(v1::PAUSE_SWEEP).isOk());
  // Resume: trial 0 is queued again, as attempt 2 (the cancelled run was not a failure).
  ASSERT_TRUE(control(v1::RESUME_SWEEP).isOk());
  controller_->tick(true);
  const v1::SweepTrial& again = controller_->find(id)->trials(0);
  ASSERT_FALSE(again.run_id().empty());
  EXPECT_NE(again.run_id(), unqueued);
  EXPECT_EQ(again.attempts(), 1u);
  for (int i = 0; i < 100 && controller_->find(id)->state() == v1::SWEEP_RUNNING; ++i) advance();
  EXPECT_EQ(controller_->find(id)->state(), v1::SWEEP_COMPLETED);
  EXPECT_EQ(controller_->find(id)->trials_size(), 3);
  // Extend by two: it runs again, draws trials 3 and 4.
  ASSERT_TRUE(control(v1::EXTEND_SWEEP, 2).isOk());
  EXPECT_EQ(controller_->find(id)->state(), v1::SWEEP_RUNNING);
  for (int i = 0; i < 100 && controller_->find(id)->state() == v1::SWEEP_RUNNING; ++i) advance();
  EXPECT_EQ(controller_->find(id)->trials_size(), 5);
  // The grid has six values: extending by two more is refused, saying why.
  auto tooMany = control(v1::EXTEND_SWEEP, 2);
  ASSERT_FALSE(tooMany.isOk());
  EXPECT_NE(tooMany.status().message().find("the grid has 6 combinations"), std::string::npos);
  // Rerun trial 1: a new run with the same values.
  const v1::SweepTrial before = controller_->find(id)->trials(1);
  ASSERT_TRUE(control(v1::RERUN_TRIAL, 0, 1).isOk());
  controller_->tick(true);
  const v1::SweepTrial& rerun = controller_->find(id)->trials(1);
  EXPECT_NE(rerun.run_id(), before.run_id());
  EXPECT_EQ(rerun.earlier_run_ids(rerun.earlier_run_ids_size() - 1), before.run_id());
  EXPECT_EQ(node_.runs.at(rerun.run_id()).spec().trainer().config().lr(),
            node_.runs.at(before.run_id()).spec().trainer().config().lr());
  EXPECT_FALSE(control(v1::RERUN_TRIAL, 0, 1).isOk());  // it has not ended
  EXPECT_EQ(control(v1::RERUN_TRIAL, 0, 9).status().code(), Status::Code::kNotFound);
  // Stop: the running trial is stopped, the sweep ends.
  advance();
  ASSERT_TRUE(control(v1::STOP_SWEEP).isOk());
  EXPECT_EQ(node_.stopReasons.at(rerun.run_id()), "the sweep was stopped");
  EXPECT_EQ(controller_->find(id)->state(), v1::SWEEP_STOPPED);
  EXPECT_FALSE(control(v1::RESUME_SWEEP).isOk());
}

TEST_F(SweepControllerTest, TheWallTimeBudgetStopsTheRunningTrials) {
  v1::SweepSpec spec = ashaSpec();
  spec.clear_early_stopping();
  spec.set_method(v1::RANDOM);
  spec.set_max_wall_seconds(60);
  auto sweep = controller_->launch(spec, true);
  ASSERT_TRUE(sweep.isOk());
  advance();
  clock_ += 61;
  controller_->tick(true);
  for (const std::string& run : node_.active()) {
    EXPECT_EQ(node_.stopReasons.at(run), "the sweep's wall-time budget ran out");
  }
  for (int i = 0; i < 5; ++i) advance();
  EXPECT_EQ(only().state(), v1::SWEEP_COMPLETED);
  EXPECT_EQ(only().reason(), "the wall-time budget ran out");
  EXPECT_EQ(only().trials_size(), 2);
}

TEST_F(SweepControllerTest, ABadSweepIsRefusedAndNothingIsQueued) {
  v1::SweepSpec spec = ashaSpec();
  spec.clear_metric();
  auto noMetric = controller_->launch(spec, true);
  ASSERT_FALSE(noMetric.isOk());
  EXPECT_NE(noMetric.status().message().find("names no metric"), std::string::npos);
  spec = ashaSpec();
  spec.mutable_parameters(0)->set_name("learning_rate");
  auto noField = controller_->launch(spec, true);
  ASSERT_FALSE(noField.isOk());
  EXPECT_NE(noField.status().message().find("'learning_rate' is no trainer run-spec field"),
            std::string::npos);
  spec = ashaSpec();
  spec.mutable_early_stopping()->mutable_asha()->set_grace_period(9);
  EXPECT_FALSE(controller_->launch(spec, true).isOk());  // no rung below 9 epochs
  node_.refuse = "dataset directory /nowhere does not exist on this node";
  auto refused = controller_->launch(ashaSpec(), true);
  ASSERT_FALSE(refused.isOk());
  EXPECT_NE(refused.status().message().find("/nowhere"), std::string::npos);
  EXPECT_FALSE(controller_->launch(ashaSpec(), false).isOk());  // draining
  EXPECT_TRUE(controller_->list(true).empty());
  EXPECT_TRUE(node_.launched.empty());
}

}  // namespace
}  // namespace ringside::agent

namespace ringside::agent {
namespace {

TEST_F(SweepControllerTest, TheNextTrialStartsWhenARunsProcessesEndNotWhenItsLastSamplesAreIn) {
  v1::SweepSpec spec = ashaSpec();
  spec.clear_early_stopping();
  spec.set_max_concurrent(1);
  auto sweep = controller_->launch(spec, true);
  ASSERT_TRUE(sweep.isOk());
  const std::string first = sweep->trials(0).run_id();
  controller_->tick(true);
  EXPECT_EQ(node_.launched.size(), 1u);
  node_.exited.insert(first);  // its ranks exited; the agent journals its end 2 s later
  controller_->tick(true);
  EXPECT_EQ(node_.launched.size(), 2u);
  EXPECT_EQ(controller_->find(sweep->sweep_id())->trials(0).state(), v1::QUEUED);
  node_.setState(first, v1::COMPLETED);
  EXPECT_EQ(controller_->find(sweep->sweep_id())->trials(0).state(), v1::COMPLETED);
}

}  // namespace
}  // namespace ringside::agent
