// The models the trainer knows and what every backend needs to know about them: the parameter
// layout (one flat buffer, layers in forward order, each layer's weight then its bias, so a run
// of consecutive layers is one contiguous range: gradient buckets rely on it), PyTorch's
// initialisation, and the dropout mask rule.
//
// - mlp: Linear -> ReLU -> ... -> Linear (mlp.h).
// - cnn: conv 3x3 (padding 1) -> ReLU -> max-pool 2x2, once per entry of `channels`, then
//   dropout -> Linear(hidden) -> ReLU -> Linear(classes). With the defaults (channels 32,64,
//   hidden 128) on 1x28x28 images this is the 2-conv baseline docs/trainer.md cites:
//   conv 3x3x32 -> ReLU -> pool -> conv 3x3x64 -> ReLU -> pool -> dropout 0.25 -> FC 128 -> ReLU
//   -> FC 10, 421,642 parameters. Tensors are NCHW; a conv weight is [out, in, 3, 3] (PyTorch's
//   nn.Conv2d layout, oneDNN's oihw, cuDNN's KCRS); the flatten before the first Linear is
//   PyTorch's x.view(batch, -1) of [batch, C, H, W].
//
// Thread-safety: layouts are immutable values; every function here is pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ringside/common/status.h"
#include "ringside/trainer/mlp.h"

#if defined(__CUDACC__)
#define RINGSIDE_HOST_DEVICE __host__ __device__
#else
#define RINGSIDE_HOST_DEVICE
#endif

namespace ringside::trainer {

enum class ModelKind { kMlp = 0, kCnn = 1 };

// "mlp" or "cnn".
const char* modelKindName(ModelKind kind);
// "mlp" or "cnn". Errors: InvalidArgument naming the value and the accepted ones.
Result<ModelKind> parseModelKind(const std::string& name);

// How the CNN's convolutions are computed (TrainerConfig.conv_algorithm; docs/trainer.md,
// "Convolution algorithm"). An execution choice: the parameters, checkpoints and the result up
// to rounding do not depend on it.
enum class ConvAlgorithm {
  // CPU: oneDNN's Winograd F(4x4, 3x3) for a conv layer whose input and output channel counts
  // are multiples of 16 (the AVX-512 kernel's vector width) where this CPU has that kernel,
  // direct convolution otherwise. GPU: cuDNN's fastest deterministic algorithm, any kind.
  kAuto = 0,
  // Direct convolution for every layer (CPU); no Winograd or FFT algorithm (GPU).
  kDirect = 1,
};

// "auto" or "direct".
const char* convAlgorithmName(ConvAlgorithm algorithm);
// "auto" or "direct". Errors: InvalidArgument naming the value and the accepted ones.
Result<ConvAlgorithm> parseConvAlgorithm(const std::string& name);

// A layer that has parameters, as bucketing, initialisation and checkpoints see it.
struct ParameterLayer {
  size_t weightOffset = 0;  // into the flat parameter buffer, elements
  size_t weightCount = 0;   // elements
  size_t biasOffset = 0;    // = weightOffset + weightCount
  size_t biasCount = 0;     // elements
  int fanIn = 0;            // inputs per output unit: in (Linear), inChannels * 3 * 3 (conv)
  size_t paramCount() const { return weightCount + biasCount; }
};

// One conv 3x3 (stride 1, padding 1) -> ReLU -> max-pool 2x2 (stride 2) stage of the CNN.
struct ConvStageShape {
  int inChannels = 0;
  int outChannels = 0;
  int height = 0;  // input and conv output rows (padding 1 keeps the size)
  int width = 0;   // input and conv output columns
  int pooledHeight() const { return height / 2; }  // floor, as nn.MaxPool2d(2)
  int pooledWidth() const { return width / 2; }
  size_t weightOffset = 0;  // [outChannels, inChannels, 3, 3]
  size_t biasOffset = 0;    // [outChannels]
};

inline constexpr int kConvKernel = 3;  // 3x3 kernels, padding 1, stride 1
inline constexpr int kPoolWindow = 2;  // 2x2 max-pool, stride 2

// The CNN's hyperparameters. Defaults: the cited 2-conv baseline (docs/trainer.md).
struct CnnShape {
  int channels = 1;  // input image channels
  int height = 28;   // input image rows
  int width = 28;    // input image columns
  std::vector<int> convChannels = {32, 64};
  int hidden = 128;  // units of the hidden Linear layer
  int numClasses = 10;
  // Probability that dropout zeroes a flattened feature during training (inverted dropout: the
  // kept ones are scaled by 1 / (1 - dropout), as nn.Dropout). 0.25: Keras' mnist_cnn example's
  // dropout after the convolutions.
  double dropout = 0.25;
};

class CnnLayout {
 public:
  // Errors: InvalidArgument when a size or channel count is not positive, when dropout is not in
  // [0, 1), or when a pooling stage would leave less than one pixel (naming the stage and size).
  static Result<CnnLayout> create(CnnShape shape);

  const CnnShape& shape() const { return shape_; }
  const std::vector<ConvStageShape>& stages() const { return stages_; }
  // The two Linear layers: [flatFeatures -> hidden], [hidden -> numClasses].
  const std::vector<LinearLayerShape>& linears() const { return linears_; }
  // Features after the last pooling stage: channels * rows * cols (3136 for the default).
  int flatFeatures() const { return linears_.front().in; }
  size_t numParams() const { return numParams_; }

