// MNIST-format image classification datasets (MNIST, Fashion-MNIST) loaded from IDX files.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ringside/common/status.h"

namespace ringside::trainer {

// One split (train or test) of an image dataset. Pixels stay uint8 in memory (a quarter of the
// float size); gatherBatch() scales them to [0, 1] and normalizes on the fly.
struct ImageDataset {
  int64_t count = 0;            // number of samples
  int featureDim = 0;           // pixels per sample (rows * cols, 784 for MNIST)
  int rows = 0;                 // image height in pixels (28 for MNIST); one channel
  int cols = 0;                 // image width in pixels
  int numClasses = 0;           // 1 + the largest label
  std::vector<uint8_t> pixels;  // [count, featureDim], row-major
  std::vector<int32_t> labels;  // [count]
};

// Normalization applied to pixel p (uint8): x = (p / 255 - mean) / std.
struct PixelNormalization {
  float mean = 0.0f;
  float std = 1.0f;
};

struct DatasetSplits {
  ImageDataset train;
  ImageDataset test;
  // Mean and standard deviation of the training pixels in [0, 1], computed at load time (for
  // Fashion-MNIST about 0.286 and 0.353), applied to both splits.
  PixelNormalization normalization;
};

// Loads train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte and
// t10k-labels-idx1-ubyte from `dir`, each either gzip-compressed (".gz") or raw.
// `trainLimit` / `testLimit` > 0 keep only the first that many samples of each split.
// Errors: NotFound naming the directory and what to do when a file is missing; Corruption when a
// file is malformed, image and label counts differ, or a label is out of range.
Result<DatasetSplits> loadMnistFormat(const std::string& dir, int64_t trainLimit = 0,
                                      int64_t testLimit = 0);

// Copies the samples `indices` of `dataset` into `features` ([indices.size(), featureDim],
// normalized floats) and `labels` ([indices.size()]). Indices must be < dataset.count.
// Thread-safe for distinct outputs.
void gatherBatch(const ImageDataset& dataset, const PixelNormalization& norm,
                 std::span<const int64_t> indices, float* features, int32_t* labels);

}  // namespace ringside::trainer
