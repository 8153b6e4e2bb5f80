// Backend: where the model replica of one rank lives and how its gradients are all-reduced.
// One file per backend behind this interface: `mpi` (cpu_backend.cpp: CPU, BLAS, MPI
// non-blocking all-reduce; the CNN through oneDNN, cnn.h) and `nccl` (cuda/nccl_backend.cu: CUDA,
// cuBLAS and cuDNN, NCCL all-reduce, built into the plugin libringside-nccl.so that the trainer
// loads at run time: nccl_plugin.h). Both train either model of model.h.
//
// A backend is used by one thread. Every method is collective where it says so: all ranks call
// it in the same order.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ringside/common/status.h"
#include "ringside/trainer/comm_timing.h"
#include "ringside/trainer/communicator.h"
#include "ringside/trainer/mlp.h"
#include "ringside/trainer/model.h"
#include "ringside/trainer/optimizer.h"
#include "ringside/trainer/rank_activity.h"

namespace ringside::trainer {

enum class BackendKind { kAuto, kMpi, kNccl };

const char* backendName(BackendKind kind);
// "auto", "mpi" or "nccl". Errors: InvalidArgument naming the value and the accepted ones.
Result<BackendKind> parseBackendKind(const std::string& name);

// Per-step timings of one rank, in milliseconds, and the gradient bytes it all-reduced
// (docs/metrics.md, "Communication", defines each figure).
struct StepTimings {
  double stepMs = 0.0;         // wall time of the whole step (forward to updated parameters)
  double computeMs = 0.0;      // forward + backward + optimizer, communication waits excluded
  double allreduceMs = 0.0;    // sum of the buckets' own all-reduce durations (comm_timing.h)
  double exposedCommMs = 0.0;  // time the step waited for all-reduce after backward finished
  uint64_t commBytes = 0;      // gradient bytes all-reduced (per rank, per step)
  // [buckets], in the order their all-reduces start (bucketing.h planBuckets: bucket 0 holds the
  // last layers): each bucket's bytes, start and observed completion, ms after the step's start.
  // mpi backend: host clock; a non-blocking all-reduce's completion is seen at the next MPI_Test
  // or MPI_Wait (the backward pass polls between its pieces), so its duration is bounded by those
  // poll points. nccl backend: CUDA events around each bucket's ncclAllReduce on the comm stream.
  // Empty with one rank (nothing is all-reduced).
  std::vector<BucketTiming> buckets;
  // The step was abandoned on a stop request (BackendOptions::stopRequested) before its update:
  // parameters and optimizer state are those before the step, the other fields mean nothing.
  // Every rank of the run abandons the same step.
  bool stopped = false;
};

// Sums over the samples a rank evaluated; reduced across ranks by the caller.
struct EvalSums {
  double lossSum = 0.0;  // sum of per-sample cross-entropy, nats
  int64_t correct = 0;   // samples whose arg-max equals the label
  int64_t count = 0;     // samples evaluated
  bool stopped = false;  // a stop request (BackendOptions::stopRequested) cut the evaluation short
};

struct BackendOptions {
  ModelLayout model;  // the model and its flat parameter layout (model.h)
  OptimizerConfig optimizer;
  // Parameter initialisation seed (used on rank 0), and the seed of the CNN's dropout masks
  // (model.h: every rank draws from it, so it must be the same on all).
  uint64_t seed = 0;
  int maxBatch = 0;  // largest batch passed to trainStep or evaluate
  // mpi backend: samples per forward/backward pass of a training step (gradient accumulation,
  // cpu_model.h MicroBatchedModel); 0: the whole local batch in one pass. The nccl backend has
  // no micro-batches (the trainer refuses the option with it).
  int microBatch = 0;
  // CNN: how the conv layers compute (model.h ConvAlgorithm; TrainerConfig.conv_algorithm).
  ConvAlgorithm convAlgorithm = ConvAlgorithm::kAuto;
  // Gradient bucket cap, bytes (bucketing.h); the run spec's default bucket_mb is 0.05 MiB.
  size_t bucketBytes = 52428;
  int threads = 1;  // mpi backend: BLAS threads per rank
  // Polled inside long steps and evaluations (see trainStep, evaluate); null: never. Must
  // outlive the backend.
  const std::atomic<bool>* stopRequested = nullptr;
  // Where this rank reports its phases inside a step (COMPUTE, ALLREDUCE with the bucket waited
  // for, OPTIMIZER) for the heartbeat and the collective watchdog (rank_activity.h); null: none.
  // Must outlive the backend.
  RankActivity* activity = nullptr;
  // nccl backend: how long the host waits for a step's GPU work, all-reduces included, before
  // it aborts the NCCL communicator and the run (TrainerConfig.collective_timeout_s); seconds,
  // 0: forever.
  int collectiveTimeoutSeconds = 900;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char* name() const = 0;
  // A line for the log: device, BLAS or library versions.
  virtual std::string description() const = 0;