 private:
  CnnShape shape_;
  std::vector<ConvStageShape> stages_;
  std::vector<LinearLayerShape> linears_;
  size_t numParams_ = 0;
};

// The model a run trains: an MLP or a CNN, with its flat parameter layout.
class ModelLayout {
 public:
  ModelLayout() = default;
  static ModelLayout mlp(MlpLayout layout);
  static ModelLayout cnn(CnnLayout layout);

  ModelKind kind() const { return kind_; }
  bool isCnn() const { return kind_ == ModelKind::kCnn; }
  // The layout of the kind(); calling the other one is a programming error (it is empty).
  const MlpLayout& mlp() const { return mlp_; }
  const CnnLayout& cnn() const { return cnn_; }

  // Layers with parameters, in forward order (layer l of planBuckets and onLayerReady).
  const std::vector<ParameterLayer>& parameterLayers() const { return parameterLayers_; }
  size_t numParams() const { return numParams_; }
  int inputDim() const { return inputDim_; }  // features per sample (C * H * W for the CNN)
  int numClasses() const { return numClasses_; }

  // What checkpoints record and compare: the MLP's {inputDim, hidden..., numClasses}; the CNN's
  // {channels, height, width, convChannels..., hidden, numClasses}.
  std::vector<int> shapeVector() const;
  // For messages: "an MLP with layers 784,256,128,10" or "a CNN on 1x28x28 images with conv
  // channels 32,64, hidden 128 and 10 classes".
  std::string describe() const;

 private:
  ModelKind kind_ = ModelKind::kMlp;
  MlpLayout mlp_;
  CnnLayout cnn_;
  std::vector<ParameterLayer> parameterLayers_;
  size_t numParams_ = 0;
  int inputDim_ = 0;
  int numClasses_ = 0;
};

// "an MLP with layers 784,256,128,10" / "a CNN on ..." from a checkpoint's kind and shape vector
// (ModelLayout::shapeVector), without building a layout (the shape may be invalid).
std::string describeModelShape(ModelKind kind, const std::vector<int>& shape);

// Fills params[layout.numParams()] as PyTorch's reset_parameters() of nn.Linear and nn.Conv2d:
// weight ~ kaiming_uniform_(a = sqrt(5)), i.e. U(-1/sqrt(fan_in), 1/sqrt(fan_in)), bias ~
// U(-1/sqrt(fan_in), 1/sqrt(fan_in)), layer by layer in forward order, from one mt19937_64 seeded
// with `seed`. For an MLP the numbers are exactly initMlpParameters'. Deterministic.
void initParameters(const ModelLayout& layout, uint64_t seed, float* params);

// ---- Dropout masks. A mask element depends only on (seed, global step, the sample's position in
// the global batch, the feature index), never on the rank or the world size, so N ranks draw
// exactly the masks one rank draws for the same global batch (sampler.h: rank r's local batch is
// positions [r * localBatch, (r + 1) * localBatch) of it), and a resumed run draws the masks of
// the uninterrupted one. The same function runs on the CPU and in the CUDA kernels.

// SplitMix64's finaliser (Steele, Lea, Flood, "Fast splittable pseudorandom number generators",
// OOPSLA 2014; the constants of java.util.SplittableRandom): a bijective 64-bit mix.
RINGSIDE_HOST_DEVICE inline uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// A uniform number in [0, 1) (24 bits, exact in float) for one mask element.
RINGSIDE_HOST_DEVICE inline float dropoutUniform(uint64_t seed, int64_t step, int64_t sample,
                                                 int64_t feature) {
  uint64_t h = mix64(seed ^ 0x6a09e667f3bcc909ULL);  // a domain separate from the init seed
  h = mix64(h + 0x9e3779b97f4a7c15ULL * static_cast<uint64_t>(step + 1));
  h = mix64(h + 0x9e3779b97f4a7c15ULL * static_cast<uint64_t>(sample + 1));
  h = mix64(h + 0x9e3779b97f4a7c15ULL * static_cast<uint64_t>(feature + 1));
  return static_cast<float>(h >> 40) * 0x1.0p-24f;
}

// The multiplier of one feature: 0 when dropped (dropoutUniform < probability), else
// 1 / (1 - probability) (nn.Dropout's inverted scaling). probability in [0, 1).
RINGSIDE_HOST_DEVICE inline float dropoutScale(float probability, uint64_t seed, int64_t step,
                                               int64_t sample, int64_t feature) {
  return dropoutUniform(seed, step, sample, feature) < probability ? 0.0f
                                                                   : 1.0f / (1.0f - probability);
}

// Where a local batch sits in the run, for the dropout masks.
struct BatchPosition {
  int64_t step = 0;         // global step (0-based) the batch is trained in
  int64_t firstSample = 0;  // position of the batch's first sample in the global batch
};

// Fills mask[batch, features] with dropoutScale for samples position.firstSample + i.
void fillDropoutMask(float probability, uint64_t seed, const BatchPosition& position, int batch,
                     int features, float* mask);

}  // namespace ringside::trainer
