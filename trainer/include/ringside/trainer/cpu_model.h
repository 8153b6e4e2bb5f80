// One model replica's forward and backward passes on the CPU (the `mpi` backend, cpu_backend.cpp):
// the MLP (mlp.h, BLAS) or the CNN (cnn.h, oneDNN), optionally in micro-batches whose gradients
// are summed before the all-reduce (gradient accumulation, TrainerConfig.micro_batch).
//
// Not thread-safe: one object per thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "ringside/trainer/mlp.h"
#include "ringside/trainer/model.h"

namespace ringside::trainer {

class CpuModel {
 public:
  virtual ~CpuModel() = default;
  // Forward over x[batch, inputDim] against labels[batch]; returns the mean cross-entropy over
  // the batch and adds the correct predictions to *correct when not null. `position` places the
  // batch in the run for the CNN's dropout masks (model.h); null for evaluation (no dropout, no
  // backward after). A pass cut short by stopCheck returns NaN with stopped() true.
  virtual float forward(const float* params, const float* x, const int32_t* labels, int batch,
                        const BatchPosition* position, int64_t* correct,
                        const StopCheck& stopCheck) = 0;
  // Backward of the last training forward (x is what it was given): writes d(mean loss)/d
  // params into grads[numParams] (overwritten), calling onLayerReady(l) once layer l's gradient
  // is final, from the last layer down to layer 0 (ModelLayout::parameterLayers order).
  // `progress` is called between long pieces of work where the model has them (the CNN's
  // primitives), so the caller can drive communication.
  virtual void backward(const float* params, const float* x, float* grads,
                        const std::function<void(int layer)>& onLayerReady,
                        const StopCheck& stopCheck, const std::function<void()>& progress) = 0;
  // The last forward or backward ended early on a stop request.
  virtual bool stopped() const = 0;
  // Samples per evaluation forward pass.
  virtual int evalChunk() const = 0;
};

// The model of `layout` for batches of up to maxBatch samples (training and evaluation); `seed`
// is the run seed (the CNN's dropout masks). With microBatch > 0 a training batch is computed as
// batch / microBatch passes of microBatch samples (MicroBatchedModel below); 0: one pass.
// `convAlgorithm`: how the CNN's conv layers compute (cnn.h planConvPrimitives; the MLP ignores
// it). `layout` must outlive the model.
std::unique_ptr<CpuModel> makeCpuModel(const ModelLayout& layout, int maxBatch, uint64_t seed,
                                       int microBatch,
                                       ConvAlgorithm convAlgorithm = ConvAlgorithm::kAuto);

// Gradient accumulation over micro-batches, as DDP's no_sync(): a training batch of B samples is
// B / microBatch passes (forward and backward) of microBatch samples each. forward() runs every
// pass but the last completely, summing their gradients in pass order into its own buffer, and
// keeps the last pass's activations; backward() runs the last pass and, as each layer's gradient
// is final, adds the earlier passes' sum to it and scales it by microBatch / B before
// onLayerReady(layer), so the gradient is of the mean loss over the whole batch and the caller's
// bucketed all-reduce overlaps the last pass as without micro-batches. Pass p's samples are
// x[p * microBatch, (p + 1) * microBatch), and its dropout masks those of position.firstSample +
// p * microBatch, so one rank computing the global batch in passes of the N-rank run's local
// batch does exactly the N ranks' arithmetic: with two passes, the sum s0 + s1 is the two-rank
// all-reduce's (floating-point addition of two terms is commutative), which makes one rank
// bit-identical to two (docs/trainer.md, "Equivalence"). The mean loss returned is the mean of
// the passes' mean losses. A batch that is not a multiple of microBatch (evaluation, or a
// caller's error) is one pass.
class MicroBatchedModel final : public CpuModel {
 public:
  // `inner` computes one pass (maxBatch >= microBatch); microBatch >= 1.
  MicroBatchedModel(std::unique_ptr<CpuModel> inner, const ModelLayout& layout, int microBatch);

  float forward(const float* params, const float* x, const int32_t* labels, int batch,
                const BatchPosition* position, int64_t* correct,
                const StopCheck& stopCheck) override;
  void backward(const float* params, const float* x, float* grads,
                const std::function<void(int layer)>& onLayerReady, const StopCheck& stopCheck,
                const std::function<void()>& progress) override;
  bool stopped() const override { return inner_->stopped(); }
  int evalChunk() const override { return inner_->evalChunk(); }

 private:
  std::unique_ptr<CpuModel> inner_;
  const ModelLayout& layout_;
  int microBatch_;
  int passes_ = 1;              // of the last training forward
  std::vector<float> sum_;      // [numParams]: the earlier passes' gradients, summed in order
  std::vector<float> scratch_;  // [numParams]: one earlier pass's gradients
};

}  // namespace ringside::trainer
