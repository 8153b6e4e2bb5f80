// The `mpi` backend: the model replica on the CPU (the MLP's GEMMs through BLAS, the CNN's
// convolutions and pooling through oneDNN), gradients all-reduced per bucket with MPI
// non-blocking all-reduce while backward continues (DDP's overlap).
#include <cblas.h>
#include <omp.h>

#include <chrono>

#include "ringside/trainer/backend.h"
#include "ringside/trainer/bucketing.h"
#include "ringside/trainer/cnn.h"
#include "ringside/trainer/cpu_model.h"

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
        buckets_(planBuckets(options_.model, options_.bucketBytes)) {
    model_ = makeCpuModel(options_.model, options_.maxBatch, options_.seed, options_.microBatch,
                          options_.convAlgorithm);
  }

  const char* name() const override { return "mpi"; }

  std::string description() const override {
    std::string text = std::string("CPU, ") + options_.model.describe() + ", " +
                       openblas_get_config() + " (kernel " + openblas_get_corename() + ", " +
                       std::to_string(options_.threads) + " thread(s))";
    if (options_.model.isCnn()) {
      const dnnl_version_t* version = dnnl_version();
      text += ", oneDNN " + std::to_string(version->major) + "." + std::to_string(version->minor) +
              "." + std::to_string(version->patch) + ", conv algorithm " +
              convAlgorithmName(options_.convAlgorithm);
      // What each conv stage runs, e.g. "conv2 winograd (jit_wino_4x3:avx512_core)" (the choice
      // depends on the shapes and the CPU, not the batch).
      const std::vector<std::string> convs = CnnWorkspace::convImplementations(
          options_.model.cnn(), std::max(options_.maxBatch, 1), options_.convAlgorithm);
      for (size_t s = 0; s < convs.size(); ++s) {
        text += ", conv" + std::to_string(s + 1) + " " + convs[s];
      }
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
    bucketStart_.assign(buckets_.size(), Clock::time_point{});
    bucketDone_.assign(buckets_.size(), Clock::time_point{});
    size_t nextBucket = 0;
    // DDP's autograd hook: once the lowest layer of the next bucket has its gradient, the whole
    // bucket is ready and its all-reduce starts; every hook also drives MPI progress, since Open
    // MPI's non-blocking collectives advance only inside MPI calls. A bucket's completion is
    // stamped at the poll that sees it, so its duration is bounded by these poll points.
    auto testPending = [&] {
      for (size_t b = 0; b < nextBucket && commStatus.isOk(); ++b) {
        if (pending_[b] == 0) continue;
        bool done = false;
        commStatus = comm_.testRequest(pending_[b], &done);
        if (done) {
          pending_[b] = 0;
          bucketDone_[b] = Clock::now();
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
        bucketStart_[nextBucket] = Clock::now();
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
      // The started buckets first, each stamped when its own wait returns, so that none of them
      // is charged with the blocking all-reduce below (every rank started them before it: MPI's
      // order of collectives holds).
      for (size_t b = 0; b < pending_.size(); ++b) {
        if (pending_[b] == 0) continue;
        if (activity != nullptr) activity->setBucket(static_cast<int>(b));
        RINGSIDE_RETURN_IF_ERROR(comm_.waitRequest(pending_[b]).withContext("gradient all-reduce"));
        pending_[b] = 0;
        bucketDone_[b] = Clock::now();
      }
      if (nextBucket < buckets_.size()) {
        const size_t lastBucket = buckets_.size() - 1;
        if (activity != nullptr) activity->setBucket(static_cast<int>(lastBucket));
        const GradientBucket& last = buckets_.back();
        bucketStart_[lastBucket] = Clock::now();
        RINGSIDE_RETURN_IF_ERROR(comm_.allreduceSum(grads_.data() + last.offset, last.count)
                                     .withContext("gradient all-reduce"));
        bucketDone_[lastBucket] = Clock::now();
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
    if (distributed) {
      timings->buckets.reserve(buckets_.size());
      for (size_t b = 0; b < buckets_.size(); ++b) {
        timings->buckets.push_back(BucketTiming{buckets_[b].count * sizeof(float),
                                                msBetween(start, bucketStart_[b]),
                                                msBetween(start, bucketDone_[b])});
      }
      const CommTotals totals = sumBuckets(timings->buckets);
      timings->allreduceMs = totals.allreduceMs;
      timings->commBytes = totals.bytes;
    }
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
  std::vector<Clock::time_point> bucketStart_;  // [buckets]: this step's all-reduce started
  std::vector<Clock::time_point> bucketDone_;   // [buckets]: its completion observed
};

}  // namespace

std::unique_ptr<Backend> makeCpuBackend(Communicator& comm, BackendOptions options) {
  return std::make_unique<CpuBackend>(comm, std::move(options));
}

}  // namespace ringside::trainer
