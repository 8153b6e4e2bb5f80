// The trainer's settings (the run spec): command-line options with CLI11, and the same settings
// from a JSON run-spec file (--config FILE) whose keys are the long option names, with '_' or '-'
// (e.g. {"global_batch": 256, "hidden": [512, 256]}). Flags given on the command line override the
// file. docs/metrics.md and `ringside-trainer --help` list every option with its default.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "ringside/common/status.h"
#include "ringside/trainer/backend.h"
#include "ringside/trainer/dataset.h"
#include "ringside/trainer/optimizer.h"

namespace ringside::trainer {

struct TrainerConfig {
  // Data
  std::string dataDir = kDefaultDataDir;
  int64_t trainSamples = 0;  // 0 = the whole training split
  int64_t testSamples = 0;   // 0 = the whole test split
  // Model
  std::vector<int> hidden = {256, 128};
  // Schedule
  int epochs = 3;
  int64_t globalBatch = 128;
  int64_t maxSteps = 0;  // 0 = epochs decide; else stop after this many global steps
  // Optimizer
  std::string optimizer = "sgd";
  double lr = 0.1;
  double momentum = 0.9;
  bool nesterov = true;
  double weightDecay = -1.0;  // < 0: the optimizer's default (0 for sgd, 0.01 for adamw)
  double beta1 = 0.9;
  double beta2 = 0.999;
  double epsilon = 1e-8;
  std::string lrSchedule = "cosine";
  int64_t warmupSteps = 0;
  double lrStepEpochs = 1.0;
  double lrGamma = 0.1;
  double lrMin = 0.0;
  // Execution
  std::string backend = "auto";
  double bucketMb = 25.0;
  int threads = 1;
  uint64_t seed = 42;
  int evalBatch = 1000;
  // Output
  int64_t logEvery = 10;
  std::string metricsOut;
  bool quiet = false;
  // Checkpoints
  std::string checkpointDir = "checkpoints";
  int64_t checkpointEvery = 0;  // 0 = only at the end and on SIGTERM
  int keepCheckpoints = 3;
  std::string resume;
};

// Registers every option on `app`, bound to `config`'s fields (their current values are the
// defaults --help shows), and --config FILE for a JSON run spec. Unknown keys in the file, values
// of the wrong type and malformed JSON are parse errors naming the key or position.
void addTrainerOptions(CLI::App& app, TrainerConfig& config);

// Checks what the option validators cannot check alone (combinations, enum names).
// Errors: InvalidArgument naming the option, the value, and what to do.
Status validateTrainerConfig(const TrainerConfig& config);

OptimizerConfig optimizerConfigOf(const TrainerConfig& config);
LrScheduleConfig lrScheduleOf(const TrainerConfig& config);

// The run spec as JSON (keys in snake_case), e.g. for the "start" record and for --print-config.
nlohmann::json toJson(const TrainerConfig& config);

}  // namespace ringside::trainer
