#include "device_cnn.h"

#include <algorithm>
#include <string>

namespace ringside::trainer::gpu {

namespace {

constexpr float kOne = 1.0f;
constexpr float kZero = 0.0f;

// Whether an algorithm is a transform (Winograd or FFT) rather than a direct or GEMM-based
// convolution; ConvAlgorithm::kDirect leaves these out.
bool isTransform(cudnnConvolutionFwdAlgo_t algo) {
  return algo == CUDNN_CONVOLUTION_FWD_ALGO_FFT || algo == CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING ||
         algo == CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD ||
         algo == CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED;
}
bool isTransform(cudnnConvolutionBwdFilterAlgo_t algo) {
  return algo == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT ||
         algo == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT_TILING ||
         algo == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED;
}
bool isTransform(cudnnConvolutionBwdDataAlgo_t algo) {
  return algo == CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT ||
         algo == CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING ||
         algo == CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD ||
         algo == CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED;
}

// The first result cuDNN's heuristics rank that ran (status), is deterministic and, with
// ConvAlgorithm::kDirect, is no transform; the fastest such algorithm it knows. Perf is one of
// the cudnnConvolution*AlgoPerf_t types.
template <typename Perf>
const Perf* firstDeterministic(const Perf* results, int count, ConvAlgorithm algorithm) {
  for (int i = 0; i < count; ++i) {
    if (results[i].status == CUDNN_STATUS_SUCCESS &&
        results[i].determinism == CUDNN_DETERMINISTIC &&
        !(algorithm == ConvAlgorithm::kDirect && isTransform(results[i].algo))) {
      return &results[i];
    }
  }
  return nullptr;
}

}  // namespace

std::string DeviceCnn::cudnnVersionText() {
  // cudnnGetVersion: major * 10000 + minor * 100 + patch since cuDNN 9.
  const size_t code = cudnnGetVersion();
  return std::to_string(code / 10000) + "." + std::to_string(code / 100 % 100) + "." +
         std::to_string(code % 100);
}

DeviceCnn::DeviceCnn(CnnLayout layout, int maxBatch, uint64_t dropoutSeed,
                     ConvAlgorithm convAlgorithm, cublasHandle_t cublas, cudaStream_t stream,
                     ErrorContext where)
    : layout_(std::move(layout)),
      maxBatch_(maxBatch),
      dropoutSeed_(dropoutSeed),
      convAlgorithm_(convAlgorithm),
      cublas_(cublas),
      stream_(stream),
      where_(std::move(where)) {}

DeviceCnn::~DeviceCnn() {
  for (Stage& stage : stages_) {
    for (cudnnTensorDescriptor_t tensor : {stage.input, stage.output, stage.pooled, stage.bias}) {
      if (tensor != nullptr) cudnnDestroyTensorDescriptor(tensor);
    }
    if (stage.filter != nullptr) cudnnDestroyFilterDescriptor(stage.filter);
    if (stage.convolution != nullptr) cudnnDestroyConvolutionDescriptor(stage.convolution);
  }
  if (pool_ != nullptr) cudnnDestroyPoolingDescriptor(pool_);
  if (relu_ != nullptr) cudnnDestroyActivationDescriptor(relu_);
  if (cudnn_ != nullptr) cudnnDestroy(cudnn_);
}

Status DeviceCnn::allocate() {
  RINGSIDE_CUDNN_CHECK(where_, cudnnCreate(&cudnn_));
  RINGSIDE_CUDNN_CHECK(where_, cudnnSetStream(cudnn_, stream_));
  RINGSIDE_CUDNN_CHECK(where_, cudnnCreatePoolingDescriptor(&pool_));
  // nn.MaxPool2d(2): 2x2 windows, stride 2, no padding; the deterministic backward.
  RINGSIDE_CUDNN_CHECK(where_, cudnnSetPooling2dDescriptor(
                                   pool_, CUDNN_POOLING_MAX_DETERMINISTIC, CUDNN_PROPAGATE_NAN,
                                   kPoolWindow, kPoolWindow, 0, 0, kPoolWindow, kPoolWindow));
  RINGSIDE_CUDNN_CHECK(where_, cudnnCreateActivationDescriptor(&relu_));
  RINGSIDE_CUDNN_CHECK(
      where_, cudnnSetActivationDescriptor(relu_, CUDNN_ACTIVATION_RELU, CUDNN_PROPAGATE_NAN, 0.0));

  const size_t batch = static_cast<size_t>(maxBatch_);
  const CnnShape& shape = layout_.shape();
  stages_.clear();
  stages_.resize(layout_.stages().size());
  size_t floats = 0;
  for (size_t s = 0; s < stages_.size(); ++s) {
    const ConvStageShape& c = layout_.stages()[s];
    Stage& stage = stages_[s];
    for (cudnnTensorDescriptor_t* tensor :
         {&stage.input, &stage.output, &stage.pooled, &stage.bias}) {
      RINGSIDE_CUDNN_CHECK(where_, cudnnCreateTensorDescriptor(tensor));
    }
    RINGSIDE_CUDNN_CHECK(
        where_, cudnnSetTensor4dDescriptor(stage.bias, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1,
                                           c.outChannels, 1, 1));
    RINGSIDE_CUDNN_CHECK(where_, cudnnCreateFilterDescriptor(&stage.filter));
    RINGSIDE_CUDNN_CHECK(
        where_, cudnnSetFilter4dDescriptor(stage.filter, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW,
                                           c.outChannels, c.inChannels, kConvKernel, kConvKernel));
    RINGSIDE_CUDNN_CHECK(where_, cudnnCreateConvolutionDescriptor(&stage.convolution));
    // PyTorch's nn.Conv2d(padding=1): cross-correlation, stride 1, no dilation.
    RINGSIDE_CUDNN_CHECK(where_, cudnnSetConvolution2dDescriptor(
                                     stage.convolution, kConvKernel / 2, kConvKernel / 2, 1, 1, 1,
                                     1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    RINGSIDE_CUDNN_CHECK(where_, cudnnSetConvolutionMathType(stage.convolution, CUDNN_FMA_MATH));
    const size_t in = size_t(c.inChannels) * c.height * c.width;
    const size_t out = size_t(c.outChannels) * c.height * c.width;
    const size_t pooled = size_t(c.outChannels) * c.pooledHeight() * c.pooledWidth();
    floats += batch * (2 * out + pooled + (s > 0 ? in : 0));
  }
  const size_t flat = static_cast<size_t>(layout_.flatFeatures());
  floats += batch * (shape.channels * shape.height * shape.width + 3 * flat +
                     2 * size_t(shape.hidden) + 2 * size_t(shape.numClasses));
  const std::string what = "allocating " + std::to_string(floats * sizeof(float) >> 20) +
                           " MiB of CNN activations for a batch of " + std::to_string(maxBatch_) +
                           " (use a smaller batch or --eval-batch if the GPU is full)";
  Status status = [&]() -> Status {
    for (size_t s = 0; s < stages_.size(); ++s) {
      const ConvStageShape& c = layout_.stages()[s];
      Stage& stage = stages_[s];
      const size_t out = batch * c.outChannels * c.height * c.width;
      RINGSIDE_CUDA_ALLOCATE(where_, stage.activation, out);
      RINGSIDE_CUDA_ALLOCATE(where_, stage.diffActivation, out);
      RINGSIDE_CUDA_ALLOCATE(where_, stage.pooledOut,
                             batch * c.outChannels * c.pooledHeight() * c.pooledWidth());
      if (s > 0) {
        RINGSIDE_CUDA_ALLOCATE(where_, stage.diffInput, batch * c.inChannels * c.height * c.width);
      }
    }
    RINGSIDE_CUDA_ALLOCATE(where_, x_, batch * shape.channels * shape.height * shape.width);
    RINGSIDE_CUDA_ALLOCATE(where_, labels_, batch);
    RINGSIDE_CUDA_ALLOCATE(where_, mask_, batch * flat);
    RINGSIDE_CUDA_ALLOCATE(where_, dropped_, batch * flat);
    RINGSIDE_CUDA_ALLOCATE(where_, dFlat_, batch * flat);
    RINGSIDE_CUDA_ALLOCATE(where_, hidden_, batch * shape.hidden);
    RINGSIDE_CUDA_ALLOCATE(where_, dHidden_, batch * shape.hidden);
    RINGSIDE_CUDA_ALLOCATE(where_, logits_, batch * shape.numClasses);
    RINGSIDE_CUDA_ALLOCATE(where_, dLogits_, batch * shape.numClasses);
    RINGSIDE_CUDA_ALLOCATE(where_, rowLoss_, batch);
    RINGSIDE_CUDA_ALLOCATE(where_, rowCorrect_, batch);
    RINGSIDE_CUDA_ALLOCATE(where_, deviceSums_, 1);
    RINGSIDE_CUDA_ALLOCATE(where_, hostSums_, 1);
    *hostSums_.get() = LossSums{};
    return Status::ok();
  }();
  RINGSIDE_RETURN_IF_ERROR(status.withContext(what));
  return setBatch(maxBatch_);
}

Status DeviceCnn::setBatch(int batch) {
  if (batch == descriptorBatch_) return Status::ok();
  for (size_t s = 0; s < stages_.size(); ++s) {
    const ConvStageShape& c = layout_.stages()[s];
    Stage& stage = stages_[s];
    RINGSIDE_CUDNN_CHECK(
        where_, cudnnSetTensor4dDescriptor(stage.input, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, batch,
                                           c.inChannels, c.height, c.width));
    RINGSIDE_CUDNN_CHECK(
        where_, cudnnSetTensor4dDescriptor(stage.output, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, batch,
                                           c.outChannels, c.height, c.width));
    RINGSIDE_CUDNN_CHECK(
        where_, cudnnSetTensor4dDescriptor(stage.pooled, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, batch,
                                           c.outChannels, c.pooledHeight(), c.pooledWidth()));
  }
  descriptorBatch_ = batch;
  if (algorithms_.count(batch) != 0) return Status::ok();

  std::vector<Algorithms> chosen(stages_.size());
  size_t workspaceBytes = workspace_.bytes();
  for (size_t s = 0; s < stages_.size(); ++s) {
    Stage& stage = stages_[s];
    cudnnConvolutionFwdAlgoPerf_t forward[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    cudnnConvolutionBwdFilterAlgoPerf_t filter[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
    cudnnConvolutionBwdDataAlgoPerf_t data[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    int forwardCount = 0, filterCount = 0, dataCount = 0;
    RINGSIDE_CUDNN_CHECK(where_,
                         cudnnGetConvolutionForwardAlgorithm_v7(
                             cudnn_, stage.input, stage.filter, stage.convolution, stage.output,
                             CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &forwardCount, forward));
    RINGSIDE_CUDNN_CHECK(where_,
                         cudnnGetConvolutionBackwardFilterAlgorithm_v7(
                             cudnn_, stage.input, stage.output, stage.convolution, stage.filter,
                             CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &filterCount, filter));
    RINGSIDE_CUDNN_CHECK(where_,
                         cudnnGetConvolutionBackwardDataAlgorithm_v7(
                             cudnn_, stage.filter, stage.output, stage.convolution, stage.input,
                             CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &dataCount, data));
    const auto* f = firstDeterministic(forward, forwardCount, convAlgorithm_);
    const auto* w = firstDeterministic(filter, filterCount, convAlgorithm_);
    const auto* d = firstDeterministic(data, dataCount, convAlgorithm_);
    if (f == nullptr || w == nullptr || (s > 0 && d == nullptr)) {
      return Status::internal(
          where_.prefix() + ": cuDNN " + cudnnVersionText() + " offers no deterministic " +
          (convAlgorithm_ == ConvAlgorithm::kDirect ? "non-transform " : "") +
          "convolution algorithm for conv stage " + std::to_string(s + 1) + " at batch " +
          std::to_string(batch) + ": try another --global-batch or --eval-batch");
    }
    chosen[s].forward = f->algo;
    chosen[s].filter = w->algo;
    workspaceBytes = std::max({workspaceBytes, f->memory, w->memory});
    if (d != nullptr) {
      chosen[s].data = d->algo;
      workspaceBytes = std::max(workspaceBytes, d->memory);
    }
  }
  if (workspaceBytes > workspace_.bytes()) {
    // Work queued with the old workspace must finish before it is freed.
    RINGSIDE_CUDA_CHECK(where_, cudaStreamSynchronize(stream_));
    const Status grown = [&]() -> Status {
      RINGSIDE_CUDA_ALLOCATE(where_, workspace_, workspaceBytes);
      return Status::ok();
    }();
    RINGSIDE_RETURN_IF_ERROR(grown.withContext(
        "allocating " + std::to_string(workspaceBytes >> 20) + " MiB of cuDNN workspace"));
  }
  algorithms_[batch] = std::move(chosen);
  return Status::ok();
}

Status DeviceCnn::upload(const float* x, const int32_t* labels, int batch) {
  if (batch <= 0 || batch > maxBatch_) {
    return Status::invalidArgument(where_.prefix() + ": batch of " + std::to_string(batch) +
                                   " samples is outside [1, " + std::to_string(maxBatch_) +
                                   "], the largest batch the nccl backend was sized for");
  }
  batch_ = batch;
  const CnnShape& shape = layout_.shape();
  const size_t inputFloats = size_t(batch) * shape.channels * shape.height * shape.width;
  RINGSIDE_CUDA_CHECK(where_, cudaMemcpyAsync(x_.get(), x, inputFloats * sizeof(float),
                                              cudaMemcpyHostToDevice, stream_));
  RINGSIDE_CUDA_CHECK(where_,
                      cudaMemcpyAsync(labels_.get(), labels, size_t(batch) * sizeof(int32_t),
                                      cudaMemcpyHostToDevice, stream_));
  return Status::ok();
}

Status DeviceCnn::gemm(cublasOperation_t transA, cublasOperation_t transB, int m, int n, int k,
                       const float* a, int lda, const float* b, int ldb, float* c, int ldc) {
  RINGSIDE_CUBLAS_CHECK(
      where_, cublasSgemm(cublas_, transA, transB, m, n, k, &kOne, a, lda, b, ldb, &kZero, c, ldc));
  return Status::ok();
}

Status DeviceCnn::forward(const float* params, const BatchPosition* position) {
  RINGSIDE_RETURN_IF_ERROR(setBatch(batch_));
  const std::vector<Algorithms>& algorithms = algorithms_.at(batch_);
  const size_t workspaceBytes = workspace_.bytes();
  const float* input = x_.get();
  for (size_t s = 0; s < stages_.size(); ++s) {
    const ConvStageShape& c = layout_.stages()[s];
    Stage& stage = stages_[s];
    RINGSIDE_CUDNN_CHECK(
        where_, cudnnConvolutionForward(cudnn_, &kOne, stage.input, input, stage.filter,
                                        params + c.weightOffset, stage.convolution,
                                        algorithms[s].forward, workspace_.get(), workspaceBytes,
                                        &kZero, stage.output, stage.activation.get()));
    RINGSIDE_CUDNN_CHECK(where_, cudnnAddTensor(cudnn_, &kOne, stage.bias, params + c.biasOffset,
                                                &kOne, stage.output, stage.activation.get()));
    RINGSIDE_CUDNN_CHECK(
        where_, cudnnActivationForward(cudnn_, relu_, &kOne, stage.output, stage.activation.get(),
                                       &kZero, stage.output, stage.activation.get()));
    RINGSIDE_CUDNN_CHECK(
        where_, cudnnPoolingForward(cudnn_, pool_, &kOne, stage.output, stage.activation.get(),
                                    &kZero, stage.pooled, stage.pooledOut.get()));
    input = stage.pooledOut.get();
  }
  // The last pooled output, NCHW and contiguous, is [batch, flat] in PyTorch's view order.
  const int features = layout_.flatFeatures();
  const double dropout = layout_.shape().dropout;
  fcInput_ = input;
  if (position != nullptr && dropout > 0.0) {
    RINGSIDE_CUDA_CHECK(
        where_, launchDropoutForward(input, dropped_.get(), mask_.get(), batch_, features,
                                     static_cast<float>(dropout), dropoutSeed_, position->step,
                                     position->firstSample, stream_));
    fcInput_ = dropped_.get();
  }
  // Y^T[out, b] = W[out, in] X^T[in, b]: gemm(T, N, out, b, in), as device_mlp.cu.
  const LinearLayerShape& fc1 = layout_.linears()[0];
  const LinearLayerShape& fc2 = layout_.linears()[1];
  RINGSIDE_RETURN_IF_ERROR(gemm(CUBLAS_OP_T, CUBLAS_OP_N, fc1.out, batch_, fc1.in,
                                params + fc1.weightOffset, fc1.in, fcInput_, fc1.in, hidden_.get(),
                                fc1.out));
  RINGSIDE_CUDA_CHECK(where_, launchBiasActivation(hidden_.get(), params + fc1.biasOffset, batch_,
                                                   fc1.out, /*relu=*/true, stream_));
  RINGSIDE_RETURN_IF_ERROR(gemm(CUBLAS_OP_T, CUBLAS_OP_N, fc2.out, batch_, fc2.in,
                                params + fc2.weightOffset, fc2.in, hidden_.get(), fc2.in,
                                logits_.get(), fc2.out));
  RINGSIDE_CUDA_CHECK(where_, launchBiasActivation(logits_.get(), params + fc2.biasOffset, batch_,
                                                   fc2.out, /*relu=*/false, stream_));
  RINGSIDE_CUDA_CHECK(where_,
                      launchSoftmaxCrossEntropy(logits_.get(), labels_.get(), batch_, fc2.out,
                                                position != nullptr ? dLogits_.get() : nullptr,
                                                rowLoss_.get(), rowCorrect_.get(), stream_));
  RINGSIDE_CUDA_CHECK(where_, launchLossReduction(rowLoss_.get(), rowCorrect_.get(), batch_,
                                                  deviceSums_.get(), stream_));
  RINGSIDE_CUDA_CHECK(where_, cudaMemcpyAsync(hostSums_.get(), deviceSums_.get(), sizeof(LossSums),
                                              cudaMemcpyDeviceToHost, stream_));
  return Status::ok();
}

Status DeviceCnn::backward(const float* params, float* grads,
                           const std::function<Status(int layer)>& onLayerReady) {
  const std::vector<Algorithms>& algorithms = algorithms_.at(batch_);
  const size_t workspaceBytes = workspace_.bytes();
  const int stageCount = static_cast<int>(stages_.size());
  auto ready = [&](int layer) -> Status {
    return onLayerReady ? onLayerReady(layer) : Status::ok();
  };
  const LinearLayerShape& fc1 = layout_.linears()[0];
  const LinearLayerShape& fc2 = layout_.linears()[1];

  // dW^T[in, out] = X^T[in, b] dY[b, out]: gemm(N, T, in, out, b); dX^T = W^T dY^T: gemm(N, N).
  RINGSIDE_RETURN_IF_ERROR(gemm(CUBLAS_OP_N, CUBLAS_OP_T, fc2.in, fc2.out, batch_, hidden_.get(),
                                fc2.in, dLogits_.get(), fc2.out, grads + fc2.weightOffset, fc2.in));
  RINGSIDE_CUDA_CHECK(
      where_, launchBiasGradient(dLogits_.get(), batch_, fc2.out, grads + fc2.biasOffset, stream_));
  RINGSIDE_RETURN_IF_ERROR(ready(stageCount + 1));
  RINGSIDE_RETURN_IF_ERROR(gemm(CUBLAS_OP_N, CUBLAS_OP_N, fc2.in, batch_, fc2.out,
                                params + fc2.weightOffset, fc2.in, dLogits_.get(), fc2.out,
                                dHidden_.get(), fc2.in));
  RINGSIDE_CUDA_CHECK(
      where_, launchReluBackward(hidden_.get(), dHidden_.get(), size_t(batch_) * fc1.out, stream_));
  RINGSIDE_RETURN_IF_ERROR(gemm(CUBLAS_OP_N, CUBLAS_OP_T, fc1.in, fc1.out, batch_, fcInput_, fc1.in,
                                dHidden_.get(), fc1.out, grads + fc1.weightOffset, fc1.in));
  RINGSIDE_CUDA_CHECK(
      where_, launchBiasGradient(dHidden_.get(), batch_, fc1.out, grads + fc1.biasOffset, stream_));
  RINGSIDE_RETURN_IF_ERROR(ready(stageCount));
  RINGSIDE_RETURN_IF_ERROR(gemm(CUBLAS_OP_N, CUBLAS_OP_N, fc1.in, batch_, fc1.out,
                                params + fc1.weightOffset, fc1.in, dHidden_.get(), fc1.out,
                                dFlat_.get(), fc1.in));
  if (fcInput_ == dropped_.get()) {
    RINGSIDE_CUDA_CHECK(
        where_, launchMultiply(dFlat_.get(), mask_.get(), size_t(batch_) * fc1.in, stream_));
  }

  const float* diffPooled = dFlat_.get();
  for (int s = stageCount - 1; s >= 0; --s) {
    const ConvStageShape& c = layout_.stages()[s];
    Stage& stage = stages_[s];
    const float* input = s == 0 ? x_.get() : stages_[s - 1].pooledOut.get();
    RINGSIDE_CUDNN_CHECK(
        where_, cudnnPoolingBackward(cudnn_, pool_, &kOne, stage.pooled, stage.pooledOut.get(),
                                     stage.pooled, diffPooled, stage.output, stage.activation.get(),
                                     &kZero, stage.output, stage.diffActivation.get()));
    RINGSIDE_CUDA_CHECK(
        where_, launchReluBackward(stage.activation.get(), stage.diffActivation.get(),
                                   size_t(batch_) * c.outChannels * c.height * c.width, stream_));
    RINGSIDE_CUDNN_CHECK(where_, cudnnConvolutionBackwardBias(cudnn_, &kOne, stage.output,
                                                              stage.diffActivation.get(), &kZero,
                                                              stage.bias, grads + c.biasOffset));
    RINGSIDE_CUDNN_CHECK(
        where_, cudnnConvolutionBackwardFilter(
                    cudnn_, &kOne, stage.input, input, stage.output, stage.diffActivation.get(),
                    stage.convolution, algorithms[s].filter, workspace_.get(), workspaceBytes,
                    &kZero, stage.filter, grads + c.weightOffset));
    RINGSIDE_RETURN_IF_ERROR(ready(s));
    if (s == 0) break;  // the input needs no gradient
    RINGSIDE_CUDNN_CHECK(
        where_, cudnnConvolutionBackwardData(
                    cudnn_, &kOne, stage.filter, params + c.weightOffset, stage.output,
                    stage.diffActivation.get(), stage.convolution, algorithms[s].data,
                    workspace_.get(), workspaceBytes, &kZero, stage.input, stage.diffInput.get()));
    diffPooled = stage.diffInput.get();
  }
  return Status::ok();
}

}  // namespace ringside::trainer::gpu
