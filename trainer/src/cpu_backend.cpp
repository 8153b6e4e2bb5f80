// The `mpi` backend: the model replica on the CPU (the MLP's GEMMs through BLAS, the CNN's
// convolutions and pooling through oneDNN), gradients all-reduced per bucket with MPI
// non-blocking all-reduce while backward continues (DDP's overlap).
#include <cblas.h>
#include <omp.h>

#include <chrono>

#include "ringside/trainer/backend.h"
#include "ringside/trainer/bucketing.h"
#include "ringside/trainer/cnn.h"

namespace ringside::trainer {

namespace {

using Clock = std::chrono::steady_clock;

double msBetween(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// One model replica's forward and backward passes on this thread, MLP or CNN.
class CpuModel {
 public:
  virtual ~CpuModel() = default;
  // As MlpWorkspace::forward; `position` null for evaluation (no dropout, no backward after).
  virtual float forward(const float* params, const float* x, const int32_t* labels, int batch,
                        const BatchPosition* position, int64_t* correct,
                        const StopCheck& stopCheck) = 0;
  // As MlpWorkspace::backward (x is the last training forward's); `progress` is called between
  // long pieces of work where the model has them (the CNN's primitives).
  virtual void backward(const float* params, const float* x, float* grads,
                        const std::function<void(int layer)>& onLayerReady,
                        const StopCheck& stopCheck, const std::function<void()>& progress) = 0;
  virtual bool stopped() const = 0;
  // Samples per evaluation forward pass.
  virtual int evalChunk() const = 0;
};

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
  CnnModel(const CnnLayout& layout, int maxBatch, uint64_t seed)
      : workspace_(layout, seed), evalChunk_(std::clamp(maxBatch, 1, kCnnEvalChunk)) {}
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

class CpuBackend final : public Backend {
 public:
  CpuBackend(Communicator& comm, BackendOptions options)
      : comm_(comm),
        options_(std::move(options)),
        buckets_(planBuckets(options_.model, options_.bucketBytes)) {
    if (options_.model.isCnn()) {
      model_ = std::make_unique<CnnModel>(options_.model.cnn(), options_.maxBatch, options_.seed);
    } else {
      model_ = std::make_unique<MlpModel>(options_.model.mlp(), options_.maxBatch);
    }
  }

  const char* name() const override { return "mpi"; }

  std::string description() const override {
    std::string text = std::string("CPU, ") + options_.model.describe() + ", OpenBLAS " +
                       openblas_get_config() + " (kernel " + openblas_get_corename() + ", " +
                       std::to_string(options_.threads) + " thread(s))";
    if (options_.model.isCnn()) {
      const dnnl_version_t* version = dnnl_version();
      text += ", oneDNN " + std::to_string(version->major) + "." + std::to_string(version->minor) +
              "." + std::to_string(version->patch);
    }
    return text + ", " + std::to_string(buckets_.size()) + " gradient bucket(s)";
  }

  Status initialize() override {
    openblas_set_num_threads(options_.threads);
    omp_set_num_threads(options_.threads);  // oneDNN's threads (the OpenMP runtime)
    const size_t n = options_.model.numParams();
    params_.assign(n, 0.0f);
    grads_.assign(n, 0.0f);
    optimizerState_ = makeOptimizerState(options_.optimizer, n);
    if (comm_.rank() == 0) initParameters(options_.model, options_.seed, params_.data());
    return comm_.broadcast(params_.data(), n * sizeof(float), 0)
        .withContext("broadcasting the initial parameters from rank 0");
  }

  Status trainStep(const float* x, const int32_t* labels, int localBatch,
                   const BatchPosition& position, double lr, double* localLoss,
                   StepTimings* timings) override {
    const Clock::time_point start = Clock::now();
    const bool distributed = comm_.worldSize() > 1;
    Status commStatus;
    // Between the pieces of a long pass every rank learns whether any rank has a stop request,
    // so all abandon the same step (pieces are planned from the shapes, the same on every rank).
    const StopCheck stopCheck = [&]() -> bool {
      if (options_.stopRequested == nullptr) return false;
      if (!commStatus.isOk()) return true;  // an all-reduce failed: end the pass, report it
      int64_t stop = options_.stopRequested->load(std::memory_order_relaxed) ? 1 : 0;
      if (distributed) {
        commStatus = comm_.allreduceMax(&stop, 1).withContext("agreeing on a stop request");
        if (!commStatus.isOk()) return true;  // end the pass; the error is returned below
      }
      return stop != 0;
    };
    *timings = StepTimings{};
    RankActivity* activity = options_.activity;
    if (activity != nullptr) activity->setPhase(v1::COMPUTE);
    *localLoss =
        model_->forward(params_.data(), x, labels, localBatch, &position, nullptr, stopCheck);
    RINGSIDE_RETURN_IF_ERROR(commStatus);
    if (model_->stopped()) {
      timings->stopped = true;
      return Status::ok();
    }

    pending_.assign(buckets_.size(), 0);
    size_t nextBucket = 0;
    Clock::time_point firstStart{};
    Clock::time_point lastDone{};
    // DDP's autograd hook: once the lowest layer of the next bucket has its gradient, the whole
    // bucket is ready and its all-reduce starts; every hook also drives MPI progress, since Open
    // MPI's non-blocking collectives advance only inside MPI calls.
    auto testPending = [&] {
      for (size_t b = 0; b < nextBucket && commStatus.isOk(); ++b) {
        if (pending_[b] == 0) continue;
        bool done = false;
        commStatus = comm_.testRequest(pending_[b], &done);
        if (done) {
          pending_[b] = 0;
          lastDone = Clock::now();
        }
      }
    };
    auto onLayerReady = [&](int layer) {
      if (!distributed || !commStatus.isOk()) return;
      while (nextBucket < buckets_.size() && buckets_[nextBucket].firstLayer == layer) {
        // The bucket holding layer 0 completes backward: nothing is left to overlap, so it is
        // all-reduced after backward with the blocking (tuned) algorithm instead.
        if (layer == 0) break;
        const GradientBucket& bucket = buckets_[nextBucket];
        if (nextBucket == 0) firstStart = Clock::now();
        commStatus = comm_.startAllreduceSum(grads_.data() + bucket.offset, bucket.count,
                                             &pending_[nextBucket]);
        if (!commStatus.isOk()) return;
        ++nextBucket;
      }
      testPending();
    };
    const std::function<void()> progress = [&] {
      if (distributed && commStatus.isOk()) testPending();
    };
    model_->backward(params_.data(), x, grads_.data(), onLayerReady, stopCheck, progress);
    RINGSIDE_RETURN_IF_ERROR(commStatus.withContext("gradient all-reduce"));
    if (model_->stopped()) {
      // Every rank started the same buckets before it stopped: finish them, update nothing.
      for (CommRequest& request : pending_) {
        if (request == 0) continue;
        RINGSIDE_RETURN_IF_ERROR(comm_.waitRequest(request).withContext("gradient all-reduce"));
        request = 0;
      }
      timings->stopped = true;
      return Status::ok();
    }

    const Clock::time_point backwardDone = Clock::now();
    if (distributed) {
      if (activity != nullptr) activity->setPhase(v1::ALLREDUCE);
      if (nextBucket < buckets_.size()) {
        if (activity != nullptr) activity->setBucket(static_cast<int>(buckets_.size() - 1));
        const GradientBucket& last = buckets_.back();
        if (nextBucket == 0) firstStart = backwardDone;
        RINGSIDE_RETURN_IF_ERROR(comm_.allreduceSum(grads_.data() + last.offset, last.count)
                                     .withContext("gradient all-reduce"));
        lastDone = Clock::now();
      }
      for (size_t b = 0; b < pending_.size(); ++b) {
        if (pending_[b] == 0) continue;
        if (activity != nullptr) activity->setBucket(static_cast<int>(b));
        RINGSIDE_RETURN_IF_ERROR(comm_.waitRequest(pending_[b]).withContext("gradient all-reduce"));
        pending_[b] = 0;
        lastDone = Clock::now();
      }
    }
    const Clock::time_point commDone = Clock::now();
    if (activity != nullptr) activity->setPhase(v1::OPTIMIZER);
    // Sum -> mean over the world size (DDP divides the gradients the same way), folded into the
    // update.
    optimizerStep(options_.optimizer, lr, params_.data(), grads_.data(), grads_.size(),
                  &optimizerState_, 1.0f / static_cast<float>(comm_.worldSize()));
    const Clock::time_point end = Clock::now();

    timings->stepMs = msBetween(start, end);
    timings->exposedCommMs = distributed ? msBetween(backwardDone, commDone) : 0.0;
    timings->computeMs = timings->stepMs - timings->exposedCommMs;
    timings->allreduceMs = distributed ? msBetween(firstStart, lastDone) : 0.0;
    timings->commBytes = distributed ? grads_.size() * sizeof(float) : 0;
    return Status::ok();
  }

  Status evaluate(const float* x, const int32_t* labels, int count, EvalSums* sums) override {
    const int dim = options_.model.inputDim();
    // Evaluation is local: each rank looks at its own flag; the trainer reduces sums->stopped.
    const StopCheck stopCheck = [this] {
      return options_.stopRequested != nullptr &&
             options_.stopRequested->load(std::memory_order_relaxed);
    };
    const int chunk = model_->evalChunk();
    for (int begin = 0; begin < count; begin += chunk) {
      const int batch = std::min(chunk, count - begin);
      const float meanLoss =
          model_->forward(params_.data(), x + size_t(begin) * dim, labels + begin, batch, nullptr,
                          &sums->correct, stopCheck);
      if (model_->stopped()) {
        sums->stopped = true;
        return Status::ok();
      }
      sums->lossSum += static_cast<double>(meanLoss) * batch;
      sums->count += batch;
    }
    return Status::ok();
  }

  Status saveState(std::vector<float>* params, OptimizerState* optimizer) override {
    *params = params_;
    *optimizer = optimizerState_;
    return Status::ok();
  }

  Status loadState(const std::vector<float>& params, const OptimizerState& optimizer) override {
    if (params.size() != params_.size()) {
      return Status::invalidArgument("checkpoint has " + std::to_string(params.size()) +
                                     " parameters, the model has " +
                                     std::to_string(params_.size()));
    }
    const int buffers = optimizerBufferCount(options_.optimizer);
    if (optimizer.buffers.size() != static_cast<size_t>(buffers)) {
      return Status::invalidArgument(
          "checkpoint has " + std::to_string(optimizer.buffers.size()) + " optimizer buffers, " +
          optimizerName(options_.optimizer.kind) + " needs " + std::to_string(buffers));
    }
    for (const auto& buffer : optimizer.buffers) {
      if (buffer.size() != params_.size()) {
        return Status::invalidArgument("checkpoint optimizer buffer size does not match the model");
      }
    }
    params_ = params;
    optimizerState_ = optimizer;
    return Status::ok();
  }

 private:
  Communicator& comm_;
  BackendOptions options_;
  std::vector<GradientBucket> buckets_;
  std::unique_ptr<CpuModel> model_;
  std::vector<float> params_;
  std::vector<float> grads_;
  OptimizerState optimizerState_;
  std::vector<CommRequest> pending_;  // [buckets]: in-flight all-reduce per bucket, 0 = none
};

}  // namespace

std::unique_ptr<Backend> makeCpuBackend(Communicator& comm, BackendOptions options) {
  return std::make_unique<CpuBackend>(comm, std::move(options));
}

}  // namespace ringside::trainer
