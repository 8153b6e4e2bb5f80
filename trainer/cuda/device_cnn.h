// DeviceCnn: the GPU twin of CnnWorkspace (cnn.h). Convolutions (forward, backward data and
// filter, bias gradient), ReLU and max-pooling (forward and backward) through cuDNN's
// convolution and ops API; the two Linear layers through cuBLAS as DeviceMlp runs them; dropout,
// the ReLU gradient, biases of the Linear layers and the loss through kernels.cuh. Tensors are
// NCHW float32, the parameters in model.h's flat layout ([out, in, 3, 3] filters, cuDNN's KCRS).
//
// Numerics: convolutions run in full FP32 (CUDNN_FMA_MATH, no TF32, as the cuBLAS handle is set
// up), with the fastest deterministic algorithm cuDNN's heuristics list for each batch size
// (cudnnGetConvolution*Algorithm_v7; with ConvAlgorithm::kDirect no Winograd or FFT one), and
// deterministic max-pooling, so a run repeats bit for bit on the same GPU model. Results match
// the CPU backend up to rounding.
//
// Every method except allocate() only enqueues work on the stream. Not thread-safe: one object
// per backend, used from one thread with its device current.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include "cuda_check.h"
#include "device_buffer.h"
#include "device_model.h"
#include "kernels.cuh"
#include "ringside/trainer/model.h"

namespace ringside::trainer::gpu {

class DeviceCnn final : public DeviceModel {
 public:
  // `cublas` must be bound to `stream` and outlive this object. `dropoutSeed`: the run seed.
  // `convAlgorithm`: kAuto takes cuDNN's fastest deterministic algorithm of any kind, kDirect
  // its fastest deterministic one that is no Winograd or FFT transform.
  DeviceCnn(CnnLayout layout, int maxBatch, uint64_t dropoutSeed, ConvAlgorithm convAlgorithm,
            cublasHandle_t cublas, cudaStream_t stream, ErrorContext where);
  ~DeviceCnn() override;
  DeviceCnn(const DeviceCnn&) = delete;
  DeviceCnn& operator=(const DeviceCnn&) = delete;

  // Creates the cuDNN handle (bound to the stream) and descriptors, and allocates the
  // activations for maxBatch samples (about CnnWorkspace::planFloats(layout, maxBatch, true)
  // floats). Errors: Internal from cuDNN or CUDA, naming the bytes asked for when memory runs out.
  Status allocate() override;
  Status upload(const float* x, const int32_t* labels, int batch) override;
  Status forward(const float* params, const BatchPosition* position) override;
  Status backward(const float* params, float* grads,
                  const std::function<Status(int layer)>& onLayerReady) override;
  const LossSums& hostLossSums() const override { return *hostSums_.get(); }
  int maxBatch() const override { return maxBatch_; }

  // cuDNN's version, e.g. "9.19.0", for the backend's description.
  static std::string cudnnVersionText();

 private:
  struct Algorithms {
    cudnnConvolutionFwdAlgo_t forward = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
    cudnnConvolutionBwdFilterAlgo_t filter = CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1;
    cudnnConvolutionBwdDataAlgo_t data = CUDNN_CONVOLUTION_BWD_DATA_ALGO_1;
  };
  // One conv -> ReLU -> max-pool stage: descriptors (their batch dimension set by setBatch) and
  // buffers for maxBatch samples.
  struct Stage {
    cudnnTensorDescriptor_t input = nullptr;   // [batch, in, h, w]
    cudnnTensorDescriptor_t output = nullptr;  // [batch, out, h, w]
    cudnnTensorDescriptor_t pooled = nullptr;  // [batch, out, h / 2, w / 2]
    cudnnTensorDescriptor_t bias = nullptr;    // [1, out, 1, 1]
    cudnnFilterDescriptor_t filter = nullptr;  // [out, in, 3, 3]
    cudnnConvolutionDescriptor_t convolution = nullptr;
    DeviceBuffer<float> activation;      // ReLU(conv + bias) [maxBatch, out, h, w]
    DeviceBuffer<float> pooledOut;       // [maxBatch, out, h / 2, w / 2]
    DeviceBuffer<float> diffActivation;  // d loss / d (conv + bias) [maxBatch, out, h, w]
    DeviceBuffer<float> diffInput;       // d loss / d input [maxBatch, in, h, w] (stages > 0)
  };

  // Sets every tensor descriptor's batch dimension and picks the stages' algorithms for `batch`
  // (cached per batch size), growing the workspace when they need more. Errors: Internal.
  Status setBatch(int batch);
  Status gemm(cublasOperation_t transA, cublasOperation_t transB, int m, int n, int k,
              const float* a, int lda, const float* b, int ldb, float* c, int ldc);

  CnnLayout layout_;
  int maxBatch_;
  uint64_t dropoutSeed_;
  ConvAlgorithm convAlgorithm_;
  cublasHandle_t cublas_;
  cudaStream_t stream_;
  ErrorContext where_;
  int batch_ = 0;
  int descriptorBatch_ = 0;  // the batch the descriptors are set for

  cudnnHandle_t cudnn_ = nullptr;
  cudnnPoolingDescriptor_t pool_ = nullptr;
  cudnnActivationDescriptor_t relu_ = nullptr;
  std::vector<Stage> stages_;
  std::map<int, std::vector<Algorithms>> algorithms_;  // per batch size: one per stage
  DeviceBuffer<unsigned char> workspace_;              // cuDNN's, shared by every call

  DeviceBuffer<float> x_;              // [maxBatch, C * H * W]
  DeviceBuffer<int32_t> labels_;       // [maxBatch]
  DeviceBuffer<float> mask_;           // [maxBatch, flat]: dropout multipliers
  DeviceBuffer<float> dropped_;        // [maxBatch, flat]
  DeviceBuffer<float> dFlat_;          // [maxBatch, flat]
  DeviceBuffer<float> hidden_;         // [maxBatch, hidden]: after ReLU
  DeviceBuffer<float> dHidden_;        // [maxBatch, hidden]
  DeviceBuffer<float> logits_;         // [maxBatch, classes]
  DeviceBuffer<float> dLogits_;        // [maxBatch, classes]
  const float* fcInput_ = nullptr;     // what the first Linear read: flat or dropped_
  DeviceBuffer<double> rowLoss_;       // [maxBatch]
  DeviceBuffer<int> rowCorrect_;       // [maxBatch]
  DeviceBuffer<LossSums> deviceSums_;  // [1]
  PinnedBuffer<LossSums> hostSums_;    // [1]
};

}  // namespace ringside::trainer::gpu
