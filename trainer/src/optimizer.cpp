#include "ringside/trainer/optimizer.h"

#include <cmath>
#include <numbers>

namespace ringside::trainer {

const char* optimizerName(OptimizerKind kind) {
  return kind == OptimizerKind::kSgd ? "sgd" : "adamw";
}

Result<OptimizerKind> parseOptimizerKind(const std::string& name) {
  if (name == "sgd") return OptimizerKind::kSgd;
  if (name == "adamw") return OptimizerKind::kAdamW;
  return Status::invalidArgument("unknown optimizer '" + name + "': use sgd or adamw");
}

int optimizerBufferCount(const OptimizerConfig& config) {
  if (config.kind == OptimizerKind::kAdamW) return 2;
  return config.momentum != 0.0 ? 1 : 0;
}

OptimizerState makeOptimizerState(const OptimizerConfig& config, size_t numParams) {
  OptimizerState state;
  state.buffers.assign(optimizerBufferCount(config), std::vector<float>(numParams, 0.0f));
  return state;
}

void optimizerStep(const OptimizerConfig& config, double lr, float* params, const float* grads,
                   size_t count, OptimizerState* state) {
  const float rate = static_cast<float>(lr);
  const float decay = static_cast<float>(config.weightDecay);
  if (config.kind == OptimizerKind::kSgd) {
    const float momentum = static_cast<float>(config.momentum);
    float* buf = state->buffers.empty() ? nullptr : state->buffers[0].data();
    const bool first = state->stepCount == 0;
    for (size_t i = 0; i < count; ++i) {
      float g = grads[i] + decay * params[i];
      if (buf != nullptr) {
        buf[i] = first ? g : momentum * buf[i] + g;
        g = config.nesterov ? g + momentum * buf[i] : buf[i];
      }
      params[i] -= rate * g;
    }
  } else {
    const double t = static_cast<double>(state->stepCount + 1);
    const float b1 = static_cast<float>(config.beta1);
    const float b2 = static_cast<float>(config.beta2);
    const float correction1 = static_cast<float>(1.0 - std::pow(config.beta1, t));
    const float sqrtCorrection2 = static_cast<float>(std::sqrt(1.0 - std::pow(config.beta2, t)));
    const float eps = static_cast<float>(config.epsilon);
    const float stepSize = rate / correction1;
    float* m = state->buffers[0].data();
    float* v = state->buffers[1].data();
    for (size_t i = 0; i < count; ++i) {
      params[i] *= 1.0f - rate * decay;
      m[i] = b1 * m[i] + (1.0f - b1) * grads[i];
      v[i] = b2 * v[i] + (1.0f - b2) * grads[i] * grads[i];
      params[i] -= stepSize * m[i] / (std::sqrt(v[i]) / sqrtCorrection2 + eps);
    }
  }
  ++state->stepCount;
}

const char* lrScheduleName(LrScheduleKind kind) {
  switch (kind) {
    case LrScheduleKind::kConstant:
      return "constant";
    case LrScheduleKind::kStep:
      return "step";
    case LrScheduleKind::kCosine:
      return "cosine";
  }
  return "constant";
}

Result<LrScheduleKind> parseLrScheduleKind(const std::string& name) {
  if (name == "constant") return LrScheduleKind::kConstant;
  if (name == "step") return LrScheduleKind::kStep;
  if (name == "cosine") return LrScheduleKind::kCosine;
  return Status::invalidArgument("unknown learning-rate schedule '" + name +
                                 "': use constant, step or cosine");
}

double learningRate(const LrScheduleConfig& config, int64_t step, int64_t stepsPerEpoch,
                    int64_t totalSteps) {
  if (step < config.warmupSteps) {
    return config.baseLr * static_cast<double>(step + 1) / static_cast<double>(config.warmupSteps);
  }
  switch (config.kind) {
    case LrScheduleKind::kConstant:
      return config.baseLr;
    case LrScheduleKind::kStep: {
      const double epoch = static_cast<double>(step) / static_cast<double>(stepsPerEpoch);
      return config.baseLr * std::pow(config.gamma, std::floor(epoch / config.stepEpochs));
    }
    case LrScheduleKind::kCosine: {
      const int64_t span = totalSteps - config.warmupSteps;
      if (span <= 1) return config.baseLr;
      const double progress =
          static_cast<double>(step - config.warmupSteps) / static_cast<double>(span - 1);
      return config.minLr +
             (config.baseLr - config.minLr) * 0.5 * (1.0 + std::cos(std::numbers::pi * progress));
    }
  }
  return config.baseLr;
}

}  // namespace ringside::trainer
