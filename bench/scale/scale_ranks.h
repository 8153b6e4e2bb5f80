// scale_bench's ranks: W threads that send what W ringside-trainer ranks send to the owner agent of
// a multi-node run (trainer/src/trainer.cpp at a logged step, --log-every 1), each through the
// trainer's real ZmqMetricSink with the run's CURVE keys to the owner's tcp:// rank endpoint
// (docs/protocol.md, "Ranks on other nodes"), each with its own ZeroMQ context, sender thread and
// heartbeat (RankActivity), as separate processes have:
//  - every rank, every step: its per-rank record (kRankRecord: train/loss and the time/* fields
//    the straggler detector reads: data, compute, wait);
//  - rank 0, every step: the global record (kGlobalRecord), and before step 1 run/total_steps and
//    run/steps_per_epoch.
// The run goes through phases of different step times (one run, steps numbered on). The time/*
// values are those of a synchronous data-parallel step of that step time: data 5 %, compute 60 %
// (plus a small per-rank, per-step jitter), all-reduce 20 %, exposed communication 10 %, and each
// rank's wait is the slowest rank's compute minus its own, as in a real all-reduce. From a chosen
// step one rank is a straggler: its compute takes half a step time more, so the others' wait
// grows by that much and its own is 0. After the last step one rank stalls: it stops sending
// anything, heartbeats included (its sink is destroyed, as a SIGSTOPped or killed rank's
// connection goes quiet), while the others wait in the next step's all-reduce (their heartbeats
// say so) and send no step, for `stallHoldSeconds`.
// Every value is a function of (rank, field, step) (valueOf), so every stored row can be checked;
// wall_time is the rank's Unix clock at writeMetrics, kept for the check and the latency.
#pragma once

#include <cstdint>
#include <latch>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "pipeline/simulated_ranks.h"
#include "ringside/common/status.h"
#include "ringside/trainer/rank_activity.h"
#include "ringside/trainer/zmq_metrics_sink.h"

namespace ringside::bench {

struct ScalePhase {
  double stepMs = 100;
  int64_t steps = 0;
};

struct ScaleRanksOptions {
  std::string endpoint;  // RINGSIDE_AGENT_ENDPOINT (the owner's tcp:// rank endpoint)
  std::string runId;     // RINGSIDE_RUN_ID
  // The CURVE keys (RINGSIDE_AGENT_PUBLIC_KEY, RINGSIDE_RUN_PUBLIC_KEY/_SECRET_KEY); the rest of
  // the sink's options as the trainer sets them.
  trainer::ZmqMetricSinkOptions sink;
  int ranks = 512;
  std::vector<ScalePhase> phases;
  int stragglerRank = -1;          // -1: none
  int64_t stragglerFromStep = 0;   // its compute is slow from this step on
  int stallRank = -1;              // -1: no stall
  double stallHoldSeconds = 15.0;  // how long the others wait in the all-reduce after the stall
};

// What one rank did.
struct ScaleRankOutcome {
  std::vector<double> wallTimes;        // [step - 1]: wall_time of its per-rank record, Unix s
  std::vector<double> globalWallTimes;  // rank 0 only: of the global record
  double startWallTime = 0;             // rank 0 only: of the run/ samples
  std::vector<int64_t> lateSteps;       // per phase: steps written more than one step late
  trainer::ZmqMetricSinkStats stats;    // after flush()
  std::string error;
};

// The ranks run in a process of their own (scale_bench --ranks-child), so that the GUI side's CPU
// time and memory are measured apart from theirs; the bench process builds the same ScaleRanks
// (same options: the same schedule and values) without threads and load()s what they did.
// Thread-safety: call from one thread; outcomes() after join().
class ScaleRanks {
 public:
  // The schedule only; no sink, no thread.
  explicit ScaleRanks(ScaleRanksOptions options);
  ~ScaleRanks();  // join()

  // Creates the sinks (they connect at once) and the threads, which wait for start(). Errors are
  // per rank, in ScaleRankOutcome::error.
  void launch();

  // Step s of every rank is due at t0 + the step times of steps 1..s.
  void start(Clock::time_point t0);
  // Waits for every rank to finish (the stall hold included) and flush.
  void join();

  // The value rank `rank` (-1: global record) sends for field `field` (index into kRankRecord or
  // kGlobalRecord) at step `step`.
  double valueOf(int rank, int field, int64_t step) const;
  // When step `step` (from 1) is due, from t0; and the Unix time rank 0 wrote it (after join()).
  Clock::duration dueOffset(int64_t step) const { return due_[static_cast<size_t>(step - 1)]; }
  int phaseOf(int64_t step) const;  // index into options().phases
  const ScaleRanksOptions& options() const { return options_; }
  int64_t steps() const { return steps_; }
  uint64_t expectedSamples() const;
  // The steady time of the run's last progress: the last step's due time, after which the stall
  // rank goes silent and the others wait in the all-reduce. Valid after start().
  Clock::time_point stallTime() const { return t0_ + stallOffset_; }
  Clock::time_point t0() const { return t0_; }
  const std::vector<ScaleRankOutcome>& outcomes() const { return outcomes_; }

  // The outcomes to a file and back (binary, this machine's byte order). Errors: kIOError.
  Status save(const std::string& path) const;
  Status load(const std::string& path);

 private:
  void runRank(int rank, std::unique_ptr<trainer::ZmqMetricSink> sink);
  double stepMsOf(int64_t step) const { return options_.phases[phaseOf(step)].stepMs; }
  double computeMs(int rank, int64_t step) const;

  ScaleRanksOptions options_;
  int64_t steps_ = 0;
  std::vector<Clock::duration> due_;
  std::vector<int64_t> phaseEnd_;  // last step of each phase
  Clock::duration stallOffset_{};
  std::vector<ScaleRankOutcome> outcomes_;
  std::vector<std::unique_ptr<trainer::RankActivity>> activities_;
  std::vector<std::thread> threads_;
  std::latch go_{1};
  Clock::time_point t0_;
};

}  // namespace ringside::bench
