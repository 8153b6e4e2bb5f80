// The end of a run as the real agent journals it: the final state comes
// after every sample of the run, also after an agent restart that recovered samples from the
// run's stdout.log, and after it the run takes no sample on ranks.sock, whatever the connection;
// samples of ranks outside the world size or with steps outside 0 to 2^53 are refused, counted
// and reported; a trainer run's metrics records are journaled once, as samples, not also as log
// lines.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "agent_fixture.h"
#include "ringside/agent/log_tailer.h"
#include "ringside/common/run_limits.h"

namespace ringside::agent {
namespace {

namespace fs = std::filesystem;

class RunEndTest : public AgentProcessTest {
 protected:
  // Every entry of a run by kind, page after page, with the seq of its first final state.
  struct Journaled {
    std::vector<v1::MetricSample> samples;
    std::vector<v1::LogLine> lines;
    uint64_t finalStateSeq = 0;  // 0: none
    uint64_t lastSeq = 0;
  };
  Journaled fetchRun(const std::string& runId) {
    Journaled all;
    uint64_t after = 0;
    bool more = true;
    while (more) {
      v1::Envelope envelope;
      envelope.mutable_fetch_run_data()->set_run_id(runId);
      envelope.mutable_fetch_run_data()->set_after_seq(after);
      const auto page = request(envelope).fetch_run_data_reply();
      all.samples.insert(all.samples.end(), page.samples().begin(), page.samples().end());
      all.lines.insert(all.lines.end(), page.log_lines().begin(), page.log_lines().end());
      for (const auto& state : page.states()) {
        const v1::RunState s = state.run().state();
        const bool ended = s == v1::COMPLETED || s == v1::FAILED || s == v1::STOPPED;
        if (ended && all.finalStateSeq == 0) all.finalStateSeq = state.seq();
      }
      after = page.last_seq();
      all.lastSeq = std::max(all.lastSeq, after);
      more = page.more();
    }
    return all;
  }

  // A custom command of `ranks` ranks on this node that sleeps `seconds`.
  v1::RunInfo launchSleep(int ranks, int seconds) {
    v1::Envelope envelope;
    auto* spec = envelope.mutable_launch_run()->mutable_spec();
    spec->set_name("sleeper");
    spec->set_ranks_per_node(static_cast<uint32_t>(ranks));
    spec->mutable_command()->add_argv("sleep");
    spec->mutable_command()->add_argv(std::to_string(seconds));
    const v1::Envelope reply = request(envelope);
    EXPECT_TRUE(reply.has_launch_run_reply()) << reply.DebugString();
    return reply.launch_run_reply().run();
  }

  static v1::RankMetrics batch(const std::string& runId, int rank, uint64_t batchSeq,
                               std::vector<std::pair<int64_t, double>> points) {
    v1::RankMetrics metrics;
    metrics.set_run_id(runId);
    metrics.set_rank(rank);
    metrics.set_batch_seq(batchSeq);
    for (const auto& [step, value] : points) {
      v1::RankMetricPoint* point = metrics.add_points();
      point->set_name("train/loss");
      point->set_step(step);
      point->set_value(value);
      point->set_wall_time(1.7e9);
    }
    return metrics;
  }

  static void push(zmq::socket_t& socket, const v1::RankMetrics& metrics) {
    v1::Envelope envelope = protocol::newEnvelope(0);
    *envelope.mutable_rank_metrics() = metrics;
    ASSERT_TRUE(socket.send(zmq::buffer(protocol::encodeEnvelope(envelope))));
  }

  // A connection to the agent's ipc:// rank socket as a rank of `runId` makes it: with the run's
  // own CURVE key, from its run directory (the agent takes a run's messages only with its key).
  zmq::socket_t ranksSocket(const std::string& runId) {
    zmq::socket_t socket(context_, zmq::socket_type::push);
    socket.set(zmq::sockopt::linger, 1000);
    auto keys = curve::readKeyPairFromSecretFile(state_ + "/runs/" + runId + "/rank.key_secret");
    EXPECT_TRUE(keys.isOk()) << keys.status().toString();
    if (keys.isOk()) EXPECT_TRUE(curve::configureClient(socket, *keys, agentKey_).isOk());
    socket.connect("ipc://" + state_ + "/run/ranks.sock");
    return socket;
  }

