// Tests of ZmqMetricSink against a real PULL socket standing in for the agent: order and batch_seq,
// a full queue, the agent going away and coming back, shutdown without an agent, a 2-rank
// ringside-trainer run sending to a collector, and a rank's heartbeat while its data still loads.
#include "build_paths.h"
#include "ringside/trainer/zmq_metrics_sink.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <thread>
#include <zmq.hpp>

#include <nlohmann/json.hpp>

#include "ringside/common/metric_names.h"
#include "ringside/proto/ringside.pb.h"
#include "test_util.h"

namespace ringside::trainer {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// A stand-in for the agent's rank endpoint: a PULL socket bound on `endpoint`.
class FakeAgent {
 public:
  FakeAgent(zmq::context_t& context, const std::string& endpoint)
      : pull_(context, zmq::socket_type::pull) {
    pull_.set(zmq::sockopt::linger, 0);
    pull_.set(zmq::sockopt::rcvtimeo, 100);
    pull_.bind(endpoint);
  }

  // Receives batches until `points` points have arrived in all (duplicates included) or
  // `timeout` passes. Returns the batches in arrival order.
  std::vector<v1::RankMetrics> receive(size_t points, std::chrono::milliseconds timeout) {
    std::vector<v1::RankMetrics> batches;
    size_t received = 0;
    const auto deadline = Clock::now() + timeout;
    while (received < points && Clock::now() < deadline) {
      zmq::message_t frame;
      if (!pull_.recv(frame)) continue;
      v1::Envelope envelope;
      EXPECT_TRUE(envelope.ParseFromArray(frame.data(), static_cast<int>(frame.size())));
      EXPECT_EQ(envelope.protocol_version(), 1u);
      // Trainer ranks also send heartbeats on this socket (RankHeartbeat): not batches.
      if (envelope.has_rank_heartbeat()) continue;
      EXPECT_TRUE(envelope.has_rank_metrics());
      received += static_cast<size_t>(envelope.rank_metrics().points_size());
      batches.push_back(envelope.rank_metrics());
    }
    return batches;
  }

  // The first heartbeat (RankHeartbeat) that arrives within `timeout`, skipping batches.
  std::optional<v1::RankHeartbeat> heartbeat(std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    while (Clock::now() < deadline) {
      zmq::message_t frame;
      if (!pull_.recv(frame)) continue;
      v1::Envelope envelope;
      if (envelope.ParseFromArray(frame.data(), static_cast<int>(frame.size())) &&
          envelope.has_rank_heartbeat()) {
        return envelope.rank_heartbeat();
      }
    }
    return std::nullopt;
  }

  void close() { pull_.close(); }

