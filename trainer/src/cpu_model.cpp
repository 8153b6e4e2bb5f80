#include "ringside/trainer/cpu_model.h"

#include <algorithm>
#include <cmath>

#include "ringside/trainer/cnn.h"

namespace ringside::trainer {

namespace {

class MlpModel final : public CpuModel {
 public:
  MlpModel(const MlpLayout& layout, int maxBatch) : workspace_(layout, maxBatch) {}
  float forward(const float* params, const float* x, const int32_t* labels, int batch,
                const BatchPosition*, int64_t* correct, const StopCheck& stopCheck) override {
    return workspace_.forward(params, x, labels, batch, correct, stopCheck);
  }
  void backward(const float* params, const float* x, float* grads,
                const std::function<void(int layer)>& onLayerReady, const StopCheck& stopCheck,
                const std::function<void()>&) override {
    workspace_.backward(params, x, grads, onLayerReady, stopCheck);
  }
  bool stopped() const override { return workspace_.stopped(); }
  int evalChunk() const override { return workspace_.maxBatch(); }

 private:
  MlpWorkspace<float> workspace_;
};

class CnnModel final : public CpuModel {
 public:
  CnnModel(const CnnLayout& layout, int maxBatch, uint64_t seed, ConvAlgorithm convAlgorithm)
      : workspace_(layout, seed, convAlgorithm),
        evalChunk_(std::clamp(maxBatch, 1, kCnnEvalChunk)) {}
  float forward(const float* params, const float* x, const int32_t* labels, int batch,
                const BatchPosition* position, int64_t* correct,
                const StopCheck& stopCheck) override {
    return workspace_.forward(params, x, labels, batch, position, correct, stopCheck);
  }
  void backward(const float* params, const float*, float* grads,
                const std::function<void(int layer)>& onLayerReady, const StopCheck& stopCheck,
                const std::function<void()>& progress) override {
    workspace_.backward(params, grads, onLayerReady, stopCheck, progress);
  }
  bool stopped() const override { return workspace_.stopped(); }
  int evalChunk() const override { return evalChunk_; }

 private:
  CnnWorkspace workspace_;
  int evalChunk_;
};

}  // namespace

std::unique_ptr<CpuModel> makeCpuModel(const ModelLayout& layout, int maxBatch, uint64_t seed,
                                       int microBatch, ConvAlgorithm convAlgorithm) {
  std::unique_ptr<CpuModel> model;
  if (layout.isCnn()) {
    model = std::make_unique<CnnModel>(layout.cnn(), maxBatch, seed, convAlgorithm);
  } else {
    model = std::make_unique<MlpModel>(layout.mlp(), maxBatch);
  }
  if (microBatch <= 0) return model;
  return std::make_unique<MicroBatchedModel>(std::move(model), layout, microBatch);
}

MicroBatchedModel::MicroBatchedModel(std::unique_ptr<CpuModel> inner, const ModelLayout& layout,
                                     int microBatch)
    : inner_(std::move(inner)), layout_(layout), microBatch_(std::max(microBatch, 1)) {}

float MicroBatchedModel::forward(const float* params, const float* x, const int32_t* labels,
                                 int batch, const BatchPosition* position, int64_t* correct,
                                 const StopCheck& stopCheck) {
  passes_ = 1;
  if (position == nullptr || batch <= microBatch_ || batch % microBatch_ != 0) {
    return inner_->forward(params, x, labels, batch, position, correct, stopCheck);
  }
  passes_ = batch / microBatch_;
  const size_t inputDim = static_cast<size_t>(layout_.inputDim());
  sum_.resize(layout_.numParams());
  scratch_.resize(layout_.numParams());
  double lossSum = 0.0;
  for (int p = 0; p < passes_; ++p) {
    const size_t first = size_t(p) * microBatch_;
    const BatchPosition pass{position->step, position->firstSample + int64_t(first)};
    const float loss = inner_->forward(params, x + first * inputDim, labels + first, microBatch_,
                                       &pass, correct, stopCheck);
    if (inner_->stopped()) return std::nanf("");
    lossSum += loss;
    if (p == passes_ - 1) break;  // its backward is backward()'s, overlapping the all-reduce
    // No layer is ready for the all-reduce before the last pass (DDP's no_sync()).
    float* grads = p == 0 ? sum_.data() : scratch_.data();
    inner_->backward(params, x + first * inputDim, grads, nullptr, stopCheck, nullptr);
    if (inner_->stopped()) return std::nanf("");
    if (p > 0) {
      for (size_t i = 0; i < sum_.size(); ++i) sum_[i] += scratch_[i];
    }
  }
  return static_cast<float>(lossSum / passes_);
}

void MicroBatchedModel::backward(const float* params, const float* x, float* grads,
                                 const std::function<void(int layer)>& onLayerReady,
                                 const StopCheck& stopCheck,
                                 const std::function<void()>& progress) {
  if (passes_ == 1) {
    inner_->backward(params, x, grads, onLayerReady, stopCheck, progress);
    return;
  }
  const std::vector<ParameterLayer>& layers = layout_.parameterLayers();
  const float scale = 1.0f / static_cast<float>(passes_);
  int next = static_cast<int>(layers.size()) - 1;  // layers are final from the last one down
  // Adds the earlier passes to layer l and averages it: the last pass's gradient plus the sum of
  // the others, then times 1 / passes (the gradient of the mean over the whole batch).
  auto finish = [&](int layer) {
    const ParameterLayer& l = layers[size_t(layer)];
    for (size_t i = l.weightOffset; i < l.weightOffset + l.paramCount(); ++i) {
      grads[i] = (grads[i] + sum_[i]) * scale;
    }
  };
  const std::function<void(int)> ready = [&](int layer) {
    // Layers are reported in order; one skipped would be finished here before its successor.
    while (next >= layer) finish(next--);
    if (onLayerReady) onLayerReady(layer);
  };
  const size_t lastPass = size_t(passes_ - 1) * microBatch_ * size_t(layout_.inputDim());
  inner_->backward(params, x + lastPass, grads, ready, stopCheck, progress);
  if (inner_->stopped()) return;
  while (next >= 0) finish(next--);
}

}  // namespace ringside::trainer
