// pipeline_bench's ranks: threads that send what ringside-trainer's ranks send to the agent with
// --log-every 1 (trainer/src/trainer.cpp), through the trainer's own ZmqMetricSink (one per rank,
// each with its own ZeroMQ context and sender thread, as in separate processes):
//  - every rank, every step: its per-rank record (kRankRecord, 7 values, rank set);
//  - rank 0, every step, after its own record: the global record (kGlobalRecord, 10 values);
//  - rank 0, before its first step: run/total_steps and run/steps_per_epoch (global);
//  - rank 0, every step, what it prints (trainer.cpp, with the trainer's toJson): the global record
//    and every rank's record as JSON Lines on stdout, then a progress line on stderr. The agent
//    journals each printed line as a log line, and the GUI stores it. Here they are appended, with
//    mpirun's --tag-output tag, to the placeholder run's stderr.log: its stdout.log would be parsed
//    for metrics (a custom command's), a trainer run's is not.
// The values are a function of (rank, field, step), exact in a double, so every stored row can be
// checked; wall_time is the rank's Unix clock when it called writeMetrics, as in the trainer, and
// is kept so that the store check compares it too and the latency can be measured from it.
#pragma once

#include <array>
#include <cstdint>
#include <cstdio>
#include <latch>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "ringside/trainer/zmq_metrics_sink.h"
#include "telemetry/telemetry_bench.h"

namespace ringside::bench {

// The per-rank record's names, in the trainer's order (trainer.cpp, rankRecord).
extern const std::array<const char*, 7> kRankRecord;
// The global record's names, in the trainer's order (trainer.cpp, writeGlobal).
extern const std::array<const char*, 10> kGlobalRecord;
// Steps per epoch of the simulated run (epoch = (step - 1) / this), and run/steps_per_epoch.
constexpr int64_t kStepsPerEpoch = 1000;

// The value rank `rank` (-1: the global record) sends for field `field` (index into kRankRecord
// or kGlobalRecord) at step `step` (from 1). An integer below 2^53: exact through protobuf and
// SQLite.
double valueOf(int rank, int field, int64_t step);

// What one rank did in a phase.
struct RankOutcome {
  std::vector<double> wallTimes;        // [step - 1]: wall_time of its per-rank record, Unix s
  std::vector<double> globalWallTimes;  // rank 0 only: of the global record
  double startWallTime = 0;             // rank 0 only: of the run/ samples
  double loopSeconds = 0;               // from the phase's start to its last writeMetrics
  int64_t lateSteps = 0;                // steps written more than one interval after their time
  trainer::ZmqMetricSinkStats stats;    // after flush()
  std::string error;                    // the sink or the log file could not be opened
};

// This process's CPU seconds so far by thread (/proc/self/task), split by who runs the thread:
// the simulated ranks (their loops and their sinks' sender threads, named "pb-rank" and
// "pb-sink"), ZeroMQ's I/O threads ("ZMQbg/...": the sinks' and the GUI's AgentConnection's),
// and the rest (the GUI side: the event loop, the store's and the connection's threads). Threads
// that have exited are not counted.
struct ThreadCpu {
  double ranks = 0, zeromq = 0, gui = 0;
};
ThreadCpu threadCpuSplit();

// The ranks of one phase. Thread-safety: call from one thread; outcomes() after join().
class SimulatedRanks {
 public:
  // Creates one ZmqMetricSink per rank on `endpoint` for run `runId` (the agent's
  // RINGSIDE_AGENT_ENDPOINT and RINGSIDE_RUN_ID) and starts their threads, which wait for
  // start(). Rank 0 appends its printed lines to `logPath` ("": prints nothing). Errors are per
  // rank, in RankOutcome::error.
  SimulatedRanks(const std::string& endpoint, const std::string& runId, int ranks, int64_t steps,
                 double stepMs, const std::string& logPath);
  ~SimulatedRanks();  // join()

  // Step s (from 1) of every rank is written at `t0` + s * stepMs (or at once when late).
  void start(Clock::time_point t0);
  // Waits for every rank to write its last step, flush its sink (at most the sink's 2 s
  // flushTimeout) and destroy it. The sinks live until then, so their threads' CPU time can be
  // read before (threadCpuSplit).
  void join();

  const std::vector<RankOutcome>& outcomes() const { return outcomes_; }
  // Samples the phase sends in all: ranks x steps x 7 + steps x 10 + 2.
  uint64_t expectedSamples() const;
  int64_t steps() const { return steps_; }
  // Lines rank 0 printed: steps x (ranks + 2), and each line as the agent stores it ("[rank 0] "
  // and the text), hashed (std::hash), sorted. Valid after join().
  uint64_t expectedLogLines() const {
    return log_ != nullptr ? static_cast<uint64_t>(steps_) * (ranks_ + 2) : 0;
  }
  const std::vector<uint64_t>& logLineHashes() const { return logLineHashes_; }

 private:
  void runRank(int rank, std::unique_ptr<trainer::ZmqMetricSink> sink);
  // Rank 0's printed lines of one step: the global record, every rank's, the progress line.
  void printStep(int64_t step, double wallTime);

  const int64_t steps_;
  const double stepMs_;
  const int ranks_;
  std::FILE* log_ = nullptr;  // rank 0's thread only
  std::vector<uint64_t> logLineHashes_;
  std::vector<RankOutcome> outcomes_;
  std::vector<std::thread> threads_;
  std::latch go_{1};
  std::latch release_{1};  // join(): the ranks may destroy their sinks
  Clock::time_point t0_;   // written before go_ opens
};

}  // namespace ringside::bench