 private:
  zmq::socket_t pull_;
};

// What the agent journals: each batch_seq once, the first copy that arrives.
std::vector<v1::RankMetrics> dedupe(const std::vector<v1::RankMetrics>& batches) {
  std::set<uint64_t> seen;
  std::vector<v1::RankMetrics> kept;
  for (const auto& batch : batches) {
    if (seen.insert(batch.batch_seq()).second) kept.push_back(batch);
  }
  return kept;
}

// A record at step `step` with two values, step and -step; global when `rank` is absent.
MetricRecord record(int64_t step, std::optional<int> rank = std::nullopt) {
  return MetricRecord{step,
                      step / 10,
                      1.0e9 + static_cast<double>(step),
                      rank,
                      {{metric::kTrainLoss, static_cast<double>(step)},
                       {metric::kStepMs, -static_cast<double>(step)}}};
}

// The (step, name) of every point of `batches`, in order.
std::vector<std::pair<int64_t, std::string>> pointsOf(const std::vector<v1::RankMetrics>& batches) {
  std::vector<std::pair<int64_t, std::string>> points;
  for (const auto& batch : batches) {
    for (const auto& point : batch.points()) points.emplace_back(point.step(), point.name());
  }
  return points;
}

std::vector<std::pair<int64_t, std::string>> expectedPoints(int64_t first, int64_t last) {
  std::vector<std::pair<int64_t, std::string>> points;
  for (int64_t step = first; step <= last; ++step) {
    points.emplace_back(step, metric::kTrainLoss);
    points.emplace_back(step, metric::kStepMs);
  }
  return points;
}

std::unique_ptr<ZmqMetricSink> makeSink(const std::string& endpoint,
                                        const ZmqMetricSinkOptions& options, int rank = 3) {
  auto sink = ZmqMetricSink::create(endpoint, "run-1", rank, options);
  EXPECT_TRUE(sink.isOk()) << sink.status().toString();
  return sink.isOk() ? std::move(sink).value() : nullptr;
}

TEST(ZmqMetricSinkTest, SendsEveryPointInOrderWithBatchSeqFromOne) {
  TempDir dir;
  const std::string endpoint = "ipc://" + dir.path() + "/ranks.sock";
  zmq::context_t context;
  FakeAgent agent(context, endpoint);
  ZmqMetricSinkOptions options;
  options.maxBatchPoints = 7;  // several batches, some splitting a record
  auto sink = makeSink(endpoint, options);
  ASSERT_NE(sink, nullptr);
  for (int64_t step = 1; step <= 100; ++step) {
    sink->writeMetrics(record(step, step % 2 == 1 ? std::optional<int>(3) : std::nullopt));
  }
  sink->flush();

  const auto batches = agent.receive(200, 10s);
  ASSERT_FALSE(batches.empty());
  for (size_t i = 0; i < batches.size(); ++i) {
    EXPECT_EQ(batches[i].batch_seq(), i + 1);
    EXPECT_EQ(batches[i].run_id(), "run-1");
    EXPECT_EQ(batches[i].rank(), 3);
    EXPECT_EQ(batches[i].dropped_total(), 0u);
    EXPECT_LE(batches[i].points_size(), 7);
  }
  EXPECT_EQ(pointsOf(batches), expectedPoints(1, 100));
  const auto& first = batches[0].points(0);
  EXPECT_EQ(first.step(), 1);
  EXPECT_EQ(first.epoch(), 0);
  EXPECT_DOUBLE_EQ(first.wall_time(), 1.0e9 + 1);
  EXPECT_FALSE(first.global());  // record 1 carries a rank
  EXPECT_DOUBLE_EQ(first.value(), 1.0);
  EXPECT_TRUE(batches[0].points(2).global());  // record 2 has no rank
  const auto stats = sink->stats();
  EXPECT_EQ(stats.droppedPoints, 0u);
  EXPECT_EQ(stats.queuedPoints, 200u);
  EXPECT_EQ(stats.sentBatches, batches.size());
}

TEST(ZmqMetricSinkTest, GlobalRecordsAreMarkedGlobal) {
  TempDir dir;
  const std::string endpoint = "ipc://" + dir.path() + "/ranks.sock";
  zmq::context_t context;
  FakeAgent agent(context, endpoint);
  auto sink = makeSink(endpoint, {}, 0);
  ASSERT_NE(sink, nullptr);
  sink->writeMetrics(record(1));
  sink->writeMetrics(record(1, 0));
  sink->flush();
  const auto batches = agent.receive(4, 10s);
  ASSERT_EQ(batches.size(), 1u);
  ASSERT_EQ(batches[0].points_size(), 4);
  EXPECT_TRUE(batches[0].points(0).global());
  EXPECT_TRUE(batches[0].points(1).global());
  EXPECT_FALSE(batches[0].points(2).global());
  EXPECT_FALSE(batches[0].points(3).global());
}

// The heartbeat comes from the sender thread: it keeps coming while the "training thread" (this
// test) is blocked in a collective, and says where.
TEST(ZmqMetricSinkTest, HeartbeatsKeepComingWhileTheTrainingThreadIsBlocked) {
  TempDir dir;
  const std::string endpoint = "ipc://" + dir.path() + "/ranks.sock";
  zmq::context_t context;
  zmq::socket_t pull(context, zmq::socket_type::pull);
  pull.set(zmq::sockopt::linger, 0);
  pull.set(zmq::sockopt::rcvtimeo, 100);
  pull.bind(endpoint);
  RankActivity activity;
  activity.stepCompleted(41, 3.5);
  activity.setPhase(v1::ALLREDUCE);
  activity.setBucket(2);
  const ScopedWait blocked(&activity, kWaitAllreduce, activity.beginCollective());
  ZmqMetricSinkOptions options;
  options.activity = &activity;
  options.heartbeatInterval = std::chrono::milliseconds(200);
  auto sink = makeSink(endpoint, options, 1);
  ASSERT_NE(sink, nullptr);
  std::vector<v1::RankHeartbeat> beats;
  const auto deadline = Clock::now() + 10s;
  while (beats.size() < 3 && Clock::now() < deadline) {
    zmq::message_t frame;
    if (!pull.recv(frame)) continue;
    v1::Envelope envelope;
    ASSERT_TRUE(envelope.ParseFromArray(frame.data(), static_cast<int>(frame.size())));
    ASSERT_TRUE(envelope.has_rank_heartbeat());
    beats.push_back(envelope.rank_heartbeat());
  }
  ASSERT_EQ(beats.size(), 3u);
  const v1::RankHeartbeat& last = beats.back();
  EXPECT_EQ(last.run_id(), "run-1");
  EXPECT_EQ(last.rank(), 1);
  EXPECT_EQ(last.pid(), static_cast<int64_t>(::getpid()));
  EXPECT_FALSE(last.host().empty());
  EXPECT_EQ(last.phase(), v1::ALLREDUCE);
  EXPECT_EQ(last.step(), 41);
  EXPECT_EQ(last.bucket(), 2);
  EXPECT_EQ(last.work_done(), 1u);
  EXPECT_DOUBLE_EQ(last.last_step_ms(), 3.5);
  EXPECT_EQ(last.waiting_in(), "the all-reduce of bucket 2 of step 42");
  EXPECT_GT(last.waiting_seconds(), beats.front().waiting_seconds());
}

TEST(ZmqMetricSinkTest, FullQueueDropsAndCountsWithoutBlocking) {
  TempDir dir;
  const std::string endpoint = "ipc://" + dir.path() + "/ranks.sock";
  ZmqMetricSinkOptions options;
  options.queueCapacity = 10;
  options.maxBatchPoints = 4;
  options.flushTimeout = 200ms;
  auto sink = makeSink(endpoint, options);
  ASSERT_NE(sink, nullptr);
  // No agent: the sender holds one batch of at most 4 points, the queue at most 10.
  for (int64_t step = 1; step <= 1000; ++step) sink->writeMetrics(record(step));
  auto stats = sink->stats();
  EXPECT_EQ(stats.queuedPoints + stats.droppedPoints, 2000u);
  EXPECT_LE(stats.queuedPoints, 14u);
  EXPECT_GE(stats.droppedPoints, 2000u - 14u);
  sink->flush();  // returns after flushTimeout: nobody is listening

  // The agent appears: what was queued arrives, and later batches carry the dropped count.
  zmq::context_t context;
  FakeAgent agent(context, endpoint);
  auto batches = agent.receive(stats.queuedPoints, 10s);
  EXPECT_EQ(pointsOf(batches).size(), stats.queuedPoints);
  sink->writeMetrics(record(2000));
  sink->flush();
  batches = agent.receive(2, 10s);
  ASSERT_EQ(batches.size(), 1u);
  EXPECT_EQ(batches[0].dropped_total(), stats.droppedPoints);
  stats = sink->stats();
  EXPECT_EQ(batches[0].dropped_total(), stats.droppedPoints);

  testing::internal::CaptureStderr();
  sink.reset();
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find(std::to_string(stats.droppedPoints) + " dropped"), std::string::npos) << log;
}

