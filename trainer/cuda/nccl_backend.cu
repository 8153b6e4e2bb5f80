// The `nccl` backend: the model replica on one GPU (cuBLAS GEMMs, cuDNN convolutions and pooling
// and the kernels of kernels.cuh, through DeviceMlp or DeviceCnn), gradients all-reduced per bucket
// with NCCL on a second stream while backward continues on the compute stream (DDP's overlap).
// Mirrors cpu_backend.cpp: same parameter initialisation and broadcast, same buckets, same
// StepTimings meanings, same optimizer math and OptimizerState layout, so checkpoints move freely
// between the two backends.
//
// Streams and events of one step:
//   compute: [stepStart] upload, forward, backward ... [bucketReady b] ... [backwardDone]
//            wait(commEnd) [commWaited] optimizer [stepDone]
//   comm:    wait(bucketReady 0) [bucketStart 0] allreduce 0 [bucketEnd 0] ...
//            wait(bucketReady b) [bucketStart b] allreduce b [bucketEnd b] ... [commEnd]
// A bucket's duration is bucketStart b -> bucketEnd b on the GPU: its NCCL kernel alone, from the
// moment the comm stream reached it (its gradients ready, the previous bucket done).
// The host never blocks in CUDA or NCCL: it polls stepDone, checking NCCL's asynchronous error and
// a deadline, and aborts the communicator on either (nccl-tests' pattern), so a dead peer ends the
// run with an error instead of hanging it.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cuda_check.h"
#include "device_buffer.h"
#include "device_cnn.h"
#include "device_mlp.h"
#include "kernels.cuh"
#include "nccl_backend.h"
#include "ringside/trainer/backend.h"
#include "ringside/trainer/bucketing.h"

