// The CNN's layers and the whole network against finite differences.
//
// oneDNN has no float64 convolution on the CPU, so the analytic gradients here are float32 (what
// the trainer computes) and the finite differences are float64, of a plain-loop reference of the
// same math written in this test (the trainer itself has no convolution loops). A test first
// checks that the float32 forward equals the reference, then that the float32 gradient equals the
// reference's central differences. Tolerances: float32 sums of a few hundred products carry a
// relative error of about 1e-6 (2^-24 times the terms' count and cancellation), so gradients are
// compared within 1e-4 relative (plus a small absolute floor for gradients near zero); the
// float64 differences with step 1e-6 are exact to about 1e-9 where no ReLU kink or pooling tie
// lies within the step (random inputs make that unlikely; pooling inputs are distinct by
// construction).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>
#include <vector>

#include "ringside/trainer/bucketing.h"
#include "ringside/trainer/cnn.h"
#include "ringside/trainer/model.h"

namespace ringside::trainer {
namespace {

constexpr double kStep = 1e-6;

std::vector<float> randomFloats(size_t n, std::mt19937_64& rng, double scale = 1.0) {
  std::normal_distribution<double> normal(0.0, scale);
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(normal(rng));
  return v;
}

std::vector<double> toDouble(const std::vector<float>& v) { return {v.begin(), v.end()}; }

// ---- Float64 reference of the CNN's math (NCHW, conv 3x3 padding 1, max-pool 2x2 floor).

std::vector<double> refConv(const std::vector<double>& x, const std::vector<double>& w,
                            const std::vector<double>& b, int batch, int in, int out, int h, int wd,
                            bool relu) {
  std::vector<double> y(size_t(batch) * out * h * wd);
  for (int n = 0; n < batch; ++n) {
    for (int o = 0; o < out; ++o) {
      for (int i = 0; i < h; ++i) {
        for (int j = 0; j < wd; ++j) {
          double sum = b[o];
          for (int c = 0; c < in; ++c) {
            for (int ki = 0; ki < 3; ++ki) {
              for (int kj = 0; kj < 3; ++kj) {
                const int r = i + ki - 1, s = j + kj - 1;
                if (r < 0 || r >= h || s < 0 || s >= wd) continue;
                sum += w[((size_t(o) * in + c) * 3 + ki) * 3 + kj] *
                       x[((size_t(n) * in + c) * h + r) * wd + s];
              }
            }
          }
          y[((size_t(n) * out + o) * h + i) * wd + j] = relu ? std::max(sum, 0.0) : sum;
        }
      }
    }
  }
  return y;
}

std::vector<double> refPool(const std::vector<double>& x, int batch, int channels, int h, int w) {
  const int ph = h / 2, pw = w / 2;
  std::vector<double> y(size_t(batch) * channels * ph * pw);
  for (int n = 0; n < batch; ++n) {
    for (int c = 0; c < channels; ++c) {
      const double* plane = &x[(size_t(n) * channels + c) * h * w];
      for (int i = 0; i < ph; ++i) {
        for (int j = 0; j < pw; ++j) {
          const double m =
              std::max({plane[2 * i * w + 2 * j], plane[2 * i * w + 2 * j + 1],
                        plane[(2 * i + 1) * w + 2 * j], plane[(2 * i + 1) * w + 2 * j + 1]});
          y[((size_t(n) * channels + c) * ph + i) * pw + j] = m;
        }
      }
    }
  }
  return y;
}

// Mean cross-entropy of the whole CNN, float64, with the dropout multipliers `mask`.
double refCnnLoss(const CnnLayout& layout, const std::vector<double>& params,
                  const std::vector<double>& x, const std::vector<int32_t>& labels, int batch,
                  const std::vector<float>& mask) {
  std::vector<double> a = x;
  for (const ConvStageShape& s : layout.stages()) {
    std::vector<double> w(params.begin() + s.weightOffset, params.begin() + s.biasOffset);
    std::vector<double> b(params.begin() + s.biasOffset,
                          params.begin() + s.biasOffset + s.outChannels);
    a = refConv(a, w, b, batch, s.inChannels, s.outChannels, s.height, s.width, true);
    a = refPool(a, batch, s.outChannels, s.height, s.width);
  }
  for (size_t i = 0; i < a.size(); ++i) a[i] *= mask[i];
  for (size_t l = 0; l < layout.linears().size(); ++l) {
    const LinearLayerShape& fc = layout.linears()[l];
    std::vector<double> y(size_t(batch) * fc.out);
    for (int n = 0; n < batch; ++n) {
      for (int o = 0; o < fc.out; ++o) {
        double sum = params[fc.biasOffset + o];
        for (int i = 0; i < fc.in; ++i) {
          sum += params[fc.weightOffset + size_t(o) * fc.in + i] * a[size_t(n) * fc.in + i];
        }
        y[size_t(n) * fc.out + o] = l == 0 ? std::max(sum, 0.0) : sum;
      }
    }
    a = std::move(y);
  }
  const int classes = layout.shape().numClasses;
  double loss = 0;
  for (int n = 0; n < batch; ++n) {
    const double* row = &a[size_t(n) * classes];
    const double m = *std::max_element(row, row + classes);
    double sum = 0;
    for (int k = 0; k < classes; ++k) sum += std::exp(row[k] - m);
    loss += m + std::log(sum) - row[labels[n]];
  }
  return loss / batch;
}

// |analytic - numeric| <= 1e-4 * |numeric| + absFloor: see the file comment.
void expectClose(double analytic, double numeric, double absFloor, const std::string& what) {
  EXPECT_NEAR(analytic, numeric, 1e-4 * std::abs(numeric) + absFloor) << what;
}

DnnlRuntime& runtime() {
  static DnnlRuntime instance;
  return instance;
}

dnnl::memory plainMemory(std::vector<float>& data, int n, int c, int h, int w) {
  return dnnl::memory(nchwDesc(n, c, h, w), runtime().engine, data.data());
}

// |b| + sum of |w * x| over each output's terms (the conv without ReLU, in magnitudes).
std::vector<double> refConvMagnitude(const std::vector<double>& x, const std::vector<double>& w,
                                     const std::vector<double>& b, int batch, int in, int out,
                                     int h, int wd) {
  std::vector<double> ax(x.size()), aw(w.size()), ab(b.size());
  std::transform(x.begin(), x.end(), ax.begin(), [](double v) { return std::abs(v); });
  std::transform(w.begin(), w.end(), aw.begin(), [](double v) { return std::abs(v); });
  std::transform(b.begin(), b.end(), ab.begin(), [](double v) { return std::abs(v); });
  return refConv(ax, aw, ab, batch, in, out, h, wd, /*relu=*/false);
}

// ---- conv: forward, weight, bias and input gradients, without and with the fused ReLU, with
// the given algorithm. Returns whether the layer computed with Winograd.
bool checkConvLayer(ConvAlgorithm algorithm, int batch, int in, int out, int h, int w) {
  bool winograd = false;
  for (bool relu : {false, true}) {
    SCOPED_TRACE(relu ? "conv + ReLU" : "conv");
    std::mt19937_64 rng(relu ? 2 : 1);
    auto x = randomFloats(size_t(batch) * in * h * w, rng);
    auto weights = randomFloats(size_t(out) * in * 9, rng, 0.3);
    auto bias = randomFloats(out, rng, 0.3);
    auto probe = randomFloats(size_t(batch) * out * h * w, rng);

    ConvLayer conv(runtime(), batch, in, out, h, w, relu, /*training=*/true,
                   /*inputGradient=*/true, algorithm);
    winograd = conv.winograd();
    SCOPED_TRACE(conv.implementation());
    const dnnl::memory& dst =
        conv.forward(plainMemory(x, batch, in, h, w), weights.data(), bias.data());
    std::vector<float> y(probe.size());
    readNchw(runtime(), dst, y.data());
    auto xd = toDouble(x), wd = toDouble(weights), bd = toDouble(bias);
    const auto yRef = refConv(xd, wd, bd, batch, in, out, h, w, relu);
    // Each output is a sum of in * 9 products and the bias; its rounding error is measured
    // against the sum of their magnitudes (the scale a float32 sum's error bound has).
    const auto magnitude = refConvMagnitude(xd, wd, bd, batch, in, out, h, w);
    double worst = 0.0;
    for (size_t i = 0; i < y.size(); ++i) {
      worst = std::max(worst, std::abs(y[i] - yRef[i]) / magnitude[i]);
    }
    std::printf("%s: largest output error %.2e of the terms' magnitude\n",
                conv.implementation().c_str(), worst);
    // 2e-6 is about 34 float32 epsilons (2^-24). Direct convolution measured 9e-8 here.
    // Winograd F(4x4, 3x3) measured 6e-7: its input and output transforms scale terms by up to
    // 8 (the interpolation points +-2) before they are summed, so it rounds several times more
    // (Lavin & Gray 2016, "Fast Algorithms for Convolutional Neural Networks", measure it too).
    EXPECT_LE(worst, 2e-6) << "output error against the terms' magnitude";

    std::vector<float> dw(weights.size()), db(out);
    conv.backwardWeights(plainMemory(probe, batch, out, h, w), dw.data(), db.data());
    std::vector<float> dx(x.size());
    readNchw(runtime(), conv.backwardData(weights.data()), dx.data());

    const auto probeD = toDouble(probe);
    auto loss = [&]() {
      const auto yy = refConv(xd, wd, bd, batch, in, out, h, w, relu);
      return std::inner_product(yy.begin(), yy.end(), probeD.begin(), 0.0);
    };
    auto check = [&](std::vector<double>& values, const std::vector<float>& analytic,
                     const char* name) {
      for (size_t i = 0; i < values.size(); ++i) {
        const double saved = values[i];
        values[i] = saved + kStep;
        const double up = loss();
        values[i] = saved - kStep;
        const double down = loss();
        values[i] = saved;
        expectClose(analytic[i], (up - down) / (2 * kStep), 1e-5,
                    std::string(name) + " " + std::to_string(i));
      }
    };
    check(wd, dw, "weight");
    check(bd, db, "bias");
    check(xd, dx, "input");
  }
  return winograd;
}

TEST(CnnGradientTest, ConvLayerMatchesReferenceAndFiniteDifferences) {
  EXPECT_FALSE(checkConvLayer(ConvAlgorithm::kDirect, 2, 3, 5, 5, 6));
  // auto: 3 and 5 channels are no multiples of 16, so direct convolution.
  EXPECT_FALSE(checkConvLayer(ConvAlgorithm::kAuto, 2, 3, 5, 5, 6));
}

// Winograd F(4x4, 3x3) computes the same function with other roundings: the same tolerances
// hold (its transforms scale terms by at most 4 and add a few more roundings per output; the
// measured difference from direct convolution is about 1e-6 relative, conv_algorithms_bench).
// A 6x5 image is two 4x4 output tiles across and two down, the second ones partly padding.
TEST(CnnGradientTest, WinogradConvLayerMatchesReferenceAndFiniteDifferences) {
  if (!checkConvLayer(ConvAlgorithm::kAuto, 2, 16, 16, 6, 5)) {
    GTEST_SKIP() << "oneDNN has no Winograd kernel on this CPU (it needs AVX-512); the layer "
                    "ran direct convolution, checked above";
  }
}

// kAuto picks Winograd exactly for the layers whose channel counts are multiples of 16 (the
// default CNN's conv2, not its 1-channel conv1), kDirect never; a CPU without oneDNN's Winograd
// kernel runs direct convolution everywhere.
TEST(CnnGradientTest, AutoChoosesWinogradForChannelsInMultiplesOf16) {
  auto layout = CnnLayout::create(CnnShape{});
  ASSERT_TRUE(layout.isOk());
  const auto direct = CnnWorkspace::convImplementations(*layout, 32, ConvAlgorithm::kDirect);
  ASSERT_EQ(direct.size(), 2u);
  for (const std::string& name : direct) EXPECT_EQ(name.rfind("direct (", 0), 0u) << name;
  const auto automatic = CnnWorkspace::convImplementations(*layout, 32, ConvAlgorithm::kAuto);
  ASSERT_EQ(automatic.size(), 2u);
  EXPECT_EQ(automatic[0].rfind("direct (", 0), 0u) << "conv1 has 1 input channel";
  const bool winograd = automatic[1].rfind("winograd (", 0) == 0;
  if (!winograd) {
    EXPECT_EQ(automatic[1].rfind("direct (", 0), 0u) << automatic[1];
    GTEST_SKIP() << "no Winograd kernel on this CPU: conv2 runs " << automatic[1];
  }
  EXPECT_NE(automatic[1].find("wino"), std::string::npos) << automatic[1];
  // Winograd's tile transforms need a scratchpad; direct convolution's is small.
  EXPECT_GT(CnnWorkspace::scratchpadBytes(*layout, 32, true, ConvAlgorithm::kAuto),
            CnnWorkspace::scratchpadBytes(*layout, 32, true, ConvAlgorithm::kDirect));
}

// ---- max-pool 2x2: forward (floor on odd sizes) and the gradient routed to each maximum.
TEST(CnnGradientTest, MaxPoolLayerMatchesReferenceAndFiniteDifferences) {
  const int batch = 2, channels = 3, h = 7, w = 6;
  const size_t count = size_t(batch) * channels * h * w;
  // Distinct values 0.01 apart, shuffled: no ties, and no maximum changes within the step.
  std::vector<float> x(count);
  for (size_t i = 0; i < count; ++i) x[i] = 0.01f * static_cast<float>(i) - 1.0f;
  std::mt19937_64 rng(3);
  std::shuffle(x.begin(), x.end(), rng);
  const int ph = h / 2, pw = w / 2;
  auto probe = randomFloats(size_t(batch) * channels * ph * pw, rng);

  MaxPoolLayer pool(runtime(), nchwDesc(batch, channels, h, w), /*training=*/true);
  std::vector<float> y(probe.size());
  readNchw(runtime(), pool.forward(plainMemory(x, batch, channels, h, w)), y.data());
  auto xd = toDouble(x);
  const auto yRef = refPool(xd, batch, channels, h, w);
  for (size_t i = 0; i < y.size(); ++i) ASSERT_EQ(y[i], yRef[i]) << "output " << i;

  std::vector<float> dx(count);
  readNchw(runtime(), pool.backward(plainMemory(probe, batch, channels, ph, pw)), dx.data());
  const auto probeD = toDouble(probe);
  for (size_t i = 0; i < count; ++i) {
    const double saved = xd[i];
    xd[i] = saved + kStep;
    const auto up = refPool(xd, batch, channels, h, w);
    xd[i] = saved - kStep;
    const auto down = refPool(xd, batch, channels, h, w);
    xd[i] = saved;
    double numeric = 0;
    for (size_t k = 0; k < up.size(); ++k) numeric += (up[k] - down[k]) * probeD[k];
    numeric /= 2 * kStep;
    expectClose(dx[i], numeric, 1e-6, "input " + std::to_string(i));
  }
}

// ---- dropout masks: the rate and scale of nn.Dropout, and independent of how a global batch
// is split over ranks.
TEST(CnnGradientTest, DropoutMaskHasItsRateAndDoesNotDependOnTheRankSplit) {
  const float p = 0.25f;
  const int features = 1000, batch = 64;
  std::vector<float> whole(size_t(batch) * features);
  fillDropoutMask(p, 42, BatchPosition{7, 0}, batch, features, whole.data());
  size_t dropped = 0;
  for (float m : whole) {
    if (m == 0.0f) {
      ++dropped;
    } else {
      ASSERT_EQ(m, 1.0f / (1.0f - p));
    }
  }
  EXPECT_NEAR(double(dropped) / whole.size(), p, 0.01);
  // Rank 1 of 2 holds positions 32..63 of the global batch: the same rows.
  std::vector<float> rank1(size_t(32) * features);
  fillDropoutMask(p, 42, BatchPosition{7, 32}, 32, features, rank1.data());
  EXPECT_TRUE(std::equal(rank1.begin(), rank1.end(), whole.begin() + size_t(32) * features));
  // Another step or seed: another mask.
  std::vector<float> next(whole.size());
  fillDropoutMask(p, 42, BatchPosition{8, 0}, batch, features, next.data());
  EXPECT_NE(next, whole);
  fillDropoutMask(p, 43, BatchPosition{7, 0}, batch, features, next.data());
  EXPECT_NE(next, whole);
}

// ---- the whole CNN: loss and every parameter's gradient, with dropout on a fixed mask.
void checkWholeCnn(const CnnShape& shape, ConvAlgorithm algorithm) {
  auto layout = CnnLayout::create(shape);
  ASSERT_TRUE(layout.isOk()) << layout.status().toString();
  const ModelLayout model = ModelLayout::cnn(*layout);
  const int batch = 3;
  std::mt19937_64 rng(5);
  std::vector<float> params(model.numParams());
  initParameters(model, 9, params.data());
  auto x = randomFloats(size_t(batch) * model.inputDim(), rng);
  std::vector<int32_t> labels = {0, 3, 1};
  const uint64_t seed = 11;
  const BatchPosition position{4, 6};

  CnnWorkspace workspace(*layout, seed, algorithm);
  const float loss =
      workspace.forward(params.data(), x.data(), labels.data(), batch, &position, nullptr);
  std::vector<float> grads(params.size(), -1.0f);
  std::vector<int> readyOrder;
  workspace.backward(params.data(), grads.data(), [&](int layer) { readyOrder.push_back(layer); });
  EXPECT_EQ(readyOrder, (std::vector<int>{3, 2, 1, 0})) << "last layer first, each once";

  std::vector<float> mask(size_t(batch) * layout->flatFeatures());
  fillDropoutMask(static_cast<float>(shape.dropout), seed, position, batch, layout->flatFeatures(),
                  mask.data());
  auto pd = toDouble(params);
  const auto xd = toDouble(x);
  EXPECT_NEAR(loss, refCnnLoss(*layout, pd, xd, labels, batch, mask), 1e-5);
  for (size_t i = 0; i < pd.size(); ++i) {
    const double saved = pd[i];
    pd[i] = saved + kStep;
    const double up = refCnnLoss(*layout, pd, xd, labels, batch, mask);
    pd[i] = saved - kStep;
    const double down = refCnnLoss(*layout, pd, xd, labels, batch, mask);
    pd[i] = saved;
    expectClose(grads[i], (up - down) / (2 * kStep), 1e-6, "parameter " + std::to_string(i));
  }

  // Evaluation: no dropout, the same parameters.
  std::vector<float> noMask(mask.size(), 1.0f);
  int64_t correct = 0;
  const float evalLoss =
      workspace.forward(params.data(), x.data(), labels.data(), batch, nullptr, &correct);
  EXPECT_NEAR(evalLoss, refCnnLoss(*layout, pd, xd, labels, batch, noMask), 1e-5);
  EXPECT_GE(correct, 0);
  EXPECT_LE(correct, batch);
}

CnnShape smallCnn(std::vector<int> convChannels) {
  CnnShape shape;
  shape.height = 8;
  shape.width = 9;  // odd: the pooling floor on the way
  shape.convChannels = std::move(convChannels);
  shape.hidden = 6;
  shape.numClasses = 4;
  shape.dropout = 0.5;  // half the features dropped: the mask matters
  return shape;
}

TEST(CnnGradientTest, WholeCnnMatchesReferenceAndFiniteDifferences) {
  checkWholeCnn(smallCnn({3, 4}), ConvAlgorithm::kAuto);  // direct: no multiples of 16
}

// The same with the second conv layer (16 -> 16 channels on a 4x4 image) in Winograd.
TEST(CnnGradientTest, WholeCnnWithWinogradMatchesReferenceAndFiniteDifferences) {
  const CnnShape shape = smallCnn({16, 16});
  auto layout = CnnLayout::create(shape);
  ASSERT_TRUE(layout.isOk());
  const auto convs = CnnWorkspace::convImplementations(*layout, 3, ConvAlgorithm::kAuto);
  if (convs.back().rfind("winograd", 0) != 0) {
    GTEST_SKIP() << "no Winograd kernel on this CPU: conv2 runs " << convs.back();
  }
  checkWholeCnn(shape, ConvAlgorithm::kAuto);
}

TEST(CnnModelTest, DefaultShapeParametersInitAndBuckets) {
  auto layout = CnnLayout::create(CnnShape{});
  ASSERT_TRUE(layout.isOk());
  const ModelLayout model = ModelLayout::cnn(*layout);
  // conv1 32*1*9+32, conv2 64*32*9+64, fc1 3136*128+128, fc2 128*10+10.
  EXPECT_EQ(layout->flatFeatures(), 3136);
  EXPECT_EQ(model.numParams(), 320u + 18496u + 401536u + 1290u);
  EXPECT_EQ(model.shapeVector(), (std::vector<int>{1, 28, 28, 32, 64, 128, 10}));

  // PyTorch's bound 1/sqrt(fan_in) per layer: fan_in 9 for conv1, 288 for conv2.
  std::vector<float> params(model.numParams());
  initParameters(model, 1, params.data());
  const auto& layers = model.parameterLayers();
  ASSERT_EQ(layers.size(), 4u);
  EXPECT_EQ(layers[0].fanIn, 9);
  EXPECT_EQ(layers[1].fanIn, 288);
  for (const ParameterLayer& layer : layers) {
    const float bound = 1.0f / std::sqrt(float(layer.fanIn));
    float largest = 0;
    for (size_t i = 0; i < layer.paramCount(); ++i) {
      largest = std::max(largest, std::abs(params[layer.weightOffset + i]));
    }
    EXPECT_LE(largest, bound);
    EXPECT_GT(largest, 0.9f * bound) << "draws fill the range";
  }

  // 25 MiB cap: DDP's 1 MiB first bucket closes after the Linear layers; the conv layers follow.
  const auto buckets = planBuckets(model, 25u << 20);
  ASSERT_EQ(buckets.size(), 2u);
  EXPECT_EQ(buckets[0].firstLayer, 2);
  EXPECT_EQ(buckets[0].lastLayer, 3);
  EXPECT_EQ(buckets[1].firstLayer, 0);
  EXPECT_EQ(buckets[1].offset, 0u);
  EXPECT_EQ(buckets[1].count + buckets[0].count, model.numParams());
}

TEST(CnnModelTest, MlpInitIsUnchanged) {
  auto mlp = MlpLayout::create({784, 256, 128, 10});
  ASSERT_TRUE(mlp.isOk());
  std::vector<float> before(mlp->numParams()), after(mlp->numParams());
  initMlpParameters(*mlp, 7, before.data());
  initParameters(ModelLayout::mlp(*mlp), 7, after.data());
  EXPECT_EQ(before, after);
}

TEST(CnnModelTest, ShapesThatCannotBeBuiltAreRefused) {
  CnnShape tooDeep;
  tooDeep.convChannels = {8, 8, 8, 8, 8};  // 28 -> 14 -> 7 -> 3 -> 1 -> nothing
  auto deep = CnnLayout::create(tooDeep);
  ASSERT_FALSE(deep.isOk());
  EXPECT_NE(deep.status().message().find("at most 4 entries in --channels"), std::string::npos)
      << deep.status().message();
  CnnShape badDropout;
  badDropout.dropout = 1.0;
  EXPECT_FALSE(CnnLayout::create(badDropout).isOk());
  CnnShape zero;
  zero.convChannels = {32, 0};
  EXPECT_FALSE(CnnLayout::create(zero).isOk());
}

}  // namespace
}  // namespace ringside::trainer