TEST(ZmqMetricSinkTest, AgentRestartLosesNoPoint) {
  TempDir dir;
  const std::string endpoint = "ipc://" + dir.path() + "/ranks.sock";
  ZmqMetricSinkOptions options;
  options.maxBatchPoints = 4;
  options.flushInterval = 10ms;
  options.flushTimeout = 300ms;
  auto sink = makeSink(endpoint, options);
  ASSERT_NE(sink, nullptr);
  zmq::context_t context;
  std::vector<v1::RankMetrics> received;

  auto first = std::make_unique<FakeAgent>(context, endpoint);
  for (int64_t step = 1; step <= 20; ++step) sink->writeMetrics(record(step));
  sink->flush();
  auto part = first->receive(40, 10s);
  received.insert(received.end(), part.begin(), part.end());
  ASSERT_EQ(pointsOf(received), expectedPoints(1, 20));

  // Sent to the agent, which dies before reading them (its unread messages are lost).
  for (int64_t step = 21; step <= 40; ++step) sink->writeMetrics(record(step));
  sink->flush();
  std::this_thread::sleep_for(50ms);
  first->close();
  first.reset();

  // Written while no agent listens.
  for (int64_t step = 41; step <= 60; ++step) sink->writeMetrics(record(step));
  sink->flush();

  FakeAgent second(context, endpoint);
  // Every point of steps 21..60 at least once; resends may repeat some.
  const auto deadline = Clock::now() + 15s;
  std::vector<v1::RankMetrics> afterRestart;
  auto complete = [&] {
    std::set<std::pair<int64_t, std::string>> seen;
    for (const auto& point : pointsOf(afterRestart)) seen.insert(point);
    for (const auto& point : expectedPoints(21, 60)) {
      if (!seen.count(point)) return false;
    }
    return true;
  };
  while (!complete() && Clock::now() < deadline) {
    part = second.receive(1, 200ms);
    afterRestart.insert(afterRestart.end(), part.begin(), part.end());
  }
  ASSERT_TRUE(complete()) << "points after the restart: " << pointsOf(afterRestart).size();
  received.insert(received.end(), afterRestart.begin(), afterRestart.end());

  // After dropping repeated batch_seqs, as the agent does: every point exactly once, in order.
  auto journal = dedupe(received);
  std::sort(journal.begin(), journal.end(),
            [](const auto& a, const auto& b) { return a.batch_seq() < b.batch_seq(); });
  for (size_t i = 0; i < journal.size(); ++i) EXPECT_EQ(journal[i].batch_seq(), i + 1);
  EXPECT_EQ(pointsOf(journal), expectedPoints(1, 60));
  EXPECT_GT(sink->stats().resentBatches, 0u);
}

