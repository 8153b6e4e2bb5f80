// The Slurm engine against a real Slurm (docs/slurm.md): scripts/local-slurm's cluster of two
// slurmd nodes on this machine (Debian 12's slurm-wlm 22.05, docs/slurm-test-cluster.md), and a
// real agent with --engine slurm on its "login node". Root only (local-slurm starts daemons);
// skipped elsewhere, and where Slurm's packages are missing. ctest label `slurm`.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>

#include "agent_fixture.h"

namespace ringside::agent {
namespace {

namespace fs = std::filesystem;

class SlurmEngineTest : public AgentProcessTest {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "scripts/local-slurm needs root";
    const std::string script = std::string(ringside::test::sourceDir()) + "/scripts/local-slurm";
    ProcessResult check = runProcess({script, "check"}, "/", 30);
    if (check.exitCode != 0) GTEST_SKIP() << "no Slurm here: " << check.err;
    // Not under the test's own temporary directory (mode 0700): munged wants every directory
    // above its socket open to all.
    slurmState_ = "/run/ringside-slurm-test." + std::to_string(::getpid());
    // Ports of its own (slurmctld's and one per node), so that a cluster left by a killed test
    // does not stand in the way.
    const std::string port = std::to_string(40000 + (::getpid() % 5000) * 3);
    ProcessResult up = runProcess(
        {script, "up", "--nodes", "2", "--state", slurmState_, "--port", port}, "/", 120);
    ASSERT_EQ(up.exitCode, 0) << up.err;
    up_ = true;
    // The agent and every Slurm command find the cluster through SLURM_CONF.
    ::setenv("SLURM_CONF", (slurmState_ + "/slurm.conf").c_str(), 1);
    ASSERT_TRUE(fs::exists(slurmState_ + "/slurm.conf")) << up.out;
    AgentProcessTest::SetUp();
  }

  void TearDown() override {
    agent_.reset();
    if (up_) {
      const std::string script =
          std::string(ringside::test::sourceDir()) + "/scripts/local-slurm";
      ProcessResult down = runProcess({script, "down", "--state", slurmState_}, "/", 120);
      EXPECT_EQ(down.exitCode, 0) << down.err;
    }
  }

  std::vector<std::string> agentArgs() const override { return {"--engine", "slurm"}; }

  v1::Envelope launchSpec(const v1::RunSpec& spec) {
    v1::Envelope envelope;
    *envelope.mutable_launch_run()->mutable_spec() = spec;
    return request(envelope);
  }

  static v1::RunSpec trainerSpec(int epochs, uint32_t nodes, uint32_t tasksPerNode) {
    v1::RunSpec spec;
    spec.set_name("slurm-trainer");
    auto typed = trainerConfigFromJson(smallRun(epochs).dump());
    EXPECT_TRUE(typed.isOk()) << typed.status().toString();
    *spec.mutable_trainer()->mutable_config() = *typed;
    spec.mutable_slurm()->set_nodes(nodes);
    spec.mutable_slurm()->set_tasks_per_node(tasksPerNode);
    return spec;
  }

  static v1::RunSpec sleepSpec(const std::string& name, int seconds, uint32_t nodes,
                               uint32_t tasksPerNode) {
    v1::RunSpec spec;
    spec.set_name(name);
    for (const std::string& arg : {std::string("sleep"), std::to_string(seconds)}) {
      spec.mutable_command()->add_argv(arg);
    }
    spec.mutable_slurm()->set_nodes(nodes);
    spec.mutable_slurm()->set_tasks_per_node(tasksPerNode);
    return spec;
  }