  // Collective. Rank 0 initialises the parameters from options.seed (initParameters) and
  // broadcasts them, so every rank starts identical (as DistributedDataParallel does).
  virtual Status initialize() = 0;

  // Collective. One step on this rank's local batch x[localBatch, inputDim], labels[localBatch]:
  // forward, backward with bucketed gradient all-reduce overlapping backward, gradient averaging
  // over the world size, optimizer update at learning rate lr. *localLoss receives the mean loss
  // over the local batch (before the update). `position` places the batch in the run (the
  // trainer's global step, and the sampler's position of x's first row in the global batch):
  // the CNN's dropout masks derive from it (model.h), so N ranks match one rank exactly.
  // Stop requests: the mpi backend asks all ranks (an all-reduce of options.stopRequested)
  // between the pieces of a long forward or backward pass (mlp.h, kStopCheckFlops; a small step
  // is never interrupted), and when any rank has one, every rank abandons the step before its
  // update and sets timings->stopped. The nccl backend always completes the step (GPU steps are
  // short); the trainer stops after it.
  virtual Status trainStep(const float* x, const int32_t* labels, int localBatch,
                           const BatchPosition& position, double lr, double* localLoss,
                           StepTimings* timings) = 0;

  // Local (not collective): adds loss and accuracy sums over x[count, inputDim] to *sums. The mpi
  // backend ends early when options.stopRequested is set during a long pass (sums->stopped is
  // then true and the sums are partial).
  virtual Status evaluate(const float* x, const int32_t* labels, int count, EvalSums* sums) = 0;

  // Copies the parameters ([numParams]) and optimizer state to host memory.
  virtual Status saveState(std::vector<float>* params, OptimizerState* optimizer) = 0;
  // Replaces parameters and optimizer state (same layout and optimizer kind as the options).
  // Errors: InvalidArgument when the sizes do not match.
  virtual Status loadState(const std::vector<float>& params, const OptimizerState& optimizer) = 0;
};

// The CPU backend over `comm` (which must outlive it).
std::unique_ptr<Backend> makeCpuBackend(Communicator& comm, BackendOptions options);

// The nccl backend lives in a plugin, libringside-nccl.so, loaded on first use (nccl_plugin.h,
// nccl_plugin_loader.h); the three functions below load it when they need it.

// The number of CUDA devices this process can see through the nccl plugin: 0 without a GPU, a
// driver, or a plugin that loads. When it is 0 and `whyNone` is not null, *whyNone says why in
// words (the loader's or the CUDA runtime's message).
int visibleGpuCount(std::string* whyNone = nullptr);
// The NCCL backend over `comm`, on GPU comm.localRank() % visibleGpuCount(). Errors:
// InvalidArgument when the plugin is not installed or no GPU is visible (both say to use
// --backend mpi); FailedPrecondition when the plugin is there but cannot load (a CUDA library it
// needs is missing, named with its package; a plugin of another version); Internal for
// CUDA/NCCL failures.
Result<std::unique_ptr<Backend>> makeNcclBackend(Communicator& comm, BackendOptions options);

// A backend kind resolved on this rank, and for kAuto why it was chosen.
struct BackendChoice {
  BackendKind kind = BackendKind::kMpi;  // never kAuto
  // kAuto only: "nccl, 2 CUDA GPUs visible", or "mpi: <why the nccl backend cannot run here>"
  // (no plugin installed, a plugin that cannot load, no GPU visible). Empty for other kinds.
  std::string reason;
};

// kAuto: nccl when the nccl plugin loads and sees a CUDA GPU, else mpi (never an error: a plugin
// that cannot load makes mpi, and the reason quotes why). Other kinds are returned as they are,
// without loading anything.
BackendChoice resolveBackendKind(BackendKind kind);

// The backend of a resolved kind (mpi or nccl; kAuto is resolved first). Errors as
// makeNcclBackend.
Result<std::unique_ptr<Backend>> makeBackend(BackendKind kind, Communicator& comm,
                                             BackendOptions options);

}  // namespace ringside::trainer