TEST(ZmqMetricSinkTest, DestructionWithoutAgentIsBounded) {
  TempDir dir;
  ZmqMetricSinkOptions options;
  options.flushTimeout = 200ms;
  for (const std::string& endpoint :
       {"ipc://" + dir.path() + "/nobody.sock", std::string("tcp://127.0.0.1:1")}) {
    auto sink = makeSink(endpoint, options);
    ASSERT_NE(sink, nullptr);
    for (int64_t step = 1; step <= 10; ++step) sink->writeMetrics(record(step));
    const auto start = Clock::now();
    sink->flush();
    testing::internal::CaptureStderr();
    sink.reset();
    const std::string log = testing::internal::GetCapturedStderr();
    // flushTimeout + flushInterval + linger, with room for a loaded machine.
    EXPECT_LT(Clock::now() - start, 5s) << endpoint;
    EXPECT_NE(log.find("20 unsent"), std::string::npos) << log;
  }
}

TEST(ZmqMetricSinkTest, RejectsAnEndpointZeroMqDoesNotTake) {
  auto sink = ZmqMetricSink::create("not-an-endpoint", "run-1", 0);
  ASSERT_FALSE(sink.isOk());
  EXPECT_EQ(sink.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(sink.status().message().find("not-an-endpoint"), std::string::npos);

  ZmqMetricSinkOptions options;
  options.maxBatchPoints = 0;
  EXPECT_EQ(ZmqMetricSink::create("ipc:///tmp/x.sock", "run-1", 0, options).status().code(),
            Status::Code::kInvalidArgument);
}

// ---- ringside-trainer under mpirun, sending to a collector.

std::vector<nlohmann::json> metricRecords(const std::string& out) {
  std::vector<nlohmann::json> found;
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    auto json = nlohmann::json::parse(line, nullptr, false);
    if (!json.is_discarded() && json.value("type", "") == "metrics") found.push_back(json);
  }
  return found;
}

