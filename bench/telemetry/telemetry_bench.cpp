// bench/telemetry: samples/s from simulated ranks through a real ringside-agent (ranks PULL ->
// journal -> events PUB) to a subscriber, with the ratio to raw batched SQLite inserts of the same
// rows measured in the same run. Checks the answer as nccl-tests' -c does: the subscriber must
// receive every sample with the values the ranks sent, and fetching the run from seq 0 must return
// every sample with gap-free seqs. bench/README.md has the command and figures.
//
// This file runs the benchmark; its parts are described in telemetry_bench.h.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <latch>
#include <optional>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "agent_harness.h"
#include "noise_meter.h"
#include "ringside/common/protocol.h"
#include "ringside/common/status.h"
#include "sqlite_reference.h"
#include "telemetry_bench.h"
#include "telemetry_stream.h"

namespace ringside::bench {
namespace {

constexpr uint32_t kFetchPageEntries = 50000;

// 1234567 -> "1,234,567".
std::string grouped(uint64_t value) {
  const std::string digits = std::to_string(value);
  std::string text;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) text += ',';
    text += digits[i];
  }
  return text;
}

// ---- The subscriber

struct SubscriberReport {
  uint64_t samples = 0;
  uint64_t otherEvents = 0;  // telemetry, run states, log lines, other runs
  std::vector<uint64_t> seqs;
  uint64_t errors = 0;
  std::string firstError;
  std::optional<Clock::time_point> lastSampleAt;  // when the expected count was reached
};

// Receives events until `expected` samples of `runId` arrived, `stop` is set or `deadline` passed.
SubscriberReport subscribe(zmq::socket_t& sub, const std::string& runId, int ranks,
                           uint64_t expected, const std::atomic<bool>& stop,
                           Clock::time_point deadline) {
  SubscriberReport report;
  report.seqs.reserve(expected);
  StreamChecker checker(ranks);
  zmq::pollitem_t item{sub.handle(), 0, ZMQ_POLLIN, 0};
  zmq::message_t message;
  while (checker.samples() < expected && !stop.load() && Clock::now() < deadline) {
    if (zmq::poll(&item, 1, kPollInterval) == 0) continue;
    while (checker.samples() < expected && sub.recv(message, zmq::recv_flags::dontwait)) {
      auto event = protocol::decodeEnvelope(message.data(), message.size());
      if (!event.isOk() || !event->has_metric_batch() || event->metric_batch().run_id() != runId) {
        ++report.otherEvents;
        continue;
      }
      for (const v1::MetricSample& sample : event->metric_batch().samples()) {
        checker.check(sample);
        report.seqs.push_back(sample.seq());
      }
    }
  }
  if (checker.samples() >= expected) report.lastSampleAt = Clock::now();
  report.samples = checker.samples();
  report.errors = checker.errors();
  report.firstError = checker.firstError();
  return report;
}

// Waits until the SUB socket receives any event (the agent publishes node telemetry every
// second), so that the subscription is in place before the ranks send.
bool waitForFirstEvent(zmq::socket_t& sub, std::chrono::seconds timeout) {
  zmq::pollitem_t item{sub.handle(), 0, ZMQ_POLLIN, 0};
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    if (zmq::poll(&item, 1, kPollInterval) > 0) return true;
  }
  return false;
}

// ---- Catch-up check: fetch_run_data from seq 0

struct FetchReport {
  uint64_t samples = 0;
  uint64_t entries = 0;  // samples + log lines + state events
  uint64_t lastSeq = 0;
  uint64_t pages = 0;
  bool gapFree = false;          // the union of all kinds is exactly 1..lastSeq
  bool sameAsPublished = false;  // the metric seqs equal the subscriber's
  uint64_t errors = 0;
  std::string firstError;
  double seconds = 0;
};

