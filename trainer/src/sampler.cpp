#include "ringside/trainer/sampler.h"

#include <numeric>
#include <random>

namespace ringside::trainer {

Result<DistributedSampler> DistributedSampler::create(int64_t datasetSize, int64_t globalBatch,
                                                      int worldSize, int rank, uint64_t seed) {
  if (worldSize <= 0 || rank < 0 || rank >= worldSize) {
    return Status::invalidArgument("rank " + std::to_string(rank) + " is outside world size " +
                                   std::to_string(worldSize));
  }
  if (globalBatch <= 0) {
    return Status::invalidArgument("global batch must be positive, got " +
                                   std::to_string(globalBatch));
  }
  if (globalBatch % worldSize != 0) {
    return Status::invalidArgument(
        "global batch " + std::to_string(globalBatch) + " is not divisible by world size " +
        std::to_string(worldSize) + ": choose a global batch that is a multiple of " +
        std::to_string(worldSize) + " (local batch = global batch / world size)");
  }
  if (globalBatch > datasetSize) {
    return Status::invalidArgument("global batch " + std::to_string(globalBatch) +
                                   " is larger than the training set (" +
                                   std::to_string(datasetSize) + " samples)");
  }
  return DistributedSampler(datasetSize, globalBatch, worldSize, rank, seed);
}

void DistributedSampler::setEpoch(int64_t epoch) {
  if (epoch == epoch_) return;
  epoch_ = epoch;
  order_.resize(datasetSize_);
  std::iota(order_.begin(), order_.end(), int64_t{0});
  // Fisher-Yates with our own index draw: std::shuffle and the std distributions are
  // implementation-defined, and the order must not depend on the standard library build.
  std::mt19937_64 rng(seed_ ^ (0x9E3779B97F4A7C15ull * static_cast<uint64_t>(epoch + 1)));
  for (int64_t i = datasetSize_ - 1; i > 0; --i) {
    const uint64_t bound = static_cast<uint64_t>(i) + 1;
    // Rejection sampling for an unbiased draw in [0, bound).
    const uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
    uint64_t draw;
    do {
      draw = rng();
    } while (draw >= limit);
    std::swap(order_[i], order_[static_cast<int64_t>(draw % bound)]);
  }
}

std::span<const int64_t> DistributedSampler::globalBatch(int64_t stepInEpoch) const {
  return std::span<const int64_t>(order_).subspan(stepInEpoch * globalBatch_, globalBatch_);
}

std::span<const int64_t> DistributedSampler::localBatch(int64_t stepInEpoch) const {
  const int64_t local = localBatchSize();
  return globalBatch(stepInEpoch).subspan(rank_ * local, local);
}

}  // namespace ringside::trainer