namespace ringside::trainer {

namespace {

using Clock = std::chrono::steady_clock;
using gpu::DeviceBuffer;
using gpu::ErrorContext;

double msBetween(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// "2.28.9" from ncclGetVersion's code (major * 10000 + minor * 100 + patch since NCCL 2.9).
std::string ncclVersionText(int code) {
  return std::to_string(code / 10000) + "." + std::to_string(code / 100 % 100) + "." +
         std::to_string(code % 100);
}

// "13.0" from a CUDA runtime or driver version code (major * 1000 + minor * 10).
std::string cudaVersionText(int code) {
  return std::to_string(code / 1000) + "." + std::to_string(code % 1000 / 10);
}

class NcclBackend final : public Backend {
 public:
  NcclBackend(Communicator& comm, BackendOptions options, int device, int deviceCount)
      : comm_(comm),
        options_(std::move(options)),
        where_{comm.hostname(), comm.rank()},
        buckets_(planBuckets(options_.model, options_.bucketBytes)),
        device_(device),
        deviceCount_(deviceCount) {}

  ~NcclBackend() override {
    cudaSetDevice(device_);
    if (nccl_ != nullptr) {
      // Every method returns with its GPU work complete, so there is nothing left to flush.
      ncclCommDestroy(nccl_);
      nccl_ = nullptr;
    }
    model_.reset();
    params_.reset();
    grads_.reset();
    optimizerBuffers_.clear();
    for (const std::vector<cudaEvent_t>* events : {&bucketReady_, &bucketStart_, &bucketEnd_}) {
      for (cudaEvent_t event : *events) {
        if (event != nullptr) cudaEventDestroy(event);
      }
    }
    for (cudaEvent_t event : {stepStart_, commEnd_, backwardDone_, commWaited_, stepDone_}) {
      if (event != nullptr) cudaEventDestroy(event);
    }
    if (cublas_ != nullptr) cublasDestroy(cublas_);
    if (commStream_ != nullptr) cudaStreamDestroy(commStream_);
    if (computeStream_ != nullptr) cudaStreamDestroy(computeStream_);
  }

  // Local (not collective): device, streams, cuBLAS, events, memory. Errors: Internal.
  Status setUp();

  const char* name() const override { return "nccl"; }
  std::string description() const override { return description_; }

  // The Backend methods: each runs its *Impl and, when that fails with a CUDA, NCCL or timeout
  // error, aborts the communicator (checked()), so peers are not left waiting in a collective.
  Status initialize() override { return checked(initializeImpl()); }
  Status trainStep(const float* x, const int32_t* labels, int localBatch,
                   const BatchPosition& position, double lr, double* localLoss,
                   StepTimings* timings) override {
    return checked(trainStepImpl(x, labels, localBatch, position, lr, localLoss, timings));
  }
  Status evaluate(const float* x, const int32_t* labels, int count, EvalSums* sums) override {
    return checked(evaluateImpl(x, labels, count, sums));
  }
  Status saveState(std::vector<float>* params, OptimizerState* optimizer) override {
    return checked(saveStateImpl(params, optimizer));
  }
  Status loadState(const std::vector<float>& params, const OptimizerState& optimizer) override {
    return checked(loadStateImpl(params, optimizer));
  }

 private:
  Status initializeImpl();
  Status trainStepImpl(const float* x, const int32_t* labels, int localBatch,
                       const BatchPosition& position, double lr, double* localLoss,
                       StepTimings* timings);
  Status evaluateImpl(const float* x, const int32_t* labels, int count, EvalSums* sums);
  Status saveStateImpl(std::vector<float>* params, OptimizerState* optimizer);
  Status loadStateImpl(const std::vector<float>& params, const OptimizerState& optimizer);
  // InvalidArgument (a bad batch, label or checkpoint) leaves the backend usable; any other error
  // means CUDA or NCCL state can no longer be trusted: abortCommunicator().
  Status checked(Status status) {
    if (!status.isOk() && status.code() != Status::Code::kInvalidArgument) abortCommunicator();
    return status;
  }

  bool distributed() const { return comm_.worldSize() > 1; }
  Status usable() const;
  Status createCommunicator();
  Status startBucketAllreduce(size_t bucket);
  Status enqueueOptimizer(double lr);
  // Records stepDone_ on the compute stream and polls it until the stream has passed it.
  Status finishComputeStream(const char* what);
  Status pollUntilDone(cudaEvent_t event, const char* what);
  Status elapsedMs(cudaEvent_t start, cudaEvent_t end, double* ms);
  Status lossSumsValid(int batch) const;
  // After an error or timeout: ncclCommAbort, and the backend refuses further work.
  void abortCommunicator();

  Communicator& comm_;
  BackendOptions options_;
  ErrorContext where_;
  std::vector<GradientBucket> buckets_;
  int device_;
  int deviceCount_;
  std::string description_;
  bool broken_ = false;

  cudaStream_t computeStream_ = nullptr;
  cudaStream_t commStream_ = nullptr;  // NCCL's, at the device's highest priority
  cublasHandle_t cublas_ = nullptr;
  ncclComm_t nccl_ = nullptr;             // null when worldSize == 1
  std::vector<cudaEvent_t> bucketReady_;  // [buckets]: on compute, the bucket's gradients are done
  std::vector<cudaEvent_t> bucketStart_;  // [buckets]: on comm, the bucket's all-reduce starts
  std::vector<cudaEvent_t> bucketEnd_;    // [buckets]: on comm, the bucket's all-reduce ended
  cudaEvent_t stepStart_ = nullptr;       // on compute: before the step's upload
  cudaEvent_t commEnd_ = nullptr;         // on comm: last bucket's all-reduce ended
  cudaEvent_t backwardDone_ = nullptr;    // on compute: backward finished
  cudaEvent_t commWaited_ = nullptr;      // on compute: the wait for commEnd_ is over
  cudaEvent_t stepDone_ = nullptr;        // on compute: polled by the host

  std::unique_ptr<gpu::DeviceModel> model_;  // DeviceMlp or DeviceCnn
  DeviceBuffer<float> params_;               // [numParams], model.h's flat layout
  DeviceBuffer<float> grads_;  // [numParams]: gradients, then their sums over the ranks
  std::vector<DeviceBuffer<float>> optimizerBuffers_;  // OptimizerState::buffers, on the device
  int64_t stepCount_ = 0;                              // OptimizerState::stepCount
};

Status NcclBackend::setUp() {
  RINGSIDE_CUDA_CHECK(where_, cudaSetDevice(device_));
  cudaDeviceProp properties{};
  RINGSIDE_CUDA_CHECK(where_, cudaGetDeviceProperties(&properties, device_));

  int leastPriority = 0;
  int greatestPriority = 0;
  RINGSIDE_CUDA_CHECK(where_, cudaDeviceGetStreamPriorityRange(&leastPriority, &greatestPriority));
  // Non-blocking streams: no implicit synchronisation with the legacy default stream.
  RINGSIDE_CUDA_CHECK(
      where_, cudaStreamCreateWithPriority(&computeStream_, cudaStreamNonBlocking, leastPriority));
  // NCCL's kernels get the SMs as soon as a bucket is ready, so its all-reduce is not queued
  // behind backward's GEMMs (PyTorch gives its NCCL streams high priority for the same reason).
  RINGSIDE_CUDA_CHECK(
      where_, cudaStreamCreateWithPriority(&commStream_, cudaStreamNonBlocking, greatestPriority));

  RINGSIDE_CUBLAS_CHECK(where_, cublasCreate(&cublas_));
  RINGSIDE_CUBLAS_CHECK(where_, cublasSetStream(cublas_, computeStream_));
  // Full FP32 (no TF32 tensor-core rounding) and no atomics: results match the CPU backend to
  // float rounding and repeat bit for bit on the same GPU model.
  RINGSIDE_CUBLAS_CHECK(where_, cublasSetMathMode(cublas_, CUBLAS_DEFAULT_MATH));
  RINGSIDE_CUBLAS_CHECK(where_, cublasSetAtomicsMode(cublas_, CUBLAS_ATOMICS_NOT_ALLOWED));

  bucketReady_.assign(buckets_.size(), nullptr);
  for (cudaEvent_t& event : bucketReady_) {
    RINGSIDE_CUDA_CHECK(where_, cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  }
  bucketStart_.assign(buckets_.size(), nullptr);
  bucketEnd_.assign(buckets_.size(), nullptr);
  for (std::vector<cudaEvent_t>* events : {&bucketStart_, &bucketEnd_}) {
    for (cudaEvent_t& event : *events) RINGSIDE_CUDA_CHECK(where_, cudaEventCreate(&event));
  }
  for (cudaEvent_t* event : {&stepStart_, &commEnd_, &backwardDone_, &commWaited_}) {
    RINGSIDE_CUDA_CHECK(where_, cudaEventCreate(event));
  }
  RINGSIDE_CUDA_CHECK(where_, cudaEventCreateWithFlags(&stepDone_, cudaEventDisableTiming));

  const size_t numParams = options_.model.numParams();
  const std::string what = "allocating " + std::to_string(numParams * sizeof(float) >> 20) +
                           " MiB per copy of the " + std::to_string(numParams) +
                           " parameters (parameters, gradients and optimizer state)";
  const Status allocated = [&]() -> Status {
    RINGSIDE_CUDA_ALLOCATE(where_, params_, numParams);
    RINGSIDE_CUDA_ALLOCATE(where_, grads_, numParams);
    optimizerBuffers_.resize(optimizerBufferCount(options_.optimizer));
    for (DeviceBuffer<float>& buffer : optimizerBuffers_) {
      RINGSIDE_CUDA_ALLOCATE(where_, buffer, numParams);
    }
    return Status::ok();
  }();
  RINGSIDE_RETURN_IF_ERROR(allocated.withContext(what));
  if (options_.model.isCnn()) {
    model_ =
        std::make_unique<gpu::DeviceCnn>(options_.model.cnn(), options_.maxBatch, options_.seed,
                                         options_.convAlgorithm, cublas_, computeStream_, where_);
  } else {
    model_ = std::make_unique<gpu::DeviceMlp>(options_.model.mlp(), options_.maxBatch, cublas_,
                                              computeStream_, where_);
  }
  RINGSIDE_RETURN_IF_ERROR(model_->allocate());

  int runtimeVersion = 0;
  int driverVersion = 0;
  int ncclVersion = 0;
  int cublasVersion[3] = {};
  RINGSIDE_CUDA_CHECK(where_, cudaRuntimeGetVersion(&runtimeVersion));
  RINGSIDE_CUDA_CHECK(where_, cudaDriverGetVersion(&driverVersion));
  RINGSIDE_NCCL_CHECK(where_, ncclGetVersion(&ncclVersion));
  RINGSIDE_CUBLAS_CHECK(where_, cublasGetProperty(MAJOR_VERSION, &cublasVersion[0]));
  RINGSIDE_CUBLAS_CHECK(where_, cublasGetProperty(MINOR_VERSION, &cublasVersion[1]));
  RINGSIDE_CUBLAS_CHECK(where_, cublasGetProperty(PATCH_LEVEL, &cublasVersion[2]));
  description_ =
      std::string(properties.name) + " (GPU " + std::to_string(device_) + " of " +
      std::to_string(deviceCount_) + ", sm_" + std::to_string(properties.major) +
      std::to_string(properties.minor) + ", " + std::to_string(properties.totalGlobalMem >> 20) +
      " MiB), CUDA runtime " + cudaVersionText(runtimeVersion) + ", driver " +
      cudaVersionText(driverVersion) + ", cuBLAS " + std::to_string(cublasVersion[0]) + "." +
      std::to_string(cublasVersion[1]) + "." + std::to_string(cublasVersion[2]) + ", NCCL " +
      ncclVersionText(ncclVersion) +
      (options_.model.isCnn() ? ", cuDNN " + gpu::DeviceCnn::cudnnVersionText() +
                                    ", conv algorithm " + convAlgorithmName(options_.convAlgorithm)
                              : std::string()) +
      ", " + options_.model.describe() + ", " + std::to_string(buckets_.size()) +
      " gradient bucket(s)";
  return Status::ok();
}

Status NcclBackend::usable() const {
  if (!broken_) return Status::ok();
  return Status::aborted(where_.prefix() +
                         ": the nccl backend stopped after an earlier CUDA or NCCL error; "
                         "restart the run (from its last checkpoint)");
}

Status NcclBackend::createCommunicator() {
  // The nccl-tests pattern: rank 0 creates the unique id, MPI broadcasts it.
  ncclUniqueId id{};
  if (comm_.rank() == 0) RINGSIDE_NCCL_CHECK(where_, ncclGetUniqueId(&id));
  RINGSIDE_RETURN_IF_ERROR(comm_.broadcast(&id, sizeof id, 0)
                               .withContext("broadcasting the NCCL unique id from rank 0"));
  // Kept only on success: a failed init leaves no communicator to destroy or abort.
  ncclComm_t created = nullptr;
  {
    // No deadline of its own: the collective watchdog (communicator.h) ends a set-up that waits
    // past the collective timeout for a rank that never joins.
    RankActivity* activity = options_.activity;
    const ScopedWait waiting(activity, kWaitNcclSetup,
                             activity != nullptr ? activity->beginCollective() : 0);
    RINGSIDE_NCCL_CHECK(where_, ncclCommInitRank(&created, comm_.worldSize(), id, comm_.rank()));
  }
  nccl_ = created;
  return Status::ok();
}

Status NcclBackend::initializeImpl() {
  RINGSIDE_RETURN_IF_ERROR(usable());
  RINGSIDE_CUDA_CHECK(where_, cudaSetDevice(device_));
  if (distributed() && nccl_ == nullptr) RINGSIDE_RETURN_IF_ERROR(createCommunicator());

  // As the CPU backend: rank 0 initialises on the host, MPI broadcasts, every rank uploads.
  const size_t numParams = options_.model.numParams();
  std::vector<float> hostParams(numParams, 0.0f);
  if (comm_.rank() == 0) initParameters(options_.model, options_.seed, hostParams.data());
  RINGSIDE_RETURN_IF_ERROR(comm_.broadcast(hostParams.data(), numParams * sizeof(float), 0)
                               .withContext("broadcasting the initial parameters from rank 0"));
  RINGSIDE_CUDA_CHECK(where_, cudaMemcpyAsync(params_.get(), hostParams.data(), params_.bytes(),
                                              cudaMemcpyHostToDevice, computeStream_));
  RINGSIDE_CUDA_CHECK(where_, cudaMemsetAsync(grads_.get(), 0, grads_.bytes(), computeStream_));
  for (DeviceBuffer<float>& buffer : optimizerBuffers_) {
    RINGSIDE_CUDA_CHECK(where_, cudaMemsetAsync(buffer.get(), 0, buffer.bytes(), computeStream_));
  }
  stepCount_ = 0;
  return finishComputeStream("uploading the initial parameters");
}

Status NcclBackend::trainStepImpl(const float* x, const int32_t* labels, int localBatch,
                                  const BatchPosition& position, double lr, double* localLoss,
                                  StepTimings* timings) {
  RINGSIDE_RETURN_IF_ERROR(usable());
  if (options_.activity != nullptr) options_.activity->setPhase(v1::COMPUTE);
  const Clock::time_point start = Clock::now();
  RINGSIDE_CUDA_CHECK(where_, cudaSetDevice(device_));
  RINGSIDE_CUDA_CHECK(where_, cudaEventRecord(stepStart_, computeStream_));
  // Checks the batch size (InvalidArgument) before anything is enqueued.
  RINGSIDE_RETURN_IF_ERROR(model_->upload(x, labels, localBatch));
  RINGSIDE_RETURN_IF_ERROR(model_->forward(params_.get(), &position));

  // DDP's autograd hook: once the lowest layer of the next bucket has its gradient, the whole
  // bucket is ready and its all-reduce is queued on the comm stream behind an event.
  size_t nextBucket = 0;
  auto onLayerReady = [&](int layer) -> Status {
    if (!distributed()) return Status::ok();
    while (nextBucket < buckets_.size() && buckets_[nextBucket].firstLayer == layer) {
      RINGSIDE_RETURN_IF_ERROR(startBucketAllreduce(nextBucket));
      ++nextBucket;
    }
    return Status::ok();
  };
  RINGSIDE_RETURN_IF_ERROR(model_->backward(params_.get(), grads_.get(), onLayerReady));

  if (distributed()) {
    if (nextBucket != buckets_.size()) {
      return Status::internal(where_.prefix() + ": only " + std::to_string(nextBucket) + " of " +
                              std::to_string(buckets_.size()) +
                              " gradient buckets were all-reduced (bucket plan does not cover "
                              "every layer)");
    }
    RINGSIDE_CUDA_CHECK(where_, cudaEventRecord(commEnd_, commStream_));
    RINGSIDE_CUDA_CHECK(where_, cudaEventRecord(backwardDone_, computeStream_));
    RINGSIDE_CUDA_CHECK(where_, cudaStreamWaitEvent(computeStream_, commEnd_, 0));
    RINGSIDE_CUDA_CHECK(where_, cudaEventRecord(commWaited_, computeStream_));
  }
  RINGSIDE_RETURN_IF_ERROR(enqueueOptimizer(lr));
  RINGSIDE_RETURN_IF_ERROR(finishComputeStream("the training step"));
  const Clock::time_point end = Clock::now();
  // A bad label is this rank's data, found once the step (and its collectives) completed.
  RINGSIDE_RETURN_IF_ERROR(lossSumsValid(localBatch));

  // As MlpWorkspace::forward: the mean in float.
  *localLoss = static_cast<float>(model_->hostLossSums().lossSum / localBatch);
  // stepMs is host wall time (upload to updated parameters, as the CPU backend's); the
  // communication times come from events on the GPU, where the overlap happens.
  timings->stepMs = msBetween(start, end);
  timings->allreduceMs = 0.0;
  timings->exposedCommMs = 0.0;
  timings->commBytes = 0;
  timings->buckets.clear();
  if (distributed()) {
    RINGSIDE_RETURN_IF_ERROR(elapsedMs(backwardDone_, commWaited_, &timings->exposedCommMs));
    // Bucket times on the GPU's timeline, ms after the step's first GPU work (stepStart_).
    timings->buckets.reserve(buckets_.size());
    for (size_t b = 0; b < buckets_.size(); ++b) {
      BucketTiming bucket{buckets_[b].count * sizeof(float), 0.0, 0.0};
      RINGSIDE_RETURN_IF_ERROR(elapsedMs(stepStart_, bucketStart_[b], &bucket.startMs));
      RINGSIDE_RETURN_IF_ERROR(elapsedMs(stepStart_, bucketEnd_[b], &bucket.completeMs));
      timings->buckets.push_back(bucket);
    }
    const CommTotals totals = sumBuckets(timings->buckets);
    timings->allreduceMs = totals.allreduceMs;
    timings->commBytes = totals.bytes;
  }
  timings->computeMs = std::max(0.0, timings->stepMs - timings->exposedCommMs);
  return Status::ok();
}

Status NcclBackend::startBucketAllreduce(size_t bucket) {
  const GradientBucket& range = buckets_[bucket];
  RINGSIDE_CUDA_CHECK(where_, cudaEventRecord(bucketReady_[bucket], computeStream_));
  RINGSIDE_CUDA_CHECK(where_, cudaStreamWaitEvent(commStream_, bucketReady_[bucket], 0));
  RINGSIDE_CUDA_CHECK(where_, cudaEventRecord(bucketStart_[bucket], commStream_));
  float* data = grads_.get() + range.offset;
  RINGSIDE_NCCL_CHECK(
      where_, ncclAllReduce(data, data, range.count, ncclFloat, ncclSum, nccl_, commStream_));
  RINGSIDE_CUDA_CHECK(where_, cudaEventRecord(bucketEnd_[bucket], commStream_));
  return Status::ok();
}

Status NcclBackend::enqueueOptimizer(double lr) {
  const OptimizerConfig& config = options_.optimizer;
  const size_t count = params_.size();
  // Sum -> mean over the world size (DDP divides the gradients the same way); exact for 1.
  const float gradScale = 1.0f / static_cast<float>(comm_.worldSize());
  if (config.kind == OptimizerKind::kSgd) {
    gpu::SgdUpdate update;
    update.lr = static_cast<float>(lr);
    update.weightDecay = static_cast<float>(config.weightDecay);
    update.momentum = static_cast<float>(config.momentum);
    update.gradScale = gradScale;
    update.nesterov = config.nesterov;
    update.firstStep = stepCount_ == 0;
    float* momentumBuffer = optimizerBuffers_.empty() ? nullptr : optimizerBuffers_[0].get();
    RINGSIDE_CUDA_CHECK(where_, gpu::launchSgdUpdate(update, params_.get(), grads_.get(),
                                                     momentumBuffer, count, computeStream_));
  } else {
    // The bias corrections exactly as optimizer.cpp computes them (double, then float).
    const double t = static_cast<double>(stepCount_ + 1);
    gpu::AdamWUpdate update;
    update.lr = static_cast<float>(lr);
    update.weightDecay = static_cast<float>(config.weightDecay);
    update.beta1 = static_cast<float>(config.beta1);
    update.beta2 = static_cast<float>(config.beta2);
    update.epsilon = static_cast<float>(config.epsilon);
    const float correction1 = static_cast<float>(1.0 - std::pow(config.beta1, t));
    update.sqrtCorrection2 = static_cast<float>(std::sqrt(1.0 - std::pow(config.beta2, t)));
    update.stepSize = update.lr / correction1;
    update.gradScale = gradScale;
    RINGSIDE_CUDA_CHECK(where_, gpu::launchAdamWUpdate(
                                    update, params_.get(), grads_.get(), optimizerBuffers_[0].get(),
                                    optimizerBuffers_[1].get(), count, computeStream_));
  }
  ++stepCount_;
  return Status::ok();
}

Status NcclBackend::finishComputeStream(const char* what) {
  RINGSIDE_CUDA_CHECK(where_, cudaEventRecord(stepDone_, computeStream_));
  return pollUntilDone(stepDone_, what);
}

Status NcclBackend::pollUntilDone(cudaEvent_t event, const char* what) {
  // How long the host waits for a step's GPU work (all-reduces included) before it declares a
  // peer dead or hung and aborts the communicator: the run's collective timeout. The error is
  // first-hand (Internal, not Aborted), so the trainer ends every rank with MPI_Abort.
  // The collective watchdog (communicator.h) fires first, after collectiveTimeoutSeconds, and
  // names the rank that did not arrive; this deadline, a little later, is the safety net.
  const int timeoutSeconds = options_.collectiveTimeoutSeconds;
  const Clock::time_point deadline =
      timeoutSeconds > 0 ? Clock::now() + std::chrono::seconds(timeoutSeconds) +
                               std::chrono::seconds(int(kCollectiveAnswerWaitSeconds) + 5)
                         : Clock::time_point::max();
  RankActivity* activity = options_.activity;
  const ScopedWait waiting(distributed() ? activity : nullptr, kWaitGpuStep,
                           activity != nullptr && distributed() ? activity->beginCollective() : 0);
  for (;;) {
    const cudaError_t query = cudaEventQuery(event);
    if (query == cudaSuccess) break;
    if (query != cudaErrorNotReady) {
      return gpu::cudaFailure(where_, query, "cudaEventQuery", __FILE__, __LINE__)
          .withContext(std::string("waiting for ") + what);
    }
    if (nccl_ != nullptr) {
      ncclResult_t asyncError = ncclSuccess;
      RINGSIDE_NCCL_CHECK(where_, ncclCommGetAsyncError(nccl_, &asyncError));
      if (asyncError != ncclSuccess && asyncError != ncclInProgress) {
        return gpu::ncclFailure(where_, asyncError, "ncclCommGetAsyncError", __FILE__, __LINE__)
            .withContext(std::string("waiting for ") + what);
      }
    }
    if (Clock::now() > deadline) {
      return Status::internal(
          where_.prefix() + ": " + what + " did not complete within " +
          std::to_string(timeoutSeconds) +
          " s; another rank has probably died or hung (check its log), so this rank aborts the "
          "NCCL communicator and stops");
    }
    std::this_thread::yield();
  }
  // A not-ready query may be left as the thread's last error; the next kernel launch's check
  // reads that slot, so clear it (real failures are sticky and would be reported again).
  if (cudaPeekAtLastError() == cudaErrorNotReady) (void)cudaGetLastError();
  return Status::ok();
}

Status NcclBackend::elapsedMs(cudaEvent_t start, cudaEvent_t end, double* ms) {
  float elapsed = 0.0f;
  RINGSIDE_CUDA_CHECK(where_, cudaEventElapsedTime(&elapsed, start, end));
  *ms = std::max(0.0, static_cast<double>(elapsed));
  return Status::ok();
}

Status NcclBackend::lossSumsValid(int batch) const {
  const long long invalid = model_->hostLossSums().invalidLabels;
  if (invalid == 0) return Status::ok();
  return Status::invalidArgument(where_.prefix() + ": " + std::to_string(invalid) + " of " +
                                 std::to_string(batch) + " labels lie outside [0, " +
                                 std::to_string(options_.model.numClasses()) +
                                 "): does the dataset match the model's class count?");
}

void NcclBackend::abortCommunicator() {
  broken_ = true;
  if (nccl_ == nullptr) return;
  // Stops NCCL's kernels and proxy threads without waiting for the peers.
  ncclCommAbort(nccl_);
  nccl_ = nullptr;
}

Status NcclBackend::evaluateImpl(const float* x, const int32_t* labels, int count, EvalSums* sums) {
  RINGSIDE_RETURN_IF_ERROR(usable());
  RINGSIDE_CUDA_CHECK(where_, cudaSetDevice(device_));
  const int dim = options_.model.inputDim();
  for (int begin = 0; begin < count; begin += model_->maxBatch()) {
    const int batch = std::min(model_->maxBatch(), count - begin);
    RINGSIDE_RETURN_IF_ERROR(model_->upload(x + size_t(begin) * dim, labels + begin, batch));
    RINGSIDE_RETURN_IF_ERROR(model_->forward(params_.get(), nullptr));
    RINGSIDE_RETURN_IF_ERROR(finishComputeStream("evaluation"));
    RINGSIDE_RETURN_IF_ERROR(lossSumsValid(batch));
    const gpu::LossSums& chunk = model_->hostLossSums();
    // As the CPU backend: the chunk's float mean times its size.
    const float meanLoss = static_cast<float>(chunk.lossSum / batch);
    sums->lossSum += static_cast<double>(meanLoss) * batch;
    sums->correct += chunk.correct;
    sums->count += batch;
  }
  return Status::ok();
}

Status NcclBackend::saveStateImpl(std::vector<float>* params, OptimizerState* optimizer) {
  RINGSIDE_RETURN_IF_ERROR(usable());
  RINGSIDE_CUDA_CHECK(where_, cudaSetDevice(device_));
  params->resize(params_.size());
  RINGSIDE_CUDA_CHECK(where_, cudaMemcpyAsync(params->data(), params_.get(), params_.bytes(),
                                              cudaMemcpyDeviceToHost, computeStream_));
  optimizer->stepCount = stepCount_;
  optimizer->buffers.assign(optimizerBuffers_.size(), std::vector<float>(params_.size()));
  for (size_t b = 0; b < optimizerBuffers_.size(); ++b) {
    RINGSIDE_CUDA_CHECK(
        where_,
        cudaMemcpyAsync(optimizer->buffers[b].data(), optimizerBuffers_[b].get(),
                        optimizerBuffers_[b].bytes(), cudaMemcpyDeviceToHost, computeStream_));
  }
  return finishComputeStream("copying the parameters and optimizer state to the host");
}

Status NcclBackend::loadStateImpl(const std::vector<float>& params,
                                  const OptimizerState& optimizer) {
  RINGSIDE_RETURN_IF_ERROR(usable());
  // The CPU backend's checks and messages, so a bad checkpoint reads the same on both.
  if (params.size() != params_.size()) {
    return Status::invalidArgument("checkpoint has " + std::to_string(params.size()) +
                                   " parameters, the model has " + std::to_string(params_.size()));
  }
  const int buffers = optimizerBufferCount(options_.optimizer);
  if (optimizer.buffers.size() != static_cast<size_t>(buffers)) {
    return Status::invalidArgument("checkpoint has " + std::to_string(optimizer.buffers.size()) +
                                   " optimizer buffers, " + optimizerName(options_.optimizer.kind) +
                                   " needs " + std::to_string(buffers));
  }
  for (const auto& buffer : optimizer.buffers) {
    if (buffer.size() != params_.size()) {
      return Status::invalidArgument("checkpoint optimizer buffer size does not match the model");
    }
  }
  RINGSIDE_CUDA_CHECK(where_, cudaSetDevice(device_));
  RINGSIDE_CUDA_CHECK(where_, cudaMemcpyAsync(params_.get(), params.data(), params_.bytes(),
                                              cudaMemcpyHostToDevice, computeStream_));
  for (size_t b = 0; b < optimizerBuffers_.size(); ++b) {
    RINGSIDE_CUDA_CHECK(
        where_,
        cudaMemcpyAsync(optimizerBuffers_[b].get(), optimizer.buffers[b].data(),
                        optimizerBuffers_[b].bytes(), cudaMemcpyHostToDevice, computeStream_));
  }
  stepCount_ = optimizer.stepCount;
  return finishComputeStream("copying the parameters and optimizer state to the GPU");
}

// cudaGetDeviceCount's answer; any error (no driver, no device, a driver older than the runtime)
// reads as no GPU.
int deviceCount(cudaError_t* error) {
  int count = 0;
  *error = cudaGetDeviceCount(&count);
  if (*error != cudaSuccess) {
    (void)cudaGetLastError();  // leave no error behind for later checks
    return 0;
  }
  return count;
}

std::string deviceCountError(cudaError_t error) {
  return error == cudaSuccess
             ? std::string("no devices")
             : std::string(cudaGetErrorString(error)) + " [" + cudaGetErrorName(error) + "]";
}

}  // namespace

namespace gpu {

int visibleDeviceCount(std::string* whyNone) {
  cudaError_t error = cudaSuccess;
  const int count = deviceCount(&error);
  if (count == 0 && whyNone != nullptr) *whyNone = deviceCountError(error);
  return count;
}

Result<std::unique_ptr<Backend>> makeNcclBackend(Communicator& comm, BackendOptions options) {
  const std::string where = comm.hostname() + " rank " + std::to_string(comm.rank());
  if (options.maxBatch <= 0) {
    return Status::invalidArgument(where + ": the nccl backend needs maxBatch >= 1, got " +
                                   std::to_string(options.maxBatch));
  }
  cudaError_t error = cudaSuccess;
  const int count = deviceCount(&error);
  if (count == 0) {
    return Status::invalidArgument(where +
                                   ": the nccl backend needs a CUDA GPU and none is "
                                   "visible (cudaGetDeviceCount: " +
                                   deviceCountError(error) +
                                   "): check nvidia-smi and CUDA_VISIBLE_DEVICES, or use "
                                   "--backend mpi");
  }
  const int device = comm.localRank() % count;
  auto backend = std::make_unique<NcclBackend>(comm, std::move(options), device, count);
  RINGSIDE_RETURN_IF_ERROR(
      backend->setUp().withContext("setting up the nccl backend on GPU " + std::to_string(device)));
  return std::unique_ptr<Backend>(std::move(backend));
}

}  // namespace gpu

}  // namespace ringside::trainer
