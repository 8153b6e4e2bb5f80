// What peers, scripts, pauses and a second agent can do to a healthy run under the real agent
// (docs/security.md, "Bounds"; docs/journal.md). Each test is named for what must not happen and
// failed on the agent before the fix it pins: a flood of unauthenticated connections took the
// descriptors the run's liveness check needed and the run was failed while it ran on; an agent
// stopped longer than a run's hang timeout killed the healthy run at once when it went on; a
// script's process wrote samples and parameters into another run; two agents on one state
// directory both ended the same run.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "agent_fixture.h"

namespace ringside::agent {
namespace {

namespace fs = std::filesystem;

class ReliabilityTest : public AgentProcessTest {
 protected:
  // A one-rank shell run that prints a metrics record (custom/score = step) every `periodS`
  // seconds for `steps` steps.
  v1::RunInfo launchTicker(int steps, double periodS, std::optional<uint32_t> hangTimeoutS = {}) {
    v1::Envelope envelope;
    auto* spec = envelope.mutable_launch_run()->mutable_spec();
    spec->set_name("ticker");
    spec->set_ranks_per_node(1);
    if (hangTimeoutS) spec->set_hang_timeout_s(*hangTimeoutS);
    const std::string script =
        "i=1; while [ $i -le " + std::to_string(steps) +
        " ]; do echo '{\"type\":\"metrics\",\"step\":'$i',\"metrics\":{\"custom/score\":'$i'}}'; "
        "sleep " + std::to_string(periodS) + "; i=$((i+1)); done";
    for (const std::string& arg : {std::string("sh"), std::string("-c"), script}) {
      spec->mutable_command()->add_argv(arg);
    }
    const v1::Envelope reply = request(envelope);
    EXPECT_TRUE(reply.has_launch_run_reply()) << reply.DebugString();
    return reply.launch_run_reply().run();
  }

  size_t scoreSamples(const std::string& runId) {
    size_t count = 0;
    for (const auto& sample : fetchAll(runId).samples) count += sample.name() == "custom/score";
    return count;
  }

  void expectHelloWithin(std::chrono::milliseconds limit) {
    v1::Envelope hello;
    hello.mutable_hello();
    const auto start = std::chrono::steady_clock::now();
    EXPECT_TRUE(request(hello).has_hello_reply()) << agent_->errors();
    EXPECT_LT(std::chrono::steady_clock::now() - start, limit);
  }

  int controlPort() const {
    const std::string& endpoint = agent_->control();
    return std::stoi(endpoint.substr(endpoint.rfind(':') + 1));
  }
};

// The agent under a hard limit of 256 descriptors, so that the flood below keeps it out of them
// for seconds (as 3,000 connections did at the 1,024 of a unit without LimitNOFILE) whatever it
// raises its soft limit to.
class DescriptorFloodTest : public ReliabilityTest {
 protected:
  std::vector<std::string> agentWrapper() const override {
    return {"prlimit", "--nofile=256:256", "--"};
  }
};

// 3,000 plain TCP connections (no ZeroMQ greeting, no key) to the control port while a run
// runs: the run was failed "the run's processes ended without an exit status" while its processes
// went on (the check of its launcher in /proc got EMFILE). Now it completes with every sample,
// and once the connections are gone a client is answered at once.
TEST_F(DescriptorFloodTest, UnauthenticatedConnectionsDoNotFailARunningRun) {
  if (std::system("prlimit --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "no prlimit";
  rlimit own{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &own), 0);
  if (own.rlim_cur < 3200) {
    own.rlim_cur = std::min<rlim_t>(own.rlim_max, 4096);
    ::setrlimit(RLIMIT_NOFILE, &own);
  }
  if (own.rlim_cur < 3200) GTEST_SKIP() << "this test needs 3,200 descriptors of its own";

  const v1::RunInfo run = launchTicker(30, 0.2);
  waitForState(run.run_id(), {v1::RUNNING});
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(controlPort()));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::vector<int> flood;
  for (int i = 0; i < 3000; ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    ASSERT_GE(fd, 0);
    (void)::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address);
    flood.push_back(fd);
  }
  // Held through the rest of the run (30 x 0.2 s) and its end.
  std::this_thread::sleep_for(std::chrono::seconds(10));
  for (int fd : flood) ::close(fd);

