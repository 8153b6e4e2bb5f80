#include "ringside/trainer/bucketing.h"

#include <algorithm>

namespace ringside::trainer {

std::vector<GradientBucket> planBuckets(const ModelLayout& model, size_t capBytes,
                                        size_t elementBytes) {
  std::vector<GradientBucket> buckets;
  const auto& layers = model.parameterLayers();
  GradientBucket current;
  bool open = false;
  for (int l = static_cast<int>(layers.size()) - 1; l >= 0; --l) {
    const ParameterLayer& layer = layers[l];
    if (!open) {
      current = GradientBucket{l, l, layer.weightOffset, 0};
      open = true;
    }
    current.firstLayer = l;
    current.offset = layer.weightOffset;
    current.count += layer.paramCount();
    const size_t cap = buckets.empty() ? std::min(capBytes, kFirstBucketBytes) : capBytes;
    if (current.count * elementBytes >= cap) {
      buckets.push_back(current);
      open = false;
    }
  }
  if (open) buckets.push_back(current);
  return buckets;
}

std::vector<GradientBucket> planBuckets(const MlpLayout& layout, size_t capBytes,
                                        size_t elementBytes) {
  return planBuckets(ModelLayout::mlp(layout), capBytes, elementBytes);
}

}  // namespace ringside::trainer
