#include "ringside/trainer/model.h"

#include <cmath>
#include <random>

namespace ringside::trainer {

namespace {

std::string joined(std::vector<int>::const_iterator begin, std::vector<int>::const_iterator end) {
  std::string text;
  for (auto it = begin; it != end; ++it) {
    if (!text.empty()) text += ',';
    text += std::to_string(*it);
  }
  return text;
}

}  // namespace

const char* modelKindName(ModelKind kind) { return kind == ModelKind::kCnn ? "cnn" : "mlp"; }

Result<ModelKind> parseModelKind(const std::string& name) {
  if (name == "mlp") return ModelKind::kMlp;
  if (name == "cnn") return ModelKind::kCnn;
  return Status::invalidArgument("unknown model '" + name + "': use mlp or cnn");
}

const char* convAlgorithmName(ConvAlgorithm algorithm) {
  return algorithm == ConvAlgorithm::kDirect ? "direct" : "auto";
}

Result<ConvAlgorithm> parseConvAlgorithm(const std::string& name) {
  if (name == "auto") return ConvAlgorithm::kAuto;
  if (name == "direct") return ConvAlgorithm::kDirect;
  return Status::invalidArgument("unknown convolution algorithm '" + name +
                                 "': use auto or direct");
}

Result<CnnLayout> CnnLayout::create(CnnShape shape) {
  if (shape.channels <= 0 || shape.height <= 0 || shape.width <= 0) {
    return Status::invalidArgument(
        "a CNN needs images of at least 1x1x1 pixels, got " + std::to_string(shape.channels) + "x" +
        std::to_string(shape.height) + "x" + std::to_string(shape.width));
  }
  if (shape.convChannels.empty()) {
    return Status::invalidArgument("a CNN needs at least one convolution stage (--channels)");
  }
  if (shape.hidden <= 0 || shape.numClasses <= 0) {
    return Status::invalidArgument("the CNN's hidden width and class count must be positive");
  }
  if (!(shape.dropout >= 0.0 && shape.dropout < 1.0)) {
    return Status::invalidArgument("dropout " + std::to_string(shape.dropout) +
                                   " is outside [0, 1): use a probability below 1");
  }
  CnnLayout layout;
  size_t offset = 0;
  int channels = shape.channels;
  int height = shape.height;
  int width = shape.width;
  for (size_t s = 0; s < shape.convChannels.size(); ++s) {
    const int out = shape.convChannels[s];
    if (out <= 0) {
      return Status::invalidArgument("conv stage " + std::to_string(s + 1) + " has " +
                                     std::to_string(out) +
                                     " channels: every stage needs at least one (--channels)");
    }
    if (height < kPoolWindow || width < kPoolWindow) {
      return Status::invalidArgument("conv stage " + std::to_string(s + 1) + " would pool a " +
                                     std::to_string(height) + "x" + std::to_string(width) +
                                     " map to nothing: use at most " + std::to_string(s) +
                                     " entries in --channels for " + std::to_string(shape.height) +
                                     "x" + std::to_string(shape.width) + " images");
    }
    ConvStageShape stage;
    stage.inChannels = channels;
    stage.outChannels = out;
    stage.height = height;
    stage.width = width;
    stage.weightOffset = offset;
    stage.biasOffset = offset + size_t(out) * channels * kConvKernel * kConvKernel;
    offset = stage.biasOffset + out;
    layout.stages_.push_back(stage);
    channels = out;
    height = stage.pooledHeight();
    width = stage.pooledWidth();
  }
  const int flat = channels * height * width;
  for (auto [in, out] :
       {std::pair{flat, shape.hidden}, std::pair{shape.hidden, shape.numClasses}}) {
    LinearLayerShape linear;
    linear.in = in;
    linear.out = out;
    linear.weightOffset = offset;
    linear.biasOffset = offset + size_t(in) * out;
    offset += linear.paramCount();
    layout.linears_.push_back(linear);
  }
  layout.numParams_ = offset;
  layout.shape_ = std::move(shape);
  return layout;
}

ModelLayout ModelLayout::mlp(MlpLayout layout) {
  ModelLayout model;
  model.kind_ = ModelKind::kMlp;
  for (const LinearLayerShape& layer : layout.layers()) {
    model.parameterLayers_.push_back(ParameterLayer{layer.weightOffset,
                                                    size_t(layer.in) * layer.out, layer.biasOffset,
                                                    size_t(layer.out), layer.in});
  }
  model.numParams_ = layout.numParams();
  model.inputDim_ = layout.inputDim();
  model.numClasses_ = layout.numClasses();
  model.mlp_ = std::move(layout);
  return model;
}

ModelLayout ModelLayout::cnn(CnnLayout layout) {
  ModelLayout model;
  model.kind_ = ModelKind::kCnn;
  for (const ConvStageShape& stage : layout.stages()) {
    const int fanIn = stage.inChannels * kConvKernel * kConvKernel;
    model.parameterLayers_.push_back(
        ParameterLayer{stage.weightOffset, size_t(stage.outChannels) * fanIn, stage.biasOffset,
                       size_t(stage.outChannels), fanIn});
  }
  for (const LinearLayerShape& layer : layout.linears()) {
    model.parameterLayers_.push_back(ParameterLayer{layer.weightOffset,
                                                    size_t(layer.in) * layer.out, layer.biasOffset,
                                                    size_t(layer.out), layer.in});
  }
  const CnnShape& shape = layout.shape();
  model.numParams_ = layout.numParams();
  model.inputDim_ = shape.channels * shape.height * shape.width;
  model.numClasses_ = shape.numClasses;
  model.cnn_ = std::move(layout);
  return model;
}

std::vector<int> ModelLayout::shapeVector() const {
  if (kind_ == ModelKind::kMlp) return mlp_.layerSizes();
  const CnnShape& s = cnn_.shape();
  std::vector<int> shape = {s.channels, s.height, s.width};
  shape.insert(shape.end(), s.convChannels.begin(), s.convChannels.end());
  shape.push_back(s.hidden);
  shape.push_back(s.numClasses);
  return shape;
}

std::string describeModelShape(ModelKind kind, const std::vector<int>& shape) {
  if (kind == ModelKind::kMlp) {
    return "an MLP with layers " + joined(shape.begin(), shape.end()) + " (--model mlp)";
  }
  if (shape.size() < 6) return "a CNN of unknown shape";
  return "a CNN on " + std::to_string(shape[0]) + "x" + std::to_string(shape[1]) + "x" +
         std::to_string(shape[2]) + " images with conv channels " +
         joined(shape.begin() + 3, shape.end() - 2) + ", hidden " +
         std::to_string(shape[shape.size() - 2]) + " and " + std::to_string(shape.back()) +
         " classes (--model cnn)";
}

std::string ModelLayout::describe() const { return describeModelShape(kind_, shapeVector()); }

void initParameters(const ModelLayout& layout, uint64_t seed, float* params) {
  std::mt19937_64 rng(seed);
  for (const ParameterLayer& layer : layout.parameterLayers()) {
    // kaiming_uniform_(a=sqrt(5)): gain = sqrt(2 / (1 + a^2)) = sqrt(1/3), bound =
    // gain * sqrt(3 / fan_in) = 1 / sqrt(fan_in); the bias uses the same bound.
    const double bound = 1.0 / std::sqrt(static_cast<double>(layer.fanIn));
    auto uniform = [&]() {
      // 53 random bits -> [0, 1), then to [-bound, bound): initMlpParameters' draw.
      const double unit = static_cast<double>(rng() >> 11) * 0x1.0p-53;
      return static_cast<float>((2.0 * unit - 1.0) * bound);
    };
    for (size_t i = 0; i < layer.paramCount(); ++i) params[layer.weightOffset + i] = uniform();
  }
}

void fillDropoutMask(float probability, uint64_t seed, const BatchPosition& position, int batch,
                     int features, float* mask) {
  for (int i = 0; i < batch; ++i) {
    float* row = mask + size_t(i) * features;
    const int64_t sample = position.firstSample + i;
    for (int f = 0; f < features; ++f) {
      row[f] = dropoutScale(probability, seed, position.step, sample, f);
    }
  }
}

}  // namespace ringside::trainer
