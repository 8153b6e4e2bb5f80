// DeviceMlp: the GPU twin of MlpWorkspace<float> (mlp.h). It owns the activations and gradient
// scratch of one forward/backward pass for up to maxBatch samples in device memory, and runs the
// pass on one stream: GEMMs through cuBLAS, the rest through kernels.cuh. The parameter and
// gradient buffers ([numParams], the flat layout of mlp.h) belong to the caller.
//
// Every method only enqueues work on the stream (except allocate()); the caller synchronises.
// Not thread-safe: one DeviceMlp per backend, used from one thread with its device current.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "cuda_check.h"
#include "device_buffer.h"
#include "device_model.h"
#include "kernels.cuh"
#include "ringside/common/status.h"
#include "ringside/trainer/mlp.h"

namespace ringside::trainer::gpu {

class DeviceMlp final : public DeviceModel {
 public:
  // `cublas` must be bound to `stream` and outlive this object.
  DeviceMlp(MlpLayout layout, int maxBatch, cublasHandle_t cublas, cudaStream_t stream,
            ErrorContext where);

  // Allocates the device and pinned buffers (about maxBatch * (sum of layer widths + maxWidth * 2 +
  // inputDim) floats). Errors: Internal (naming the bytes asked for) when memory runs out.
  Status allocate() override;

  // Enqueues the copy of x[batch, inputDim] and labels[batch] from (pageable) host memory.
  // batch must be in [1, maxBatch].
  Status upload(const float* x, const int32_t* labels, int batch) override;

  // Enqueues the forward pass over the uploaded batch with parameters params[numParams] (device),
  // the loss, and the copy of the LossSums to the host (read hostLossSums() once the stream has
  // passed it). With `position` (training), d(mean loss)/d(logits) is kept for backward().
  Status forward(const float* params, const BatchPosition* position) override;

  // Enqueues the backward pass of the last forward(withGradient = true): grads[numParams]
  // (device) receives d(mean loss)/d(params), layer by layer from the last to the first.
  // onLayerReady(l) is called on the host right after the kernels that complete layer l's weight
  // and bias gradients have been enqueued, before the input gradient's GEMM (DDP's autograd
  // hook point); an error it returns stops the pass and is returned.
  Status backward(const float* params, float* grads,
                  const std::function<Status(int layer)>& onLayerReady) override;

  // The LossSums of the last forward(), valid once the stream has passed that forward's copy.
  const LossSums& hostLossSums() const override { return *hostSums_.get(); }
  int batch() const { return batch_; }
  int maxBatch() const override { return maxBatch_; }

 private:
  // C = op(A) op(B) (+ beta C) in cuBLAS's column-major terms; see device_mlp.cu for the mapping.
  Status gemm(cublasOperation_t transA, cublasOperation_t transB, int m, int n, int k,
              const float* a, int lda, const float* b, int ldb, float beta, float* c, int ldc);

  MlpLayout layout_;
  int maxBatch_;
  cublasHandle_t cublas_;
  cudaStream_t stream_;
  ErrorContext where_;
  int batch_ = 0;

  DeviceBuffer<float> x_;                         // [maxBatch, inputDim]
  DeviceBuffer<int32_t> labels_;                  // [maxBatch]
  std::vector<DeviceBuffer<float>> activations_;  // [layer][maxBatch, out]: post-ReLU, logits last
  DeviceBuffer<float> gradA_;          // [maxBatch, maxWidth]: gradient at a layer output
  DeviceBuffer<float> gradB_;          // [maxBatch, maxWidth]: gradient at its input
  DeviceBuffer<double> rowLoss_;       // [maxBatch]
  DeviceBuffer<int> rowCorrect_;       // [maxBatch]
  DeviceBuffer<LossSums> deviceSums_;  // [1]
  PinnedBuffer<LossSums> hostSums_;    // [1]
};

}  // namespace ringside::trainer::gpu
