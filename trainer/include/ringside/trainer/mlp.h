// The multilayer perceptron the trainer trains: Linear -> ReLU -> ... -> Linear, with softmax
// cross-entropy on the logits. CPU math through BLAS, templated on the scalar type so that the
// tests can check every gradient against finite differences in float64.
//
// Parameters live in one flat buffer: for each layer in forward order its weight [out, in]
// (row-major, PyTorch's nn.Linear layout) then its bias [out]. Gradients use the same layout, so
// a run of consecutive layers is one contiguous range (what gradient buckets rely on).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "ringside/common/status.h"

namespace ringside::trainer {

struct LinearLayerShape {
  int in = 0;               // input features
  int out = 0;              // output features
  size_t weightOffset = 0;  // into the flat parameter buffer, elements
  size_t biasOffset = 0;    // = weightOffset + in * out
  size_t paramCount() const { return size_t(in) * out + out; }
};

class MlpLayout {
 public:
  // layerSizes = {inputDim, hidden..., numClasses}. Errors: InvalidArgument when fewer than two
  // sizes are given or a size is not positive.
  static Result<MlpLayout> create(std::vector<int> layerSizes);

  const std::vector<int>& layerSizes() const { return layerSizes_; }
  const std::vector<LinearLayerShape>& layers() const { return layers_; }
  size_t numParams() const { return numParams_; }
  int inputDim() const { return layerSizes_.front(); }
  int numClasses() const { return layerSizes_.back(); }
  // The widest layer output: sizes workspaces.
  int maxWidth() const;

 private:
  std::vector<int> layerSizes_;
  std::vector<LinearLayerShape> layers_;
  size_t numParams_ = 0;
};

// Fills `params` ([layout.numParams()]) as PyTorch's nn.Linear.reset_parameters() does:
// weight ~ kaiming_uniform_(a = sqrt(5)), i.e. U(-1/sqrt(fan_in), 1/sqrt(fan_in)), and bias ~
// U(-1/sqrt(fan_in), 1/sqrt(fan_in)), drawn from a mt19937_64 seeded with `seed`.
// Deterministic for a given seed and layout.
void initMlpParameters(const MlpLayout& layout, uint64_t seed, float* params);

// ---- Layer operations; all buffers row-major, T is float or double. Thread-safe (no state).

// y[batch, out] = x[batch, in] * w[out, in]^T + b[out].
template <typename T>
void linearForward(const T* x, const T* w, const T* b, int batch, int in, int out, T* y);

// From dy[batch, out]: dw[out, in] = dy^T x, db[out] = column sums of dy, and dx[batch, in] =
// dy w when dx is not null (the first layer needs no input gradient).
template <typename T>
void linearBackward(const T* x, const T* w, const T* dy, int batch, int in, int out, T* dw, T* db,
                    T* dx);

// In place: y = max(y, 0).
template <typename T>
void reluForward(T* y, size_t count);

// In place: dy = dy where y > 0, else 0 (y is the ReLU output).
template <typename T>
void reluBackward(const T* y, T* dy, size_t count);

// Mean softmax cross-entropy of logits[batch, classes] against labels[batch] (nats), computed
// with the max-subtraction (log-sum-exp) trick. When dlogits is not null it receives
// d(mean loss)/d(logits) = (softmax - onehot) / batch. When correct is not null it receives the
// number of rows whose arg-max equals the label. Labels must be in [0, classes).
template <typename T>
T softmaxCrossEntropy(const T* logits, const int32_t* labels, int batch, int classes, T* dlogits,
                      int64_t* correct);

// Asked between the pieces of a long forward or backward pass; returning true ends the pass
// early (a stop request). A collective one (the cpu backend's, over all ranks) is safe: pieces
// are planned from the shapes alone, so every rank with the same batch asks at the same points.
using StopCheck = std::function<bool()>;

// A pass is cut into pieces of at most this many floating-point operations (2^30, about 10 ms of
// one core's SGEMM at 100 GFLOP/s): GEMMs are split by rows, and the StopCheck is asked whenever
// at least this much work was done since it was last asked. So a stop request is seen within
// about 2^31 operations however large the model, and a small pass is never split or checked (the
// default 784-256-128-10 model at batch 128 does 60 MFLOP forward).
inline constexpr uint64_t kStopCheckFlops = uint64_t{1} << 30;

// Activations and gradients of one forward/backward pass, sized for up to maxBatch samples.
// Not thread-safe: one workspace per thread.
template <typename T>
class MlpWorkspace {
 public:
  MlpWorkspace(const MlpLayout& layout, int maxBatch);

  // Forward pass over x[batch, inputDim]; returns the mean loss against labels[batch] and adds the
  // number of correct predictions to *correct when not null. Keeps the activations for backward().
  // batch must be <= maxBatch. When stopCheck returns true (see kStopCheckFlops) the pass ends at
  // once: stopped() is then true, the result is NaN and *correct is unchanged.
  T forward(const T* params, const T* x, const int32_t* labels, int batch, int64_t* correct,
            const StopCheck& stopCheck = {});

  // Backward pass of the last forward(): writes d(mean loss)/d(params) into grads
  // ([numParams]), layer by layer from the last to the first, and calls onLayerReady(l) as soon
  // as layer l's weight and bias gradients are complete (DDP's autograd hook point). When
  // stopCheck returns true the pass ends at once: stopped() is then true, and grads holds only
  // the layers whose onLayerReady was called.
  void backward(const T* params, const T* x, T* grads,
                const std::function<void(int layer)>& onLayerReady = {},
                const StopCheck& stopCheck = {});

  // True when the last forward() or backward() ended early on its stopCheck.
  bool stopped() const { return stopped_; }

  int maxBatch() const { return maxBatch_; }

 private:
  // Adds `flops` of work done; asks stopCheck once kStopCheckFlops have accumulated. True when
  // the pass must end (stopped_ is then set).
  bool pause(uint64_t flops, const StopCheck& stopCheck);

  const MlpLayout& layout_;
  int maxBatch_;
  int batch_ = 0;
  bool stopped_ = false;
  uint64_t flopsSinceCheck_ = 0;
  std::vector<std::vector<T>> activations_;  // [layer][batch, out]: post-ReLU (logits for the last)
  std::vector<T> gradA_;  // [maxBatch, maxWidth]: gradient flowing into the current layer's output
  std::vector<T> gradB_;  // [maxBatch, maxWidth]: gradient with respect to its input
};

}  // namespace ringside::trainer
