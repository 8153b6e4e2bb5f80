#include "ringside/trainer/mlp.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

namespace ringside::trainer {

namespace {

void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, float alpha, const float* a,
          int lda, const float* b, int ldb, float beta, float* c, int ldc) {
  cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, double alpha,
          const double* a, int lda, const double* b, int ldb, double beta, double* c, int ldc) {
  cblas_dgemm(CblasRowMajor, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

// Rows of a GEMM output per piece, so that one piece is at most kStopCheckFlops (at least one
// row; all `rows` when a row costs nothing).
int rowsPerPiece(uint64_t rowFlops, int rows) {
  if (rows <= 1 || rowFlops == 0) return std::max(rows, 1);
  return static_cast<int>(std::clamp<uint64_t>(kStopCheckFlops / rowFlops, 1, uint64_t(rows)));
}

}  // namespace

Result<MlpLayout> MlpLayout::create(std::vector<int> layerSizes) {
  if (layerSizes.size() < 2) {
    return Status::invalidArgument("an MLP needs at least an input and an output size");
  }
  for (int size : layerSizes) {
    if (size <= 0) {
      return Status::invalidArgument("layer size " + std::to_string(size) +
                                     " is not positive: every layer needs at least one unit");
    }
  }
  MlpLayout layout;
  layout.layerSizes_ = std::move(layerSizes);
  size_t offset = 0;
  for (size_t l = 0; l + 1 < layout.layerSizes_.size(); ++l) {
    LinearLayerShape shape;
    shape.in = layout.layerSizes_[l];
    shape.out = layout.layerSizes_[l + 1];
    shape.weightOffset = offset;
    shape.biasOffset = offset + size_t(shape.in) * shape.out;
    offset += shape.paramCount();
    layout.layers_.push_back(shape);
  }
  layout.numParams_ = offset;
  return layout;
}

int MlpLayout::maxWidth() const {
  return *std::max_element(layerSizes_.begin(), layerSizes_.end());
}

void initMlpParameters(const MlpLayout& layout, uint64_t seed, float* params) {
  std::mt19937_64 rng(seed);
  for (const LinearLayerShape& layer : layout.layers()) {
    // kaiming_uniform_(a=sqrt(5)): gain = sqrt(2 / (1 + a^2)) = sqrt(1/3), bound =
    // gain * sqrt(3 / fan_in) = 1 / sqrt(fan_in); the bias uses the same bound.
    const double bound = 1.0 / std::sqrt(static_cast<double>(layer.in));
    auto uniform = [&]() {
      // 53 random bits -> [0, 1), then to [-bound, bound).
      const double unit = static_cast<double>(rng() >> 11) * 0x1.0p-53;
      return static_cast<float>((2.0 * unit - 1.0) * bound);
    };
    for (size_t i = 0; i < layer.paramCount(); ++i) params[layer.weightOffset + i] = uniform();
  }
}

template <typename T>
void linearForward(const T* x, const T* w, const T* b, int batch, int in, int out, T* y) {
  for (int i = 0; i < batch; ++i) std::copy(b, b + out, y + size_t(i) * out);
  gemm(CblasNoTrans, CblasTrans, batch, out, in, T(1), x, in, w, in, T(1), y, out);
}

template <typename T>
void linearBackward(const T* x, const T* w, const T* dy, int batch, int in, int out, T* dw, T* db,
                    T* dx) {
  gemm(CblasTrans, CblasNoTrans, out, in, batch, T(1), dy, out, x, in, T(0), dw, in);
  std::fill(db, db + out, T(0));
  for (int i = 0; i < batch; ++i) {
    const T* row = dy + size_t(i) * out;
    for (int j = 0; j < out; ++j) db[j] += row[j];
  }
  if (dx != nullptr) {
    gemm(CblasNoTrans, CblasNoTrans, batch, in, out, T(1), dy, out, w, in, T(0), dx, in);
  }
}

template <typename T>
void reluForward(T* y, size_t count) {
  for (size_t i = 0; i < count; ++i) y[i] = y[i] > T(0) ? y[i] : T(0);
}

template <typename T>
void reluBackward(const T* y, T* dy, size_t count) {
  for (size_t i = 0; i < count; ++i) dy[i] = y[i] > T(0) ? dy[i] : T(0);
}

template <typename T>
T softmaxCrossEntropy(const T* logits, const int32_t* labels, int batch, int classes, T* dlogits,
                      int64_t* correct) {
  double lossSum = 0.0;
  int64_t hits = 0;
  const T invBatch = T(1) / T(batch);
  for (int i = 0; i < batch; ++i) {
    const T* row = logits + size_t(i) * classes;
    const int label = labels[i];
    int argmax = 0;
    for (int j = 1; j < classes; ++j) {
      if (row[j] > row[argmax]) argmax = j;
    }
    hits += argmax == label;
    const T maxLogit = row[argmax];
    T sumExp = T(0);
    for (int j = 0; j < classes; ++j) sumExp += std::exp(row[j] - maxLogit);
    const T logSumExp = maxLogit + std::log(sumExp);
    lossSum += static_cast<double>(logSumExp - row[label]);
    if (dlogits != nullptr) {
      T* grad = dlogits + size_t(i) * classes;
      for (int j = 0; j < classes; ++j) {
        grad[j] = (std::exp(row[j] - logSumExp) - (j == label ? T(1) : T(0))) * invBatch;
      }
    }
  }
  if (correct != nullptr) *correct += hits;
  return static_cast<T>(lossSum / batch);
}

template <typename T>
MlpWorkspace<T>::MlpWorkspace(const MlpLayout& layout, int maxBatch)
    : layout_(layout), maxBatch_(maxBatch) {
  for (const LinearLayerShape& layer : layout.layers()) {
    activations_.emplace_back(size_t(maxBatch) * layer.out);
  }
  gradA_.resize(size_t(maxBatch) * layout.maxWidth());
  gradB_.resize(size_t(maxBatch) * layout.maxWidth());
}

template <typename T>
bool MlpWorkspace<T>::pause(uint64_t flops, const StopCheck& stopCheck) {
  flopsSinceCheck_ += flops;
  if (!stopCheck || flopsSinceCheck_ < kStopCheckFlops) return false;
  flopsSinceCheck_ = 0;
  stopped_ = stopCheck();
  return stopped_;
}

template <typename T>
T MlpWorkspace<T>::forward(const T* params, const T* x, const int32_t* labels, int batch,
                           int64_t* correct, const StopCheck& stopCheck) {
  batch_ = batch;
  stopped_ = false;
  flopsSinceCheck_ = 0;
  const auto& layers = layout_.layers();
  const T* input = x;
  for (size_t l = 0; l < layers.size(); ++l) {
    const LinearLayerShape& layer = layers[l];
    T* y = activations_[l].data();
    // Rows of the batch per piece: at most kStopCheckFlops of GEMM (2 * in * out per row).
    const uint64_t rowFlops = 2 * uint64_t(layer.in) * uint64_t(layer.out);
    const int rows = rowsPerPiece(rowFlops, batch);
    for (int first = 0; first < batch; first += rows) {
      const int count = std::min(rows, batch - first);
      linearForward(input + size_t(first) * layer.in, params + layer.weightOffset,
                    params + layer.biasOffset, count, layer.in, layer.out,
                    y + size_t(first) * layer.out);
      if (pause(rowFlops * count, stopCheck)) return std::numeric_limits<T>::quiet_NaN();
    }
    if (l + 1 < layers.size()) reluForward(y, size_t(batch) * layer.out);
    input = y;
  }
  return softmaxCrossEntropy(activations_.back().data(), labels, batch, layout_.numClasses(),
                             // The loss gradient is computed here so backward() need not keep
                             // the labels.
                             gradA_.data(), correct);
}

template <typename T>
void MlpWorkspace<T>::backward(const T* params, const T* x, T* grads,
                               const std::function<void(int layer)>& onLayerReady,
                               const StopCheck& stopCheck) {
  stopped_ = false;
  flopsSinceCheck_ = 0;
  const auto& layers = layout_.layers();
  T* dy = gradA_.data();  // d loss / d logits from forward()
  T* dx = gradB_.data();
  const int batch = batch_;
  for (int l = static_cast<int>(layers.size()) - 1; l >= 0; --l) {
    const LinearLayerShape& layer = layers[l];
    const int in = layer.in;
    const int out = layer.out;
    const T* input = l == 0 ? x : activations_[l - 1].data();
    const T* w = params + layer.weightOffset;
    T* dw = grads + layer.weightOffset;
    T* db = grads + layer.biasOffset;
    // linearBackward, in pieces: dw[out, in] = dy^T x by rows of dw (2 * in * batch per row),
    // then db, then dx[batch, in] = dy w by rows of dx (2 * in * out per row).
    const uint64_t weightRowFlops = 2 * uint64_t(in) * uint64_t(batch);
    const int weightRows = rowsPerPiece(weightRowFlops, out);
    for (int first = 0; first < out; first += weightRows) {
      const int count = std::min(weightRows, out - first);
      gemm(CblasTrans, CblasNoTrans, count, in, batch, T(1), dy + first, out, input, in, T(0),
           dw + size_t(first) * in, in);
      if (pause(weightRowFlops * count, stopCheck)) return;
    }
    std::fill(db, db + out, T(0));
    for (int i = 0; i < batch; ++i) {
      const T* row = dy + size_t(i) * out;
      for (int j = 0; j < out; ++j) db[j] += row[j];
    }
    if (onLayerReady) onLayerReady(l);
    if (l == 0) break;  // the first layer needs no input gradient
    const uint64_t inputRowFlops = 2 * uint64_t(in) * uint64_t(out);
    const int inputRows = rowsPerPiece(inputRowFlops, batch);
    for (int first = 0; first < batch; first += inputRows) {
      const int count = std::min(inputRows, batch - first);
      gemm(CblasNoTrans, CblasNoTrans, count, in, out, T(1), dy + size_t(first) * out, out, w, in,
           T(0), dx + size_t(first) * in, in);
      if (pause(inputRowFlops * count, stopCheck)) return;
    }
    reluBackward(activations_[l - 1].data(), dx, size_t(batch) * in);
    std::swap(dy, dx);
  }
}

#define RINGSIDE_INSTANTIATE(T)                                                             \
  template void linearForward<T>(const T*, const T*, const T*, int, int, int, T*);          \
  template void linearBackward<T>(const T*, const T*, const T*, int, int, int, T*, T*, T*); \
  template void reluForward<T>(T*, size_t);                                                 \
  template void reluBackward<T>(const T*, T*, size_t);                                      \
  template T softmaxCrossEntropy<T>(const T*, const int32_t*, int, int, T*, int64_t*);      \
  template class MlpWorkspace<T>;
RINGSIDE_INSTANTIATE(float)
RINGSIDE_INSTANTIATE(double)
#undef RINGSIDE_INSTANTIATE

}  // namespace ringside::trainer
