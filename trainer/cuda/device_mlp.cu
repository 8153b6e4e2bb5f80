#include "device_mlp.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

// Row-major buffers through column-major cuBLAS.
//
// A row-major matrix M[r, c] (leading dimension c) read by cuBLAS as column-major is M^T with
// c rows, r columns and ld = c. So every product below is written for the transposes:
//
//   forward   Y[b, out] = X[b, in] W[out, in]^T      <=>  Y^T[out, b] = W[out, in] X^T[in, b]
//             W's buffer is col-major W^T[in, out] (ld in)  -> op(A) = T gives W[out, in]
//             X's buffer is col-major X^T[in, b]   (ld in)  -> op(B) = N
//             gemm(T, N, m=out, n=b, k=in, A=w, lda=in, B=x, ldb=in, C=y, ldc=out)
//
//   weights   dW[out, in] = dY[b, out]^T X[b, in]    <=>  dW^T[in, out] = X^T[in, b] dY[b, out]
//             X's buffer is col-major X^T[in, b]   (ld in)  -> op(A) = N
//             dY's buffer is col-major dY^T[out, b] (ld out) -> op(B) = T gives dY[b, out]
//             gemm(N, T, m=in, n=out, k=b, A=x, lda=in, B=dy, ldb=out, C=dw, ldc=in)
//
//   input     dX[b, in] = dY[b, out] W[out, in]      <=>  dX^T[in, b] = W^T[in, out] dY^T[out, b]
//             W's buffer is col-major W^T[in, out] (ld in)  -> op(A) = N
//             dY's buffer is col-major dY^T[out, b] (ld out) -> op(B) = N
//             gemm(N, N, m=in, n=b, k=out, A=w, lda=in, B=dy, ldb=out, C=dx, ldc=in)
//
// cuBLAS's rules checked for each: op(A) is m x k, op(B) is k x n, C is m x n (ldc >= m); for
// op = N the stored matrix has ld >= its rows (m for A, k for B), for op = T ld >= its rows
// (k for A, n for B). Forward: lda = in = k, ldb = in = k, ldc = out = m. Weights: lda = in = m,
// ldb = out = n, ldc = in = m. Input: lda = in = m, ldb = out = k, ldc = in = m.

