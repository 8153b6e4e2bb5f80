// Optimizer updates against values computed by hand from PyTorch's documented algorithms,
// learning-rate schedules, and gradient bucketing.
#include <gtest/gtest.h>

#include <cmath>

#include "ringside/common/run_spec.h"
#include "ringside/trainer/bucketing.h"
#include "ringside/trainer/cnn.h"
#include "ringside/trainer/optimizer.h"

namespace ringside::trainer {
namespace {

TEST(OptimizerTest, SgdMomentumNesterovAndWeightDecay) {
  OptimizerConfig config;
  config.momentum = 0.9;
  config.nesterov = false;
  config.weightDecay = 0.1;
  OptimizerState state = makeOptimizerState(config, 1);
  float p = 1.0f;
  const float g = 0.5f;
  // Step 1: g' = 0.5 + 0.1 * 1 = 0.6, buf = 0.6, p = 1 - 0.1 * 0.6 = 0.94.
  optimizerStep(config, 0.1, &p, &g, 1, &state);
  EXPECT_FLOAT_EQ(p, 0.94f);
  // Step 2: g' = 0.5 + 0.094 = 0.594, buf = 0.54 + 0.594 = 1.134, p = 0.94 - 0.1134.
  optimizerStep(config, 0.1, &p, &g, 1, &state);
  EXPECT_NEAR(p, 0.8266f, 1e-6);
  EXPECT_EQ(state.stepCount, 2);

  config.nesterov = true;
  config.weightDecay = 0.0;
  state = makeOptimizerState(config, 1);
  p = 1.0f;
  // Step 1: buf = 0.5, g = 0.5 + 0.9 * 0.5 = 0.95, p = 1 - 0.095.
  optimizerStep(config, 0.1, &p, &g, 1, &state);
  EXPECT_FLOAT_EQ(p, 0.905f);
}

TEST(OptimizerTest, SgdWithoutMomentumKeepsNoBuffer) {
  OptimizerConfig config;
  config.momentum = 0.0;
  OptimizerState state = makeOptimizerState(config, 3);
  EXPECT_TRUE(state.buffers.empty());
  float p[3] = {1, 2, 3};
  const float g[3] = {1, 1, 1};
  optimizerStep(config, 0.5, p, g, 3, &state);
  EXPECT_FLOAT_EQ(p[2], 2.5f);
}

TEST(OptimizerTest, AdamWMatchesTheAlgorithm) {
  OptimizerConfig config;
  config.kind = OptimizerKind::kAdamW;
  config.weightDecay = 0.01;
  OptimizerState state = makeOptimizerState(config, 1);
  ASSERT_EQ(state.buffers.size(), 2u);
  float p = 1.0f;
  double reference = 1.0, m = 0.0, v = 0.0;
  const double lr = 1e-2;
  for (int t = 1; t <= 5; ++t) {
    const float g = 0.3f * t;
    optimizerStep(config, lr, &p, &g, 1, &state);
    reference *= 1 - lr * 0.01;
    m = 0.9 * m + 0.1 * g;
    v = 0.999 * v + 0.001 * double(g) * g;
    const double mHat = m / (1 - std::pow(0.9, t));
    const double vHat = v / (1 - std::pow(0.999, t));
    reference -= lr * mHat / (std::sqrt(vHat) + 1e-8);
    EXPECT_NEAR(p, reference, 1e-6) << "step " << t;
  }
}

TEST(LrScheduleTest, WarmupConstantStepAndCosine) {
  LrScheduleConfig config;
  config.baseLr = 0.1;
  config.warmupSteps = 4;
  EXPECT_DOUBLE_EQ(learningRate(config, 0, 10, 100), 0.025);
  EXPECT_DOUBLE_EQ(learningRate(config, 3, 10, 100), 0.1);
  EXPECT_DOUBLE_EQ(learningRate(config, 50, 10, 100), 0.1);

  config.kind = LrScheduleKind::kStep;
  config.warmupSteps = 0;
  config.stepEpochs = 2;
  config.gamma = 0.5;
  EXPECT_DOUBLE_EQ(learningRate(config, 19, 10, 100), 0.1);
  EXPECT_DOUBLE_EQ(learningRate(config, 20, 10, 100), 0.05);
  EXPECT_DOUBLE_EQ(learningRate(config, 45, 10, 100), 0.025);

  config.kind = LrScheduleKind::kCosine;
  config.minLr = 0.01;
  EXPECT_DOUBLE_EQ(learningRate(config, 0, 10, 101), 0.1);
  EXPECT_NEAR(learningRate(config, 50, 10, 101), 0.055, 1e-12);
  EXPECT_NEAR(learningRate(config, 100, 10, 101), 0.01, 1e-12);
}

TEST(LrScheduleTest, ParsesNamesAndRejectsUnknown) {
  EXPECT_EQ(*parseLrScheduleKind("cosine"), LrScheduleKind::kCosine);
  auto bad = parseLrScheduleKind("linear");
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(bad.status().message().find("'linear'"), std::string::npos);
  EXPECT_FALSE(parseOptimizerKind("adam").isOk());
}

TEST(BucketingTest, ReverseLayerOrderContiguousAndCapped) {
  auto layout = MlpLayout::create({784, 256, 128, 10});
  ASSERT_TRUE(layout.isOk());
  // 25 MiB holds the whole 235,146-parameter model: one bucket, as DDP would form.
  auto one = planBuckets(*layout, 25u << 20);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].offset, 0u);
  EXPECT_EQ(one[0].count, layout->numParams());
  EXPECT_EQ(one[0].firstLayer, 0);

