// RunManager against real mpirun jobs: custom commands, the real trainer, stop, a killed rank,
// validation errors, and adoption by a second manager (an agent restart).
#include "build_paths.h"
#include "ringside/agent/run_manager.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "ringside/common/protocol.h"
#include "ringside/common/run_spec.h"

namespace ringside::agent {
namespace {

namespace fs = std::filesystem;

class RunManagerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // mpirun refuses root without these; scripts/env.sh sets them too.
    setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 0);
    setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 0);
    setenv("OMPI_MCA_rmaps_base_oversubscribe", "1", 0);
    char pattern[] = "/tmp/ringside-runs-XXXXXX";
    dir_ = mkdtemp(pattern);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  RunManagerOptions options() const {
    RunManagerOptions o;
    o.runsDir = dir_;
    o.mpirunPath = ringside::test::mpiexec();
    o.trainerPath = ringside::test::trainerBin();
    o.rankEndpoint = "ipc://" + dir_ + "/ranks.sock";
    o.defaultGraceSeconds = 20;
    o.cpuSlots = 4;
    return o;
  }

  RunManager makeManager() {
    return RunManager(options(), [this](const v1::RunInfo& run, const RunProcessIds&) {
      states_.push_back(run.state());
    });
  }

  static v1::RunSpec command(std::vector<std::string> argv, uint32_t ranks = 1) {
    v1::RunSpec spec;
    spec.set_name("test");
    spec.set_ranks_per_node(ranks);
    spec.mutable_command();  // set the job even for an empty argv
    for (const auto& a : argv) spec.mutable_command()->add_argv(a);
    return spec;
  }

  // Polls until the run ends (or 120 s).
  static v1::RunInfo waitEnded(RunManager& manager, const std::string& id) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (std::chrono::steady_clock::now() < deadline) {
      manager.poll();
      if (isEnded(manager.find(id)->state())) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return *manager.find(id);
  }

  static std::string readFile(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  std::string dir_;
  std::vector<v1::RunState> states_;
};

TEST_F(RunManagerTest, CustomCommandCompletesWithItsOutputLogged) {
  RunManager manager = makeManager();
  auto run = manager.launch(command({"sh", "-c", "echo hello from $RINGSIDE_RUN_ID"}, 2), 4);
  ASSERT_TRUE(run.isOk()) << run.status().toString();
  EXPECT_EQ(manager.usedCpuSlots(), 2u);
  // Placed on this node: its host name with the 2 ranks (no GPUs on a CPU node).
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  ASSERT_EQ(run->placement_size(), 1);
  EXPECT_EQ(run->placement(0).host(), host);
  EXPECT_EQ(run->placement(0).ranks(), 2u);
  EXPECT_EQ(run->placement(0).gpus_size(), 0);
  const v1::RunInfo ended = waitEnded(manager, run->run_id());
  EXPECT_EQ(ended.state(), v1::COMPLETED) << ended.reason();
  EXPECT_EQ(ended.placement_size(), 1);
  EXPECT_EQ(ended.exit_code(), 0);
  EXPECT_EQ(manager.usedCpuSlots(), 0u);
  const std::string out = readFile(ended.run_dir() + "/stdout.log");
  EXPECT_NE(out.find("hello from " + run->run_id()), std::string::npos) << out;
  ASSERT_GE(states_.size(), 3u);
  EXPECT_EQ(states_.front(), v1::QUEUED);
  EXPECT_EQ(states_[1], v1::STARTING);
  EXPECT_EQ(states_.back(), v1::COMPLETED);
}

