// Gradient buckets, as PyTorch DistributedDataParallel forms them
// (torch/nn/parallel/distributed.py, bucket_cap_mb): parameters are taken in reverse layer order,
// the order backward produces their gradients, and a bucket is closed once it holds at least the
// cap. A layer is never split. Because the flat buffer is in forward layer order, each bucket is
// one contiguous range of it.
#pragma once

#include <cstddef>
#include <vector>

#include "ringside/trainer/mlp.h"

namespace ringside::trainer {

struct GradientBucket {
  int firstLayer = 0;  // lowest layer index in the bucket: its gradient completes the bucket
  int lastLayer = 0;   // highest layer index in the bucket
  size_t offset = 0;   // into the flat gradient buffer, elements
  size_t count = 0;    // elements
};

// Buckets in the order their all-reduces start (bucket 0 holds the last layers). capBytes is the
// bucket cap in bytes (--bucket-mb * 2^20); elementBytes the size of one gradient element.
std::vector<GradientBucket> planBuckets(const MlpLayout& layout, size_t capBytes,
                                        size_t elementBytes = sizeof(float));

}  // namespace ringside::trainer
