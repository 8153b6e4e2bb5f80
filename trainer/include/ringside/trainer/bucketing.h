// Gradient buckets, as PyTorch DistributedDataParallel forms them
// (torch/nn/parallel/distributed.py, bucket_cap_mb): parameters are taken in reverse layer order,
// the order backward produces their gradients, and a bucket is closed once it holds at least its
// cap. The first bucket's cap is kFirstBucketBytes (DDP's dist._DEFAULT_FIRST_BUCKET_BYTES, 1 MiB:
// a small first bucket starts communication early), or the cap when that is smaller; the others'
// is the cap. A layer is never split. Because the flat buffer is in forward layer order, each
// bucket is one contiguous range of it.
//
// With the run spec's default cap (bucket_mb 0.05 MiB = 52,428 bytes; docs/trainer.md, "Buckets
// and overlap", has the measurements behind it) the default MLP (0.94 MB of gradients) has 2
// buckets (layers 2 and 1; layer 0) and the default CNN (1.69 MB) 3 (the Linear layers; conv2;
// conv1). With DDP's own default (25 MiB) they would have 1 and 2.
#pragma once

#include <cstddef>
#include <vector>

#include "ringside/trainer/mlp.h"
#include "ringside/trainer/model.h"

namespace ringside::trainer {

// torch.distributed._DEFAULT_FIRST_BUCKET_BYTES (PyTorch 1.13, used by DDP's
// _compute_bucket_assignment_by_size as the first of its bucket_size_limits).
inline constexpr size_t kFirstBucketBytes = size_t{1} << 20;

struct GradientBucket {
  int firstLayer = 0;  // lowest layer index in the bucket: its gradient completes the bucket
  int lastLayer = 0;   // highest layer index in the bucket
  size_t offset = 0;   // into the flat gradient buffer, elements
  size_t count = 0;    // elements
};

// The bucket cap in bytes for a run spec's bucket_mb (MiB, 2^20 bytes; rounded down).
inline size_t bucketCapBytes(double bucketMb) {
  return static_cast<size_t>(bucketMb * 1024 * 1024);
}

// Buckets in the order their all-reduces start (bucket 0 holds the last layers). capBytes is the
// bucket cap in bytes (--bucket-mb * 2^20); elementBytes the size of one gradient element.
// Layers are ModelLayout::parameterLayers().
std::vector<GradientBucket> planBuckets(const ModelLayout& model, size_t capBytes,
                                        size_t elementBytes = sizeof(float));
// The same for an MLP layout.
std::vector<GradientBucket> planBuckets(const MlpLayout& layout, size_t capBytes,
                                        size_t elementBytes = sizeof(float));

}  // namespace ringside::trainer