Result<FetchReport> fetchAll(ControlClient& control, const std::string& runId, int ranks,
                             const std::vector<uint64_t>& publishedSeqs) {
  FetchReport report;
  StreamChecker checker(ranks);
  std::vector<uint64_t> sampleSeqs, allSeqs;
  const auto start = Clock::now();
  uint64_t after = 0;
  bool more = true;
  while (more) {
    v1::Envelope envelope;
    envelope.mutable_fetch_run_data()->set_run_id(runId);
    envelope.mutable_fetch_run_data()->set_after_seq(after);
    envelope.mutable_fetch_run_data()->set_max_entries(kFetchPageEntries);
    auto reply = control.request(envelope);
    if (!reply.isOk()) return reply.status();
    const v1::FetchRunDataReply& page = reply->fetch_run_data_reply();
    for (const v1::MetricSample& sample : page.samples()) {
      checker.check(sample);
      sampleSeqs.push_back(sample.seq());
      allSeqs.push_back(sample.seq());
    }
    for (const v1::LogLine& line : page.log_lines()) allSeqs.push_back(line.seq());
    for (const v1::RunStateEvent& state : page.states()) allSeqs.push_back(state.seq());
    ++report.pages;
    if (page.last_seq() <= after && page.more()) {
      return Status::internal("fetch_run_data did not advance past seq " + std::to_string(after));
    }
    after = page.last_seq();
    more = page.more();
  }
  report.seconds = secondsSince(start);
  std::sort(allSeqs.begin(), allSeqs.end());
  report.samples = checker.samples();
  report.entries = allSeqs.size();
  report.lastSeq = after;
  report.gapFree = allSeqs.size() == after;
  for (size_t i = 0; report.gapFree && i < allSeqs.size(); ++i) {
    report.gapFree = allSeqs[i] == i + 1;
  }
  report.sameAsPublished = sampleSeqs == publishedSeqs;
  report.errors = checker.errors();
  report.firstError = checker.firstError();
  return report;
}

// ---- The run

int failWith(const Status& status) {
  std::fprintf(stderr, "telemetry_bench: %s\n", status.toString().c_str());
  return 1;
}

