// The agent's multi-node machinery on one machine: a run with a host list sends its ranks'
// metrics over the CURVE rank endpoint with the run's own key (which opens nothing else), a
// second agent counts and stops the ranks of a run it does not own, pre-flight names what is
// missing, and an unreachable node is refused at launch. The same paths across real namespaces
// are tested by tests/cluster (label `cluster`).
#include <gtest/gtest.h>

#include "agent_fixture.h"
#include "build_paths.h"

namespace ringside::agent {
namespace {

namespace fs = std::filesystem;

class MultiNodeTest : public AgentProcessTest {
 protected:
  std::string hostname() {
    v1::Envelope hello;
    hello.mutable_hello()->set_client_name("multi-node test");
    return request(hello).hello_reply().node().hostname();
  }

  // A trainer run whose host list is this node only: the multi-node launch path on one node.
  v1::Envelope hostListLaunch(const nlohmann::json& config, const std::vector<std::string>& hosts) {
    v1::Envelope envelope;
    auto* spec = envelope.mutable_launch_run()->mutable_spec();
    spec->set_name("host list");
    for (const std::string& host : hosts) {
      auto* entry = spec->add_hosts();
      entry->set_host(host);
      entry->set_ranks(2);
    }
    auto typed = trainerConfigFromJson(config.dump());
    EXPECT_TRUE(typed.isOk());
    *spec->mutable_trainer()->mutable_config() = *typed;
    return request(envelope);
  }

