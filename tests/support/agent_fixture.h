// A real ringside-agent in a temporary directory and an authorized CURVE client of it: the
// fixture of the agent's end-to-end tests (tests/agent/*_process_test.cpp).
//
// Thread-safety: a test's own thread only.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>
#include <zmq.hpp>

#include "build_paths.h"
#include "ringside/common/agent_ready.h"
#include "ringside/common/allowlist.h"
#include "ringside/common/curve.h"
#include "ringside/common/metric_names.h"
#include "ringside/common/protocol.h"
#include "ringside/common/rank_tag.h"
#include "ringside/common/run_spec.h"
#include "test_util.h"

namespace ringside::agent {

using trainer::ChildProcess;
using trainer::ProcessResult;
using trainer::runProcess;
using trainer::TempDir;

inline const std::vector<std::string> kEnv = {"OMPI_ALLOW_RUN_AS_ROOT=1",
                                              "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
                                              "OMPI_MCA_rmaps_base_oversubscribe=1"};

inline std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A running agent with a state directory that outlives restarts.
class AgentProcess {
 public:
  // `extraArgs` go after the fixture's own options (e.g. {"--launcher", "false"}).
  // `wrapper`: a command the agent runs under (e.g. {"prlimit", "--nofile=1024:1024", "--"}).
  AgentProcess(const std::string& stateDir, const std::string& workDir,
               const std::vector<std::string>& extraArgs = {},
               const std::string& readyName = "agent.ready.json",
               const std::vector<std::string>& wrapper = {}) {
    const std::string readyFile = workDir + "/" + readyName;
    std::filesystem::remove(readyFile);
    std::vector<std::string> argv = {ringside::test::agentBin(),
                                     "--state-dir",
                                     stateDir,
                                     "--control-port",
                                     "0",
                                     "--events-port",
                                     "0",
                                     "--telemetry-interval",
                                     "0.2",
                                     "--trainer",
                                     ringside::test::trainerBin(),
                                     "--mpirun",
                                     ringside::test::mpiexec(),
                                     "--stop-grace",
                                     "20",
                                     "--ready-file",
                                     readyFile};
    argv.insert(argv.end(), extraArgs.begin(), extraArgs.end());
    argv.insert(argv.begin(), wrapper.begin(), wrapper.end());
    process_ = std::make_unique<ChildProcess>(argv, workDir, kEnv);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline) {
      const Result<v1::AgentReady> ready = readAgentReady(readyFile);
      if (ready.isOk()) {
        control_ = ready->control_endpoint();
        events_ = ready->events_endpoint();
        ready_ = *ready;
        return;
      }
      if (ready.status().code() != Status::Code::kNotFound) {
        ADD_FAILURE() << ready.status().toString();
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ADD_FAILURE() << "agent did not start:\n" << process_->errorSoFar();
  }
  void kill9() {
    ::kill(process_->pid(), SIGKILL);
    process_->wait(10);
  }
  pid_t pid() const { return process_->pid(); }
  const std::string& control() const { return control_; }
  std::string errors() const { return process_->errorSoFar(); }
  const std::string& events() const { return events_; }
  const v1::AgentReady& ready() const { return ready_; }

 private:
  std::unique_ptr<ChildProcess> process_;
  std::string control_, events_;
  v1::AgentReady ready_;
};

class AgentProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    state_ = dir_.path() + "/state";
    auto keys = curve::generateKeyPair();
    ASSERT_TRUE(keys.isOk());
    clientKeys_ = *keys;
    ProcessResult authorized =
        runProcess({ringside::test::agentBin(), "--state-dir", state_, "authorize", clientKeys_.publicKey},
                   dir_.path(), 30);
    ASSERT_EQ(authorized.exitCode, 0) << authorized.err;
    ProcessResult key = runProcess({ringside::test::agentBin(), "--state-dir", state_, "print-public-key"},
                                   dir_.path(), 30);
    ASSERT_EQ(key.exitCode, 0) << key.err;
    agentKey_ = key.out.substr(0, curve::kKeyTextLength);
    agent_ = std::make_unique<AgentProcess>(state_, dir_.path(), agentArgs(), "agent.ready.json",
                                            agentWrapper());
    connect();
  }

  // Options a test suite adds to the agent's command line.
  virtual std::vector<std::string> agentArgs() const { return {}; }
  // The command a test suite runs the agent under (AgentProcess's `wrapper`).
  virtual std::vector<std::string> agentWrapper() const { return {}; }

  void connect() {
    dealer_ = zmq::socket_t(context_, zmq::socket_type::dealer);
    sub_ = zmq::socket_t(context_, zmq::socket_type::sub);
    for (zmq::socket_t* socket : {&dealer_, &sub_}) {
      socket->set(zmq::sockopt::linger, 0);
      ASSERT_TRUE(curve::configureClient(*socket, clientKeys_, agentKey_).isOk());
    }
    sub_.set(zmq::sockopt::subscribe, "");
    dealer_.connect(agent_->control());
    sub_.connect(agent_->events());
  }

  // Sends a request and returns its reply (or fails the test after 10 s).
  v1::Envelope request(v1::Envelope envelope) {
    envelope.set_protocol_version(protocol::kProtocolVersion);
    envelope.set_request_id(++requestId_);
    dealer_.send(zmq::buffer(protocol::encodeEnvelope(envelope)));
    return receiveReply(requestId_);
  }