int runBenchmark(const Options& options) {
  // mpirun refuses root unless told (scripts/env.sh); the placeholder run needs one slot.
  if (::geteuid() == 0) {
    ::setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 0);
    ::setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 0);
  }
  ::setenv("OMPI_MCA_rmaps_base_oversubscribe", "1", 0);

  auto tempPath = makeTempDir();
  if (!tempPath.isOk()) return failWith(tempPath.status());
  TempDir temp{*tempPath, options.keepDir};
  const std::string stateDir = temp.path + "/state";

  AgentProcess agent;
  if (Status s = agent.start(options, stateDir, temp.path + "/agent.log"); !s.isOk()) {
    return failWith(s);
  }
  zmq::context_t context;
  ControlClient control(context, agent.controlEndpoint());
  zmq::socket_t sub(context, zmq::socket_type::sub);
  sub.set(zmq::sockopt::linger, 0);
  sub.set(zmq::sockopt::rcvhwm, 0);  // the check is about the agent, not this process's queue
  sub.set(zmq::sockopt::subscribe, "");
  sub.connect(agent.eventsEndpoint());
  if (!waitForFirstEvent(sub, std::chrono::seconds(10))) {
    return failWith(Status::internal("no event from the agent's PUB within 10 s:\n" + agent.log()));
  }

  // The journal takes batches only for a run it knows, and only from its ranks (0 to its world
  // size - 1): a placeholder run of as many ranks as are simulated, each of which just sleeps.
  v1::Envelope launch;
  v1::RunSpec* spec = launch.mutable_launch_run()->mutable_spec();
  spec->set_name("telemetry-bench");
  spec->set_ranks_per_node(static_cast<uint32_t>(options.ranks));
  for (const char* arg : {"sleep", "600"}) spec->mutable_command()->add_argv(arg);
  auto launched = control.request(launch);
  if (!launched.isOk()) return failWith(launched.status());
  const std::string runId = launched->launch_run_reply().run().run_id();

  std::vector<std::vector<std::string>> messages(options.ranks);
  for (int rank = 0; rank < options.ranks; ++rank) {
    messages[rank] = encodeRankMessages(options, runId, rank);
  }

  // Ranks: one PUSH socket each, connected before the clock starts, blocking sends.
  std::latch go(1);
  std::vector<double> sendSeconds(options.ranks, 0);
  std::vector<std::string> sendErrors(options.ranks);
  Clock::time_point start;
  std::vector<std::thread> senders;
  for (int rank = 0; rank < options.ranks; ++rank) {
    senders.emplace_back([&, rank] {
      try {
        zmq::socket_t push(context, zmq::socket_type::push);
        push.set(zmq::sockopt::linger, 10000);
        push.connect(agent.rankEndpoint());
        go.wait();
        for (const std::string& message : messages[rank]) push.send(zmq::buffer(message));
        sendSeconds[rank] = secondsSince(start);
      } catch (const zmq::error_t& error) {
        sendErrors[rank] = error.what();
      }
    });
  }
  std::atomic<bool> stopSubscriber{false};
  SubscriberReport published;
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // let the PUSH sockets connect
  const NoiseMeter endToEndNoise(std::to_string(agent.pid()));
  start = Clock::now();
  const auto deadline = start + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(options.timeoutS));
  std::thread subscriber([&] {
    published = subscribe(sub, runId, options.ranks, options.samples, stopSubscriber, deadline);
  });
  go.count_down();
  subscriber.join();
  for (std::thread& sender : senders) sender.join();
  const auto [endToEndOtherCpu, endToEndOtherPct] = endToEndNoise.otherCpu();
  const double endToEndSeconds =
      published.lastSampleAt ? secondsSince(start, *published.lastSampleAt) : 0.0;
  const double sentSeconds = *std::max_element(sendSeconds.begin(), sendSeconds.end());
  bool agentAlive = agent.alive();

  Result<FetchReport> fetched = Status::aborted("the agent is not running");
  if (agentAlive) fetched = fetchAll(control, runId, options.ranks, published.seqs);

  v1::Envelope stop;
  stop.mutable_stop_run()->set_run_id(runId);
  stop.mutable_stop_run()->set_grace_seconds(2);
  auto stopped = control.request(stop);
  agentAlive = agentAlive && agent.alive();
  // Give the run time to end before the agent goes (the agent does not kill runs on exit).
  for (int i = 0; i < 50 && stopped.isOk(); ++i) {
    v1::Envelope list;
    list.mutable_list_runs()->set_include_ended(false);
    auto runs = control.request(list);
    if (!runs.isOk() || runs->list_runs_reply().runs_size() == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const bool agentExitedCleanly = agent.terminate();
  const std::string agentLog = agent.log();

  const NoiseMeter referenceNoise;
  auto reference = rawSqliteInserts(options, temp.path + "/reference.sqlite");
  const auto [referenceOtherCpu, referenceOtherPct] = referenceNoise.otherCpu();

  // ---- Report
  const double ours = endToEndSeconds > 0 ? options.samples / endToEndSeconds : 0.0;
  const double raw =
      reference.isOk() && reference->seconds > 0 ? options.samples / reference->seconds : 0.0;
  const bool subscriberOk = published.samples == options.samples && published.errors == 0;
  const bool fetchOk = fetched.isOk() && fetched->samples == options.samples && fetched->gapFree &&
                       fetched->sameAsPublished && fetched->errors == 0;
  bool sendOk = true;
  for (const std::string& error : sendErrors) sendOk = sendOk && error.empty();
  const bool lossOk = subscriberOk && fetchOk && sendOk;
  const bool agentOk = agentAlive && agentExitedCleanly && stopped.isOk();
  const bool referenceOk = reference.isOk() && reference->rowsStored == options.samples;
  const bool targetOk = lossOk && ours >= options.targetSamplesPerS;

  std::printf("telemetry_bench: %d ranks, %s samples in batches of %u points, agent %s\n\n",
              options.ranks, grouped(options.samples).c_str(), options.batchPoints,
              options.agentPath.c_str());
  std::printf("| measure | value |\n|---|---|\n");
  std::printf(
      "| end to end: ranks -> agent journal -> PUB -> subscriber | %s samples/s (%.2f s) |\n",
      grouped(static_cast<uint64_t>(ours)).c_str(), endToEndSeconds);
  std::printf("| ranks done sending after | %.2f s |\n", sentSeconds);
  std::printf(
      "| raw batched SQLite inserts (WAL, synchronous=NORMAL, %u rows per transaction) | %s "
      "samples/s (%.2f s) |\n",
      options.batchPoints, grouped(static_cast<uint64_t>(raw)).c_str(),
      reference.isOk() ? reference->seconds : 0.0);
  std::printf("| ratio ours / raw SQLite | %.2f |\n", raw > 0 ? ours / raw : 0.0);
  std::printf("| subscriber received | %s of %s samples, %s |\n",
              grouped(published.samples).c_str(), grouped(options.samples).c_str(),
              published.errors == 0 ? "seqs increasing, every field as sent"
                                    : ("BAD: " + published.firstError).c_str());
  if (fetched.isOk()) {
    std::printf(
        "| fetch_run_data from seq 0 | %s samples, entries 1..%s %s, %s the published seqs, %s "
        "(%" PRIu64 " pages, %.2f s) |\n",
        grouped(fetched->samples).c_str(), grouped(fetched->lastSeq).c_str(),
        fetched->gapFree ? "gap-free" : "WITH GAPS", fetched->sameAsPublished ? "same as" : "NOT",
        fetched->errors == 0 ? "every field as sent" : ("BAD: " + fetched->firstError).c_str(),
        fetched->pages, fetched->seconds);
  } else {
    std::printf("| fetch_run_data from seq 0 | FAILED: %s |\n",
                fetched.status().toString().c_str());
  }
  std::printf("| raw SQLite rows stored | %s%s |\n",
              grouped(reference.isOk() ? reference->rowsStored : 0).c_str(),
              reference.isOk() ? "" : (" (" + reference.status().toString() + ")").c_str());
  const bool disturbed = endToEndOtherPct > kDisturbedPct || referenceOtherPct > kDisturbedPct;
  std::printf(
      "| other processes' CPU while timed (end to end; SQLite) | %.2f CPU-s, %.1f%% of the "
      "cores; %.2f CPU-s, %.1f%%%s |\n",
      endToEndOtherCpu, endToEndOtherPct, referenceOtherCpu, referenceOtherPct,
      disturbed ? " <- disturbed" : "");
  std::printf("| loss check | %s |\n", lossOk ? "PASS" : "FAIL");
  std::printf("| target >= %s samples/s end to end | %s |\n",
              grouped(static_cast<uint64_t>(options.targetSamplesPerS)).c_str(),
              targetOk ? "PASS" : "FAIL");
  std::printf("| agent | %s |\n", agentOk ? "ran and stopped cleanly" : "FAILED (log below)");
  for (int rank = 0; rank < options.ranks; ++rank) {
    if (!sendErrors[rank].empty()) {
      std::printf("rank %d send failed: %s\n", rank, sendErrors[rank].c_str());
    }
  }
  if (!stopped.isOk()) std::printf("stop_run: %s\n", stopped.status().toString().c_str());
  if (!agentOk || !lossOk) std::printf("\nagent log:\n%s\n", agentLog.c_str());
  if (disturbed) {
    std::printf(
        "warning: other processes took over %.0f%% of the cores while a phase was timed; "
        "rerun on an idle machine\n",
        kDisturbedPct);
  }
  if (!lossOk || !agentOk || !referenceOk) return 1;
  return targetOk ? 0 : 3;
}

}  // namespace
}  // namespace ringside::bench