  // Waits until the agent's log holds `text` (or 20 s pass); true when it does.
  bool agentLogs(const std::string& text) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < deadline) {
      if (agent_->errors().find(text) != std::string::npos) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }
};

// On ranks.sock a completed 2-rank run accepted rank 5, step 1e15 and a NaN loss,
// and a connection opened during a run kept journaling after the run ended.
TEST_F(RunEndTest, EndedRunsJournalStillTookSamplesOnTheRanksSocket) {
  const v1::RunInfo launched = launchSleep(2, 4);
  waitForState(launched.run_id(), {v1::RUNNING});
  const std::string runId = launched.run_id();
  zmq::socket_t during = ranksSocket(runId);
  push(during, batch(runId, 5, 1, {{1, 0.5}}));  // no rank 5 in a 2-rank run
  push(during, batch(runId, 1, 1,
                     {{3, std::nan("")},              // a NaN loss is a value
                      {-1, 0.25},                     // refused: negative step
                      {kMaxMetricStep + 1, 0.25}}));  // refused: past 2^53
  push(during, batch(runId, 0, 1, {{3, 0.75}}));
  ASSERT_TRUE(agentLogs("refused 1 metric sample for run " + runId +
                        " (1 so far): rank 5 is "
                        "outside the run's world size 2 (ranks 0 to 1)"))
      << agent_->errors();

  const v1::RunInfo run = waitForState(runId, {v1::COMPLETED, v1::FAILED});
  ASSERT_EQ(run.state(), v1::COMPLETED) << run.reason();
  // After the end: on the connection opened during the run, and on a new one.
  push(during, batch(runId, 0, 2, {{4, 0.5}}));
  zmq::socket_t after = ranksSocket(runId);
  push(after, batch(runId, 1, 2, {{4, 0.5}}));
  EXPECT_TRUE(agentLogs("has ended (COMPLETED): the journal takes no more samples for it"))
      << agent_->errors();

  const Journaled all = fetchRun(runId);
  ASSERT_EQ(all.samples.size(), 2u);
  EXPECT_EQ(all.samples[0].rank(), 1);
  EXPECT_TRUE(std::isnan(all.samples[0].value()));
  EXPECT_EQ(all.samples[1].rank(), 0);
  EXPECT_EQ(all.samples[1].value(), 0.75);
  EXPECT_EQ(all.finalStateSeq, all.lastSeq) << "nothing after the final state";
  // The refusals during the run are in the run's own log too.
  std::string notes;
  for (const auto& line : all.lines) notes += line.text() + "\n";
  EXPECT_NE(notes.find("[ringside-agent: refused 1 metric sample for run " + runId),
            std::string::npos)
      << notes;
}

// Kill -9 of the owner agent through the run's end, restart: every sample was
// kept, thousands recovered from stdout.log, but journaled after the COMPLETED event, so a client
// that stops reading at the final state missed them.
TEST_F(RunEndTest, RecoveredSamplesWereJournaledAfterTheFinalState) {
  nlohmann::json config = smallRun(3);
  config["train_samples"] = 10000;
  config["log_every"] = 1;  // many points, so that many are still queued when the run ends
  const v1::RunInfo launched = launch(config);
  waitForState(launched.run_id(), {v1::RUNNING});
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  agent_->kill9();
  const std::string exitStatus = launched.run_dir() + "/exit_status";
  const auto ended = std::chrono::steady_clock::now() + std::chrono::seconds(180);
  while (!fs::exists(exitStatus) && std::chrono::steady_clock::now() < ended) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(fs::exists(exitStatus)) << "the run did not end";

  agent_ = std::make_unique<AgentProcess>(state_, dir_.path());
  connect();
  const v1::RunInfo run = waitForState(launched.run_id(), {v1::COMPLETED, v1::FAILED});
  ASSERT_EQ(run.state(), v1::COMPLETED) << run.reason();
  // Once the final state is listed, everything is in: no waiting for a tail.
  const Journaled all = fetchRun(run.run_id());
  ASSERT_NE(all.finalStateSeq, 0u);
  EXPECT_EQ(all.samples.size(), pointsInStdout(run.run_dir())) << "every printed sample";
  EXPECT_NE(agent_->errors().find("metric samples from this run's stdout.log"), std::string::npos)
      << agent_->errors();
  size_t late = 0;
  for (const auto& sample : all.samples) late += sample.seq() > all.finalStateSeq ? 1 : 0;
  EXPECT_EQ(late, 0u) << "samples journaled after the final state (seq " << all.finalStateSeq
                      << ") of " << all.samples.size();
  bool noted = false;
  for (const auto& line : all.lines) {
    if (line.text().find("[ringside-agent: recovered ") == 0) {
      noted = true;
      EXPECT_LT(line.seq(), all.finalStateSeq) << "the recovery note comes before the end too";
    }
  }
  EXPECT_TRUE(noted);
}

// A trainer run's metrics records, printed by rank 0 for every rank at every
// logged step, were journaled as log lines beside the samples the ranks sent, so each sample was
// stored twice. Now the journal holds each printed sample once (as a sample), the log holds the
// other lines (start and end records) and one note, and stdout.log keeps every record.
TEST_F(RunEndTest, TrainerMetricsLinesWereJournaledTwice) {
  nlohmann::json config = smallRun(1);
  const v1::RunInfo launched = launch(config);
  const v1::RunInfo run = waitForState(launched.run_id(), {v1::COMPLETED, v1::FAILED});
  ASSERT_EQ(run.state(), v1::COMPLETED) << run.reason();
  const Journaled all = fetchRun(run.run_id());
  const size_t printed = pointsInStdout(run.run_dir());
  ASSERT_GT(printed, 100u) << "rank 0 printed every rank's records in stdout.log";
  size_t sent = 0;  // the agent's own straggler verdicts are not printed
  for (const auto& sample : all.samples) sent += sample.name().starts_with("straggler/") ? 0 : 1;
  EXPECT_EQ(sent, printed) << "every printed sample journaled once, as a sample";
  size_t records = 0;
  size_t notes = 0;
  size_t startOrEnd = 0;
  std::string texts;
  for (const auto& line : all.lines) {
    texts += line.text() + "\n";
    const std::string& text = line.text();
    // "[rank N] " as the agent writes mpirun's tag (docs/protocol.md, Log lines).
    const size_t body = text.starts_with("[rank ") ? text.find("] ") + 2 : 0;
    records += isMetricsRecord(text.substr(body)) ? 1 : 0;
    notes += text.starts_with("[ringside-agent: the trainer's metrics records on stdout") ? 1 : 0;
    const auto record = nlohmann::json::parse(text.substr(body), nullptr, false);
    if (record.is_object()) {
      const std::string type = record.value("type", "");
      startOrEnd += type == "start" || type == "end" ? 1 : 0;
    }
  }
  EXPECT_EQ(records, 0u) << texts;
  EXPECT_EQ(notes, 1u) << texts;
  EXPECT_EQ(startOrEnd, 2u) << "the start and end records are still lines\n" << texts;
}

}  // namespace
}  // namespace ringside::agent