namespace ringside::trainer::gpu {

DeviceMlp::DeviceMlp(MlpLayout layout, int maxBatch, cublasHandle_t cublas, cudaStream_t stream,
                     ErrorContext where)
    : layout_(std::move(layout)),
      maxBatch_(maxBatch),
      cublas_(cublas),
      stream_(stream),
      where_(std::move(where)) {}

Status DeviceMlp::allocate() {
  const size_t batch = static_cast<size_t>(maxBatch_);
  // MlpLayout::maxWidth(), computed here: it lives in mlp.cpp beside the CPU's BLAS code, which
  // the plugin does not carry.
  const std::vector<int>& sizes = layout_.layerSizes();
  const size_t width = static_cast<size_t>(*std::max_element(sizes.begin(), sizes.end()));
  size_t floats = batch * (layout_.inputDim() + 2 * width);
  for (const LinearLayerShape& layer : layout_.layers()) floats += batch * layer.out;
  const std::string what = "allocating " + std::to_string(floats * sizeof(float) >> 20) +
                           " MiB of activations for a batch of " + std::to_string(maxBatch_) +
                           " (use a smaller batch if the GPU is full)";

  Status status = [&]() -> Status {
    RINGSIDE_CUDA_ALLOCATE(where_, x_, batch * layout_.inputDim());
    RINGSIDE_CUDA_ALLOCATE(where_, labels_, batch);
    activations_.clear();
    activations_.resize(layout_.layers().size());
    for (size_t l = 0; l < activations_.size(); ++l) {
      RINGSIDE_CUDA_ALLOCATE(where_, activations_[l], batch * layout_.layers()[l].out);
    }
    RINGSIDE_CUDA_ALLOCATE(where_, gradA_, batch * width);
    RINGSIDE_CUDA_ALLOCATE(where_, gradB_, batch * width);
    RINGSIDE_CUDA_ALLOCATE(where_, rowLoss_, batch);
    RINGSIDE_CUDA_ALLOCATE(where_, rowCorrect_, batch);
    RINGSIDE_CUDA_ALLOCATE(where_, deviceSums_, 1);
    RINGSIDE_CUDA_ALLOCATE(where_, hostSums_, 1);
    *hostSums_.get() = LossSums{};
    return Status::ok();
  }();
  return status.withContext(what);
}

Status DeviceMlp::upload(const float* x, const int32_t* labels, int batch) {
  if (batch <= 0 || batch > maxBatch_) {
    return Status::invalidArgument(where_.prefix() + ": batch of " + std::to_string(batch) +
                                   " samples is outside [1, " + std::to_string(maxBatch_) +
                                   "], the largest batch the nccl backend was sized for");
  }
  batch_ = batch;
  RINGSIDE_CUDA_CHECK(
      where_, cudaMemcpyAsync(x_.get(), x, size_t(batch) * layout_.inputDim() * sizeof(float),
                              cudaMemcpyHostToDevice, stream_));
  RINGSIDE_CUDA_CHECK(where_,
                      cudaMemcpyAsync(labels_.get(), labels, size_t(batch) * sizeof(int32_t),
                                      cudaMemcpyHostToDevice, stream_));
  return Status::ok();
}

Status DeviceMlp::gemm(cublasOperation_t transA, cublasOperation_t transB, int m, int n, int k,
                       const float* a, int lda, const float* b, int ldb, float beta, float* c,
                       int ldc) {
  const float alpha = 1.0f;
  RINGSIDE_CUBLAS_CHECK(
      where_, cublasSgemm(cublas_, transA, transB, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc));
  return Status::ok();
}

Status DeviceMlp::forward(const float* params, const BatchPosition* position) {
  const bool withGradient = position != nullptr;
  const auto& layers = layout_.layers();
  const float* input = x_.get();
  for (size_t l = 0; l < layers.size(); ++l) {
    const LinearLayerShape& layer = layers[l];
    float* y = activations_[l].get();
    // Y^T[out, b] = W[out, in] X^T[in, b]: gemm(T, N, out, b, in), see the top of this file.
    RINGSIDE_RETURN_IF_ERROR(gemm(CUBLAS_OP_T, CUBLAS_OP_N, layer.out, batch_, layer.in,
                                  params + layer.weightOffset, layer.in, input, layer.in, 0.0f, y,
                                  layer.out));
    const bool hidden = l + 1 < layers.size();
    RINGSIDE_CUDA_CHECK(where_, launchBiasActivation(y, params + layer.biasOffset, batch_,
                                                     layer.out, hidden, stream_));
    input = y;
  }
  RINGSIDE_CUDA_CHECK(
      where_, launchSoftmaxCrossEntropy(activations_.back().get(), labels_.get(), batch_,
                                        layout_.numClasses(), withGradient ? gradA_.get() : nullptr,
                                        rowLoss_.get(), rowCorrect_.get(), stream_));
  RINGSIDE_CUDA_CHECK(where_, launchLossReduction(rowLoss_.get(), rowCorrect_.get(), batch_,
                                                  deviceSums_.get(), stream_));
  RINGSIDE_CUDA_CHECK(where_, cudaMemcpyAsync(hostSums_.get(), deviceSums_.get(), sizeof(LossSums),
                                              cudaMemcpyDeviceToHost, stream_));
  return Status::ok();
}

Status DeviceMlp::backward(const float* params, float* grads,
                           const std::function<Status(int layer)>& onLayerReady) {
  const auto& layers = layout_.layers();
  float* dy = gradA_.get();  // d loss / d logits from forward()
  float* dx = gradB_.get();
  for (int l = static_cast<int>(layers.size()) - 1; l >= 0; --l) {
    const LinearLayerShape& layer = layers[l];
    const float* input = l == 0 ? x_.get() : activations_[l - 1].get();
    const float* w = params + layer.weightOffset;
    // dW^T[in, out] = X^T[in, b] dY[b, out]: gemm(N, T, in, out, b).
    RINGSIDE_RETURN_IF_ERROR(gemm(CUBLAS_OP_N, CUBLAS_OP_T, layer.in, layer.out, batch_, input,
                                  layer.in, dy, layer.out, 0.0f, grads + layer.weightOffset,
                                  layer.in));
    RINGSIDE_CUDA_CHECK(
        where_, launchBiasGradient(dy, batch_, layer.out, grads + layer.biasOffset, stream_));
    // The layer's gradients are complete: its bucket's all-reduce may start while the input
    // gradient below is still being computed.
    if (onLayerReady) RINGSIDE_RETURN_IF_ERROR(onLayerReady(l));
    if (l == 0) break;  // the input needs no gradient
    // dX^T[in, b] = W^T[in, out] dY^T[out, b]: gemm(N, N, in, b, out).
    RINGSIDE_RETURN_IF_ERROR(gemm(CUBLAS_OP_N, CUBLAS_OP_N, layer.in, batch_, layer.out, w,
                                  layer.in, dy, layer.out, 0.0f, dx, layer.in));
    RINGSIDE_CUDA_CHECK(where_, launchReluBackward(activations_[l - 1].get(), dx,
                                                   size_t(batch_) * layer.in, stream_));
    std::swap(dy, dx);
  }
  return Status::ok();
}

}  // namespace ringside::trainer::gpu
