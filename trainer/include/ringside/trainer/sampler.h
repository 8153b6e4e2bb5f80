// DistributedSampler: which samples each rank trains on at each step.
//
// Every epoch has one seeded shuffle of the global sample order, the same on every rank. Global
// step t of an epoch takes the samples at positions [t * globalBatch, (t + 1) * globalBatch) of
// that order, whatever the world size; rank r's local batch is the contiguous slice
// [r * localBatch, (r + 1) * localBatch) of it, localBatch = globalBatch / worldSize. The last
// partial global batch of an epoch is dropped (PyTorch's DataLoader drop_last=True), so every step
// has exactly globalBatch samples and every rank the same local batch size.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "ringside/common/status.h"

namespace ringside::trainer {

class DistributedSampler {
 public:
  // Errors: InvalidArgument when globalBatch is not divisible by worldSize (naming both), when
  // globalBatch exceeds datasetSize, or when a count is not positive.
  static Result<DistributedSampler> create(int64_t datasetSize, int64_t globalBatch, int worldSize,
                                           int rank, uint64_t seed);

  int64_t stepsPerEpoch() const { return datasetSize_ / globalBatch_; }
  int64_t localBatchSize() const { return globalBatch_ / worldSize_; }
  int64_t globalBatchSize() const { return globalBatch_; }

  // Recomputes the shuffle for `epoch` (a pure function of seed and epoch: no RNG state carries
  // over between epochs, so resuming needs only the epoch number). Cheap to call again with the
  // current epoch (no work).
  void setEpoch(int64_t epoch);

  // The sample indices of global step `stepInEpoch` of the current epoch: [globalBatch].
  std::span<const int64_t> globalBatch(int64_t stepInEpoch) const;
  // This rank's slice of it: [localBatch].
  std::span<const int64_t> localBatch(int64_t stepInEpoch) const;

 private:
  DistributedSampler(int64_t datasetSize, int64_t globalBatch, int worldSize, int rank,
                     uint64_t seed)
      : datasetSize_(datasetSize),
        globalBatch_(globalBatch),
        worldSize_(worldSize),
        rank_(rank),
        seed_(seed) {}

  int64_t datasetSize_;
  int64_t globalBatch_;
  int worldSize_;
  int rank_;
  uint64_t seed_;
  int64_t epoch_ = -1;
  std::vector<int64_t> order_;  // the epoch's permutation of [0, datasetSize)
};

}  // namespace ringside::trainer
