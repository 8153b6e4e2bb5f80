// conv_algorithms_bench: times each conv stage of a CNN (the trainer's own ConvLayer: oneDNN
// primitives, fused ReLU, scratchpad shared as in training) with ConvAlgorithm::kDirect and
// kAuto, forward (training), backward weights and backward data, at the given batches, one
// thread, the two algorithms alternating repeat by repeat. Prints the best of --repeats runs per
// pass in ms and in GFLOP/s of model FLOPs (direct
// convolution's count, cnn.h ConvLayer::forwardFlops), the algorithm each mode chose, and the
// speed-up of auto over direct measured in the same run.
//
// Checks (exit 1 on failure): for every stage and batch, auto's output, weight and bias
// gradients and input gradient agree with direct's within a relative error (max |a - d| /
// max |d|) of 1e-4: Winograd F(4x4, 3x3) rounds differently from direct convolution but
// computes the same function (docs/trainer.md, "Convolution algorithm").
//
// Usage: conv_algorithms_bench [--batches 32,64] [--channels 32,64] [--repeats 20]
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "ringside/trainer/cnn.h"
#include "ringside/trainer/model.h"

namespace {

using ringside::trainer::ConvAlgorithm;
using ringside::trainer::ConvLayer;
using ringside::trainer::DnnlRuntime;
using Clock = std::chrono::steady_clock;

constexpr double kTolerance = 1e-4;

struct Timings {
  double forwardMs = 1e30;
  double weightsMs = 1e30;
  double dataMs = 1e30;
  std::string implementation;
  std::vector<float> out, dw, db, dx;  // the last repeat's results, plain layouts
};

std::vector<int> parseList(const std::string& text) {
  std::vector<int> values;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    const int v = std::atoi(item.c_str());
    if (v <= 0) {
      std::fprintf(stderr, "conv_algorithms_bench: '%s' is not a positive integer list\n",
                   text.c_str());
      std::exit(2);
    }
    values.push_back(v);
  }
  return values;
}

double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// One conv layer of one algorithm with its inputs, and its best times so far.
struct Case {
  Case(ConvAlgorithm algorithm, int batch, int in, int out, int size, bool inputGradient)
      : layer(runtime, batch, in, out, size, size, /*relu=*/true, /*training=*/true, inputGradient,
              algorithm),
        inputGradient(inputGradient) {
    std::mt19937 random(7);  // the same inputs for every algorithm
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    x.resize(size_t(batch) * in * size * size);
    w.resize(size_t(out) * in * 9);
    b.resize(out);
    dy.resize(size_t(batch) * out * size * size);
    for (auto* v : {&x, &w, &b, &dy}) {
      for (float& f : *v) f = uniform(random);
    }
    const float scale = 1.0f / std::sqrt(float(in * 9));  // nn.Conv2d's init bound
    for (float& f : w) f *= scale;
    src =
        dnnl::memory(ringside::trainer::nchwDesc(batch, in, size, size), runtime.engine, x.data());
    diffDst = dnnl::memory(ringside::trainer::nchwDesc(batch, out, size, size), runtime.engine,
                           dy.data());
    t.implementation = layer.implementation();
    t.dw.resize(w.size());
    t.db.resize(b.size());
  }

  // One forward, backward-weights and backward-data pass, timed; `keep`: read the results.
  void repeat(bool keep) {
    auto start = Clock::now();
    const dnnl::memory& y = layer.forward(src, w.data(), b.data());
    t.forwardMs = std::min(t.forwardMs, msSince(start));
    if (keep) {
      t.out.resize(dy.size());
      ringside::trainer::readNchw(runtime, y, t.out.data());
    }
    start = Clock::now();
    layer.backwardWeights(diffDst, t.dw.data(), t.db.data());
    t.weightsMs = std::min(t.weightsMs, msSince(start));
    if (!inputGradient) return;
    start = Clock::now();
    const dnnl::memory& dx = layer.backwardData(w.data());
    t.dataMs = std::min(t.dataMs, msSince(start));
    if (keep) {
      t.dx.resize(x.size());
      ringside::trainer::readNchw(runtime, dx, t.dx.data());
    }
  }

  DnnlRuntime runtime;
  ConvLayer layer;
  bool inputGradient;
  std::vector<float> x, w, b, dy;
  dnnl::memory src, diffDst;
  Timings t;
};

