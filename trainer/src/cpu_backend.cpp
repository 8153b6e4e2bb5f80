// The `mpi` backend: the model replica on the CPU, GEMMs through BLAS, gradients all-reduced per
// bucket with MPI non-blocking all-reduce while backward continues (DDP's overlap).
#include <cblas.h>

#include <chrono>

#include "ringside/trainer/backend.h"
#include "ringside/trainer/bucketing.h"

namespace ringside::trainer {

namespace {

using Clock = std::chrono::steady_clock;

double msBetween(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

class CpuBackend final : public Backend {
 public:
  CpuBackend(Communicator& comm, BackendOptions options)
      : comm_(comm),
        options_(std::move(options)),
        workspace_(options_.layout, options_.maxBatch),
        buckets_(planBuckets(options_.layout, options_.bucketBytes)) {}

  const char* name() const override { return "mpi"; }

  std::string description() const override {
    return std::string("CPU, OpenBLAS ") + openblas_get_config() + " (kernel " +
           openblas_get_corename() + ", " + std::to_string(options_.threads) + " thread(s)), " +
           std::to_string(buckets_.size()) + " gradient bucket(s)";
  }

  Status initialize() override {
    openblas_set_num_threads(options_.threads);
    const size_t n = options_.layout.numParams();
    params_.assign(n, 0.0f);
    grads_.assign(n, 0.0f);
    optimizerState_ = makeOptimizerState(options_.optimizer, n);
    if (comm_.rank() == 0) initMlpParameters(options_.layout, options_.seed, params_.data());
    return comm_.broadcast(params_.data(), n * sizeof(float), 0)
        .withContext("broadcasting the initial parameters from rank 0");
  }

  Status trainStep(const float* x, const int32_t* labels, int localBatch, double lr,
                   double* localLoss, StepTimings* timings) override {
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
    *localLoss = workspace_.forward(params_.data(), x, labels, localBatch, nullptr, stopCheck);
    RINGSIDE_RETURN_IF_ERROR(commStatus);
    if (workspace_.stopped()) {
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
    workspace_.backward(params_.data(), x, grads_.data(), onLayerReady, stopCheck);
    RINGSIDE_RETURN_IF_ERROR(commStatus.withContext("gradient all-reduce"));
    if (workspace_.stopped()) {
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
      if (nextBucket < buckets_.size()) {
        const GradientBucket& last = buckets_.back();
        if (nextBucket == 0) firstStart = backwardDone;
        RINGSIDE_RETURN_IF_ERROR(comm_.allreduceSum(grads_.data() + last.offset, last.count)
                                     .withContext("gradient all-reduce"));
        lastDone = Clock::now();
      }
      for (CommRequest& request : pending_) {
        if (request == 0) continue;
        RINGSIDE_RETURN_IF_ERROR(comm_.waitRequest(request).withContext("gradient all-reduce"));
        request = 0;
        lastDone = Clock::now();
      }
    }
    const Clock::time_point commDone = Clock::now();
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
    const int dim = options_.layout.inputDim();
    // Evaluation is local: each rank looks at its own flag; the trainer reduces sums->stopped.
    const StopCheck stopCheck = [this] {
      return options_.stopRequested != nullptr &&
             options_.stopRequested->load(std::memory_order_relaxed);
    };
    for (int begin = 0; begin < count; begin += workspace_.maxBatch()) {
      const int batch = std::min(workspace_.maxBatch(), count - begin);
      const float meanLoss = workspace_.forward(params_.data(), x + size_t(begin) * dim,
                                                labels + begin, batch, &sums->correct, stopCheck);
      if (workspace_.stopped()) {
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
  MlpWorkspace<float> workspace_;
  std::vector<GradientBucket> buckets_;
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
