// End-to-end tests of ringside-agent: the real binary on loopback with CURVE, a client with its
// own keypair, real 2-rank trainer runs on Fashion-MNIST subsets, stop, a killed rank, bad
// messages, refused clients, and SIGKILL of the agent itself in the middle of a run.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>
#include <tuple>
#include <zmq.hpp>

#include "agent_fixture.h"
#include "build_paths.h"
#include "ringside/agent/journal.h"
#include "ringside/common/agent_ready.h"
#include "ringside/common/allowlist.h"
#include "ringside/common/curve.h"
#include "ringside/common/metric_names.h"
#include "ringside/common/protocol.h"
#include "ringside/common/run_spec.h"

namespace ringside::agent {
namespace {

namespace fs = std::filesystem;

TEST_F(AgentProcessTest, HelloDescribesTheNode) {
  v1::Envelope hello;
  hello.mutable_hello()->set_client_name("e2e");
  const v1::Envelope reply = request(hello);
  ASSERT_TRUE(reply.has_hello_reply()) << reply.DebugString();
  const v1::NodeInfo& node = reply.hello_reply().node();
  EXPECT_FALSE(node.hostname().empty());
  EXPECT_GT(node.cpu_cores(), 0u);
  EXPECT_EQ(node.slot_kind(), "cpu");
  EXPECT_EQ(node.slots_total(), node.cpu_cores());
  // Slots by kind (protocol 2): every core a CPU slot, no GPU slot here.
  EXPECT_EQ(node.cpu_slots_total(), node.cpu_cores());
  EXPECT_EQ(node.gpu_slots_total(), 0u);
  EXPECT_EQ(reply.hello_reply().protocol_version(), protocol::kProtocolVersion);
}

// The readiness contract (agent_ready.h, docs/protocol.md): the ready file names the agent's key
// and process and the endpoints it serves on (the fixture connected through them).
TEST_F(AgentProcessTest, ReadyFileNamesTheKeyEndpointsAndProcess) {
  Result<v1::AgentReady> ready = readAgentReady(dir_.path() + "/agent.ready.json");
  ASSERT_TRUE(ready.isOk()) << ready.status().toString();
  EXPECT_EQ(ready->public_key(), agentKey_);
  EXPECT_EQ(ready->control_endpoint(), agent_->control());
  EXPECT_EQ(ready->protocol_version(), protocol::kProtocolVersion);
  EXPECT_GT(ready->pid(), 0);
  EXPECT_FALSE(ready->insecure());
  v1::Envelope hello;
  hello.mutable_hello();
  EXPECT_EQ(request(hello).hello_reply().node().node_id(), ready->node_id());
}

TEST_F(AgentProcessTest, BadMessagesGetErrorRepliesAndTheAgentKeepsServing) {
  dealer_.send(zmq::str_buffer("this is not protobuf \xff\xff\xff"));
  EXPECT_EQ(receiveReply(0).error().code(), v1::ErrorReply::MALFORMED);

  v1::Envelope empty;
  empty.set_protocol_version(1);
  empty.set_request_id(77);
  dealer_.send(zmq::buffer(protocol::encodeEnvelope(empty)));
  EXPECT_EQ(receiveReply(77).error().code(), v1::ErrorReply::UNKNOWN_MESSAGE);

  std::string huge(protocol::kMaxMessageBytes + 1, 'x');
  dealer_.send(zmq::buffer(huge));
  EXPECT_EQ(receiveReply(0).error().code(), v1::ErrorReply::TOO_LARGE);

  v1::Envelope launch;
  launch.mutable_launch_run()->mutable_spec()->set_ranks_per_node(1);
  const v1::Envelope noJob = request(launch);
  EXPECT_EQ(noJob.error().code(), v1::ErrorReply::INVALID_ARGUMENT);
  EXPECT_NE(noJob.error().message().find("no job"), std::string::npos);

  v1::Envelope stop;
  stop.mutable_stop_run()->set_run_id("r-none");
  EXPECT_EQ(request(stop).error().code(), v1::ErrorReply::NOT_FOUND);

  v1::Envelope hello;
  hello.mutable_hello();
  EXPECT_TRUE(request(hello).has_hello_reply());
}

TEST_F(AgentProcessTest, UnknownKeysAndPlaintextClientsGetNothing) {
  auto stranger = curve::generateKeyPair();
  ASSERT_TRUE(stranger.isOk());
  zmq::socket_t unknown(context_, zmq::socket_type::dealer);
  zmq::socket_t plaintext(context_, zmq::socket_type::dealer);
  unknown.set(zmq::sockopt::linger, 0);
  plaintext.set(zmq::sockopt::linger, 0);
  ASSERT_TRUE(curve::configureClient(unknown, *stranger, agentKey_).isOk());
  unknown.connect(agent_->control());
  plaintext.connect(agent_->control());
  v1::Envelope hello = protocol::newEnvelope(1);
  hello.mutable_hello();
  for (zmq::socket_t* socket : {&unknown, &plaintext}) {
    (void)socket->send(zmq::buffer(protocol::encodeEnvelope(hello)), zmq::send_flags::dontwait);
    zmq::pollitem_t item{socket->handle(), 0, ZMQ_POLLIN, 0};
    EXPECT_EQ(zmq::poll(&item, 1, std::chrono::milliseconds(1500)), 0)
        << "a client that is not allowlisted must get no reply";
  }
  // The allowlisted client still works.
  EXPECT_TRUE(request(hello).has_hello_reply());
}

// Regression: a revoked key kept control and events on the connections it already had (CURVE
// authenticates only at the handshake). Now the agent reloads its allowlist within a second and
// re-binds its sockets when a key is removed; a key authorized while it runs gets in the same way.
TEST_F(AgentProcessTest, RevokedKeyLosesControlAndEventsOnOpenConnections) {
  auto bobKeys = curve::generateKeyPair();
  ASSERT_TRUE(bobKeys.isOk());
  ProcessResult authorized =
      runProcess({ringside::test::agentBin(), "--state-dir", state_, "authorize", bobKeys->publicKey},
                 dir_.path(), 30);
  ASSERT_EQ(authorized.exitCode, 0) << authorized.err;
  const auto reloadDeadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (agent_->errors().find("allowlist reloaded: 2 key(s)") == std::string::npos &&
         std::chrono::steady_clock::now() < reloadDeadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  zmq::socket_t bob(context_, zmq::socket_type::dealer);
  bob.set(zmq::sockopt::linger, 0);
  ASSERT_TRUE(curve::configureClient(bob, *bobKeys, agentKey_).isOk());
  bob.connect(agent_->control());
  v1::Envelope hello = protocol::newEnvelope(0);
  hello.mutable_hello();
  // A hello on `socket` answered within `timeout`.
  auto answered = [&](zmq::socket_t& socket, std::chrono::milliseconds timeout) {
    (void)socket.send(zmq::buffer(protocol::encodeEnvelope(hello)), zmq::send_flags::dontwait);
    zmq::pollitem_t item{socket.handle(), 0, ZMQ_POLLIN, 0};
    if (zmq::poll(&item, 1, timeout) == 0) return false;
    zmq::message_t reply;
    while (socket.recv(reply, zmq::recv_flags::dontwait)) {
    }
    return true;
  };
  // Bob, authorized while the agent runs, gets in without a restart.
  const auto bobDeadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  bool bobIn = false;
  while (!bobIn && std::chrono::steady_clock::now() < bobDeadline) {
    bobIn = answered(bob, std::chrono::milliseconds(500));
  }
  ASSERT_TRUE(bobIn) << "a key authorized at run time was not accepted:\n" << agent_->errors();
  ASSERT_TRUE(answered(dealer_, std::chrono::milliseconds(5000)));

  ProcessResult revoked =
      runProcess({ringside::test::agentBin(), "--state-dir", state_, "revoke", clientKeys_.publicKey},
                 dir_.path(), 30);
  ASSERT_EQ(revoked.exitCode, 0) << revoked.err;
  const auto revokedAt = std::chrono::steady_clock::now();
  // The revoked client's open connection stops being answered...
  bool cutOff = false;
  while (!cutOff && std::chrono::steady_clock::now() < revokedAt + std::chrono::seconds(10)) {
    cutOff = !answered(dealer_, std::chrono::milliseconds(700));
  }
  ASSERT_TRUE(cutOff) << "the revoked key still gets replies:\n" << agent_->errors();
  EXPECT_LT(std::chrono::steady_clock::now() - revokedAt, std::chrono::seconds(4));
  // ...and its subscription gets no more events (telemetry comes every 0.2 s otherwise).
  zmq::message_t event;
  while (sub_.recv(event, zmq::recv_flags::dontwait)) {
  }
  zmq::pollitem_t subItem{sub_.handle(), 0, ZMQ_POLLIN, 0};
  EXPECT_EQ(zmq::poll(&subItem, 1, std::chrono::milliseconds(1500)), 0)
      << "the revoked key still receives events";
  // Bob reconnects by himself and is served again.
  bool bobBack = false;
  while (!bobBack && std::chrono::steady_clock::now() < revokedAt + std::chrono::seconds(15)) {
    bobBack = answered(bob, std::chrono::milliseconds(500));
  }
  EXPECT_TRUE(bobBack) << "an authorized client was not served after the re-bind";
  EXPECT_NE(agent_->errors().find("revoked " + clientKeys_.publicKey), std::string::npos)
      << agent_->errors();
}

// Regression: a broken allowlist file was never reported (the reload's status was discarded).
TEST_F(AgentProcessTest, BrokenAllowlistIsReportedAndThePreviousKeysStayInForce) {
  { std::ofstream(state_ + "/allowlist", std::ios::app) << "not-a-key\n"; }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (agent_->errors().find("the allowlist was not reloaded") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_NE(agent_->errors().find("the allowlist was not reloaded, the previous 1 key(s) stay in "
                                  "force"),
            std::string::npos)
      << agent_->errors();
  v1::Envelope hello;
  hello.mutable_hello();
  EXPECT_TRUE(request(hello).has_hello_reply());
}

TEST_F(AgentProcessTest, RunIsJournaledCompletelyAndPublishedLive) {
  const v1::RunInfo launched = launch(smallRun(2));
  ASSERT_FALSE(launched.run_id().empty());
  size_t live = 0;
  bool ended = false;
  bool sawTelemetry = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(180);
  while (!ended && std::chrono::steady_clock::now() < deadline) {
    zmq::pollitem_t item{sub_.handle(), 0, ZMQ_POLLIN, 0};
    if (zmq::poll(&item, 1, std::chrono::milliseconds(200)) == 0) continue;
    zmq::message_t message;
    (void)sub_.recv(message);
    auto event = protocol::decodeEnvelope(message.data(), message.size());
    ASSERT_TRUE(event.isOk());
    if (event->has_metric_batch() && event->metric_batch().run_id() == launched.run_id()) {
      for (const auto& sample : event->metric_batch().samples()) {
        live += metric::isAgentVerdict(sample.name()) ? 0 : 1;  // counted below, separately
      }
    }
    sawTelemetry |= event->has_node_telemetry();
    if (event->has_run_state() && event->run_state().run().run_id() == launched.run_id()) {
      ended = event->run_state().run().state() == v1::COMPLETED;
    }
  }
  ASSERT_TRUE(ended);
  EXPECT_TRUE(sawTelemetry);
  const v1::RunInfo run = findRun(launched.run_id());
  EXPECT_EQ(run.state(), v1::COMPLETED);
  const Fetched all = fetchAll(run.run_id());
  expectGapFree(all.seqs);
  const size_t sent = pointsInStdout(run.run_dir());
  EXPECT_GT(sent, 0u);
  EXPECT_EQ(all.samples.size(), sent) << "the journal holds every sample the ranks sent";
  EXPECT_EQ(live, sent) << "and every one was published";
  // With the agent's own straggler verdicts: seven samples each (metric_names.h kStraggler*).
  EXPECT_FALSE(all.verdicts.empty());
  EXPECT_EQ(all.verdicts.size() % 7, 0u);
  std::set<int> ranks;
  for (const auto& s : all.samples) ranks.insert(s.rank());
  EXPECT_EQ(ranks, (std::set<int>{-1, 0, 1}));
  // The run's size reaches the journal (and so the GUI) as samples: 5,000 samples in global
  // batches of 128 are 39 steps an epoch, 78 in 2 epochs.
  std::map<std::string, std::vector<double>> facts;
  for (const auto& s : all.samples) {
    if (s.name().starts_with("run/")) facts[s.name()].push_back(s.value());
  }
  EXPECT_EQ(facts[metric::kRunTotalSteps], std::vector<double>{78});
  EXPECT_EQ(facts[metric::kRunStepsPerEpoch], std::vector<double>{39});
}

TEST_F(AgentProcessTest, StopMidRunEndsStoppedWithACheckpoint) {
  const v1::RunInfo launched = launch(smallRun(200));
  waitForState(launched.run_id(), {v1::RUNNING});
  std::this_thread::sleep_for(std::chrono::seconds(1));
  v1::Envelope stop;
  stop.mutable_stop_run()->set_run_id(launched.run_id());
  ASSERT_TRUE(request(stop).has_stop_run_reply());
  const v1::RunInfo run = waitForState(launched.run_id(), {v1::STOPPED, v1::FAILED, v1::COMPLETED});
  EXPECT_EQ(run.state(), v1::STOPPED) << run.reason();
  bool checkpoint = false;
  for (const auto& entry : fs::directory_iterator(run.run_dir() + "/checkpoints")) {
    checkpoint |= entry.path().extension() == ".rsck";
  }
  EXPECT_TRUE(checkpoint);
}

TEST_F(AgentProcessTest, KilledRankFailsTheRunWithTheReason) {
  const v1::RunInfo launched = launch(smallRun(200));
  waitForState(launched.run_id(), {v1::RUNNING});
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  // Rank 1 of this run, by its environment.
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string env = readFile(entry.path().string() + "/environ");
    if (env.find("RINGSIDE_RUN_ID=" + launched.run_id()) != std::string::npos &&
        env.find(std::string("OMPI_COMM_WORLD_RANK=1") + '\0') != std::string::npos) {
      ::kill(std::stoi(entry.path().filename()), SIGKILL);
    }
  }
  const v1::RunInfo run = waitForState(launched.run_id(), {v1::FAILED, v1::COMPLETED});
  EXPECT_EQ(run.state(), v1::FAILED);
  EXPECT_NE(run.reason().find("rank 1"), std::string::npos) << run.reason();
  EXPECT_NE(run.reason().find("signal 9"), std::string::npos) << run.reason();
}

TEST_F(AgentProcessTest, AgentSigkillMidRunLosesNothing) {
  nlohmann::json config = smallRun(60);  // ~5 s of training on 2 cores
  config["train_samples"] = 10000;
  const v1::RunInfo launched = launch(config);
  waitForState(launched.run_id(), {v1::RUNNING});
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  ASSERT_EQ(findRun(launched.run_id()).state(), v1::RUNNING) << "the run must outlive the agent";
  agent_->kill9();
  // The ranks go on training (and buffering) while no agent listens.
  std::this_thread::sleep_for(std::chrono::seconds(1));
  agent_ = std::make_unique<AgentProcess>(state_, dir_.path());
  connect();
  EXPECT_NE(agent_->errors().find("adopted run " + launched.run_id()), std::string::npos)
      << agent_->errors();
  // kill -9 leaves the journal's write-ahead log whole (the kernel has every write): nothing is
  // reported lost from it.
  EXPECT_EQ(agent_->errors().find("write-ahead log"), std::string::npos) << agent_->errors();
  const v1::RunInfo run = waitForState(launched.run_id(), {v1::COMPLETED, v1::FAILED});
  ASSERT_EQ(run.state(), v1::COMPLETED) << run.reason();
  // The tail of the run reaches the journal shortly after the state: settle, then compare.
  const size_t sent = pointsInStdout(run.run_dir());
  Fetched all;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  do {
    all = fetchAll(run.run_id());
    if (all.samples.size() >= sent) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  } while (std::chrono::steady_clock::now() < deadline);
  expectGapFree(all.seqs);
  EXPECT_EQ(all.samples.size(), sent) << "no sample lost or doubled across the agent's SIGKILL";
}

// Agent killed 3 s into a 2-rank run, the run left to finish, agent restarted:
// the run was COMPLETED with 5,355 of 28,086 samples (the ranks printed "17046 unsent at exit").
// Now the agent recovers what the ranks could not send from the run's stdout.log.
TEST_F(AgentProcessTest, RunEndingWhileTheAgentIsDownLosesNoMetrics) {
  nlohmann::json config = smallRun(20);
  config["train_samples"] = 10000;
  config["log_every"] = 1;  // many points, so that many are still queued when the run ends
  const v1::RunInfo launched = launch(config);
  waitForState(launched.run_id(), {v1::RUNNING});
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  agent_->kill9();
  // The run ends while no agent listens: its shim writes exit_status when mpirun is done.
  const std::string exitStatus = launched.run_dir() + "/exit_status";
  const auto ended = std::chrono::steady_clock::now() + std::chrono::seconds(180);
  while (!fs::exists(exitStatus) && std::chrono::steady_clock::now() < ended) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(fs::exists(exitStatus)) << "the run did not end";
  const std::string rankErrors = readFile(launched.run_dir() + "/stderr.log");
  EXPECT_NE(rankErrors.find("unsent at exit"), std::string::npos)
      << "the ranks ended with metrics they could not send:\n"
      << rankErrors;

  agent_ = std::make_unique<AgentProcess>(state_, dir_.path());
  connect();
  const v1::RunInfo run = waitForState(launched.run_id(), {v1::COMPLETED, v1::FAILED});
  ASSERT_EQ(run.state(), v1::COMPLETED) << run.reason();
  const size_t printed = pointsInStdout(run.run_dir());
  Fetched all;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  do {
    all = fetchAll(run.run_id());
    if (all.samples.size() >= printed) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  } while (std::chrono::steady_clock::now() < deadline);
  expectGapFree(all.seqs);
  EXPECT_EQ(all.samples.size(), printed) << "every printed sample journaled, none twice";
  std::set<std::tuple<int, int64_t, std::string>> keys;
  for (const auto& sample : all.samples) {
    EXPECT_TRUE(keys.emplace(sample.rank(), sample.step(), sample.name()).second)
        << "twice: rank " << sample.rank() << " step " << sample.step() << " " << sample.name();
  }
  EXPECT_NE(agent_->errors().find("metric samples from this run's stdout.log"), std::string::npos)
      << agent_->errors();
}

// The queue (docs/queue.md) across kill -9 of the agent: a run queued behind one that holds
// every CPU slot is still queued after the restart, starts by itself once the slots free up,
// and is journaled STARTING exactly once.
TEST_F(AgentProcessTest, AQueuedRunSurvivesTheAgentsKill9AndStartsExactlyOnce) {
  v1::Envelope hello;
  hello.mutable_hello();
  const uint32_t slots = request(hello).hello_reply().node().cpu_slots_total();
  ASSERT_GT(slots, 0u);
  const std::string gate = dir_.path() + "/holder.go";
  auto commandRun = [](const std::string& name, uint32_t ranks, const std::string& script) {
    v1::Envelope envelope;
    auto* spec = envelope.mutable_launch_run()->mutable_spec();
    spec->set_name(name);
    spec->set_ranks_per_node(ranks);
    for (const std::string& arg : {std::string("sh"), std::string("-c"), script}) {
      spec->mutable_command()->add_argv(arg);
    }
    return envelope;
  };
  const v1::Envelope holder = request(
      commandRun("holder", slots, "while [ ! -e '" + gate + "' ]; do sleep 0.1; done"));
  ASSERT_TRUE(holder.has_launch_run_reply()) << holder.DebugString();
  EXPECT_EQ(holder.launch_run_reply().run().state(), v1::STARTING);
  const v1::Envelope waiting = request(commandRun("waiting", 1, "echo queued run ran"));
  ASSERT_TRUE(waiting.has_launch_run_reply()) << waiting.DebugString();
  const v1::RunInfo& queued = waiting.launch_run_reply().run();
  ASSERT_EQ(queued.state(), v1::QUEUED);
  EXPECT_EQ(queued.queue_position(), 1u);
  EXPECT_NE(queued.waiting_reason().find("held by run " + holder.launch_run_reply().run().run_id() +
                                         " (holder)"),
            std::string::npos)
      << queued.waiting_reason();

  agent_->kill9();
  agent_ = std::make_unique<AgentProcess>(state_, dir_.path());
  connect();
  v1::Envelope list;
  list.mutable_list_runs();
  bool stillQueued = false;
  const v1::Envelope listed = request(list);
  for (const v1::RunInfo& run : listed.list_runs_reply().runs()) {
    if (run.run_id() == queued.run_id()) stillQueued = run.state() == v1::QUEUED;
  }
  EXPECT_TRUE(stillQueued) << "the queued run did not wait for the held slots after the restart";
  std::ofstream(gate) << "go\n";
  const v1::RunInfo ran = waitForState(queued.run_id(), {v1::COMPLETED, v1::FAILED, v1::STOPPED});
  ASSERT_EQ(ran.state(), v1::COMPLETED) << ran.reason();
  EXPECT_NE(readFile(ran.run_dir() + "/stdout.log").find("queued run ran"), std::string::npos);
  int starts = 0;
  v1::Envelope fetch;
  fetch.mutable_fetch_run_data()->set_run_id(queued.run_id());
  const v1::Envelope fetched = request(fetch);
  for (const auto& event : fetched.fetch_run_data_reply().states()) {
    starts += event.run().state() == v1::STARTING ? 1 : 0;
  }
  EXPECT_EQ(starts, 1);
}

TEST_F(AgentProcessTest, CustomCommandReportsMetricsAsJsonLines) {
  v1::Envelope envelope;
  auto* spec = envelope.mutable_launch_run()->mutable_spec();
  spec->set_name("custom");
  spec->set_ranks_per_node(1);
  for (const char* arg :
       {"sh", "-c",
        R"(echo '{"type":"metrics","step":3,"epoch":0,"time":1.5,"metrics":{"train/loss":0.25,)"
        R"("custom/score":7}}'; echo 'plain progress line'; echo 'a warning' >&2)"}) {
    spec->mutable_command()->add_argv(arg);
  }
  const v1::Envelope reply = request(envelope);
  ASSERT_TRUE(reply.has_launch_run_reply()) << reply.DebugString();
  const std::string runId = reply.launch_run_reply().run().run_id();
  const v1::RunInfo run = waitForState(runId, {v1::COMPLETED, v1::FAILED});
  ASSERT_EQ(run.state(), v1::COMPLETED) << run.reason();
  // The last lines reach the journal on the agent's next poll after the state change.
  Fetched all;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  do {
    all = fetchAll(runId);
    if (all.samples.size() >= 2) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  } while (std::chrono::steady_clock::now() < deadline);
  ASSERT_EQ(all.samples.size(), 2u);
  std::map<std::string, double> values;
  for (const auto& sample : all.samples) {
    values[sample.name()] = sample.value();
    EXPECT_EQ(sample.step(), 3);
    EXPECT_EQ(sample.rank(), -1);
  }
  EXPECT_EQ(values["train/loss"], 0.25);
  EXPECT_EQ(values["custom/score"], 7.0);
  expectGapFree(all.seqs);

  v1::Envelope tail;
  tail.mutable_tail_log()->set_run_id(runId);
  const v1::Envelope logs = request(tail);
  std::string text;
  for (const auto& line : logs.tail_log_reply().lines())
    text += line.stream() + ":" + line.text() + "\n";
  EXPECT_NE(text.find("stdout:[rank 0] plain progress line"), std::string::npos) << text;
  EXPECT_NE(text.find("stderr:[rank 0] a warning"), std::string::npos) << text;
}

TEST(AgentOptionsTest, AuthorizeAndRevokeTakeAKeyStartingWithADash) {
  // About 1 in 85 Z85 keys starts with '-'; a command line parser must not take it for options.
  std::string key;
  for (int i = 0; i < 100'000 && key.empty(); ++i) {
    auto keys = curve::generateKeyPair();
    ASSERT_TRUE(keys.isOk());
    if (keys->publicKey.front() == '-') key = keys->publicKey;
  }
  ASSERT_FALSE(key.empty());
  TempDir dir;
  const std::string state = dir.path() + "/s";
  ProcessResult authorized =
      runProcess({ringside::test::agentBin(), "--state-dir", state, "authorize", key}, dir.path(), 30);
  ASSERT_EQ(authorized.exitCode, 0) << authorized.err;
  EXPECT_NE(authorized.out.find("authorized " + key), std::string::npos) << authorized.out;
  curve::Allowlist allowlist;
  ASSERT_TRUE(allowlist.load(state + "/allowlist").isOk());
  EXPECT_TRUE(allowlist.contains(key));
  // The explicit form still works.
  ProcessResult revoked =
      runProcess({ringside::test::agentBin(), "--state-dir", state, "revoke", "--", key}, dir.path(), 30);
  ASSERT_EQ(revoked.exitCode, 0) << revoked.err;
  ASSERT_TRUE(allowlist.load(state + "/allowlist").isOk());
  EXPECT_FALSE(allowlist.contains(key));
}

TEST(AgentOptionsTest, InsecureIsRefusedOffLoopback) {
  TempDir dir;
  ProcessResult run = runProcess(
      {ringside::test::agentBin(), "--state-dir", dir.path() + "/s", "--listen", "0.0.0.0", "--insecure"},
      dir.path(), 30);
  EXPECT_EQ(run.exitCode, 1);
  EXPECT_NE(run.err.find("loopback only"), std::string::npos) << run.err;
}

// --retention-max-runs bounds the journal by count. An agent started on a
// journal of 5 ended runs keeps and lists the 2 that ended last, and says what it deleted.
TEST_F(AgentProcessTest, RetentionMaxRunsKeepsTheLatestEndedRuns) {
  agent_->kill9();
  agent_.reset();
  {
    auto journal = Journal::open(state_ + "/journal.sqlite");
    ASSERT_TRUE(journal.isOk()) << journal.status().toString();
    for (int i = 0; i < 5; ++i) {
      v1::RunInfo info;
      info.set_run_id("ended-" + std::to_string(i));
      info.set_state(v1::COMPLETED);
      info.set_created_time(1000 + i);
      info.set_end_time(2000 + i);
      ASSERT_TRUE((*journal)->upsertRun(info).isOk());
    }
  }
  agent_ = std::make_unique<AgentProcess>(state_, dir_.path(),
                                          std::vector<std::string>{"--retention-max-runs", "2"});
  connect();
  v1::Envelope list;
  list.mutable_list_runs()->set_include_ended(true);
  const v1::Envelope reply = request(list);
  ASSERT_TRUE(reply.has_list_runs_reply()) << reply.DebugString();
  std::vector<std::string> listed;
  for (const v1::RunInfo& run : reply.list_runs_reply().runs()) listed.push_back(run.run_id());
  EXPECT_EQ(listed, (std::vector<std::string>{"ended-3", "ended-4"}));
  EXPECT_NE(agent_->errors().find("retention deleted 3 ended run(s) beyond the newest 2"),
            std::string::npos)
      << agent_->errors();
}

}  // namespace
}  // namespace ringside::agent