  // Whether a DEALER with `keys` gets a hello reply from the control socket within 2 s.
  bool controlAnswers(const curve::KeyPair& keys) {
    zmq::socket_t dealer(context_, zmq::socket_type::dealer);
    dealer.set(zmq::sockopt::linger, 0);
    EXPECT_TRUE(curve::configureClient(dealer, keys, agentKey_).isOk());
    dealer.connect(agent_->control());
    v1::Envelope hello = protocol::newEnvelope(1);
    hello.mutable_hello()->set_client_name("intruder");
    dealer.send(zmq::buffer(protocol::encodeEnvelope(hello)));
    zmq::pollitem_t item{dealer.handle(), 0, ZMQ_POLLIN, 0};
    return zmq::poll(&item, 1, std::chrono::milliseconds(2000)) > 0;
  }
};

TEST_F(MultiNodeTest, HostListRunSendsEveryRanksMetricsOverCurveWithItsOwnKey) {
  const std::string rankEndpoint = agent_->ready().rank_endpoint();
  ASSERT_TRUE(rankEndpoint.starts_with("tcp://127.0.0.1:")) << rankEndpoint;
  const v1::Envelope reply = hostListLaunch(smallRun(3), {hostname()});
  ASSERT_TRUE(reply.has_launch_run_reply()) << reply.DebugString();
  const v1::RunInfo launched = reply.launch_run_reply().run();

  // The run's keypair opens the rank endpoint only: the control socket does not answer it.
  auto runKeys = curve::readKeyPairFromSecretFile(launched.run_dir() + "/rank.key_secret");
  ASSERT_TRUE(runKeys.isOk()) << runKeys.status().toString();
  EXPECT_FALSE(controlAnswers(*runKeys)) << "a run's key must not open the control socket";

  // Another key (say, another run's rank, or anyone) cannot write into this run.
  auto intruderKeys = curve::generateKeyPair();
  ASSERT_TRUE(intruderKeys.isOk());
  zmq::socket_t intruder(context_, zmq::socket_type::push);
  intruder.set(zmq::sockopt::linger, 0);
  ASSERT_TRUE(curve::configureClient(intruder, *intruderKeys, agentKey_).isOk());
  intruder.connect(rankEndpoint);
  v1::Envelope forged = protocol::newEnvelope(0);
  forged.mutable_rank_metrics()->set_run_id(launched.run_id());
  forged.mutable_rank_metrics()->set_batch_seq(1);
  auto* point = forged.mutable_rank_metrics()->add_points();
  point->set_name("intruder/value");
  point->set_value(1);
  (void)intruder.send(zmq::buffer(protocol::encodeEnvelope(forged)), zmq::send_flags::dontwait);

  const v1::RunInfo run = waitForState(launched.run_id(), {v1::COMPLETED, v1::FAILED});
  ASSERT_EQ(run.state(), v1::COMPLETED) << run.reason();
  const Fetched all = fetchAll(run.run_id());
  expectGapFree(all.seqs);
  EXPECT_EQ(all.samples.size(), pointsInStdout(run.run_dir()))
      << "every point each rank sent over tcp:// is journaled, and nothing else";
  std::set<int> ranks;
  for (const auto& sample : all.samples) {
    ranks.insert(sample.rank());
    EXPECT_NE(sample.name(), "intruder/value");
  }
  EXPECT_EQ(ranks, (std::set<int>{-1, 0, 1}));
  // The spec reached the ranks on their command line, not as a file only this node has.
  EXPECT_NE(readFile(run.run_dir() + "/stdout.log").find("\"type\":\"end\""), std::string::npos);
}

TEST_F(MultiNodeTest, PreflightNamesWhatIsMissingAndTheFreeSlots) {
  v1::Envelope good;
  auto* spec = good.mutable_preflight()->mutable_spec();
  auto typed = trainerConfigFromJson(smallRun(1).dump());
  ASSERT_TRUE(typed.isOk());
  *spec->mutable_trainer()->mutable_config() = *typed;
  good.mutable_preflight()->set_ranks(1);
  const v1::Envelope ready = request(good);
  ASSERT_TRUE(ready.has_preflight_reply()) << ready.DebugString();
  EXPECT_TRUE(ready.preflight_reply().problems().empty()) << ready.preflight_reply().problems(0);
  EXPECT_GT(ready.preflight_reply().free_slots(), 0u);
  EXPECT_EQ(ready.preflight_reply().slot_kind(), "cpu");
  EXPECT_FALSE(ready.preflight_reply().agent_version().empty());

  v1::Envelope bad = good;
  auto* badSpec = bad.mutable_preflight()->mutable_spec();
  badSpec->mutable_trainer()->set_trainer_path("/nonexistent/ringside-trainer");
  badSpec->mutable_trainer()->mutable_config()->set_data("/nonexistent/data");
  bad.mutable_preflight()->set_ranks(100000);
  const v1::Envelope refused = request(bad);
  ASSERT_TRUE(refused.has_preflight_reply());
  std::string problems;
  for (const auto& problem : refused.preflight_reply().problems()) problems += problem + "\n";
  EXPECT_NE(problems.find("/nonexistent/ringside-trainer"), std::string::npos) << problems;
  EXPECT_NE(problems.find("100000 CPU slots"), std::string::npos) << problems;
  badSpec->mutable_trainer()->clear_trainer_path();
  const v1::Envelope noData = request(bad);
  std::string dataProblems;
  for (const auto& problem : noData.preflight_reply().problems()) dataProblems += problem;
  EXPECT_NE(dataProblems.find("/nonexistent/data"), std::string::npos) << dataProblems;
}

TEST_F(MultiNodeTest, HostNamesAreCheckedBeforeAnythingStarts) {
  const v1::Envelope reply = hostListLaunch(smallRun(1), {hostname(), "-oProxyCommand=touch x"});
  ASSERT_TRUE(reply.has_error()) << reply.DebugString();
  EXPECT_EQ(reply.error().code(), v1::ErrorReply::INVALID_ARGUMENT);
  EXPECT_NE(reply.error().message().find("-oProxyCommand"), std::string::npos);
  v1::Envelope list;
  list.mutable_list_runs()->set_include_ended(true);
  EXPECT_EQ(request(list).list_runs_reply().runs_size(), 0);
}

// An agent whose launcher cannot reach anything (`false` plays an ssh that fails).
class UnreachableNodeTest : public MultiNodeTest {
 protected:
  std::vector<std::string> agentArgs() const override { return {"--launcher", "false"}; }
};

TEST_F(UnreachableNodeTest, LaunchIsRefusedNamingTheNodeAndNothingStarts) {
  const v1::Envelope reply = hostListLaunch(smallRun(1), {hostname(), "node-unreachable"});
  ASSERT_TRUE(reply.has_error()) << reply.DebugString();
  EXPECT_EQ(reply.error().code(), v1::ErrorReply::FAILED_PRECONDITION);
  EXPECT_NE(reply.error().message().find("node-unreachable"), std::string::npos)
      << reply.error().message();
  v1::Envelope list;
  list.mutable_list_runs()->set_include_ended(true);
  EXPECT_EQ(request(list).list_runs_reply().runs_size(), 0);
}

// With the run's own key, ranks 77 and 2^31-1 were journaled, and a rank-port
// connection opened during a run kept journaling after the run ended.
TEST_F(MultiNodeTest, RankPortTookSamplesOfRanksOutsideTheWorldSizeAndAfterTheRunEnded) {
  v1::Envelope launch;
  auto* spec = launch.mutable_launch_run()->mutable_spec();
  spec->set_name("sleeper");
  auto* self = spec->add_hosts();
  self->set_host(hostname());
  self->set_ranks(2);
  for (const char* word : {"sleep", "4"}) spec->mutable_command()->add_argv(word);
  const v1::Envelope launched = request(launch);
  ASSERT_TRUE(launched.has_launch_run_reply()) << launched.DebugString();
  const v1::RunInfo info = launched.launch_run_reply().run();
  waitForState(info.run_id(), {v1::RUNNING});
  auto runKeys = curve::readKeyPairFromSecretFile(info.run_dir() + "/rank.key_secret");
  ASSERT_TRUE(runKeys.isOk()) << runKeys.status().toString();
  zmq::socket_t rank(context_, zmq::socket_type::push);
  rank.set(zmq::sockopt::linger, 1000);
  ASSERT_TRUE(curve::configureClient(rank, *runKeys, agentKey_).isOk());
  rank.connect(agent_->ready().rank_endpoint());
  const auto push = [&](int rankId, uint64_t batchSeq) {
    v1::Envelope envelope = protocol::newEnvelope(0);
    auto* metrics = envelope.mutable_rank_metrics();
    metrics->set_run_id(info.run_id());
    metrics->set_rank(rankId);
    metrics->set_batch_seq(batchSeq);
    auto* point = metrics->add_points();
    point->set_name("train/loss");
    point->set_step(1);
    point->set_value(0.5);
    ASSERT_TRUE(rank.send(zmq::buffer(protocol::encodeEnvelope(envelope))));
  };
  const auto agentLogs = [&](const std::string& text) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (agent_->errors().find(text) == std::string::npos &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return agent_->errors().find(text) != std::string::npos;
  };
  push(77, 1);
  push(2147483647, 1);
  push(0, 1);
  EXPECT_TRUE(agentLogs("rank 77 is outside the run's world size 2")) << agent_->errors();
  const v1::RunInfo run = waitForState(info.run_id(), {v1::COMPLETED, v1::FAILED});
  ASSERT_EQ(run.state(), v1::COMPLETED) << run.reason();
  push(1, 1);  // on the connection opened during the run
  EXPECT_TRUE(agentLogs("has ended (COMPLETED): the journal takes no more samples for it"))
      << agent_->errors();
  const Fetched all = fetchAll(info.run_id());
  ASSERT_EQ(all.samples.size(), 1u) << "rank 0's sample of the running run, and nothing else";
  EXPECT_EQ(all.samples[0].rank(), 0);
}

// Two agents on one machine see the same processes, as the agent of node 2 sees the ranks that
// node 1's mpirun started there: the second one counts them as used slots and stops them.
TEST_F(MultiNodeTest, AnotherAgentCountsAndStopsTheRanksOfARunItDoesNotOwn) {
  v1::Envelope launch;
  auto* spec = launch.mutable_launch_run()->mutable_spec();
  spec->set_name("ignores SIGTERM");
  // A host list: the multi-node launch path, whose ranks other agents count (a one-node run
  // belongs to its own node's agent alone).
  auto* self = spec->add_hosts();
  self->set_host(hostname());
  self->set_ranks(2);
  for (const char* word : {"sh", "-c", "trap '' TERM; while :; do sleep 0.2; done"}) {
    spec->mutable_command()->add_argv(word);
  }
  const v1::Envelope launched = request(launch);
  ASSERT_TRUE(launched.has_launch_run_reply()) << launched.DebugString();
  const std::string runId = launched.launch_run_reply().run().run_id();
  EXPECT_EQ(launched.launch_run_reply().run().spec().hosts_size(), 1) << launched.DebugString();
  waitForState(runId, {v1::RUNNING});

  const std::string otherState = dir_.path() + "/other-state";
  ProcessResult authorized = runProcess(
      {ringside::test::agentBin(), "--state-dir", otherState, "authorize", clientKeys_.publicKey},
      dir_.path(), 30);
  ASSERT_EQ(authorized.exitCode, 0) << authorized.err;
  AgentProcess other(otherState, dir_.path(), {}, "other.ready.json");
  zmq::socket_t dealer(context_, zmq::socket_type::dealer);
  dealer.set(zmq::sockopt::linger, 0);
  ASSERT_TRUE(curve::configureClient(dealer, clientKeys_, other.ready().public_key()).isOk());
  dealer.connect(other.control());
  const auto ask = [&](v1::Envelope envelope) {
    envelope.set_protocol_version(protocol::kProtocolVersion);
    envelope.set_request_id(++requestId_);
    dealer.send(zmq::buffer(protocol::encodeEnvelope(envelope)));
    zmq::pollitem_t item{dealer.handle(), 0, ZMQ_POLLIN, 0};
    v1::Envelope reply;
    if (zmq::poll(&item, 1, std::chrono::milliseconds(10000)) > 0) {
      zmq::message_t message;
      (void)dealer.recv(message);
      auto decoded = protocol::decodeEnvelope(message.data(), message.size());
      if (decoded.isOk()) reply = *decoded;
    }
    return reply;
  };
  v1::Envelope hello;
  hello.mutable_hello()->set_client_name("test");
  uint32_t used = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (used != 2 && std::chrono::steady_clock::now() < deadline) {
    used = ask(hello).hello_reply().node().slots_used();
    if (used != 2) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(used, 2u) << "the other agent counts the 2 ranks it sees (not their children)";

  v1::Envelope stop;
  stop.mutable_stop_run()->set_run_id(runId);
  stop.mutable_stop_run()->set_grace_seconds(1);
  const v1::Envelope stopped = ask(stop);
  ASSERT_TRUE(stopped.has_stop_run_reply()) << stopped.DebugString();
  EXPECT_NE(stopped.stop_run_reply().run().reason().find("another node owns"), std::string::npos);
  // The ranks ignore SIGTERM: the other agent kills them after the grace period, and the owner
  // sees its run fail with the signal.
  const v1::RunInfo run = waitForState(runId, {v1::FAILED, v1::COMPLETED, v1::STOPPED}, 60);
  EXPECT_EQ(run.state(), v1::FAILED) << run.reason();
  EXPECT_NE(run.reason().find("signal 9"), std::string::npos) << run.reason();
}

}  // namespace
}  // namespace ringside::agent
