#include "ringside/trainer/dataset.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>

#include "ringside/common/run_spec.h"
#include "ringside/trainer/idx_reader.h"

namespace ringside::trainer {

namespace {

std::string installHint(const std::string& dir) {
  // The default directory is where Debian's dataset-fashion-mnist package installs the data.
  if (dir == defaultTrainerConfig().data()) {
    return "install the Debian package dataset-fashion-mnist (apt-get install "
           "dataset-fashion-mnist) or pass --data DIR";
  }
  return "pass --data with a directory holding MNIST-format IDX files";
}

// Finds `<dir>/<stem>.gz` or `<dir>/<stem>`.
Result<std::string> findFile(const std::string& dir, const std::string& stem) {
  for (const std::string& candidate : {dir + "/" + stem + ".gz", dir + "/" + stem}) {
    std::error_code ec;
    // A file, or anything read as one (a named pipe streaming the data, a link to either); not a
    // directory.
    const std::filesystem::file_status found = std::filesystem::status(candidate, ec);
    if (std::filesystem::exists(found) && !std::filesystem::is_directory(found)) return candidate;
  }
  return Status::notFound("dataset file " + stem + "[.gz] not found in " + dir + ": " +
                          installHint(dir));
}

Result<ImageDataset> loadSplit(const std::string& dir, const std::string& prefix, int64_t limit) {
  auto imagesPath = findFile(dir, prefix + "-images-idx3-ubyte");
  if (!imagesPath.isOk()) return imagesPath.status();
  auto labelsPath = findFile(dir, prefix + "-labels-idx1-ubyte");
  if (!labelsPath.isOk()) return labelsPath.status();

  auto images = readIdxFile(*imagesPath);
  if (!images.isOk()) return images.status();
  auto labels = readIdxFile(*labelsPath);
  if (!labels.isOk()) return labels.status();

  if (images->dims.size() != 3) {
    return Status::corruption(*imagesPath + ": expected 3 dimensions [count, rows, cols], found " +
                              std::to_string(images->dims.size()));
  }
  if (labels->dims.size() != 1) {
    return Status::corruption(*labelsPath + ": expected 1 dimension [count], found " +
                              std::to_string(labels->dims.size()));
  }
  if (images->dims[0] != labels->dims[0]) {
    return Status::corruption(*imagesPath + " has " + std::to_string(images->dims[0]) +
                              " images but " + *labelsPath + " has " +
                              std::to_string(labels->dims[0]) + " labels");
  }
  // In 64 bits: a damaged header's rows * cols can wrap around in 32.
  const uint64_t pixels = uint64_t{images->dims[1]} * images->dims[2];
  if (pixels == 0 || pixels > static_cast<uint64_t>(std::numeric_limits<int>::max())) {
    return Status::corruption(*imagesPath + ": images of " + std::to_string(images->dims[1]) +
                              " x " + std::to_string(images->dims[2]) +
                              " pixels: the header is damaged (use images of at least one and at "
                              "most 2^31 - 1 pixels)");
  }
  ImageDataset split;
  split.featureDim = static_cast<int>(pixels);
  split.rows = static_cast<int>(images->dims[1]);
  split.cols = static_cast<int>(images->dims[2]);
  split.count = images->dims[0];
  if (limit > 0) split.count = std::min<int64_t>(split.count, limit);
  if (split.count == 0) return Status::corruption(*imagesPath + ": the split holds no samples");
  split.pixels.assign(images->data.begin(),
                      images->data.begin() + split.count * int64_t{split.featureDim});
  split.labels.assign(labels->data.begin(), labels->data.begin() + split.count);
  int maxLabel = 0;
  for (int32_t label : split.labels) maxLabel = std::max(maxLabel, label);
  // Sources of MNIST-format data have at most 256 classes (labels are bytes); anything above a
  // few hundred classes for 28x28 images means the label file is something else.
  split.numClasses = maxLabel + 1;
  return split;
}

}  // namespace

Result<DatasetSplits> loadMnistFormat(const std::string& dir, int64_t trainLimit,
                                      int64_t testLimit) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    return Status::notFound("dataset directory " + dir + " does not exist: " + installHint(dir));
  }
  DatasetSplits splits;
  auto train = loadSplit(dir, "train", trainLimit);
  if (!train.isOk()) return train.status();
  auto test = loadSplit(dir, "t10k", testLimit);
  if (!test.isOk()) return test.status();
  splits.train = std::move(train).value();
  splits.test = std::move(test).value();
  if (splits.train.featureDim != splits.test.featureDim) {
    return Status::corruption(
        dir + ": train images have " + std::to_string(splits.train.featureDim) +
        " pixels but test images have " + std::to_string(splits.test.featureDim));
  }
  const int classes = std::max(splits.train.numClasses, splits.test.numClasses);
  splits.train.numClasses = splits.test.numClasses = classes;

  // Mean and standard deviation over all training pixels, in double to avoid drift.
  double sum = 0.0, sumSquares = 0.0;
  for (uint8_t p : splits.train.pixels) {
    const double x = p / 255.0;
    sum += x;
    sumSquares += x * x;
  }
  const double n = static_cast<double>(splits.train.pixels.size());
  const double mean = sum / n;
  const double variance = std::max(sumSquares / n - mean * mean, 0.0);
  splits.normalization.mean = static_cast<float>(mean);
  splits.normalization.std = variance > 0.0 ? static_cast<float>(std::sqrt(variance)) : 1.0f;
  return splits;
}

void gatherBatch(const ImageDataset& dataset, const PixelNormalization& norm,
                 std::span<const int64_t> indices, float* features, int32_t* labels) {
  // (p / 255 - mean) / std == p * scale + shift.
  const float scale = 1.0f / (255.0f * norm.std);
  const float shift = -norm.mean / norm.std;
  const int dim = dataset.featureDim;
  for (size_t i = 0; i < indices.size(); ++i) {
    const uint8_t* src = dataset.pixels.data() + indices[i] * dim;
    float* dst = features + i * dim;
    for (int j = 0; j < dim; ++j) dst[j] = static_cast<float>(src[j]) * scale + shift;
    labels[i] = dataset.labels[indices[i]];
  }
}

}  // namespace ringside::trainer
