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

namespace {

// The per-element loops, one per update rule, free of branches and aliasing so that the compiler
// vectorises them; target_clones adds AVX2 and AVX-512 versions picked at load time (the build
// targets plain x86-64).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
    !defined(__SANITIZE_ADDRESS__)
#define RINGSIDE_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define RINGSIDE_VECTOR_CLONES
#endif

RINGSIDE_VECTOR_CLONES
void sgdPlain(float* __restrict params, const float* __restrict grads, size_t count, float scale,
              float rate, float decay) {
  for (size_t i = 0; i < count; ++i) params[i] -= rate * (grads[i] * scale + decay * params[i]);
}

RINGSIDE_VECTOR_CLONES
void sgdMomentum(float* __restrict params, const float* __restrict grads, float* __restrict buf,
                 size_t count, float scale, float rate, float decay, float momentum,
                 float keep, float nesterov) {
  // keep = 0 on the first step (buf = g), else 1 (buf = momentum * buf + g);
  // nesterov = 1 adds the look-ahead term g + momentum * buf, 0 uses buf alone.
  for (size_t i = 0; i < count; ++i) {
    const float g = grads[i] * scale + decay * params[i];
    const float b = keep * momentum * buf[i] + g;
    buf[i] = b;
    params[i] -= rate * (nesterov * g + (nesterov * momentum + (1.0f - nesterov)) * b);
  }
}

RINGSIDE_VECTOR_CLONES
void adamW(float* __restrict params, const float* __restrict grads, float* __restrict m,
           float* __restrict v, size_t count, float scale, float rate, float decay, float b1,
           float b2, float stepSize, float sqrtCorrection2, float eps) {
  for (size_t i = 0; i < count; ++i) {
    const float g = grads[i] * scale;
    float p = params[i] * (1.0f - rate * decay);
    m[i] = b1 * m[i] + (1.0f - b1) * g;
    v[i] = b2 * v[i] + (1.0f - b2) * g * g;
    p -= stepSize * m[i] / (std::sqrt(v[i]) / sqrtCorrection2 + eps);
    params[i] = p;
  }
}

}  // namespace

void optimizerStep(const OptimizerConfig& config, double lr, float* params, const float* grads,
                   size_t count, OptimizerState* state, float gradScale) {
  const float rate = static_cast<float>(lr);
  const float decay = static_cast<float>(config.weightDecay);
  if (config.kind == OptimizerKind::kSgd) {
    if (state->buffers.empty()) {
      sgdPlain(params, grads, count, gradScale, rate, decay);
    } else {
      sgdMomentum(params, grads, state->buffers[0].data(), count, gradScale, rate, decay,
                  static_cast<float>(config.momentum), state->stepCount == 0 ? 0.0f : 1.0f,
                  config.nesterov ? 1.0f : 0.0f);
    }
  } else {
    const double t = static_cast<double>(state->stepCount + 1);
    const float correction1 = static_cast<float>(1.0 - std::pow(config.beta1, t));
    adamW(params, grads, state->buffers[0].data(), state->buffers[1].data(), count, gradScale,
          rate, decay, static_cast<float>(config.beta1), static_cast<float>(config.beta2),
          rate / correction1, static_cast<float>(std::sqrt(1.0 - std::pow(config.beta2, t))),
          static_cast<float>(config.epsilon));
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
