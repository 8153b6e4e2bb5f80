#include "ringside/trainer/bucketing.h"

namespace ringside::trainer {

std::vector<GradientBucket> planBuckets(const MlpLayout& layout, size_t capBytes,
                                        size_t elementBytes) {
  std::vector<GradientBucket> buckets;
  const auto& layers = layout.layers();
  GradientBucket current;
  bool open = false;
  for (int l = static_cast<int>(layers.size()) - 1; l >= 0; --l) {
    const LinearLayerShape& layer = layers[l];
    if (!open) {
      current = GradientBucket{l, l, layer.weightOffset, 0};
      open = true;
    }
    current.firstLayer = l;
    current.offset = layer.weightOffset;
    current.count += layer.paramCount();
    if (current.count * elementBytes >= capBytes) {
      buckets.push_back(current);
      open = false;
    }
  }
  if (open) buckets.push_back(current);
  return buckets;
}

}  // namespace ringside::trainer
