// Against the real agent: what a hostile or unlucky input does to it. Each test is named
// for the failure it pins; the agent must answer, survive and keep what it journaled.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>
#include <zmq_addon.hpp>

#include "agent_fixture.h"
#include "build_paths.h"
#include "ringside/common/json_limits.h"
#include "ringside/common/protocol.h"

namespace ringside::agent {
namespace {

namespace fs = std::filesystem;

unsigned modeOf(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 ? info.st_mode & 07777 : 0u;
}

class HostileInputTest : public AgentProcessTest {
 protected:
  // Launches `sh -c script` as a one-rank custom command; the reply (a run or an error).
  v1::Envelope launchShell(const std::string& script,
                           const std::map<std::string, std::string>& env = {}) {
    v1::Envelope envelope;
    auto* spec = envelope.mutable_launch_run()->mutable_spec();
    spec->set_name("hostile");
    spec->set_ranks_per_node(1);
    for (const std::string& arg : {std::string("sh"), std::string("-c"), script}) {
      spec->mutable_command()->add_argv(arg);
    }
    for (const auto& [name, value] : env) (*spec->mutable_env())[name] = value;
    return request(envelope);
  }

  // Launches `script`, waits until it completed, and returns everything journaled for it once
  // at least `samples` samples and a log line containing `lastLine` are there.
  struct Journaled {
    v1::RunInfo run;
    std::vector<v1::MetricSample> samples;
    std::vector<v1::LogLine> lines;
  };
  Journaled runToCompletion(const std::string& script, size_t samples,
                            const std::string& lastLine) {
    Journaled out;
    const v1::Envelope reply = launchShell(script);
    EXPECT_TRUE(reply.has_launch_run_reply()) << reply.DebugString();
    if (!reply.has_launch_run_reply()) return out;
    const std::string runId = reply.launch_run_reply().run().run_id();
    out.run = waitForState(runId, {v1::COMPLETED, v1::FAILED, v1::STOPPED});
    EXPECT_EQ(out.run.state(), v1::COMPLETED) << out.run.reason();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
    do {
      out.samples.clear();
      out.lines.clear();
      uint64_t after = 0;
      bool more = true;
      while (more) {
        v1::Envelope fetch;
        fetch.mutable_fetch_run_data()->set_run_id(runId);
        fetch.mutable_fetch_run_data()->set_after_seq(after);
        const v1::Envelope page = request(fetch);  // fails the test if it does not decode
        if (!page.has_fetch_run_data_reply()) {
          ADD_FAILURE() << page.DebugString();
          return out;
        }
        const auto& data = page.fetch_run_data_reply();
        out.samples.insert(out.samples.end(), data.samples().begin(), data.samples().end());
        out.lines.insert(out.lines.end(), data.log_lines().begin(), data.log_lines().end());
        after = data.last_seq();
        more = data.more();
      }
      bool sawLast = false;
      // One rank: its lines carry "[rank 0] " (mpirun --tag-output, docs/protocol.md#log-lines).
      for (const auto& line : out.lines) sawLast |= line.text() == "[rank 0] " + lastLine;
      if (out.samples.size() >= samples && sawLast) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    } while (std::chrono::steady_clock::now() < deadline);
    return out;
  }

  void expectStillServing() {
    v1::Envelope hello;
    hello.mutable_hello();
    EXPECT_TRUE(request(hello).has_hello_reply()) << agent_->errors();
  }

