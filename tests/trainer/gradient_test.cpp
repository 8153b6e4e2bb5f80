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

TEST(MlpTest, RejectsEmptyLayers) {
  EXPECT_FALSE(MlpLayout::create({784}).isOk());
  auto zero = MlpLayout::create({784, 0, 10});
  ASSERT_FALSE(zero.isOk());
  EXPECT_NE(zero.status().message().find("not positive"), std::string::npos);
}

}  // namespace
}  // namespace ringside::trainer