  const v1::RunInfo ended = waitForState(run.run_id(), {v1::COMPLETED, v1::FAILED, v1::STOPPED});
  EXPECT_EQ(ended.state(), v1::COMPLETED) << ended.reason() << "\n" << agent_->errors();
  EXPECT_EQ(ended.exit_code(), 0);
  EXPECT_EQ(scoreSamples(run.run_id()), 30u);
  expectHelloWithin(std::chrono::milliseconds(2000));
}

// SIGSTOP of the agent for 14 s with a run's hang timeout at 10 s, the run a Python script that
// reports its steps through the agent's rank socket only (ringside.log): after SIGCONT the healthy
// run was killed "hung: no progress for 14 s" at the agent's first look, before it read the
// records waiting in its socket. Time the agent did not run counts toward no hang timeout.
TEST_F(ReliabilityTest, AgentStoppedLongerThanTheHangTimeoutKillsNoHealthyRun) {
  const std::string script = dir_.path() + "/steps.py";
  std::ofstream(script) << "import time\nimport ringside\n"
                           "for step in range(1, 61):\n"
                           "    ringside.log(step, {'custom/score': step})\n"
                           "    time.sleep(0.5)\n"
                           "ringside.flush(10)\n";
  v1::Envelope envelope;
  auto* spec = envelope.mutable_launch_run()->mutable_spec();
  spec->set_name("paused-agent");
  spec->set_ranks_per_node(1);
  spec->set_hang_timeout_s(10);
  spec->mutable_python()->set_script(script);
  const v1::Envelope reply = request(envelope);
  ASSERT_TRUE(reply.has_launch_run_reply()) << reply.DebugString();
  const v1::RunInfo run = reply.launch_run_reply().run();
  waitForState(run.run_id(), {v1::RUNNING});
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (scoreSamples(run.run_id()) < 3 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  ASSERT_GE(scoreSamples(run.run_id()), 3u) << "the script reports its steps";
  ASSERT_EQ(::kill(agent_->pid(), SIGSTOP), 0);
  std::this_thread::sleep_for(std::chrono::seconds(14));
  ASSERT_EQ(::kill(agent_->pid(), SIGCONT), 0);
  const v1::RunInfo ended = waitForState(run.run_id(), {v1::COMPLETED, v1::FAILED, v1::STOPPED});
  EXPECT_EQ(ended.state(), v1::COMPLETED) << ended.reason();
  EXPECT_EQ(scoreSamples(run.run_id()), 60u);
  EXPECT_NE(agent_->errors().find("the agent did not run for"), std::string::npos)
      << agent_->errors();
}

// A run's rank (here the test with that run's key, as a script of the run could) sent samples
// and parameters naming another run through the node's rank socket: the other run ended with
// a loss of 1e9 and an "owner" it never logged. Now a message counts for the run whose key its
// connection was made with, and nothing else; plaintext connections count for none.
TEST_F(ReliabilityTest, ARankCannotWriteIntoAnotherRun) {
  const v1::RunInfo victim = launchTicker(16, 0.5);
  const v1::RunInfo attacker = launchTicker(16, 0.5);
  waitForState(victim.run_id(), {v1::RUNNING});
  waitForState(attacker.run_id(), {v1::RUNNING});
  auto keys =
      curve::readKeyPairFromSecretFile(state_ + "/runs/" + attacker.run_id() + "/rank.key_secret");
  ASSERT_TRUE(keys.isOk()) << keys.status().toString() << ": every run has its own key";

  auto metrics = [](const std::string& runId, const std::string& name, double value) {
    v1::Envelope envelope = protocol::newEnvelope(0);
    auto* batch = envelope.mutable_rank_metrics();
    batch->set_run_id(runId);
    batch->set_rank(0);
    batch->set_batch_seq(1);
    auto* point = batch->add_points();
    point->set_name(name);
    point->set_step(1);
    point->set_value(value);
    point->set_wall_time(1.7e9);
    return protocol::encodeEnvelope(envelope);
  };
  auto params = [](const std::string& runId) {
    v1::Envelope envelope = protocol::newEnvelope(0);
    envelope.mutable_run_params()->set_run_id(runId);
    (*envelope.mutable_run_params()->mutable_params())["owner"] = "attacker";
    return protocol::encodeEnvelope(envelope);
  };
  const std::string endpoint = "ipc://" + state_ + "/run/ranks.sock";
  zmq::socket_t keyed(context_, zmq::socket_type::push);
  keyed.set(zmq::sockopt::linger, 2000);
  ASSERT_TRUE(curve::configureClient(keyed, *keys, agentKey_).isOk());
  keyed.connect(endpoint);
  keyed.send(zmq::buffer(metrics(victim.run_id(), "train/loss", 1e9)));
  keyed.send(zmq::buffer(params(victim.run_id())));
  keyed.send(zmq::buffer(metrics(attacker.run_id(), "custom/own", 7.0)));  // its own: taken
  zmq::socket_t plain(context_, zmq::socket_type::push);
  plain.set(zmq::sockopt::linger, 2000);
  plain.connect(endpoint);
  plain.send(zmq::buffer(metrics(victim.run_id(), "train/loss", 2e9)), zmq::send_flags::dontwait);

  for (const v1::RunInfo& run : {victim, attacker}) {
    const v1::RunInfo ended = waitForState(run.run_id(), {v1::COMPLETED, v1::FAILED});
    EXPECT_EQ(ended.state(), v1::COMPLETED) << ended.reason();
  }
  EXPECT_FALSE(findRun(victim.run_id()).params().contains("owner"));
  for (const auto& sample : fetchAll(victim.run_id()).samples) {
    EXPECT_EQ(sample.name(), "custom/score") << "the victim logged only its own scores";
  }
  EXPECT_EQ(scoreSamples(victim.run_id()), 16u);
  bool own = false;
  for (const auto& sample : fetchAll(attacker.run_id()).samples) own |= sample.name() == "custom/own";
  EXPECT_TRUE(own) << "a run's own key still writes to its own run";
  EXPECT_NE(agent_->errors().find("message for run " + victim.run_id()), std::string::npos)
      << agent_->errors();
}

// Two agents on one state directory both adopted a live run and both journaled its end
// (COMPLETED twice). The second is refused, names the first, and the first serves on.
TEST_F(ReliabilityTest, SecondAgentOnTheSameStateDirectoryIsRefused) {
  const ProcessResult second = runProcess(
      {ringside::test::agentBin(), "--state-dir", state_, "--control-port", "0", "--events-port",
       "0", "--trainer", ringside::test::trainerBin(), "--mpirun", ringside::test::mpiexec()},
      dir_.path(), 30, kEnv);
  EXPECT_NE(second.exitCode, 0);
  EXPECT_NE(second.err.find("another ringside-agent (pid " + std::to_string(agent_->pid()) + ")"),
            std::string::npos)
      << second.err;
  expectHelloWithin(std::chrono::milliseconds(2000));
  // The lock goes with the process, also on kill -9: a restart takes the directory over.
  agent_->kill9();
  agent_ = std::make_unique<AgentProcess>(state_, dir_.path());
  connect();
  expectHelloWithin(std::chrono::milliseconds(2000));
}

}  // namespace
}  // namespace ringside::agent