// `ranks` ranks of ringside-trainer under mpirun on small Fashion-MNIST subsets, then `extra`.
std::vector<std::string> trainerUnderMpirun(int ranks, const std::vector<std::string>& extra) {
  std::vector<std::string> argv = {ringside::test::mpiexec(),
                                   "-np",
                                   std::to_string(ranks),
                                   "--bind-to",
                                   "none",
                                   ringside::test::trainerBin(),
                                   "--backend",
                                   "mpi",
                                   "--quiet",
                                   "--train-samples",
                                   "2000",
                                   "--test-samples",
                                   "500",
                                   "--global-batch",
                                   "64",
                                   "--checkpoint-dir",
                                   "ckpt"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

// mpirun as root, and the two variables the agent sets for its ranks.
std::vector<std::string> trainerEnvironment(const std::string& endpoint) {
  return {"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
          "OMPI_MCA_rmaps_base_oversubscribe=1", "RINGSIDE_AGENT_ENDPOINT=" + endpoint,
          "RINGSIDE_RUN_ID=test"};
}

TEST(ZmqMetricSinkProcessTest, EveryRankSendsItsOwnRecordsAndRankZeroTheGlobalOnes) {
  TempDir dir;
  const std::string endpoint = "ipc://" + dir.path() + "/ranks.sock";
  zmq::context_t context;
  FakeAgent agent(context, endpoint);
  std::atomic<bool> done{false};
  std::vector<v1::RankMetrics> batches;
  std::thread collector([&] {
    while (!done.load()) {
      auto part = agent.receive(1, 100ms);
      batches.insert(batches.end(), part.begin(), part.end());
    }
  });
  const auto result = runProcess(trainerUnderMpirun(2, {"--max-steps", "40", "--log-every", "5"}),
                                 dir.path(), 300.0, trainerEnvironment(endpoint));
  // The ranks flushed before exiting; give the last batches a moment to be read.
  std::this_thread::sleep_for(500ms);
  done.store(true);
  collector.join();
  ASSERT_EQ(result.exitCode, 0) << "stderr:\n" << result.err << "\nstdout:\n" << result.out;

  // From stdout (rank 0): global records with train/loss, and the gathered per-rank records.
  size_t stdoutGlobalLoss = 0;
  size_t stdoutTestLoss = 0;
  std::map<int, size_t> stdoutPerRank;
  for (const auto& r : metricRecords(result.out)) {
    if (r.contains("rank")) {
      ++stdoutPerRank[r["rank"].get<int>()];
    } else {
      stdoutGlobalLoss += r["metrics"].contains(metric::kTrainLoss) ? 1 : 0;
      stdoutTestLoss += r["metrics"].contains(metric::kTestLoss) ? 1 : 0;
    }
  }
  ASSERT_GT(stdoutGlobalLoss, 0u);
  ASSERT_GT(stdoutTestLoss, 0u);

  std::map<int, std::vector<v1::RankMetrics>> byRank;
  for (const auto& batch : batches) {
    EXPECT_EQ(batch.run_id(), "test");
    EXPECT_EQ(batch.dropped_total(), 0u);
    byRank[batch.rank()].push_back(batch);
  }
  ASSERT_EQ(byRank.size(), 2u);
  for (auto& [rank, rankBatches] : byRank) {
    auto journal = dedupe(rankBatches);
    std::sort(journal.begin(), journal.end(),
              [](const auto& a, const auto& b) { return a.batch_seq() < b.batch_seq(); });
    for (size_t i = 0; i < journal.size(); ++i) EXPECT_EQ(journal[i].batch_seq(), i + 1);
    size_t ownLoss = 0, globalLoss = 0, globalTestLoss = 0;
    std::vector<double> totalSteps, stepsPerEpoch;  // the run's facts, sent once by rank 0
    for (const auto& batch : journal) {
      for (const auto& point : batch.points()) {
        if (point.name() == metric::kTrainLoss) ++(point.global() ? globalLoss : ownLoss);
        if (point.name() == metric::kTestLoss && point.global()) ++globalTestLoss;
        if (point.name() == metric::kRunTotalSteps && point.global()) {
          totalSteps.push_back(point.value());
          EXPECT_EQ(point.step(), 0);
        }
        if (point.name() == metric::kRunStepsPerEpoch && point.global()) {
          stepsPerEpoch.push_back(point.value());
        }
      }
    }
    EXPECT_EQ(totalSteps, rank == 0 ? std::vector<double>{40} : std::vector<double>{})
        << "rank " << rank << ": --max-steps 40";
    EXPECT_EQ(stepsPerEpoch, rank == 0 ? std::vector<double>{2000 / 64} : std::vector<double>{})
        << "rank " << rank << ": 2000 samples in global batches of 64";
    EXPECT_EQ(ownLoss, stdoutPerRank[rank]) << "rank " << rank;
    EXPECT_EQ(globalLoss, rank == 0 ? stdoutGlobalLoss : 0u) << "rank " << rank;
    EXPECT_EQ(globalTestLoss, rank == 0 ? stdoutTestLoss : 0u) << "rank " << rank;
  }
}

// A rank's heartbeat starts before its set-up (docs/metrics.md, "Heartbeats"): while its data is
// still loading, here from a FIFO that this test fills only once a heartbeat came, the agent hears
// the rank in SETUP; a slow start is not a rank silent since the run started (which the owner's
// stall rule counts as stuck after 8 s). Under mpirun, as the agent starts a trainer run.
TEST(ZmqMetricSinkProcessTest, HeartbeatComesInSetUpWhileTheDataIsStillLoading) {
  namespace fs = std::filesystem;
  ::signal(SIGPIPE, SIG_IGN);  // a trainer gone before the FIFO is filled is a failure, not a crash
  TempDir dir;
  const std::string data = dir.path() + "/data";
  fs::create_directories(data);
  for (const char* name :
       {"train-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"}) {
    fs::copy_file(std::string(ringside::test::dataDir()) + "/" + name, data + "/" + name);
  }
  const std::string fifo = data + "/train-images-idx3-ubyte.gz";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  const std::string endpoint = "ipc://" + dir.path() + "/ranks.sock";
  zmq::context_t context;
  FakeAgent agent(context, endpoint);
  ChildProcess trainer(trainerUnderMpirun(1, {"--data", data, "--max-steps", "5"}), dir.path(),
                       trainerEnvironment(endpoint));
  const std::optional<v1::RankHeartbeat> beat = agent.heartbeat(60s);
  // Whatever came, the FIFO is filled (once the trainer opened it), so that the trainer goes on.
  int fd = -1;
  const auto opened = Clock::now() + 60s;
  while (fd < 0 && Clock::now() < opened) {
    fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);  // ENXIO: no reader yet
    if (fd < 0) std::this_thread::sleep_for(50ms);
  }
  ASSERT_GE(fd, 0) << "the trainer never opened its training images: " << trainer.errorSoFar();
  ASSERT_EQ(::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK), 0);
  std::ifstream images(std::string(ringside::test::dataDir()) + "/train-images-idx3-ubyte.gz",
                       std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(images)),
                          std::istreambuf_iterator<char>());
  size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n <= 0) break;
    written += static_cast<size_t>(n);
  }
  ::close(fd);

  ASSERT_TRUE(beat.has_value()) << "no heartbeat in 60 s while the rank's data was loading";
  EXPECT_EQ(beat->run_id(), "test");
  EXPECT_EQ(beat->rank(), 0);
  EXPECT_EQ(beat->phase(), v1::SETUP);
  EXPECT_TRUE(beat->waiting_in().empty()) << beat->waiting_in();
  const ProcessResult result = trainer.wait(300.0);
  EXPECT_EQ(written, bytes.size());
  EXPECT_EQ(result.exitCode, 0) << "stderr:\n" << result.err << "\nstdout:\n" << result.out;
}

}  // namespace
}  // namespace ringside::trainer