// A clock stepped back an hour at every look (NTP, a VM restored) made a negative duration. A
// run's end is never before its start, nor its start before it was made.
TEST_F(RunManagerTest, AClockSteppedBackMakesNoNegativeDuration) {
  RunManagerOptions o = options();
  double clock = 1.8e9;
  o.wallClock = [&clock] { return clock -= 3600; };
  RunManager manager(o, [this](const v1::RunInfo& info, const RunProcessIds&) {
    states_.push_back(info.state());
  });
  auto run = manager.launch(command({"sh", "-c", "sleep 1"}), 4);
  ASSERT_TRUE(run.isOk()) << run.status().toString();
  const v1::RunInfo ended = waitEnded(manager, run->run_id());
  EXPECT_EQ(ended.state(), v1::COMPLETED) << ended.reason();
  EXPECT_GT(ended.start_time(), 0.0);
  EXPECT_GE(ended.start_time(), ended.created_time());
  EXPECT_GE(ended.end_time(), ended.start_time());
}

TEST_F(RunManagerTest, FailingCommandIsFailedWithTheExitStatus) {
  RunManager manager = makeManager();
  auto run = manager.launch(command({"sh", "-c", "echo broken >&2; exit 3"}), 4);
  ASSERT_TRUE(run.isOk());
  const v1::RunInfo ended = waitEnded(manager, run->run_id());
  EXPECT_EQ(ended.state(), v1::FAILED);
  EXPECT_NE(ended.exit_code(), 0);
  EXPECT_FALSE(ended.reason().empty());
}

TEST_F(RunManagerTest, InvalidSpecsSayWhatIsWrong) {
  RunManager manager = makeManager();
  v1::RunSpec empty;
  empty.set_ranks_per_node(1);
  EXPECT_NE(manager.launch(empty, 4).status().message().find("no job"), std::string::npos);
  EXPECT_NE(manager.launch(command({}), 4).status().message().find("empty argv"),
            std::string::npos);
  EXPECT_NE(manager.launch(command({"no-such-program-xyz"}), 4)
                .status()
                .message()
                .find("no-such-program-xyz"),
            std::string::npos);
  // More ranks than the node has slots: it could never start, so it is not queued.
  auto tooMany = manager.launch(command({"true"}, 8), 2);
  EXPECT_EQ(tooMany.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(tooMany.status().message().find("which has 4 CPU slots in all: it could never start"),
            std::string::npos)
      << tooMany.status().message();
  EXPECT_TRUE(manager.runs(/*includeEnded=*/true).empty());
  v1::RunSpec trainer;
  trainer.set_ranks_per_node(1);
  trainer.mutable_trainer()->mutable_config()->set_data("/nonexistent/dataset");
  EXPECT_NE(manager.launch(trainer, 4).status().message().find("/nonexistent/dataset"),
            std::string::npos);
  // The typed run spec is range-checked before anything starts, naming the key.
  trainer.mutable_trainer()->mutable_config()->clear_data();
  trainer.mutable_trainer()->mutable_config()->set_epochs(0);
  auto outOfRange = manager.launch(trainer, 4);
  EXPECT_EQ(outOfRange.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(outOfRange.status().message().find("epochs (--epochs) is 0"), std::string::npos)
      << outOfRange.status().message();
  // The deprecated config_json of an older client is read, and must be a valid run spec.
  v1::RunSpec legacy;
  legacy.set_ranks_per_node(1);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  legacy.mutable_trainer()->set_config_json("[1, 2]");
  EXPECT_NE(manager.launch(legacy, 4).status().message().find("JSON object"), std::string::npos);
  legacy.mutable_trainer()->set_config_json(R"({"data": "/nonexistent/dataset"})");
#pragma GCC diagnostic pop
  EXPECT_NE(manager.launch(legacy, 4).status().message().find("/nonexistent/dataset"),
            std::string::npos);
  EXPECT_EQ(manager.stop("r-missing", 1).status().code(), Status::Code::kNotFound);
}

// A spec with the deprecated config_json (an older GUI or client) is launched from it, and the
// run's recorded spec carries the typed config only, as the trainer's spec.json does.
TEST_F(RunManagerTest, OldConfigJsonIsReadAndRecordedAsTheTypedConfig) {
  RunManager manager = makeManager();
  v1::RunSpec spec;
  spec.set_ranks_per_node(1);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  // A directory without the dataset's files: the launch succeeds, the trainer then fails.
  spec.mutable_trainer()->set_config_json(R"({"data": ")" + dir_ +
                                          R"(", "epochs": 2, "global-batch": 64, "seed": "9"})");
  auto run = manager.launch(spec, 4);
  ASSERT_TRUE(run.isOk()) << run.status().toString();
  EXPECT_TRUE(run->spec().trainer().config_json().empty());
#pragma GCC diagnostic pop
  ASSERT_TRUE(run->spec().trainer().has_config());
  const v1::TrainerConfig& config = run->spec().trainer().config();
  EXPECT_EQ(config.data(), dir_);
  EXPECT_EQ(config.epochs(), 2);
  EXPECT_EQ(config.global_batch(), 64);
  EXPECT_EQ(config.seed(), 9u);
  EXPECT_FALSE(config.has_lr()) << "absent stays absent: the trainer's default applies";
  auto written = trainerConfigFromJson(readFile(run->run_dir() + "/spec.json"));
  ASSERT_TRUE(written.isOk()) << written.status().toString();
  EXPECT_EQ(written->SerializeAsString(), config.SerializeAsString());
  const v1::RunInfo ended = waitEnded(manager, run->run_id());
  EXPECT_EQ(ended.state(), v1::FAILED);
  EXPECT_NE(readFile(ended.run_dir() + "/stderr.log").find("train-images-idx3-ubyte"),
            std::string::npos);
}