  // A 100 KiB cap: layer 2 (1,290) + layer 1 (32,896) = 136 KiB closes bucket 0; layer 0 alone.
  auto small = planBuckets(*layout, 100u << 10);
  ASSERT_EQ(small.size(), 2u);
  EXPECT_EQ(small[0].firstLayer, 1);
  EXPECT_EQ(small[0].lastLayer, 2);
  EXPECT_EQ(small[0].offset, layout->layers()[1].weightOffset);
  EXPECT_EQ(small[1].firstLayer, 0);
  EXPECT_EQ(small[1].offset + small[1].count, small[0].offset);

  // A tiny cap: one bucket per layer, never a split layer.
  auto tiny = planBuckets(*layout, 4);
  ASSERT_EQ(tiny.size(), 3u);
  for (size_t b = 0; b < tiny.size(); ++b) {
    EXPECT_EQ(tiny[b].firstLayer, tiny[b].lastLayer);
    EXPECT_EQ(tiny[b].count, layout->layers()[tiny[b].firstLayer].paramCount());
  }
}

// The run spec's default bucket_mb puts each shipped model's gradients in several buckets
// (docs/trainer.md, "Buckets and overlap"), so early buckets overlap the rest of backward.
TEST(BucketingTest, DefaultCapGivesTheShippedModelsSeveralBuckets) {
  const size_t cap = bucketCapBytes(defaultTrainerConfig().bucket_mb());
  EXPECT_EQ(cap, 52428u);  // 0.05 MiB

  // MLP 784-256-128-10: layers 2 and 1 (1,290 + 32,896 parameters) close bucket 0; layer 0 alone.
  auto mlp = MlpLayout::create({784, 256, 128, 10});
  ASSERT_TRUE(mlp.isOk());
  const auto mlpBuckets = planBuckets(*mlp, cap);
  ASSERT_EQ(mlpBuckets.size(), 2u);
  EXPECT_EQ(mlpBuckets[0].count, 1290u + 32896u);
  EXPECT_EQ(mlpBuckets[1].firstLayer, 0);
  EXPECT_EQ(mlpBuckets[1].count, 200704u + 256u);

  // CNN conv32-conv64-fc128-fc10: the Linear layers (fc2 is only 5,160 bytes, so it joins fc1),
  // then conv2 (73,984 bytes, past the cap), then conv1.
  auto cnn = CnnLayout::create(CnnShape{});
  ASSERT_TRUE(cnn.isOk());
  const auto cnnBuckets = planBuckets(ModelLayout::cnn(*cnn), cap);
  ASSERT_EQ(cnnBuckets.size(), 3u);
  EXPECT_EQ(cnnBuckets[0].count, 1290u + 401536u);
  EXPECT_EQ(cnnBuckets[1].firstLayer, 1);
  EXPECT_EQ(cnnBuckets[1].lastLayer, 1);
  EXPECT_EQ(cnnBuckets[1].count, 18496u);
  EXPECT_EQ(cnnBuckets[2].firstLayer, 0);
  EXPECT_EQ(cnnBuckets[2].count, 320u);
}

}  // namespace
}  // namespace ringside::trainer
