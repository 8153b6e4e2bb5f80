// A GPU another process computes on (docs/queue.md, "GPUs used outside Ringside"), through a
// real agent on the tests' fake NVML (two GPUs; FAKE_NVML_PROCESSES_FILE lists their compute
// processes): a process that is not a Ringside run makes its GPU taken in the node's telemetry;
// a run that needs that GPU waits, and its reason names the process; a run's own ranks on their
// GPUs are not strangers; once the process is gone the waiting run starts. With --share-gpus the
// node ignores other processes.
#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>

#include "agent_fixture.h"

namespace ringside::agent {
namespace {

class ForeignGpuTest : public AgentProcessTest {
 protected:
  std::string processesFile() const { return dir_.path() + "/gpu-processes"; }
  std::vector<std::string> agentArgs() const override {
    return {"--nvml-library", ringside::test::fakeNvmlFull()};
  }
  std::vector<std::string> agentWrapper() const override {
    return {"env", "FAKE_NVML_PROCESSES_FILE=" + processesFile()};
  }
  void listProcesses(const std::string& lines) {
    const std::string temporary = processesFile() + ".new";
    std::ofstream(temporary) << lines;
    std::filesystem::rename(temporary, processesFile());  // never read half-written
  }
  // A Python job sleeping on `gpus` GPUs (one rank per GPU).
  v1::RunInfo launchGpuRun(const std::string& name, uint32_t gpus) {
    const std::string script = dir_.path() + "/sleep.py";
    std::ofstream(script) << "import time\ntime.sleep(600)\n";
    v1::Envelope envelope;
    v1::RunSpec& spec = *envelope.mutable_launch_run()->mutable_spec();
    spec.set_name(name);
    spec.set_ranks_per_node(gpus);
    spec.mutable_python()->set_script(script);
    spec.mutable_python()->set_use_gpus(true);
    const v1::Envelope reply = request(envelope);
    EXPECT_TRUE(reply.has_launch_run_reply()) << reply.DebugString();
    return reply.launch_run_reply().run();
  }
  // Waits for a telemetry event whose GPUs in use are `expected`.
  bool telemetryShowsGpusInUse(const std::vector<uint32_t>& expected, int seconds = 15) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (std::chrono::steady_clock::now() < deadline) {
      zmq::pollitem_t item{sub_.handle(), 0, ZMQ_POLLIN, 0};
      if (zmq::poll(&item, 1, std::chrono::milliseconds(200)) == 0) continue;
      zmq::message_t message;
      (void)sub_.recv(message);
      auto event = protocol::decodeEnvelope(message.data(), message.size());
      if (!event.isOk() || !event->has_node_telemetry()) continue;
      const auto& used = event->node_telemetry().gpus_in_use();
      if (std::vector<uint32_t>(used.begin(), used.end()) == expected) return true;
    }
    return false;
  }
};

TEST_F(ForeignGpuTest, AGpuBusyWithAnotherProcessIsTakenAndNamedUntilItEnds) {
  // Someone's process on GPU 0, 1.5 GiB: GPU 0 is taken, though no run holds it.
  ChildProcess stranger({"sleep", "600"}, dir_.path(), {});
  const pid_t strangerPid = stranger.pid();
  listProcesses("0 " + std::to_string(strangerPid) + " 1536\n");
  ASSERT_TRUE(telemetryShowsGpusInUse({0})) << agent_->errors();

  // A run on 1 GPU starts on the free one.
  const v1::RunInfo one = launchGpuRun("one-gpu", 1);
  ASSERT_EQ(one.state(), v1::STARTING) << one.DebugString();
  ASSERT_EQ(one.placement_size(), 1);
  ASSERT_EQ(one.placement(0).gpus_size(), 1);
  EXPECT_EQ(one.placement(0).gpus(0), 1u);
  waitForState(one.run_id(), {v1::RUNNING});
  // Its rank computes on GPU 1 as far as NVML is concerned: not a stranger.
  std::string rankPid;
  for (int i = 0; i < 100 && rankPid.empty(); ++i) {
    const ProcessResult found = runProcess({"pgrep", "-f", "-n", dir_.path() + "/sleep.py"},
                                           dir_.path(), 10);
    rankPid = found.out.substr(0, found.out.find('\n'));
    if (rankPid.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_FALSE(rankPid.empty());
  listProcesses("0 " + std::to_string(strangerPid) + " 1536\n1 " + rankPid + " 700\n");
  ASSERT_TRUE(telemetryShowsGpusInUse({0, 1}));

  // A run on 2 GPUs waits; its reason names the run on GPU 1 and the stranger on GPU 0.
  const v1::RunInfo two = launchGpuRun("two-gpus", 2);
  ASSERT_EQ(two.state(), v1::QUEUED) << two.DebugString();
  std::this_thread::sleep_for(std::chrono::milliseconds(600));  // a telemetry tick or two
  const std::string reason = findRun(two.run_id()).waiting_reason();
  EXPECT_NE(reason.find("GPU 1 held by run " + one.run_id()), std::string::npos) << reason;
  EXPECT_NE(reason.find("GPU 0 used by PID " + std::to_string(strangerPid) +
                        " (sleep, 1536 MiB), not a Ringside run"),
            std::string::npos)
      << reason;
  EXPECT_EQ(reason.find("PID " + rankPid), std::string::npos) << reason;

  // The one-GPU run stops: GPU 1 is free, GPU 0 still is not; the two-GPU run waits on.
  v1::Envelope stop;
  stop.mutable_stop_run()->set_run_id(one.run_id());
  ASSERT_FALSE(request(stop).has_error());
  waitForState(one.run_id(), {v1::STOPPED, v1::COMPLETED, v1::FAILED});
  listProcesses("0 " + std::to_string(strangerPid) + " 1536\n");
  ASSERT_TRUE(telemetryShowsGpusInUse({0}));
  EXPECT_EQ(findRun(two.run_id()).state(), v1::QUEUED);

  // The stranger ends: the two-GPU run starts on both.
  ::kill(strangerPid, SIGTERM);
  stranger.wait(10);
  listProcesses("");
  const v1::RunInfo started = waitForState(two.run_id(), {v1::STARTING, v1::RUNNING}, 30);
  ASSERT_TRUE(started.state() == v1::STARTING || started.state() == v1::RUNNING)
      << started.DebugString() << agent_->errors();
  ASSERT_EQ(started.placement_size(), 1);
  EXPECT_EQ(started.placement(0).gpus_size(), 2);
  v1::Envelope stopTwo;
  stopTwo.mutable_stop_run()->set_run_id(two.run_id());
  request(stopTwo);
  waitForState(two.run_id(), {v1::STOPPED, v1::COMPLETED, v1::FAILED});
}

// --share-gpus: the node places runs on GPUs that other processes compute on too.
class SharedGpuTest : public ForeignGpuTest {
 protected:
  std::vector<std::string> agentArgs() const override {
    return {"--nvml-library", ringside::test::fakeNvmlFull(), "--share-gpus"};
  }
};

TEST_F(SharedGpuTest, ANodeThatSharesItsGpusIgnoresOtherProcesses) {
  ChildProcess stranger({"sleep", "600"}, dir_.path(), {});
  listProcesses("0 " + std::to_string(stranger.pid()) + " 1536\n1 " +
                std::to_string(stranger.pid()) + " 1536\n");
  std::this_thread::sleep_for(std::chrono::milliseconds(600));  // samples that list it
  ASSERT_TRUE(telemetryShowsGpusInUse({}));
  const v1::RunInfo two = launchGpuRun("two-gpus", 2);
  EXPECT_EQ(two.state(), v1::STARTING) << two.DebugString();
  // Stopped at once, while its ranks may not exist yet: they get SIGTERM when they appear and
  // end by it, not by SIGKILL after the grace period (20 s here).
  v1::Envelope stop;
  stop.mutable_stop_run()->set_run_id(two.run_id());
  request(stop);
  const v1::RunInfo stopped = waitForState(two.run_id(), {v1::STOPPED, v1::COMPLETED, v1::FAILED});
  EXPECT_EQ(stopped.state(), v1::STOPPED) << stopped.DebugString();
  EXPECT_EQ(stopped.reason().find("killed after the grace period"), std::string::npos)
      << stopped.reason();
  ::kill(stranger.pid(), SIGTERM);
  stranger.wait(10);
}

}  // namespace
}  // namespace ringside::agent