// max |a - d| / max |d| (0 for empty vectors).
double relativeError(const std::vector<float>& a, const std::vector<float>& d) {
  double diff = 0.0, scale = 0.0;
  for (size_t i = 0; i < d.size(); ++i) {
    diff = std::max(diff, std::abs(double(a[i]) - double(d[i])));
    scale = std::max(scale, std::abs(double(d[i])));
  }
  return scale > 0.0 ? diff / scale : diff;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> batches = {32, 64};
  std::vector<int> channels = {32, 64};
  int repeats = 20;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if ((arg == "--batches" || arg == "--channels" || arg == "--repeats") && i + 1 < argc) {
      const std::string value = argv[++i];
      if (arg == "--batches") batches = parseList(value);
      if (arg == "--channels") channels = parseList(value);
      if (arg == "--repeats") repeats = std::max(1, std::atoi(value.c_str()));
    } else {
      std::fprintf(stderr,
                   "usage: conv_algorithms_bench [--batches 32,64] [--channels 32,64] "
                   "[--repeats 20]\n");
      return 2;
    }
  }
  omp_set_num_threads(1);
  std::printf(
      "conv 3x3 stages of the CNN on 1x28x28 inputs, 1 thread, best of %d; GFLOP/s in model "
      "FLOPs (direct convolution's count)\n",
      repeats);
  std::printf("%-6s %5s %-12s %-8s %9s %9s %9s %9s %8s  %s\n", "stage", "batch", "shape", "mode",
              "fwd ms", "bwd_w ms", "bwd_d ms", "total ms", "GFLOP/s", "implementation");
  bool ok = true;
  double directTotal = 0.0, autoTotal = 0.0;
  for (int batch : batches) {
    int in = 1, size = 28;
    for (size_t s = 0; s < channels.size(); ++s) {
      const int out = channels[s];
      const bool inputGradient = s > 0;  // the trainer computes no gradient of the input image
      const double flops = 2.0 * batch * out * size * size * in * 9 * (inputGradient ? 3 : 2);
      // The two algorithms alternate, repeat by repeat, so that a slow spell of the machine
      // falls on both.
      Case directCase(ConvAlgorithm::kDirect, batch, in, out, size, inputGradient);
      Case autoCase(ConvAlgorithm::kAuto, batch, in, out, size, inputGradient);
      for (int r = 0; r < repeats; ++r) {
        directCase.repeat(r == repeats - 1);
        autoCase.repeat(r == repeats - 1);
      }
      const Timings& direct = directCase.t;
      const Timings& automatic = autoCase.t;
      char shape[32];
      std::snprintf(shape, sizeof shape, "%d->%d %dx%d", in, out, size, size);
      for (const auto& [mode, t] : {std::pair{"direct", &direct}, std::pair{"auto", &automatic}}) {
        const double total = t->forwardMs + t->weightsMs + (inputGradient ? t->dataMs : 0.0);
        char data[16] = "-";
        if (inputGradient) std::snprintf(data, sizeof data, "%.3f", t->dataMs);
        std::printf("conv%-2zu %5d %-12s %-8s %9.3f %9.3f %9s %9.3f %8.1f  %s\n", s + 1, batch,
                    shape, mode, t->forwardMs, t->weightsMs, data, total, flops / total / 1e6,
                    t->implementation.c_str());
        (t == &direct ? directTotal : autoTotal) += total;
      }
      const double errors[] = {
          relativeError(automatic.out, direct.out), relativeError(automatic.dw, direct.dw),
          relativeError(automatic.db, direct.db), relativeError(automatic.dx, direct.dx)};
      const double worst = *std::max_element(std::begin(errors), std::end(errors));
      std::printf(
          "       auto vs direct: %.2fx faster; relative error out %.1e dw %.1e db %.1e "
          "dx %.1e %s\n",
          (direct.forwardMs + direct.weightsMs + (inputGradient ? direct.dataMs : 0)) /
              (automatic.forwardMs + automatic.weightsMs + (inputGradient ? automatic.dataMs : 0)),
          errors[0], errors[1], errors[2], errors[3],
          worst <= kTolerance ? "ok" : "FAILED (> 1e-4)");
      ok = ok && worst <= kTolerance;
      in = out;
      size /= 2;
    }
  }
  std::printf("all stages and batches: direct %.3f ms, auto %.3f ms: auto %.2fx direct\n",
              directTotal, autoTotal, directTotal / autoTotal);
  if (!ok) std::fprintf(stderr, "conv_algorithms_bench: FAILED: auto and direct disagree\n");
  return ok ? 0 : 1;
}
