// How much host memory a run needs, worked out before anything large is allocated, so that a
// configuration that cannot fit ends at start with a message saying how much it needs and how
// much there is (exit status 1), never with std::bad_alloc or the kernel's OOM killer hours later.
//
// The plan follows what the code allocates (cpu_backend.cpp, mlp.h's MlpWorkspace, cnn.h's
// CnnWorkspace, trainer.cpp's
// batch buffers, checkpoint.cpp's reader and writer, dataset.h); it is a lower bound: allocator
// overhead, MPI's and BLAS's own buffers and the program itself are not counted.
// Thread-safety: free functions; availableMemory() reads /proc and /sys only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ringside/common/status.h"
#include "ringside/trainer/mlp.h"
#include "ringside/trainer/model.h"
#include "ringside/trainer/optimizer.h"

namespace ringside::trainer {

// What a rank's memory is planned from.
struct MemoryPlanInput {
  // true for the mpi backend (model, gradients, optimizer state and activations on the host);
  // false for nccl, whose model lives on the GPU (its allocations there are checked by CUDA).
  bool modelOnHost = true;
  int localBatch = 0;  // training samples per step on this rank
  // Training samples per forward/backward pass (TrainerConfig.micro_batch); 0 = localBatch.
  int microBatch = 0;
  int evalBatch = 0;  // evaluation samples per forward pass (evaluationBatch())
  // CNN: how the conv layers compute (their scratchpad depends on it: Winograd's is ~9 MB).
  ConvAlgorithm convAlgorithm = ConvAlgorithm::kAuto;
  bool writesCheckpoints = false;  // rank 0: it builds every checkpoint in memory
  bool resumes = false;            // --resume: the checkpoint is read (rank 0) and broadcast
  uint64_t datasetBytes = 0;       // pixels and labels of both splits as loaded (ImageDataset)
};

// A rank's host memory by part, in bytes.
struct HostMemoryPlan {
  uint64_t parameters = 0;  // [numParams] floats (nccl: the host copy made at start-up)
  // [numParams] floats (mpi backend), three with micro-batches (cpu_model.h: the earlier
  // passes' sum and one pass's gradients).
  uint64_t gradients = 0;
  uint64_t optimizerState = 0;  // optimizerBufferCount() x [numParams] floats (mpi backend)
  // mpi backend. MLP: MlpWorkspace for the largest batch, batch x (sum of layer outputs + 2 x
  // the widest layer) floats. CNN: CnnWorkspace's cached plans (CnnWorkspace::planFloats), one
  // for training at the pass batch and two for evaluation (a chunk of min(evalBatch, kCnnEvalChunk)
  // samples and the last, smaller one) counted at the chunk size; the reordered weights (a copy
  // of the conv weights in the primitives' format) are not counted.
  uint64_t activations = 0;
  // mpi backend, CNN: the conv primitives' shared scratchpad, the largest of the training and
  // evaluation plans' (CnnWorkspace::scratchpadBytes); 0 for the MLP.
  uint64_t convScratchpad = 0;
  // That largest batch: max(pass batch, evalBatch) (MLP); max(pass batch, the CNN's evaluation
  // chunk) (CNN); the pass batch is microBatch, or localBatch without micro-batches.
  int activationBatch = 0;
  // The trainer's batch buffers: (localBatch + evalBatch) x (inputDim floats + one int32 label).
  uint64_t inputBatches = 0;
  // While a checkpoint is written or read (rank 0): a copy of the parameters and optimizer
  // state and its serialized form, 2 x (1 + buffers) x [numParams] floats; other ranks of a
  // resumed run receive one copy, (1 + buffers) x [numParams] floats.
  uint64_t checkpointCopies = 0;
  uint64_t dataset = 0;  // MemoryPlanInput::datasetBytes

  // The sum of the parts (saturating at UINT64_MAX).
  uint64_t total() const;
  // "parameters 3.0 GiB, gradients 3.0 GiB, ..." (parts that are 0 left out).
  std::string describe() const;
};

// The plan of one rank of a run with model `layout` and `optimizer`. Arithmetic saturates, so
// absurd sizes give UINT64_MAX, never a wrapped small number.
HostMemoryPlan planHostMemory(const ModelLayout& model, const OptimizerConfig& optimizer,
                              const MemoryPlanInput& input);
// The same for an MLP.
HostMemoryPlan planHostMemory(const MlpLayout& layout, const OptimizerConfig& optimizer,
                              const MemoryPlanInput& input);

// Memory this process can still use, and where the number comes from.
struct AvailableMemory {
  uint64_t bytes = 0;
  std::string source;  // e.g. "MemAvailable in /proc/meminfo"
};

// The smaller of MemAvailable in /proc/meminfo and, for each cgroup v2 level of this process
// with a limit, memory.max minus memory.current. std::nullopt when none can be read (then the
// caller makes no check).
std::optional<AvailableMemory> availableMemory();

// Checks that `ranksOnNode` ranks of plan `plan` fit in `available` (measured before the ranks
// loaded their data, so the plan's dataset part is counted too). Errors: ResourceExhausted saying
// how much one rank and the node's ranks need, by part, how much `host` has and from where, and
// which options make a run smaller.
Status checkMemoryFits(const HostMemoryPlan& plan, int ranksOnNode,
                       const AvailableMemory& available, const std::string& host);

// "1.5 GiB", "512.0 MiB", "4.0 KiB", "12 bytes" (binary units, one decimal).
std::string formatBytes(uint64_t bytes);

}  // namespace ringside::trainer