int main(int argc, char** argv) {
  ringside::bench::Options options;
  CLI::App app{
      "telemetry_bench: samples/s from simulated ranks through a real ringside-agent (journal, "
      "PUB) to a subscriber, against raw batched SQLite inserts in the same run. Exit status: 0 "
      "all passed; 1 a sample was lost or altered, or the agent or the reference failed; 3 the "
      "target was missed (the answer being right)."};
  app.option_defaults()->always_capture_default();
  app.add_option("--agent", options.agentPath, "ringside-agent binary")->check(CLI::ExistingFile);
  app.add_option("--mpirun", options.mpirunPath, "mpirun for the placeholder run");
  app.add_option("--ranks", options.ranks, "Simulated ranks (one PUSH socket each)")
      ->check(CLI::Range(1, 256));
  app.add_option("--samples", options.samples, "Samples in total, split across the ranks")
      ->check(CLI::PositiveNumber);
  app.add_option("--batch", options.batchPoints, "Points per RankMetrics batch")
      ->check(CLI::Range(1u, 100000u));
  app.add_option("--timeout", options.timeoutS,
                 "Seconds to wait for the subscriber to see every sample")
      ->check(CLI::PositiveNumber);
  app.add_option("--target", options.targetSamplesPerS, "Target end-to-end samples/s");
  app.add_flag("--keep", options.keepDir, "Keep the temporary directory (journal, agent log)");
  CLI11_PARSE(app, argc, argv);
  return ringside::bench::runBenchmark(options);
}
