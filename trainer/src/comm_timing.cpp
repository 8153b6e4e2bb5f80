#include "ringside/trainer/comm_timing.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ringside::trainer {

double bucketDurationMs(const BucketTiming& timing) {
  return std::max(0.0, timing.completeMs - timing.startMs);
}

std::optional<double> algbwGBps(double bytes, double ms) {
  if (!(ms > 0.0) || !std::isfinite(ms) || !(bytes > 0.0) || !std::isfinite(bytes)) {
    return std::nullopt;
  }
  return bytes / (ms * 1e-3) / 1e9;
}

double allreduceBusFactor(int worldSize) {
  if (worldSize <= 1) return 0.0;
  return 2.0 * (worldSize - 1) / worldSize;
}

std::optional<double> allreduceBusbwGBps(double bytes, double ms, int worldSize) {
  const std::optional<double> algbw = algbwGBps(bytes, ms);
  if (!algbw || worldSize < 2) return std::nullopt;
  return *algbw * allreduceBusFactor(worldSize);
}

CommTotals sumBuckets(std::span<const BucketTiming> buckets) {
  CommTotals totals;
  for (const BucketTiming& bucket : buckets) {
    totals.bytes += bucket.bytes;
    totals.allreduceMs += bucketDurationMs(bucket);
  }
  return totals;
}

std::vector<double> minOverRanks(std::span<const double> rows, int ranks, size_t stride,
                                 size_t offset, size_t count) {
  if (ranks < 1 || offset + count > stride || rows.size() < size_t(ranks) * stride) return {};
  std::vector<double> minimum(count, std::numeric_limits<double>::infinity());
  for (int r = 0; r < ranks; ++r) {
    for (size_t c = 0; c < count; ++c) {
      minimum[c] = std::min(minimum[c], rows[size_t(r) * stride + offset + c]);
    }
  }
  return minimum;
}

}  // namespace ringside::trainer