  static std::string metricsEcho(int step) {
    return R"(echo '{"type":"metrics","step":)" + std::to_string(step) +
           R"(,"metrics":{"custom/score":)" + std::to_string(step) + "}}'; ";
  }
};

// Pointed at a mode-1777 directory, the agent chmod-ed it to 0700 (at /tmp that
// breaks every user). Now it refuses, says why, and leaves the mode as it was.
TEST(AgentStateDirTest, StateDirWritableByOthersIsRefusedAndLeftUnchanged) {
  TempDir dir;
  const std::string shared = dir.path() + "/shared";
  fs::create_directory(shared);
  ASSERT_EQ(::chmod(shared.c_str(), 01777), 0);
  for (const std::vector<std::string>& argv :
       {std::vector<std::string>{ringside::test::agentBin(), "--state-dir", shared, "--control-port", "0",
                                 "--events-port", "0"},
        std::vector<std::string>{ringside::test::agentBin(), "--state-dir", shared, "print-public-key"}}) {
    const ProcessResult run = runProcess(argv, dir.path(), 30, kEnv);
    EXPECT_EQ(run.exitCode, 1) << run.err;
    EXPECT_NE(run.err.find("--state-dir " + shared + " is writable by other users (mode 1777)"),
              std::string::npos)
        << run.err;
    EXPECT_EQ(modeOf(shared), 01777u) << "the agent must not change a directory it refuses";
    EXPECT_TRUE(fs::is_empty(shared)) << "nothing was written into it";
  }
}

// The fixture's state directory did not exist: `authorize` and the agent create it (and its
// runtime directory) mode 0700.
TEST_F(HostileInputTest, MissingStateDirIsCreatedMode0700) {
  EXPECT_EQ(modeOf(state_), 0700u);
  EXPECT_EQ(modeOf(state_ + "/run"), 0700u);
}

// A 200 KB config_json nested 100,000 levels deep crashed the agent. Now it is
// INVALID_ARGUMENT naming the bound, nothing is started, and the agent goes on serving.
TEST_F(HostileInputTest, DeeplyNestedConfigJsonIsInvalidArgumentNotACrash) {
  std::string deepList = R"({"hidden": )";
  std::string deepObject = R"({"data": )";
  for (int i = 0; i < 100'000; ++i) {
    deepList += "[";
    deepObject += R"({"a": )";
  }
  deepList += std::string(100'000, ']') + "}";
  deepObject += "1" + std::string(100'000, '}') + "}";
  for (const std::string& json : {deepList, deepObject}) {
    v1::Envelope envelope;
    auto* spec = envelope.mutable_launch_run()->mutable_spec();
    spec->set_ranks_per_node(1);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    spec->mutable_trainer()->set_config_json(json);
#pragma GCC diagnostic pop
    const v1::Envelope reply = request(envelope);
    ASSERT_TRUE(reply.has_error()) << reply.DebugString().substr(0, 500);
    EXPECT_EQ(reply.error().code(), v1::ErrorReply::INVALID_ARGUMENT);
    EXPECT_NE(reply.error().message().find(std::to_string(kMaxJsonDepth) + " levels"),
              std::string::npos)
        << reply.error().message();
  }
  expectStillServing();
  std::error_code ec;
  EXPECT_TRUE(!fs::exists(state_ + "/runs", ec) || fs::is_empty(state_ + "/runs", ec))
      << "no run directory, no spec.json";
}

// A custom command printing {"type":5,...} aborted the agent (type_error.302)
// and again after each restart. Now the line is skipped and noted once; the valid samples before
// and after it are journaled.
TEST_F(HostileInputTest, MalformedMetricsLineIsSkippedAndTheAgentSurvives) {
  const std::string script =
      metricsEcho(1) + R"(echo '{"type":5,"metrics":{"x":1}}'; )" + metricsEcho(2) +
      R"(echo '{"type":"metrics","step":"3","metrics":{"x":1}}'; )" +
      R"(echo '{"type":"metrics","metrics":{"x":[1,2,3]}}'; )" + metricsEcho(3) + "echo done";
  const Journaled journaled = runToCompletion(script, 3, "done");
  ASSERT_EQ(journaled.samples.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(journaled.samples[i].step(), static_cast<int64_t>(i + 1));
    EXPECT_EQ(journaled.samples[i].name(), "custom/score");
  }
  size_t notes = 0;
  for (const auto& line : journaled.lines) {
    notes += line.text().starts_with("[ringside-agent: skipped the metrics record above");
  }
  EXPECT_EQ(notes, 1u) << "three malformed records, one note in the run's log";
  expectStillServing();
}

// `printf 'caf\351\n'` made every fetch page holding the line undecodable
// (proto3 strings must be UTF-8). The journaled line carries U+FFFD instead of the byte.
TEST_F(HostileInputTest, NonUtf8OutputLineDecodesInFetchReplies) {
  const Journaled journaled = runToCompletion(R"(printf 'caf\351\n'; echo done)", 0, "done");
  bool found = false;
  for (const auto& line : journaled.lines) found |= line.text() == "[rank 0] caf\xEF\xBF\xBD";
  EXPECT_TRUE(found) << "the line arrives, its Latin-1 byte replaced by U+FFFD";
}

// The agent accepted a 16 MiB launch and then sent launch and list replies over
// 16 MiB and a 36 MB fetch page, which the GUI's socket dropped. Request fields are bounded (the
// same limits both ends), and every reply is paged by bytes.
TEST_F(HostileInputTest, RepliesStayUnderTheFrameLimitAndOversizedRequestFieldsAreRefused) {
  const v1::Envelope huge = launchShell("true " + std::string(15 << 20, 'x'));
  ASSERT_TRUE(huge.has_error()) << "a 15 MiB command word is refused";
  EXPECT_EQ(huge.error().code(), v1::ErrorReply::INVALID_ARGUMENT);
  EXPECT_NE(huge.error().message().find("a word of the command is 15728645 bytes"),
            std::string::npos)
      << huge.error().message();

  // 12 runs of ~0.9 MB records: one list reply would be 11 MB; pages keep each under 8 MiB.
  std::set<std::string> launched;
  for (int i = 0; i < 12; ++i) {
    v1::Envelope envelope;
    auto* spec = envelope.mutable_launch_run()->mutable_spec();
    spec->set_ranks_per_node(1);
    spec->mutable_command()->add_argv("true");
    for (int word = 0; word < 7; ++word) {
      spec->mutable_command()->add_argv(std::string(120 * 1024, static_cast<char>('a' + word)));
    }
    const v1::Envelope reply = request(envelope);
    ASSERT_TRUE(reply.has_launch_run_reply()) << reply.error().message();
    EXPECT_LT(reply.ByteSizeLong(), protocol::kMaxMessageBytes);
    launched.insert(reply.launch_run_reply().run().run_id());
    // Each run holds a slot until it ends; the node has as many as cores.
    waitForState(reply.launch_run_reply().run().run_id(),
                 {v1::COMPLETED, v1::FAILED, v1::STOPPED});
  }
  std::set<std::string> listed;
  std::string token;
  int pages = 0;
  do {
    v1::Envelope list;
    list.mutable_list_runs()->set_include_ended(true);
    list.mutable_list_runs()->set_page_token(token);
    const v1::Envelope reply = request(list);
    ASSERT_TRUE(reply.has_list_runs_reply()) << reply.DebugString().substr(0, 500);
    EXPECT_LE(reply.ByteSizeLong(), protocol::kMaxReplyPageBytes + 1024);
    for (const auto& run : reply.list_runs_reply().runs()) listed.insert(run.run_id());
    token = reply.list_runs_reply().next_page_token();
    ++pages;
  } while (!token.empty() && pages < 100);
  EXPECT_EQ(listed, launched);
  EXPECT_GE(pages, 2);

  // 300 lines of 100 KB (journaled cut to 64 KiB: 19 MB): fetch pages within the budget.
  const Journaled journaled = runToCompletion(
      "i=0; while [ $i -lt 300 ]; do head -c 100000 /dev/zero | tr '\\0' y; echo; "
      "i=$((i+1)); done; echo finished",
      0, "finished");
  size_t cut = 0;
  for (const auto& line : journaled.lines) cut += line.text().size() > 65536 ? 1 : 0;
  EXPECT_EQ(cut, 300u);
  v1::Envelope fetch;
  fetch.mutable_fetch_run_data()->set_run_id(journaled.run.run_id());
  fetch.mutable_fetch_run_data()->set_max_entries(50000);
  const v1::Envelope page = request(fetch);
  ASSERT_TRUE(page.has_fetch_run_data_reply());
  EXPECT_TRUE(page.fetch_run_data_reply().more());
  EXPECT_LE(page.ByteSizeLong(), protocol::kMaxReplyPageBytes + (1 << 20));
  expectStillServing();
}

// A 2.1 MB stdout line, then 3 metric lines: 0 samples and 0 log lines were
// journaled. Now the long line is cut and marked, and everything after it arrives.
TEST_F(HostileInputTest, TwoMegabyteLineDoesNotStopLogTailing) {
  const std::string script = "head -c 2100000 /dev/zero | tr '\\0' x; echo; " + metricsEcho(1) +
                             metricsEcho(2) + metricsEcho(3) + "echo after";
  const Journaled journaled = runToCompletion(script, 3, "after");
  EXPECT_EQ(journaled.samples.size(), 3u);
  // mpirun tags every 4 KiB block it forwards: the line is 2,100,000 bytes plus those tags in the
  // log file; the copies are taken out of the text that is kept.
  bool marked = false;
  // (std::regex recurses per character: no regex over a 64 KiB text.)
  const std::string head = "[rank 0] " + std::string(65536, 'x') + " [line truncated: ";
  const std::string tail = " bytes, kept the first 65536]";
  for (const auto& line : journaled.lines) {
    const std::string& text = line.text();
    if (!text.starts_with(head) || !text.ends_with(tail)) continue;
    const std::string bytes = text.substr(head.size(), text.size() - head.size() - tail.size());
    marked |= bytes.size() == 7 && bytes.starts_with("21") &&
              bytes.find_first_not_of("0123456789") == std::string::npos;
  }
  EXPECT_TRUE(marked);
  expectStillServing();
}

// A DEALER frame ["", envelope] was answered as if the empty frame were not
// there; docs/protocol.md#framing says a request is one frame and the empty frame is MALFORMED.
TEST_F(HostileInputTest, DealerDelimiterFrameIsMalformedAsTheProtocolDocSays) {
  v1::Envelope hello = protocol::newEnvelope(4242);
  hello.mutable_hello();
  const std::string frame = protocol::encodeEnvelope(hello);
  (void)dealer_.send(zmq::message_t(), zmq::send_flags::sndmore);
  (void)dealer_.send(zmq::buffer(frame));
  zmq::pollitem_t item{dealer_.handle(), 0, ZMQ_POLLIN, 0};
  ASSERT_EQ(zmq::poll(&item, 1, std::chrono::milliseconds(10000)), 1) << "no reply";
  std::vector<zmq::message_t> frames;
  ASSERT_TRUE(zmq::recv_multipart(dealer_, std::back_inserter(frames)));
  ASSERT_EQ(frames.size(), 1u) << "the reply is one frame, as every reply";
  auto reply = protocol::decodeEnvelope(frames[0].data(), frames[0].size());
  ASSERT_TRUE(reply.isOk()) << reply.status().toString();
  ASSERT_TRUE(reply->has_error()) << reply->DebugString();
  EXPECT_EQ(reply->error().code(), v1::ErrorReply::MALFORMED);
  EXPECT_EQ(reply->request_id(), 0u);
  EXPECT_NE(reply->error().message().find("empty delimiter frame"), std::string::npos)
      << reply->error().message();
  expectStillServing();
}

// grace_seconds=inf never escalated ("SIGKILL after -2147483648 s").
TEST_F(HostileInputTest, NonFiniteOrNegativeGraceSecondsIsInvalidArgument) {
  const v1::Envelope launched = launchShell("trap '' TERM; sleep 60");
  ASSERT_TRUE(launched.has_launch_run_reply()) << launched.DebugString();
  const std::string runId = launched.launch_run_reply().run().run_id();
  for (const double grace : std::initializer_list<double>{INFINITY, NAN, -1.0, 1e12}) {
    v1::Envelope stop;
    stop.mutable_stop_run()->set_run_id(runId);
    stop.mutable_stop_run()->set_grace_seconds(grace);
    const v1::Envelope reply = request(stop);
    EXPECT_EQ(reply.error().code(), v1::ErrorReply::INVALID_ARGUMENT) << grace;
    EXPECT_NE(reply.error().message().find("grace_seconds"), std::string::npos)
        << reply.error().message();
  }
  v1::Envelope stop;
  stop.mutable_stop_run()->set_run_id(runId);
  stop.mutable_stop_run()->set_grace_seconds(0.5);
  const v1::Envelope reply = request(stop);
  ASSERT_TRUE(reply.has_stop_run_reply()) << reply.DebugString();
  EXPECT_NE(reply.stop_run_reply().run().reason().find("SIGKILL after 0.5 s"), std::string::npos);
  const v1::RunInfo run = waitForState(runId, {v1::STOPPED, v1::FAILED, v1::COMPLETED}, 30);
  EXPECT_EQ(run.state(), v1::STOPPED);
  EXPECT_NE(run.reason().find("killed after the grace period"), std::string::npos) << run.reason();
}

// A run whose env overrode RINGSIDE_RUN_ID stayed STARTING and Stop signalled
// nothing. The agent's own variables are refused by name; host rank counts may not wrap around.
TEST_F(HostileInputTest, ReservedEnvVariablesAndOverflowingRankCountsAreRefused) {
  for (const char* name : {"RINGSIDE_RUN_ID", "RINGSIDE_AGENT_ENDPOINT", "CUDA_VISIBLE_DEVICES"}) {
    const v1::Envelope reply = launchShell("true", {{name, "0"}});
    EXPECT_EQ(reply.error().code(), v1::ErrorReply::INVALID_ARGUMENT) << name;
    EXPECT_NE(reply.error().message().find(std::string("env variable ") + name), std::string::npos)
        << reply.error().message();
  }
  v1::Envelope envelope;
  auto* spec = envelope.mutable_launch_run()->mutable_spec();
  spec->mutable_command()->add_argv("true");
  for (const uint32_t ranks : {UINT32_MAX, 2u}) {
    auto* host = spec->add_hosts();
    host->set_host("127.0.0.1");
    host->set_ranks(ranks);
  }
  const v1::Envelope reply = request(envelope);
  EXPECT_EQ(reply.error().code(), v1::ErrorReply::INVALID_ARGUMENT) << reply.DebugString();
  EXPECT_NE(reply.error().message().find("4294967297 ranks"), std::string::npos)
      << reply.error().message();
  expectStillServing();
}

// A run whose env sets PATH="" (its ranks' own business) broke the agent's shim, which then
// could not find `mv` for the exit status: the run failed "without an exit status". The shim and
// mpirun find their own commands on the agent's PATH; the ranks get the run's.
TEST_F(HostileInputTest, EmptyPathInTheRunsEnvDoesNotBreakTheAgentsShim) {
  v1::Envelope envelope;
  auto* spec = envelope.mutable_launch_run()->mutable_spec();
  spec->set_name("no-path");
  spec->set_ranks_per_node(1);
  // Exits 0 only when the rank got the run's PATH, empty: "" or, since mpirun run by its
  // absolute path acts as with --prefix and puts its own bin directory first, "/usr/bin:".
  for (const std::string& arg : {std::string("/bin/sh"), std::string("-c"),
                                 std::string("case \"$PATH\" in ''|*:) exit 0;; *) exit 7;; esac")}) {
    spec->mutable_command()->add_argv(arg);
  }
  (*spec->mutable_env())["PATH"] = "";
  const v1::Envelope reply = request(envelope);
  ASSERT_TRUE(reply.has_launch_run_reply()) << reply.DebugString();
  const v1::RunInfo run = waitForState(reply.launch_run_reply().run().run_id(),
                                       {v1::COMPLETED, v1::FAILED, v1::STOPPED});
  EXPECT_EQ(run.state(), v1::COMPLETED) << run.reason();
  EXPECT_EQ(run.exit_code(), 0);
}

}  // namespace
}  // namespace ringside::agent
