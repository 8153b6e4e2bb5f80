// Gradient accumulation over micro-batches (cpu_model.h MicroBatchedModel): the gradient of a
// batch computed in passes is the sum of the passes' gradients in pass order, averaged, exactly
// as ranks computing one pass each would all-reduce it; every layer is final when it is
// reported; a stop request in an early pass ends the step.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "ringside/trainer/cpu_model.h"
#include "ringside/trainer/model.h"

namespace ringside::trainer {
namespace {

struct Batch {
  std::vector<float> x;
  std::vector<int32_t> labels;
};

Batch randomBatch(const ModelLayout& layout, int batch, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> pixel(-1.0f, 1.0f);
  Batch b;
  b.x.resize(size_t(batch) * layout.inputDim());
  for (float& v : b.x) v = pixel(rng);
  b.labels.resize(size_t(batch));
  for (int32_t& label : b.labels) label = int32_t(rng() % uint64_t(layout.numClasses()));
  return b;
}

std::vector<float> parametersOf(const ModelLayout& layout) {
  std::vector<float> params(layout.numParams());
  initParameters(layout, 11, params.data());
  return params;
}

// The gradient one pass of `count` samples starting at `first` computes on its own (what the
// rank holding those samples computes), as a separate model instance.
std::vector<float> onePassGradient(const ModelLayout& layout, const std::vector<float>& params,
                                   const Batch& batch, int first, int count, int64_t step,
                                   float* loss) {
  auto model = makeCpuModel(layout, count, 5, 0);
  std::vector<float> grads(layout.numParams());
  const BatchPosition position{step, first};
  *loss = model->forward(params.data(), batch.x.data() + size_t(first) * layout.inputDim(),
                         batch.labels.data() + first, count, &position, nullptr, nullptr);
  model->backward(params.data(), batch.x.data() + size_t(first) * layout.inputDim(), grads.data(),
                  nullptr, nullptr, nullptr);
  return grads;
}

std::vector<ModelLayout> layouts() {
  return {ModelLayout::mlp(*MlpLayout::create({784, 64, 32, 10})),
          ModelLayout::cnn(*CnnLayout::create(CnnShape{}))};
}

TEST(MicroBatchTest, TwoPassesGiveTheTwoRankAllreduceBitForBit) {
  for (const ModelLayout& layout : layouts()) {
    SCOPED_TRACE(layout.describe());
    const std::vector<float> params = parametersOf(layout);
    const Batch batch = randomBatch(layout, 16, 3);
    float loss0 = 0, loss1 = 0;
    const std::vector<float> g0 = onePassGradient(layout, params, batch, 0, 8, 4, &loss0);
    const std::vector<float> g1 = onePassGradient(layout, params, batch, 8, 8, 4, &loss1);

    auto model = makeCpuModel(layout, 8, 5, 8);
    std::vector<float> grads(layout.numParams(), NAN);
    const BatchPosition position{4, 0};
    const float loss = model->forward(params.data(), batch.x.data(), batch.labels.data(), 16,
                                      &position, nullptr, nullptr);
    model->backward(params.data(), batch.x.data(), grads.data(), nullptr, nullptr, nullptr);
    EXPECT_FALSE(model->stopped());
    EXPECT_FLOAT_EQ(loss, (loss0 + loss1) / 2);
    size_t different = 0;
    for (size_t i = 0; i < grads.size(); ++i) {
      // The two-rank run: the all-reduce's g0 + g1, then the mean over 2 ranks.
      const float twoRanks = (g0[i] + g1[i]) * 0.5f;
      if (grads[i] != twoRanks) ++different;
    }
    EXPECT_EQ(different, 0u) << "of " << grads.size() << " gradient elements";
  }
}

TEST(MicroBatchTest, FourPassesSumInPassOrderAndAverage) {
  const ModelLayout layout = layouts()[0];
  const std::vector<float> params = parametersOf(layout);
  const Batch batch = randomBatch(layout, 20, 9);
  std::vector<std::vector<float>> passes;
  for (int p = 0; p < 4; ++p) {
    float loss = 0;
    passes.push_back(onePassGradient(layout, params, batch, 5 * p, 5, 0, &loss));
  }
  auto model = makeCpuModel(layout, 5, 5, 5);
  std::vector<float> grads(layout.numParams());
  const BatchPosition position{0, 0};
  model->forward(params.data(), batch.x.data(), batch.labels.data(), 20, &position, nullptr,
                 nullptr);
  model->backward(params.data(), batch.x.data(), grads.data(), nullptr, nullptr, nullptr);
  for (size_t i = 0; i < grads.size(); ++i) {
    const float expected = (passes[3][i] + ((passes[0][i] + passes[1][i]) + passes[2][i])) * 0.25f;
    ASSERT_EQ(grads[i], expected) << "element " << i;
  }
}

// The bucketed all-reduce starts from onLayerReady: a layer's gradient must then be final (the
// earlier passes added and averaged), and layers come from the last one down to 0, once each.
TEST(MicroBatchTest, EveryLayerIsFinalWhenReported) {
  for (const ModelLayout& layout : layouts()) {
    SCOPED_TRACE(layout.describe());
    const std::vector<float> params = parametersOf(layout);
    const Batch batch = randomBatch(layout, 12, 4);
    auto model = makeCpuModel(layout, 4, 5, 4);
    std::vector<float> grads(layout.numParams());
    std::vector<std::vector<float>> atReport(layout.parameterLayers().size());
    std::vector<int> order;
    const BatchPosition position{2, 0};
    model->forward(params.data(), batch.x.data(), batch.labels.data(), 12, &position, nullptr,
                   nullptr);
    model->backward(
        params.data(), batch.x.data(), grads.data(),
        [&](int layer) {
          order.push_back(layer);
          const ParameterLayer& l = layout.parameterLayers()[size_t(layer)];
          atReport[size_t(layer)].assign(grads.begin() + l.weightOffset,
                                         grads.begin() + l.weightOffset + l.paramCount());
        },
        nullptr, nullptr);
    std::vector<int> expectedOrder;
    for (int l = int(layout.parameterLayers().size()) - 1; l >= 0; --l) expectedOrder.push_back(l);
    EXPECT_EQ(order, expectedOrder);
    for (size_t l = 0; l < atReport.size(); ++l) {
      const ParameterLayer& layer = layout.parameterLayers()[l];
      const std::vector<float> final(grads.begin() + layer.weightOffset,
                                     grads.begin() + layer.weightOffset + layer.paramCount());
      EXPECT_EQ(atReport[l], final) << "layer " << l << " changed after it was reported";
    }
  }
}

TEST(MicroBatchTest, AStopRequestInAnEarlyPassEndsTheStep) {
  const ModelLayout layout = layouts()[1];
  const std::vector<float> params = parametersOf(layout);
  // A pass is asked about stops only after kStopCheckFlops of work: at 256 samples the CNN's
  // second convolution alone is past it.
  const Batch batch = randomBatch(layout, 512, 1);
  auto model = makeCpuModel(layout, 256, 5, 256);
  int asked = 0;
  const StopCheck stopAtOnce = [&] {
    ++asked;
    return true;
  };
  const BatchPosition position{0, 0};
  const float loss = model->forward(params.data(), batch.x.data(), batch.labels.data(), 512,
                                    &position, nullptr, stopAtOnce);
  EXPECT_TRUE(model->stopped());
  EXPECT_TRUE(std::isnan(loss));
  EXPECT_GE(asked, 1);
}

// Evaluation batches (no position) and batches that are not a multiple of the micro-batch are
// one pass: the same numbers as the model without micro-batches.
TEST(MicroBatchTest, EvaluationIsOnePass) {
  const ModelLayout layout = layouts()[0];
  const std::vector<float> params = parametersOf(layout);
  const Batch batch = randomBatch(layout, 30, 2);
  auto plain = makeCpuModel(layout, 30, 5, 0);
  auto micro = makeCpuModel(layout, 30, 5, 8);
  int64_t correctPlain = 0, correctMicro = 0;
  EXPECT_EQ(plain->forward(params.data(), batch.x.data(), batch.labels.data(), 30, nullptr,
                           &correctPlain, nullptr),
            micro->forward(params.data(), batch.x.data(), batch.labels.data(), 30, nullptr,
                           &correctMicro, nullptr));
  EXPECT_EQ(correctPlain, correctMicro);
}

}  // namespace
}  // namespace ringside::trainer
