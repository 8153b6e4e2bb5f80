// Every layer's and the loss's gradient against central finite differences in float64.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "ringside/trainer/mlp.h"

namespace ringside::trainer {
namespace {

constexpr double kStep = 1e-6;
constexpr double kTolerance = 1e-6;  // relative, on float64 central differences

std::vector<double> randomVector(size_t n, std::mt19937_64& rng, double scale = 1.0) {
  std::normal_distribution<double> normal(0.0, scale);
  std::vector<double> v(n);
  for (double& x : v) x = normal(rng);
  return v;
}

// Checks analytic[i] against (f(x + h e_i) - f(x - h e_i)) / 2h for every i.
template <typename Loss>
void expectGradientMatches(std::vector<double>& x, const std::vector<double>& analytic, Loss loss,
                           const char* what) {
  ASSERT_EQ(x.size(), analytic.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const double saved = x[i];
    x[i] = saved + kStep;
    const double up = loss();
    x[i] = saved - kStep;
    const double down = loss();
    x[i] = saved;
    const double numeric = (up - down) / (2 * kStep);
    const double scale = std::max({1.0, std::abs(numeric), std::abs(analytic[i])});
    ASSERT_NEAR(analytic[i], numeric, kTolerance * scale) << what << " element " << i;
  }
}

// A random linear functional of the output, sum(y * probe), so that dL/dy = probe.
double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

TEST(GradientTest, LinearLayerWeightsBiasAndInput) {
  std::mt19937_64 rng(1);
  const int batch = 5, in = 7, out = 4;
  auto x = randomVector(size_t(batch) * in, rng);
  auto w = randomVector(size_t(out) * in, rng);
  auto b = randomVector(out, rng);
  const auto probe = randomVector(size_t(batch) * out, rng);
  auto loss = [&]() {
    std::vector<double> y(size_t(batch) * out);
    linearForward(x.data(), w.data(), b.data(), batch, in, out, y.data());
    return dot(y, probe);
  };
  std::vector<double> dw(w.size()), db(b.size()), dx(x.size());
  linearBackward(x.data(), w.data(), probe.data(), batch, in, out, dw.data(), db.data(), dx.data());
  expectGradientMatches(w, dw, loss, "weight");
  expectGradientMatches(b, db, loss, "bias");
  expectGradientMatches(x, dx, loss, "input");
}

TEST(GradientTest, Relu) {
  std::mt19937_64 rng(2);
  auto x = randomVector(40, rng);
  for (double& v : x) {
    if (std::abs(v) < 1e-3) v = 0.5;  // keep away from the kink, where no derivative exists
  }
  const auto probe = randomVector(x.size(), rng);
  auto loss = [&]() {
    std::vector<double> y = x;
    reluForward(y.data(), y.size());
    return dot(y, probe);
  };
  std::vector<double> y = x;
  reluForward(y.data(), y.size());
  std::vector<double> dx = probe;
  reluBackward(y.data(), dx.data(), dx.size());
  expectGradientMatches(x, dx, loss, "relu input");
}

TEST(GradientTest, SoftmaxCrossEntropy) {
  std::mt19937_64 rng(3);
  const int batch = 6, classes = 5;
  auto logits = randomVector(size_t(batch) * classes, rng, 3.0);
  const std::vector<int32_t> labels = {0, 4, 2, 2, 1, 3};
  auto loss = [&]() {
    return softmaxCrossEntropy<double>(logits.data(), labels.data(), batch, classes, nullptr,
                                       nullptr);
  };
  std::vector<double> dlogits(logits.size());
  softmaxCrossEntropy<double>(logits.data(), labels.data(), batch, classes, dlogits.data(),
                              nullptr);
  expectGradientMatches(logits, dlogits, loss, "logits");
}

TEST(GradientTest, SoftmaxCrossEntropyIsStableForLargeLogits) {
  const std::vector<double> logits = {1000.0, 0.0, -1000.0};
  const std::vector<int32_t> label = {0};
  int64_t correct = 0;
  const double loss =
      softmaxCrossEntropy<double>(logits.data(), label.data(), 1, 3, nullptr, &correct);
  EXPECT_TRUE(std::isfinite(loss));
  EXPECT_NEAR(loss, 0.0, 1e-12);
  EXPECT_EQ(correct, 1);
}

TEST(GradientTest, WholeMlpParameters) {
  auto layout = MlpLayout::create({6, 5, 4, 3});
  ASSERT_TRUE(layout.isOk());
  std::mt19937_64 rng(4);
  const int batch = 4;
  auto params = randomVector(layout->numParams(), rng, 0.7);
  const auto x = randomVector(size_t(batch) * 6, rng);
  const std::vector<int32_t> labels = {2, 0, 1, 2};
  MlpWorkspace<double> workspace(*layout, batch);
  auto loss = [&]() {
    return workspace.forward(params.data(), x.data(), labels.data(), batch, nullptr);
  };
  loss();
  std::vector<double> grads(params.size());
  std::vector<int> order;
  workspace.backward(params.data(), x.data(), grads.data(), [&](int l) { order.push_back(l); });
  EXPECT_EQ(order, (std::vector<int>{2, 1, 0})) << "layers must complete from last to first";
  expectGradientMatches(params, grads, loss, "mlp parameter");
}

TEST(MlpTest, InitialisationFollowsNnLinearBounds) {
  auto layout = MlpLayout::create({784, 256, 10});
  ASSERT_TRUE(layout.isOk());
  std::vector<float> params(layout->numParams());
  initMlpParameters(*layout, 7, params.data());
  for (const LinearLayerShape& layer : layout->layers()) {
    const float bound = 1.0f / std::sqrt(static_cast<float>(layer.in));
    float maxAbs = 0.0f;
    for (size_t i = 0; i < layer.paramCount(); ++i) {
      maxAbs = std::max(maxAbs, std::abs(params[layer.weightOffset + i]));
    }
    EXPECT_LE(maxAbs, bound);
    EXPECT_GT(maxAbs, 0.9f * bound) << "values should fill U(-bound, bound)";
  }
  std::vector<float> again(params.size());
  initMlpParameters(*layout, 7, again.data());
  EXPECT_EQ(params, again);
}

// A model whose GEMMs are larger than kStopCheckFlops: forward and backward are cut into pieces
// (rows of the batch, rows of the weight gradient) with a stop check between them.
struct LongPassFixture {
  // 1024 x 1024 layers at batch 1024: each GEMM is 2^31 operations, two pieces of 2^30.
  static constexpr int kBatch = 1024;
  MlpLayout layout = MlpLayout::create({1024, 1024, 1024, 10}).value();
  std::vector<float> params = std::vector<float>(layout.numParams());
  std::vector<float> x = std::vector<float>(size_t(kBatch) * 1024);
  std::vector<int32_t> labels = std::vector<int32_t>(kBatch);
  LongPassFixture() {
    initMlpParameters(layout, 3, params.data());
    std::mt19937_64 rng(5);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (float& v : x) v = normal(rng);
    for (int i = 0; i < kBatch; ++i) labels[i] = i % 10;
  }
};

// The pieces compute what the unsplit layer operations compute.
TEST(MlpTest, PassesSplitForStopChecksMatchTheUnsplitLayerOperations) {
  LongPassFixture f;
  const int batch = LongPassFixture::kBatch;
  MlpWorkspace<float> workspace(f.layout, batch);
  std::vector<float> grads(f.layout.numParams());
  int checks = 0;
  const StopCheck neverStop = [&] {
    ++checks;
    return false;
  };
  const float loss =
      workspace.forward(f.params.data(), f.x.data(), f.labels.data(), batch, nullptr, neverStop);
  workspace.backward(f.params.data(), f.x.data(), grads.data(), {}, neverStop);
  EXPECT_FALSE(workspace.stopped());
  EXPECT_GE(checks, 6) << "three split GEMMs forward and three backward each ask at least once";

  // The reference: one unsplit call per layer operation.
  const auto& layers = f.layout.layers();
  std::vector<std::vector<float>> y(layers.size());
  const float* input = f.x.data();
  for (size_t l = 0; l < layers.size(); ++l) {
    y[l].resize(size_t(batch) * layers[l].out);
    linearForward(input, f.params.data() + layers[l].weightOffset,
                  f.params.data() + layers[l].biasOffset, batch, layers[l].in, layers[l].out,
                  y[l].data());
    if (l + 1 < layers.size()) reluForward(y[l].data(), y[l].size());
    input = y[l].data();
  }
  std::vector<float> dy(size_t(batch) * 10);
  const float referenceLoss =
      softmaxCrossEntropy(y.back().data(), f.labels.data(), batch, 10, dy.data(), nullptr);
  EXPECT_NEAR(loss, referenceLoss, 1e-5f * std::abs(referenceLoss));
  std::vector<float> reference(f.layout.numParams());
  for (int l = static_cast<int>(layers.size()) - 1; l >= 0; --l) {
    const LinearLayerShape& layer = layers[l];
    std::vector<float> dx(size_t(batch) * layer.in);
    linearBackward(l == 0 ? f.x.data() : y[l - 1].data(), f.params.data() + layer.weightOffset,
                   dy.data(), batch, layer.in, layer.out, reference.data() + layer.weightOffset,
                   reference.data() + layer.biasOffset, l == 0 ? nullptr : dx.data());
    if (l > 0) {
      reluBackward(y[l - 1].data(), dx.data(), dx.size());
      dy = std::move(dx);
    }
  }
  double diff = 0.0, norm = 0.0;
  for (size_t i = 0; i < grads.size(); ++i) {
    diff += (double(grads[i]) - reference[i]) * (double(grads[i]) - reference[i]);
    norm += double(reference[i]) * reference[i];
  }
  EXPECT_LE(std::sqrt(diff / norm), 1e-5);
}

// The bug: `--hidden 30000,30000` ignored SIGTERM for over a minute, because a step checked for a
// stop only between steps. Long passes now ask between pieces and end at once when told to.
TEST(MlpTest, LongPassesStopAtTheNextPieceWhenAsked) {
  LongPassFixture f;
  const int batch = LongPassFixture::kBatch;
  MlpWorkspace<float> workspace(f.layout, batch);
  int checks = 0;
  const StopCheck stopAtOnce = [&] {
    ++checks;
    return true;
  };
  const float loss =
      workspace.forward(f.params.data(), f.x.data(), f.labels.data(), batch, nullptr, stopAtOnce);
  EXPECT_TRUE(workspace.stopped());
  EXPECT_TRUE(std::isnan(loss));
  EXPECT_EQ(checks, 1) << "the first check ends the pass";

  workspace.forward(f.params.data(), f.x.data(), f.labels.data(), batch, nullptr);
  EXPECT_FALSE(workspace.stopped());
  std::vector<float> grads(f.layout.numParams());
  std::vector<int> ready;
  checks = 0;
  workspace.backward(
      f.params.data(), f.x.data(), grads.data(), [&](int layer) { ready.push_back(layer); },
      stopAtOnce);
  EXPECT_TRUE(workspace.stopped());
  EXPECT_EQ(checks, 1);
  EXPECT_LT(ready.size(), f.layout.layers().size()) << "backward ended before the first layer";
}

// Steps of the default model are never split or checked: no all-reduce per piece for them.
TEST(MlpTest, SmallPassesAreNeverChecked) {
  auto layout = MlpLayout::create({784, 256, 128, 10});
  ASSERT_TRUE(layout.isOk());
  const int batch = 128;
  std::vector<float> params(layout->numParams());
  initMlpParameters(*layout, 1, params.data());
  std::vector<float> x(size_t(batch) * 784, 0.5f), grads(params.size());
  std::vector<int32_t> labels(batch, 3);
  MlpWorkspace<float> workspace(*layout, batch);
  int checks = 0;
  const StopCheck count = [&] {
    ++checks;
    return true;
  };
  workspace.forward(params.data(), x.data(), labels.data(), batch, nullptr, count);
  workspace.backward(params.data(), x.data(), grads.data(), {}, count);
  EXPECT_EQ(checks, 0);
  EXPECT_FALSE(workspace.stopped());
}

TEST(MlpTest, RejectsEmptyLayers) {
  EXPECT_FALSE(MlpLayout::create({784}).isOk());
  auto zero = MlpLayout::create({784, 0, 10});
  ASSERT_FALSE(zero.isOk());
  EXPECT_NE(zero.status().message().find("not positive"), std::string::npos);
}

}  // namespace
}  // namespace ringside::trainer
