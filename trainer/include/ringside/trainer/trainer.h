// The training loop shared by every backend: sampling, learning-rate schedule, metrics,
// evaluation, checkpoints and stop requests. The backend does the per-step math and gradient
// communication.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "ringside/common/status.h"
#include "ringside/trainer/backend.h"
#include "ringside/trainer/communicator.h"
#include "ringside/trainer/dataset.h"
#include "ringside/trainer/metrics_sink.h"
#include "ringside/trainer/trainer_config.h"

namespace ringside::trainer {

struct TrainingOutcome {
  bool stopped = false;        // true when a stop request (SIGTERM) ended the run early
  int64_t steps = 0;           // global steps completed
  double testLoss = 0.0;       // of the last evaluation
  double testAccuracy = 0.0;   // of the last evaluation, in [0, 1]
  std::string checkpointPath;  // the last checkpoint written ("" when none)
};

class Trainer {
 public:
  // All references must outlive the Trainer. `sink` receives records on rank 0 only (may be null
  // on other ranks): global records, each followed (world size > 1) by the per-rank records
  // gathered from every rank, and the start and end events. `agentSink` (nullable, any rank; the
  // agent's ZmqMetricSink) receives on every rank that rank's own per-rank record at each log
  // step (world size > 1), on rank 0 also the global records, and is flushed at the end of run().
  // `stopRequested` is polled once per step; every rank agrees on it through an all-reduce, so all
  // ranks stop at the same step. (The backend polls it too, inside long steps and evaluations, when
  // it was given it in BackendOptions::stopRequested: a step it abandons is not counted.) `spec`
  // must have every field set (addTrainerOptions' result, or withTrainerDefaults()).
  Trainer(const v1::TrainerConfig& spec, Communicator& comm, Backend& backend,
          const DatasetSplits& data, MetricSink* sink, MetricSink* agentSink,
          const std::atomic<bool>& stopRequested, RankActivity* activity = nullptr);

  // Collective. Initialises (or resumes) the model and trains until the configured steps are done
  // or a stop is requested, then writes a checkpoint. Rank 0 writes the "start" record (with the
  // run's total steps and steps per epoch) to `sink` and the same two facts as global samples
  // (metric::kRunTotalSteps, kRunStepsPerEpoch, at the first step) to `agentSink`. Errors:
  // InvalidArgument for a checkpoint that does not fit the run (naming the mismatch; one of the
  // other model kind names both models),
  // Corruption/NotFound for an unreadable one, the backend's errors for failed steps, IOError when
  // a checkpoint cannot be written.
  Result<TrainingOutcome> run();

 private:
  struct Resumed {
    int64_t step = 0;
  };
  Result<Resumed> initializeOrResume(int64_t stepsPerEpoch);
  // Collective. Evaluates the test set and writes the test metrics. *stopped is set (on every
  // rank, and nothing is written) when a stop request cut the evaluation short on any rank.
  Status evaluate(int64_t step, int64_t epoch, TrainingOutcome* outcome, bool* stopped);
  Result<std::string> checkpoint(int64_t step, int64_t stepsPerEpoch);
  // Rank 0: writes a global record to `sink_` and `agentSink_`.
  void writeGlobal(const MetricRecord& record);
  void progress(const std::string& line) const;

  const v1::TrainerConfig& spec_;
  Communicator& comm_;
  Backend& backend_;
  const DatasetSplits& data_;
  MetricSink* sink_;
  MetricSink* agentSink_;
  const std::atomic<bool>& stopRequested_;
  // Where the loop reports its phase and completed steps (rank_activity.h); null: nowhere.
  RankActivity* activity_;
  ModelLayout model_;  // modelLayoutOf(spec, data.train); empty when the spec describes none
  size_t numParams_ = 0;
};

// The samples one rank evaluates per forward pass: `evalBatch` (--eval-batch), but no more than
// the largest shard of the test set a rank gets (ceil(testCount / worldSize)), since a larger
// buffer would never be filled; at least 1.
int evaluationBatch(int evalBatch, int64_t testCount, int worldSize);

// The whole `ringside-trainer` program: options, MPI, data, backend, training, exit code.
// Exit codes: 0 done or stopped on request, 1 a runtime failure (also: a run that does not fit
// in memory, memory_plan.h, or a --checkpoint-dir that cannot be written, both found at start),
// 2 bad options or run spec.
int runTrainerProgram(int argc, char** argv);

}  // namespace ringside::trainer