  std::string slurmState_;
  bool up_ = false;
};

// A 2-node trainer run through Slurm completes, placed on both nodes, with every rank's own
// metrics (the per-rank timings the straggler and stall verdicts read) from both nodes.
TEST_F(SlurmEngineTest, TwoNodeTrainerRunCompletesWithEveryRanksMetrics) {
  const v1::Envelope reply = launchSpec(trainerSpec(2, 2, 1));
  ASSERT_TRUE(reply.has_launch_run_reply()) << reply.DebugString();
  const v1::RunInfo launched = reply.launch_run_reply().run();
  EXPECT_FALSE(launched.slurm_job().job_id().empty());
  EXPECT_EQ(launched.world_size(), 2u);
  const v1::RunInfo run = waitForState(launched.run_id(), {v1::COMPLETED, v1::FAILED, v1::STOPPED});
  ASSERT_EQ(run.state(), v1::COMPLETED)
      << run.reason() << "\n" << readFile(run.run_dir() + "/stderr.log")
      << readFile(run.run_dir() + "/slurm-batch.log");
  EXPECT_EQ(run.slurm_job().state(), "COMPLETED");
  ASSERT_EQ(run.placement_size(), 2);
  EXPECT_EQ(run.placement(0).host(), "node-1");
  EXPECT_EQ(run.placement(1).host(), "node-2");
  std::set<int> ranks;
  for (const auto& sample : fetchAll(run.run_id()).samples) {
    if (sample.name() == "time/compute_ms" && sample.rank() >= 0) ranks.insert(sample.rank());
  }
  EXPECT_EQ(ranks, (std::set<int>{0, 1})) << "each rank's compute time, from both nodes";
  // Its output is tagged per rank as mpirun's is: rank 0's records reached the journal.
  EXPECT_NE(readFile(run.run_dir() + "/stdout.log").find("[" + run.slurm_job().job_id() + ",0]<stdout>:"),
            std::string::npos);
}

// A run that Slurm holds PENDING behind another says so with Slurm's reason, then runs; a
// pending run that is stopped leaves Slurm's queue.
TEST_F(SlurmEngineTest, PendingRunShowsSlurmsReasonThenRuns) {
  const long cpus = std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN));
  const uint32_t perNode = static_cast<uint32_t>(cpus);  // every CPU of both nodes
  const v1::Envelope first = launchSpec(sleepSpec("holder", 12, 2, perNode));
  ASSERT_TRUE(first.has_launch_run_reply()) << first.DebugString();
  const v1::Envelope second = launchSpec(sleepSpec("waiter", 1, 2, perNode));
  ASSERT_TRUE(second.has_launch_run_reply()) << second.DebugString();
  const v1::Envelope third = launchSpec(sleepSpec("cancelled", 1, 2, perNode));
  ASSERT_TRUE(third.has_launch_run_reply()) << third.DebugString();
  const std::string waiter = second.launch_run_reply().run().run_id();

  waitForState(first.launch_run_reply().run().run_id(), {v1::RUNNING});
  // Pending with Slurm's reason (Resources or Priority) in the run's waiting reason.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  v1::RunInfo waiting;
  while (std::chrono::steady_clock::now() < deadline) {
    waiting = findRun(waiter);
    if (!waiting.slurm_job().reason().empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  EXPECT_EQ(waiting.state(), v1::QUEUED);
  EXPECT_TRUE(waiting.slurm_job().reason() == "Resources" ||
              waiting.slurm_job().reason() == "Priority")
      << waiting.slurm_job().reason();
  EXPECT_NE(waiting.waiting_reason().find("Slurm job " + waiting.slurm_job().job_id()),
            std::string::npos)
      << waiting.waiting_reason();

  v1::Envelope stop;
  stop.mutable_stop_run()->set_run_id(third.launch_run_reply().run().run_id());
  EXPECT_TRUE(request(stop).has_stop_run_reply());
  const v1::RunInfo cancelled =
      waitForState(third.launch_run_reply().run().run_id(), {v1::STOPPED, v1::FAILED, v1::COMPLETED});
  EXPECT_EQ(cancelled.state(), v1::STOPPED) << cancelled.reason();
  EXPECT_EQ(cancelled.start_time(), 0.0) << "it never ran";

  const v1::RunInfo ran = waitForState(waiter, {v1::COMPLETED, v1::FAILED, v1::STOPPED});
  EXPECT_EQ(ran.state(), v1::COMPLETED) << ran.reason();
}

// Stop of a running trainer run: its ranks get SIGTERM through Slurm (scancel --signal=TERM),
// checkpoint and exit; the run ends STOPPED saying so.
TEST_F(SlurmEngineTest, StopCheckpointsAndCancels) {
  v1::RunSpec spec = trainerSpec(400, 1, 2);
  const v1::Envelope reply = launchSpec(spec);
  ASSERT_TRUE(reply.has_launch_run_reply()) << reply.DebugString();
  const std::string runId = reply.launch_run_reply().run().run_id();
  waitForState(runId, {v1::RUNNING});
  // Until the ranks report: a stop before they set up their handlers would just kill them.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (fetchAll(runId).samples.size() < 4 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
  v1::Envelope stop;
  stop.mutable_stop_run()->set_run_id(runId);
  const v1::Envelope answer = request(stop);
  ASSERT_TRUE(answer.has_stop_run_reply()) << answer.DebugString();
  const v1::RunInfo run = waitForState(runId, {v1::STOPPED, v1::FAILED, v1::COMPLETED});
  EXPECT_EQ(run.state(), v1::STOPPED) << run.reason();
  EXPECT_NE(run.reason().find("the ranks checkpointed and exited"), std::string::npos)
      << run.reason() << "\n" << readFile(run.run_dir() + "/stderr.log");
}

// A job whose batch script fails says why: the rank's own error line.
TEST_F(SlurmEngineTest, FailedJobSaysWhy) {
  v1::RunSpec spec;
  spec.set_name("fails");
  for (const std::string& arg :
       {std::string("sh"), std::string("-c"), std::string("echo 'error: no such file: data.bin' >&2; exit 3")}) {
    spec.mutable_command()->add_argv(arg);
  }
  spec.mutable_slurm()->set_nodes(1);
  const v1::Envelope reply = launchSpec(spec);
  ASSERT_TRUE(reply.has_launch_run_reply()) << reply.DebugString();
  const v1::RunInfo run = waitForState(reply.launch_run_reply().run().run_id(),
                                       {v1::COMPLETED, v1::FAILED, v1::STOPPED});
  EXPECT_EQ(run.state(), v1::FAILED);
  EXPECT_EQ(run.exit_code(), 3);
  EXPECT_NE(run.reason().find("no such file: data.bin"), std::string::npos) << run.reason();
}

// A user's PyTorch DDP script (examples/pytorch) on 2 nodes under srun: every rank finds its
// place (RANK, WORLD_SIZE, MASTER_ADDR from the job script) and both ranks' timings arrive.
TEST_F(SlurmEngineTest, PyTorchScriptOnTwoNodes) {
  if (std::system("/usr/bin/python3 -c 'import torch, numpy' > /dev/null 2>&1") != 0) {
    GTEST_SKIP() << "no python3-torch";
  }
  if (!fs::exists("/usr/share/datasets/fashion-mnist")) GTEST_SKIP() << "no dataset-fashion-mnist";
  v1::RunSpec spec;
  spec.set_name("slurm-ddp");
  spec.mutable_python()->set_script(std::string(ringside::test::sourceDir()) +
                                    "/examples/pytorch/ddp_fashion_mnist.py");
  for (const char* arg : {"--epochs", "1", "--train-samples", "1280", "--test-samples", "500",
                          "--batch", "64", "--log-every", "1", "--threads", "1"}) {
    spec.mutable_python()->add_args(arg);
  }
  spec.mutable_slurm()->set_nodes(2);
  spec.mutable_slurm()->set_tasks_per_node(1);
  const v1::Envelope reply = launchSpec(spec);
  ASSERT_TRUE(reply.has_launch_run_reply()) << reply.DebugString();
  const v1::RunInfo run = waitForState(reply.launch_run_reply().run().run_id(),
                                       {v1::COMPLETED, v1::FAILED, v1::STOPPED}, 300);
  ASSERT_EQ(run.state(), v1::COMPLETED)
      << run.reason() << "\n" << readFile(run.run_dir() + "/stderr.log");
  std::set<int> ranks;
  for (const auto& sample : fetchAll(run.run_id()).samples) {
    if (sample.name() == "time/allreduce_ms" && sample.rank() >= 0) ranks.insert(sample.rank());
  }
  EXPECT_EQ(ranks, (std::set<int>{0, 1})) << "both ranks' all-reduce times";
}

// A job that Slurm ends at its time limit (1 minute, Slurm's least) fails saying so, not as a
// crash of its ranks.
TEST_F(SlurmEngineTest, TimeLimitEndsTheRunSayingSo) {
  v1::RunSpec spec = sleepSpec("too-long", 600, 1, 1);
  spec.mutable_slurm()->set_time_limit_min(1);
  const v1::Envelope reply = launchSpec(spec);
  ASSERT_TRUE(reply.has_launch_run_reply()) << reply.DebugString();
  const v1::RunInfo run = waitForState(reply.launch_run_reply().run().run_id(),
                                       {v1::COMPLETED, v1::FAILED, v1::STOPPED}, 240);
  EXPECT_EQ(run.state(), v1::FAILED);
  EXPECT_EQ(run.slurm_job().state(), "TIMEOUT");
  EXPECT_NE(run.reason().find("time limit (1 min)"), std::string::npos) << run.reason();
}

// A 4-trial sweep on Slurm: every trial is a job, and ASHA (its stopping form, for commands)
// stops trials early through Slurm. Trial x starts 5 - x seconds late and scores x per step, so
// that x = 4 reaches the first rung (3 steps) first and best and goes on, and each later one is
// below the cutoff of those before it (the paper's rule: the best floor(n / eta) go on) and is
// stopped. ("}}" is a literal "}" in a trial's argv.)
TEST_F(SlurmEngineTest, SweepTrialsAreJobsAndOneIsStoppedEarly) {
  v1::SweepSpec spec;
  spec.set_name("slurm-sweep");
  spec.set_method(v1::GRID);
  spec.set_metric("custom/score");
  spec.set_goal(v1::MAXIMIZE);
  spec.set_max_concurrent(4);
  v1::RunSpec& base = *spec.mutable_base();
  base.set_name("ticker");
  for (const std::string& arg :
       {std::string("sh"), std::string("-c"),
        std::string("sleep $((5 - {x})); i=1; while [ $i -le 12 ]; do "
                    "echo '{\"type\":\"metrics\",\"step\":'$i',\"metrics\":{\"custom/score\":'"
                    "$(( {x} * i ))'}}}}'; sleep 1; i=$((i+1)); done")}) {
    base.mutable_command()->add_argv(arg);
  }
  base.mutable_slurm()->set_nodes(1);
  base.mutable_slurm()->set_tasks_per_node(1);
  v1::SweepParameter& x = *spec.add_parameters();
  x.set_name("x");
  for (int value : {1, 2, 3, 4}) x.mutable_values()->add_values()->set_number_value(value);
  v1::AshaRule& asha = *spec.mutable_early_stopping()->mutable_asha();
  asha.set_eta(2);
  asha.set_grace_period(3);
  asha.set_max_resource(12);
  asha.set_unit(v1::STEPS);
  v1::Envelope envelope;
  *envelope.mutable_launch_sweep()->mutable_spec() = spec;
  const v1::Envelope reply = request(envelope);
  ASSERT_TRUE(reply.has_launch_sweep_reply()) << reply.DebugString();
  const std::string sweepId = reply.launch_sweep_reply().sweep().sweep_id();
  v1::SweepInfo info;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(240);
  while (std::chrono::steady_clock::now() < deadline) {
    v1::Envelope list;
    list.mutable_list_sweeps()->set_include_ended(true);
    const v1::Envelope listed = request(list);  // alive for the loop
    for (const v1::SweepInfo& each : listed.list_sweeps_reply().sweeps()) {
      if (each.sweep_id() == sweepId) info = each;
    }
    if (info.state() == v1::SWEEP_COMPLETED || info.state() == v1::SWEEP_STOPPED) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  ASSERT_EQ(info.state(), v1::SWEEP_COMPLETED) << info.DebugString() << agent_->errors();
  ASSERT_EQ(info.trials_size(), 4);
  int stopped = 0;
  for (const v1::SweepTrial& trial : info.trials()) {
    const v1::RunInfo run = findRun(trial.run_id());
    EXPECT_FALSE(run.slurm_job().job_id().empty()) << "trial " << trial.trial() << " is a job";
    EXPECT_TRUE(trial.has_best_value()) << readFile(run.run_dir() + "/stdout.log")
                                        << readFile(run.run_dir() + "/stderr.log");
    const std::string x = trial.params().count("x") ? trial.params().at("x") : "";
    if (trial.stopped_early()) {
      ++stopped;
      EXPECT_NE(x, "4") << trial.reason();
      EXPECT_EQ(run.state(), v1::STOPPED) << run.reason();
      EXPECT_NE(trial.reason().find("stopped at rung 0 (3 steps)"), std::string::npos)
          << trial.reason();
      EXPECT_LT(trial.resource(), 12) << "it did not train to the end";
    } else {
      EXPECT_EQ(x, "4");
      EXPECT_EQ(run.state(), v1::COMPLETED) << run.reason();
    }
  }
  EXPECT_GE(stopped, 1) << info.DebugString();
  ASSERT_GE(info.best_trial(), 0) << info.DebugString();
  EXPECT_EQ(info.trials(info.best_trial()).params().at("x"), "4");
}

// A run whose env sets PATH gets it in its ranks, while the batch script and srun keep the
// agent's (with PATH=/opt/nowhere they could not find scontrol, sed or srun).
TEST_F(SlurmEngineTest, TheRunsPathReachesItsRanksOnly) {
  v1::RunSpec spec;
  spec.set_name("own-path");
  for (const std::string& arg : {std::string("/bin/sh"), std::string("-c"),
                                 std::string("case \"$PATH\" in /opt/nowhere) exit 0;; *) exit 7;; esac")}) {
    spec.mutable_command()->add_argv(arg);
  }
  (*spec.mutable_env())["PATH"] = "/opt/nowhere";
  spec.mutable_slurm()->set_nodes(1);
  const v1::Envelope reply = launchSpec(spec);
  ASSERT_TRUE(reply.has_launch_run_reply()) << reply.DebugString();
  const v1::RunInfo run = waitForState(reply.launch_run_reply().run().run_id(),
                                       {v1::COMPLETED, v1::FAILED, v1::STOPPED});
  EXPECT_EQ(run.state(), v1::COMPLETED)
      << run.reason() << readFile(run.run_dir() + "/slurm-batch.log");
}

// What Slurm refuses at submission is refused at launch, with sbatch's words; options that are
// no Slurm names are refused before anything is submitted.
TEST_F(SlurmEngineTest, RefusedSubmissionsSayWhy) {
  v1::RunSpec spec = sleepSpec("no-partition", 1, 1, 1);
  spec.mutable_slurm()->set_partition("nosuchpartition");
  v1::Envelope reply = launchSpec(spec);
  ASSERT_TRUE(reply.has_error()) << reply.DebugString();
  EXPECT_NE(reply.error().message().find("Slurm refused the job"), std::string::npos)
      << reply.error().message();
  spec.mutable_slurm()->set_partition("debug && reboot");
  reply = launchSpec(spec);
  ASSERT_TRUE(reply.has_error()) << reply.DebugString();
  EXPECT_NE(reply.error().message().find("slurm.partition"), std::string::npos);
  // The node reports its engine and Slurm's partitions.
  v1::Envelope hello;
  hello.mutable_hello();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  v1::NodeInfo node;
  while (std::chrono::steady_clock::now() < deadline) {
    node = request(hello).hello_reply().node();
    if (node.slurm_partitions_size() > 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
  EXPECT_EQ(node.engine(), "slurm");
  ASSERT_GE(node.slurm_partitions_size(), 1);
  EXPECT_EQ(node.slurm_partitions(0).name(), "debug");
  EXPECT_TRUE(node.slurm_partitions(0).is_default());
  EXPECT_EQ(node.slurm_partitions(0).nodes_size(), 2);
}

}  // namespace
}  // namespace ringside::agent