  v1::Envelope receiveReply(uint64_t id, int timeoutMs = 10000) {
    zmq::pollitem_t item{dealer_.handle(), 0, ZMQ_POLLIN, 0};
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
    while (std::chrono::steady_clock::now() < deadline) {
      if (zmq::poll(&item, 1, std::chrono::milliseconds(100)) == 0) continue;
      zmq::message_t message;
      (void)dealer_.recv(message);
      auto reply = protocol::decodeEnvelope(message.data(), message.size());
      if (reply.isOk() && reply->request_id() == id) return *reply;
    }
    ADD_FAILURE() << "no reply to request " << id;
    return {};
  }

  v1::RunInfo launch(const nlohmann::json& config) {
    v1::Envelope envelope;
    auto* spec = envelope.mutable_launch_run()->mutable_spec();
    spec->set_name("e2e");
    spec->set_ranks_per_node(2);
    auto typed = trainerConfigFromJson(config.dump());
    EXPECT_TRUE(typed.isOk()) << typed.status().toString();
    if (typed.isOk()) *spec->mutable_trainer()->mutable_config() = *typed;
    v1::Envelope reply = request(envelope);
    EXPECT_TRUE(reply.has_launch_run_reply()) << reply.DebugString();
    return reply.launch_run_reply().run();
  }

  static nlohmann::json smallRun(int epochs) {
    return {{"backend", "mpi"},     {"epochs", epochs}, {"train_samples", 5000},
            {"test_samples", 1000}, {"log_every", 5},   {"quiet", true}};
  }

  // The run as list_runs reports it, page after page (ListRunsReply.next_page_token).
  v1::RunInfo findRun(const std::string& runId) {
    std::string token;
    do {
      v1::Envelope envelope;
      envelope.mutable_list_runs()->set_include_ended(true);
      envelope.mutable_list_runs()->set_page_token(token);
      const v1::Envelope reply = request(envelope);  // keep it alive for the loop
      for (const auto& run : reply.list_runs_reply().runs()) {
        if (run.run_id() == runId) return run;
      }
      token = reply.list_runs_reply().next_page_token();
    } while (!token.empty());
    ADD_FAILURE() << "run " << runId << " not listed";
    return {};
  }

  v1::RunInfo waitForState(const std::string& runId, std::set<v1::RunState> states,
                           int seconds = 180) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    v1::RunInfo run;
    while (std::chrono::steady_clock::now() < deadline) {
      run = findRun(runId);
      if (states.contains(run.state())) return run;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ADD_FAILURE() << "run " << runId << " stayed " << v1::RunState_Name(run.state());
    return run;
  }

  // Every journaled entry of a run, fetched page by page from seq 0.
  struct Fetched {
    std::vector<v1::MetricSample> samples;   // what the ranks sent
    std::vector<v1::MetricSample> verdicts;  // the agent's own (metric::isAgentVerdict)
    std::vector<uint64_t> seqs;              // all kinds
  };
  Fetched fetchAll(const std::string& runId) {
    Fetched all;
    uint64_t after = 0;
    bool more = true;
    while (more) {
      v1::Envelope envelope;
      envelope.mutable_fetch_run_data()->set_run_id(runId);
      envelope.mutable_fetch_run_data()->set_after_seq(after);
      envelope.mutable_fetch_run_data()->set_max_entries(997);
      const auto page = request(envelope).fetch_run_data_reply();
      for (const auto& s : page.samples()) {
        (metric::isAgentVerdict(s.name()) ? all.verdicts : all.samples).push_back(s);
        all.seqs.push_back(s.seq());
      }
      for (const auto& l : page.log_lines()) all.seqs.push_back(l.seq());
      for (const auto& e : page.states()) all.seqs.push_back(e.seq());
      after = page.last_seq();
      more = page.more();
    }
    std::sort(all.seqs.begin(), all.seqs.end());
    return all;
  }

  // The metric points the ranks sent, counted from the trainer's own stdout: every value of a
  // global record (rank 0 sends those), of a per-rank record (that rank sends its own), and the
  // start record's total_steps and steps_per_epoch (rank 0 sends them as run/ samples).
  static size_t pointsInStdout(const std::string& runDir) {
    size_t points = 0;
    std::istringstream lines(readFile(runDir + "/stdout.log"));
    std::string line;
    while (std::getline(lines, line)) {
      // Rank 0's lines, tagged by mpirun --tag-output (common/rank_tag.h).
      auto record = nlohmann::json::parse(textWithoutRankTags(line), nullptr, false);
      if (record.is_discarded()) continue;
      if (record.value("type", "") == "metrics") points += record["metrics"].size();
      if (record.value("type", "") == "start") points += 2;
    }
    return points;
  }

  static void expectGapFree(const std::vector<uint64_t>& seqs) {
    ASSERT_FALSE(seqs.empty());
    for (size_t i = 0; i < seqs.size(); ++i) {
      ASSERT_EQ(seqs[i], i + 1) << "sequence numbers must run 1, 2, 3, ... without a gap";
    }
  }

  TempDir dir_;
  std::string state_;
  curve::KeyPair clientKeys_;
  std::string agentKey_;
  std::unique_ptr<AgentProcess> agent_;
  zmq::context_t context_;
  zmq::socket_t dealer_, sub_;
  uint64_t requestId_ = 0;
};

}  // namespace ringside::agent
