// Optimizers and learning-rate schedules. The update rules mirror PyTorch's torch.optim.SGD and
// torch.optim.AdamW (PyTorch 2.x documentation, "Algorithm" sections), so a run here and the same
// run in PyTorch follow the same trajectory up to rounding.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ringside/common/status.h"

namespace ringside::trainer {

enum class OptimizerKind { kSgd, kAdamW };

struct OptimizerConfig {
  OptimizerKind kind = OptimizerKind::kSgd;
  double momentum = 0.9;     // SGD momentum (0 disables the buffer)
  bool nesterov = false;     // SGD Nesterov momentum (needs momentum > 0)
  double weightDecay = 0.0;  // SGD: L2 added to the gradient; AdamW: decoupled decay
  double beta1 = 0.9;        // AdamW first-moment decay
  double beta2 = 0.999;      // AdamW second-moment decay
  double epsilon = 1e-8;     // AdamW denominator term
};

// Everything an optimizer carries between steps; the checkpoint stores it.
// SGD: buffers = {momentum} (empty when momentum == 0). AdamW: buffers = {exp_avg, exp_avg_sq}.
// Each buffer has one element per parameter, in the flat parameter layout.
struct OptimizerState {
  int64_t stepCount = 0;  // optimizer steps taken so far
  std::vector<std::vector<float>> buffers;
};

const char* optimizerName(OptimizerKind kind);
// "sgd" or "adamw". Errors: InvalidArgument naming the value and the accepted ones.
Result<OptimizerKind> parseOptimizerKind(const std::string& name);

// Number of state buffers the optimizer keeps.
int optimizerBufferCount(const OptimizerConfig& config);

// Zeroed state for `numParams` parameters.
OptimizerState makeOptimizerState(const OptimizerConfig& config, size_t numParams);

// One update of params[count] with grads[count] * gradScale at learning rate lr (gradScale folds
// the data-parallel averaging 1 / worldSize into the update); advances state.stepCount.
// SGD:   g += wd * p; buf = step == 0 ? g : momentum * buf + g; g = nesterov ? g + momentum * buf
//        : buf; p -= lr * g.
// AdamW: p *= 1 - lr * wd; m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2;
//        p -= lr * (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps), t = step + 1.
// Not thread-safe for the same state.
void optimizerStep(const OptimizerConfig& config, double lr, float* params, const float* grads,
                   size_t count, OptimizerState* state, float gradScale = 1.0f);

enum class LrScheduleKind { kConstant, kStep, kCosine };

struct LrScheduleConfig {
  LrScheduleKind kind = LrScheduleKind::kConstant;
  double baseLr = 0.1;
  int64_t warmupSteps = 0;  // linear warm-up from baseLr / warmupSteps up to baseLr
  double stepEpochs = 1.0;  // kStep: multiply by gamma every stepEpochs epochs
  double gamma = 0.1;       // kStep: decay factor
  double minLr = 0.0;       // kCosine: the rate at the last step
};

const char* lrScheduleName(LrScheduleKind kind);
// "constant", "step" or "cosine". Errors: InvalidArgument naming the value and the accepted ones.
Result<LrScheduleKind> parseLrScheduleKind(const std::string& name);

// The learning rate for global step `step` (0-based) of a run of `totalSteps` steps with
// `stepsPerEpoch` steps per epoch. A pure function of its arguments, so a resumed run needs no
// scheduler state. Warm-up: lr = baseLr * (step + 1) / warmupSteps for step < warmupSteps.
// Cosine (SGDR without restarts, Loshchilov & Hutter 2017) over the steps after warm-up:
// lr = minLr + (baseLr - minLr) * (1 + cos(pi * progress)) / 2.
// Step: lr = baseLr * gamma^floor(epoch / stepEpochs) with fractional epoch = step / stepsPerEpoch.
double learningRate(const LrScheduleConfig& config, int64_t step, int64_t stepsPerEpoch,
                    int64_t totalSteps);

}  // namespace ringside::trainer