v1::RunSpec longTrainerRun(const std::string& dir) {
  v1::RunSpec spec;
  spec.set_name("long");
  spec.set_ranks_per_node(2);
  v1::TrainerConfig* config = spec.mutable_trainer()->mutable_config();
  config->set_backend("mpi");
  config->set_epochs(200);
  config->set_train_samples(5000);
  config->set_test_samples(500);
  config->set_checkpoint_dir(dir + "/ckpt");
  config->set_quiet(true);
  return spec;
}

TEST_F(RunManagerTest, StopSendsSigtermAndTheTrainerCheckpoints) {
  RunManager manager = makeManager();
  auto run = manager.launch(longTrainerRun(dir_), 4);
  ASSERT_TRUE(run.isOk()) << run.status().toString();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (manager.find(run->run_id())->state() != v1::RUNNING &&
         std::chrono::steady_clock::now() < deadline) {
    manager.poll();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(manager.find(run->run_id())->state(), v1::RUNNING);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // let it train a little
  ASSERT_TRUE(manager.stop(run->run_id(), 30).isOk());
  const v1::RunInfo ended = waitEnded(manager, run->run_id());
  EXPECT_EQ(ended.state(), v1::STOPPED) << ended.reason();
  EXPECT_EQ(ended.exit_code(), 0) << readFile(ended.run_dir() + "/stderr.log");
  bool checkpoint = false;
  for (const auto& entry : fs::directory_iterator(dir_ + "/ckpt")) {
    checkpoint |= entry.path().extension() == ".rsck";
  }
  EXPECT_TRUE(checkpoint);
}

TEST_F(RunManagerTest, KilledRankFailsTheRunNamingTheRankAndSignal) {
  RunManager manager = makeManager();
  auto run = manager.launch(longTrainerRun(dir_), 4);
  ASSERT_TRUE(run.isOk()) << run.status().toString();
  // Find rank 1 by its environment.
  pid_t rank1 = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (rank1 == 0 && std::chrono::steady_clock::now() < deadline) {
    manager.poll();
    for (const auto& entry : fs::directory_iterator("/proc")) {
      const std::string env = readFile(entry.path().string() + "/environ");
      if (env.find(std::string(protocol::kRunIdEnv) + "=" + run->run_id()) != std::string::npos &&
          env.find(std::string("OMPI_COMM_WORLD_RANK=1") + '\0') != std::string::npos) {
        rank1 = std::stoi(entry.path().filename());
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_NE(rank1, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  kill(rank1, SIGKILL);
  const v1::RunInfo ended = waitEnded(manager, run->run_id());
  EXPECT_EQ(ended.state(), v1::FAILED);
  EXPECT_NE(ended.reason().find("rank 1"), std::string::npos) << ended.reason();
  EXPECT_NE(ended.reason().find("signal 9"), std::string::npos) << ended.reason();
}

TEST_F(RunManagerTest, ASecondManagerAdoptsARunningRun) {
  v1::RunInfo info;
  {
    RunManager first(options(), [&](const v1::RunInfo& run, const RunProcessIds&) { info = run; });
    auto run = first.launch(command({"sh", "-c", "sleep 2; echo done"}), 4);
    ASSERT_TRUE(run.isOk());
  }  // the first "agent" goes away; the run goes on
  RunManager second = makeManager();
  second.adopt(info);
  EXPECT_EQ(second.usedCpuSlots(), 1u);
  const v1::RunInfo ended = waitEnded(second, info.run_id());
  EXPECT_EQ(ended.state(), v1::COMPLETED) << ended.reason();
  EXPECT_NE(readFile(ended.run_dir() + "/stdout.log").find("done"), std::string::npos);
}

// Regression: grace_seconds=inf never escalated to SIGKILL, and the reason said
// "SIGKILL after -2147483648 s". Now refused before anything is signalled.
TEST_F(RunManagerTest, InfiniteOrNegativeGraceIsRefusedAndAShortOneEscalates) {
  for (const double bad : std::initializer_list<double>{INFINITY, -INFINITY, NAN, -1.0,
                                                        kMaxStopGraceSeconds + 1, 1e300}) {
    const Status status = validateGraceSeconds(bad);
    EXPECT_EQ(status.code(), Status::Code::kInvalidArgument) << bad;
    EXPECT_NE(status.message().find("up to 3600 s"), std::string::npos) << status.message();
  }
  EXPECT_TRUE(validateGraceSeconds(0).isOk());
  EXPECT_TRUE(validateGraceSeconds(kMaxStopGraceSeconds).isOk());
  RunManager manager = makeManager();
  // A job that ignores SIGTERM: only SIGKILL after the grace period ends it.
  auto run = manager.launch(command({"sh", "-c", "trap '' TERM; sleep 60"}), 4);
  ASSERT_TRUE(run.isOk()) << run.status().toString();
  EXPECT_EQ(manager.stop(run->run_id(), INFINITY).status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(manager.stop("r-missing", NAN).status().code(), Status::Code::kInvalidArgument);
  auto stopping = manager.stop(run->run_id(), 0.5);
  ASSERT_TRUE(stopping.isOk()) << stopping.status().toString();
  EXPECT_NE(stopping->reason().find("SIGKILL after 0.5 s"), std::string::npos)
      << stopping->reason();
  const v1::RunInfo ended = waitEnded(manager, run->run_id());
  EXPECT_EQ(ended.state(), v1::STOPPED);
  EXPECT_NE(ended.reason().find("killed after the grace period"), std::string::npos)
      << ended.reason();
}

// The reason carries the failing rank's own first error line, with its node.
TEST_F(RunManagerTest, FailureReasonCarriesTheRanksFirstErrorLineWithNodeAndRank) {
  RunManager manager = makeManager();
  v1::RunSpec trainer;
  trainer.set_ranks_per_node(2);
  trainer.mutable_trainer()->mutable_config()->set_global_batch(127);
  // mpi: `auto` prints first why it chose mpi here (no GPU), which is not the error.
  trainer.mutable_trainer()->mutable_config()->set_backend("mpi");
  auto run = manager.launch(trainer, 4);
  ASSERT_TRUE(run.isOk()) << run.status().toString();
  const v1::RunInfo ended = waitEnded(manager, run->run_id());
  EXPECT_EQ(ended.state(), v1::FAILED);
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  const std::string& reason = ended.reason();
  // Whichever rank mpirun names, the reason quotes the rank that printed the error, with its node.
  EXPECT_TRUE(reason.starts_with("rank 0 on node " + std::string(host) + " exited with status 2") ||
              reason.starts_with("rank 1 on node " + std::string(host) + " exited with status 2"))
      << reason;
  // mpirun's own words vary between runs (its "first process to exit" block comes or not): the
  // quoted line follows either the verdict or the rank that printed it.
  EXPECT_NE(reason.find(": ringside-trainer: error on rank"), std::string::npos) << reason;
  EXPECT_NE(reason.find("--global-batch 127 is not divisible by the world size 2"),
            std::string::npos)
      << reason;
}

TEST_F(RunManagerTest, ACustomCommandsErrorLineIsItsFailureReason) {
  RunManager manager = makeManager();
  auto run = manager.launch(
      command({"sh", "-c", "echo starting >&2; echo 'error: no such file data.csv' >&2; exit 4"}),
      4);
  ASSERT_TRUE(run.isOk()) << run.status().toString();
  const v1::RunInfo ended = waitEnded(manager, run->run_id());
  EXPECT_EQ(ended.state(), v1::FAILED);
  // "rank 0 on node H exited with status 4: error: ..." or, when mpirun names no rank,
  // "mpirun exited with status 4: rank 0 on node H: error: ...".
  EXPECT_NE(ended.reason().find("rank 0 on node "), std::string::npos) << ended.reason();
  EXPECT_NE(ended.reason().find("status 4"), std::string::npos) << ended.reason();
  EXPECT_TRUE(ended.reason().ends_with(": error: no such file data.csv")) << ended.reason();
}

// A missing working directory is refused at launch, naming it (it used to end the run with "the
// run's processes disappeared without an exit status").
TEST_F(RunManagerTest, AMissingWorkingDirectoryIsRefusedAtLaunchNamingIt) {
  RunManager manager = makeManager();
  v1::RunSpec spec = command({"true"});
  spec.mutable_command()->set_working_dir(dir_ + "/no-such-dir");
  auto run = manager.launch(spec, 4);
  EXPECT_EQ(run.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(run.status().message().find("working directory " + dir_ +
                                        "/no-such-dir does not "
                                        "exist on this node"),
            std::string::npos)
      << run.status().message();
  const auto problems = manager.preflight(spec, 1, 4);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("no-such-dir"), std::string::npos);
}

// A rank's lines reach stdout.log tagged with its rank (mpirun --tag-output).
TEST_F(RunManagerTest, RankOutputIsTaggedWithTheRank) {
  RunManager manager = makeManager();
  auto run = manager.launch(command({"sh", "-c", "echo rank $OMPI_COMM_WORLD_RANK"}, 2), 4);
  ASSERT_TRUE(run.isOk()) << run.status().toString();
  const v1::RunInfo ended = waitEnded(manager, run->run_id());
  EXPECT_EQ(ended.state(), v1::COMPLETED) << ended.reason();
  const std::string out = readFile(ended.run_dir() + "/stdout.log");
  EXPECT_NE(out.find(",0]<stdout>:rank 0\n"), std::string::npos) << out;
  EXPECT_NE(out.find(",1]<stdout>:rank 1\n"), std::string::npos) << out;
}

// Slots by kind: on a node with 2 GPUs and 4 cores, a custom command takes cores and no
// GPU, a Python script that uses GPUs takes one GPU per rank, and each kind is counted apart.
TEST_F(RunManagerTest, AGpuNodeRunsCpuJobsOnItsCoresAndGpuJobsOnItsGpus) {
  RunManagerOptions o = options();
  o.gpuIndices = {0, 1};
  RunManager manager(o, [](const v1::RunInfo&, const RunProcessIds&) {});
  auto cpu = manager.launch(
      command({"sh", "-c", "echo \"gpus=[${CUDA_VISIBLE_DEVICES-unset}]\"; sleep 2"}, 3), 4);
  ASSERT_TRUE(cpu.isOk()) << cpu.status().toString();
  EXPECT_EQ(manager.usedCpuSlots(), 3u);
  EXPECT_TRUE(manager.gpusInUse().empty());
  EXPECT_EQ(cpu->placement(0).gpus_size(), 0);
  // The GPUs are still free for a GPU job beside it.
  const std::string script = dir_ + "/print_env.sh";
  std::ofstream(script) << "echo \"rank=$OMPI_COMM_WORLD_RANK gpus=[$CUDA_VISIBLE_DEVICES] "
                           "master=$MASTER_ADDR:$MASTER_PORT unbuffered=$PYTHONUNBUFFERED\"\n";
  v1::RunSpec gpuSpec;
  gpuSpec.set_name("gpu script");
  gpuSpec.set_ranks_per_node(2);
  gpuSpec.mutable_python()->set_python("/bin/sh");
  gpuSpec.mutable_python()->set_script(script);
  gpuSpec.mutable_python()->set_use_gpus(true);
  EXPECT_TRUE(manager.usesGpus(gpuSpec));
  EXPECT_TRUE(manager.preflight(gpuSpec, 2, 1).empty());  // one free core does not matter
  auto gpu = manager.launch(gpuSpec, 1);
  ASSERT_TRUE(gpu.isOk()) << gpu.status().toString();
  EXPECT_EQ(manager.usedCpuSlots(), 3u);
  EXPECT_EQ(manager.gpusInUse(), (std::vector<uint32_t>{0, 1}));
  ASSERT_EQ(gpu->placement(0).gpus_size(), 2);
  // No GPU left: a third GPU job waits in the queue, naming the GPUs' run.
  auto queued = manager.launch(gpuSpec, 1);
  ASSERT_TRUE(queued.isOk()) << queued.status().toString();
  EXPECT_EQ(queued->state(), v1::QUEUED);
  EXPECT_EQ(queued->queue_position(), 1u);
  EXPECT_NE(queued->waiting_reason().find("waiting for 2 GPUs: 0 of 2 free; GPUs 0, 1 held by "
                                          "run " + gpu->run_id() + " (gpu script)"),
            std::string::npos)
      << queued->waiting_reason();
  // Three GPUs: never on this node.
  gpuSpec.set_ranks_per_node(3);
  auto refused = manager.launch(gpuSpec, 1);
  EXPECT_EQ(refused.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("3 GPUs on this node, which has 2 in all"),
            std::string::npos)
      << refused.status().message();
  gpuSpec.set_ranks_per_node(2);
  const auto problems = manager.preflight(gpuSpec, 1, 1);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("0 of 2 are free"), std::string::npos) << problems[0];

  const v1::RunInfo cpuEnded = waitEnded(manager, cpu->run_id());
  EXPECT_EQ(cpuEnded.state(), v1::COMPLETED) << cpuEnded.reason();
  // A custom command sees no GPU of its own (the variable is not set for it).
  EXPECT_NE(readFile(cpuEnded.run_dir() + "/stdout.log").find("gpus=[unset]"), std::string::npos);
  const v1::RunInfo gpuEnded = waitEnded(manager, gpu->run_id());
  EXPECT_EQ(gpuEnded.state(), v1::COMPLETED) << gpuEnded.reason();
  const std::string out = readFile(gpuEnded.run_dir() + "/stdout.log");
  EXPECT_NE(out.find("gpus=[0,1]"), std::string::npos) << out;
  EXPECT_NE(out.find("master=127.0.0.1:"), std::string::npos) << out;
  EXPECT_NE(out.find("unbuffered=1"), std::string::npos) << out;
  EXPECT_EQ(manager.usedCpuSlots(), 0u);
  EXPECT_TRUE(manager.gpusInUse().empty());
  // The queued GPU run starts now that both GPUs are free, and gets them.
  manager.dispatchQueue(/*force=*/true);
  EXPECT_EQ(manager.find(queued->run_id())->state(), v1::STARTING);
  EXPECT_EQ(manager.find(queued->run_id())->queue_position(), 0u);
  const v1::RunInfo queuedEnded = waitEnded(manager, queued->run_id());
  EXPECT_EQ(queuedEnded.state(), v1::COMPLETED) << queuedEnded.reason();
  EXPECT_NE(readFile(queuedEnded.run_dir() + "/stdout.log").find("gpus=[0,1]"),
            std::string::npos);
}

// A CPU Python script sees no GPU (CUDA_VISIBLE_DEVICES empty: gloo), gets the rendezvous, and a
// GPU job on a node without GPUs is refused with what to do.
TEST_F(RunManagerTest, APythonScriptOnCpuGetsTheRendezvousAndNoGpu) {
  RunManager manager = makeManager();
  const std::string script = dir_ + "/print_env.sh";
  std::ofstream(script) << "echo \"rank=$OMPI_COMM_WORLD_RANK "
                           "gpus=[${CUDA_VISIBLE_DEVICES-unset}] args=$* "
                           "master=$MASTER_ADDR:$MASTER_PORT\"\n";
  v1::RunSpec spec;
  spec.set_name("cpu script");
  spec.set_ranks_per_node(2);
  spec.mutable_python()->set_python("/bin/sh");
  spec.mutable_python()->set_script("print_env.sh");
  spec.mutable_python()->set_working_dir(dir_);
  spec.mutable_python()->add_args("--epochs");
  spec.mutable_python()->add_args("3");
  EXPECT_FALSE(manager.usesGpus(spec));
  auto run = manager.launch(spec, 4);
  ASSERT_TRUE(run.isOk()) << run.status().toString();
  EXPECT_EQ(manager.usedCpuSlots(), 2u);
  const v1::RunInfo ended = waitEnded(manager, run->run_id());
  EXPECT_EQ(ended.state(), v1::COMPLETED) << ended.reason();
  const std::string out = readFile(ended.run_dir() + "/stdout.log");
  EXPECT_NE(out.find("rank=0 gpus=[] args=--epochs 3 master=127.0.0.1:"), std::string::npos)
      << out;
  EXPECT_NE(out.find("rank=1 gpus=[]"), std::string::npos) << out;

  spec.mutable_python()->set_use_gpus(true);
  auto noGpu = manager.launch(spec, 4);
  EXPECT_EQ(noGpu.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(noGpu.status().message().find("this node has none"), std::string::npos);
}

// A Python job's mistakes are refused at launch and pre-flight, each saying what to do.
TEST_F(RunManagerTest, APythonJobsMissingScriptOrInterpreterIsRefusedNamingIt) {
  RunManager manager = makeManager();
  v1::RunSpec spec;
  spec.set_name("script");
  spec.set_ranks_per_node(1);
  spec.mutable_python()->set_script(dir_ + "/no_such_script.py");
  auto missing = manager.launch(spec, 4);
  EXPECT_EQ(missing.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(missing.status().message().find("no_such_script.py does not exist on this node"),
            std::string::npos)
      << missing.status().message();
  spec.mutable_python()->set_script("train.py");
  EXPECT_NE(manager.launch(spec, 4).status().message().find("is relative"), std::string::npos);
  std::ofstream(dir_ + "/train.py") << "print('hi')\n";
  spec.mutable_python()->set_script(dir_ + "/train.py");
  spec.mutable_python()->set_python("/nonexistent/python3");
  const auto problems = manager.preflight(spec, 1, 4);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("/nonexistent/python3"), std::string::npos) << problems[0];
}

}  // namespace
}  // namespace ringside::agent
