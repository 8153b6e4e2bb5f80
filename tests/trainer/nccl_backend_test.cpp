// The nccl backend against the CPU reference (ctest label `gpu`): on one GPU with a world of one,
// the same seed and the same batches must give the same trajectory up to float rounding, the same
// evaluation, and checkpoints that round-trip and move between the backends. Every test that needs
// a GPU skips where none is visible.
//
// The backend is the plugin libringside-nccl.so, which this test links directly (so it travels
// with the test binary, and the loader's search by name finds the same library already loaded);
// every backend here is made through the trainer's loader, as ringside-trainer makes it.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "ringside/trainer/backend.h"
#include "ringside/trainer/communicator.h"
#include "ringside/trainer/mlp.h"
#include "ringside/trainer/nccl_plugin.h"
#include "ringside/trainer/nccl_plugin_loader.h"
#include "ringside/trainer/optimizer.h"

namespace ringside::trainer {
namespace {

constexpr int kBatch = 32;
constexpr int kSteps = 20;
// Relative L2 distance allowed between the two backends' parameters after kSteps: cuBLAS and
// OpenBLAS sum in different orders, so the trajectories drift apart by float rounding only.
constexpr double kParamTolerance = 1e-4;

MlpLayout testLayout() {
  Result<MlpLayout> layout = MlpLayout::create({784, 64, 32, 10});
  EXPECT_TRUE(layout.isOk()) << layout.status().toString();
  return layout.value();
}

struct Batch {
  std::vector<float> x;         // [count, inputDim], in [0, 1) like normalised pixels
  std::vector<int32_t> labels;  // [count], in [0, numClasses)
  int count = 0;
};

Batch randomBatch(std::mt19937& rng, const ModelLayout& layout, int count) {
  std::uniform_real_distribution<float> pixel(0.0f, 1.0f);
  std::uniform_int_distribution<int32_t> label(0, layout.numClasses() - 1);
  Batch batch;
  batch.count = count;
  batch.x.resize(size_t(count) * layout.inputDim());
  for (float& value : batch.x) value = pixel(rng);
  batch.labels.resize(count);
  for (int32_t& value : batch.labels) value = label(rng);
  return batch;
}

// ||a - reference|| / ||reference||, or ||a|| when the reference is zero.
double relativeL2(const std::vector<float>& a, const std::vector<float>& reference) {
  EXPECT_EQ(a.size(), reference.size());
  double diff = 0.0;
  double norm = 0.0;
  for (size_t i = 0; i < a.size() && i < reference.size(); ++i) {
    const double d = double(a[i]) - double(reference[i]);
    diff += d * d;
    norm += double(reference[i]) * double(reference[i]);
  }
  return norm > 0.0 ? std::sqrt(diff / norm) : std::sqrt(diff);
}

BackendOptions testOptions(const OptimizerConfig& optimizer, uint64_t seed = 1234) {
  BackendOptions options;
  options.model = ModelLayout::mlp(testLayout());
  options.optimizer = optimizer;
  options.seed = seed;
  options.maxBatch = 64;
  options.bucketBytes = 64u << 10;  // several buckets, as a multi-rank run would have
  return options;
}

OptimizerConfig sgdMomentum() {
  OptimizerConfig config;
  config.kind = OptimizerKind::kSgd;
  config.momentum = 0.9;
  config.weightDecay = 5e-4;
  return config;
}

OptimizerConfig adamW() {
  OptimizerConfig config;
  config.kind = OptimizerKind::kAdamW;
  config.weightDecay = 0.01;
  return config;
}

class NcclBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (visibleGpuCount() == 0) GTEST_SKIP() << "no CUDA GPU visible";
  }

  // An initialised nccl backend, or null after recording the failure.
  std::unique_ptr<Backend> makeGpu(const BackendOptions& options) {
    Result<std::unique_ptr<Backend>> backend = makeNcclBackend(*gpuComm_, options);
    EXPECT_TRUE(backend.isOk()) << backend.status().toString();
    if (!backend.isOk()) return nullptr;
    EXPECT_STREQ(backend.value()->name(), "nccl");
    const Status init = backend.value()->initialize();
    EXPECT_TRUE(init.isOk()) << init.toString();
    return init.isOk() ? std::move(backend).value() : nullptr;
  }

  std::unique_ptr<Backend> makeCpu(const BackendOptions& options) {
    std::unique_ptr<Backend> backend = makeCpuBackend(*cpuComm_, options);
    const Status init = backend->initialize();
    EXPECT_TRUE(init.isOk()) << init.toString();
    return init.isOk() ? std::move(backend) : nullptr;
  }

  std::unique_ptr<Communicator> gpuComm_ = makeSelfCommunicator();
  std::unique_ptr<Communicator> cpuComm_ = makeSelfCommunicator();
};

struct OptimizerCase {
  const char* name;
  OptimizerConfig config;
  double lr;
};

// Shown by gtest instead of the parameter's raw bytes.
void PrintTo(const OptimizerCase& param, std::ostream* os) { *os << param.name; }

class NcclMatchesCpuTest : public NcclBackendTest,
                           public ::testing::WithParamInterface<OptimizerCase> {};

TEST_P(NcclMatchesCpuTest, TrainingFollowsTheCpuTrajectory) {
  const OptimizerCase& param = GetParam();
  const BackendOptions options = testOptions(param.config);
  std::unique_ptr<Backend> gpu = makeGpu(options);
  std::unique_ptr<Backend> cpu = makeCpu(options);
  ASSERT_NE(gpu, nullptr);
  ASSERT_NE(cpu, nullptr);

  std::vector<float> initial;
  std::vector<float> gpuParams;
  OptimizerState cpuState;
  OptimizerState gpuState;
  ASSERT_TRUE(cpu->saveState(&initial, &cpuState).isOk());
  ASSERT_TRUE(gpu->saveState(&gpuParams, &gpuState).isOk());
  EXPECT_EQ(gpuParams, initial) << "both backends start from initParameters(seed)";

  std::mt19937 rng(7);
  for (int step = 0; step < kSteps; ++step) {
    const Batch batch = randomBatch(rng, options.model, kBatch);
    double cpuLoss = 0.0;
    double gpuLoss = 0.0;
    StepTimings cpuTimings;
    StepTimings gpuTimings;
    ASSERT_TRUE(cpu->trainStep(batch.x.data(), batch.labels.data(), kBatch, BatchPosition{step, 0},
                               param.lr, &cpuLoss, &cpuTimings)
                    .isOk());
    const Status status = gpu->trainStep(batch.x.data(), batch.labels.data(), kBatch,
                                         BatchPosition{step, 0}, param.lr, &gpuLoss, &gpuTimings);
    ASSERT_TRUE(status.isOk()) << status.toString();
    EXPECT_NEAR(gpuLoss, cpuLoss, 1e-4 * std::max(1.0, std::abs(cpuLoss))) << "step " << step;
    // World size 1: nothing to all-reduce.
    EXPECT_EQ(gpuTimings.commBytes, 0u);
    EXPECT_EQ(gpuTimings.allreduceMs, 0.0);
    EXPECT_EQ(gpuTimings.exposedCommMs, 0.0);
    EXPECT_GT(gpuTimings.stepMs, 0.0);
    EXPECT_DOUBLE_EQ(gpuTimings.computeMs, gpuTimings.stepMs);
  }

  std::vector<float> cpuParams;
  ASSERT_TRUE(cpu->saveState(&cpuParams, &cpuState).isOk());
  ASSERT_TRUE(gpu->saveState(&gpuParams, &gpuState).isOk());
  EXPECT_GT(relativeL2(cpuParams, initial), 1e-3) << "training moved the parameters";
  EXPECT_LT(relativeL2(gpuParams, cpuParams), kParamTolerance);
  EXPECT_EQ(gpuState.stepCount, kSteps);
  EXPECT_EQ(gpuState.stepCount, cpuState.stepCount);
  ASSERT_EQ(gpuState.buffers.size(), cpuState.buffers.size());
  for (size_t b = 0; b < cpuState.buffers.size(); ++b) {
    // The same layout as the CPU's: momentum, or AdamW's exp_avg and exp_avg_sq.
    EXPECT_LT(relativeL2(gpuState.buffers[b], cpuState.buffers[b]), 1e-3) << "buffer " << b;
  }
}

INSTANTIATE_TEST_SUITE_P(Optimizers, NcclMatchesCpuTest,
                         ::testing::Values(OptimizerCase{"SgdMomentum", sgdMomentum(), 0.05},
                                           OptimizerCase{"AdamW", adamW(), 1e-3}),
                         [](const ::testing::TestParamInfo<OptimizerCase>& info) {
                           return std::string(info.param.name);
                         });

// The CNN (cuDNN) follows the CPU's (oneDNN) trajectory, dropout included: both draw the masks of
// model.h from the same (seed, step, sample) so they drop the same features.
TEST_F(NcclBackendTest, CnnTrainingFollowsTheCpuTrajectory) {
  // 8 -> 16 channels: direct convolution on the CPU (no multiple of 16 in), any algorithm cuDNN
  // likes; 16 -> 32 with kDirect: direct on both, no Winograd or FFT on the GPU.
  for (const auto& [channels, algorithm] :
       {std::pair{std::vector<int>{8, 16}, ConvAlgorithm::kAuto},
        std::pair{std::vector<int>{16, 32}, ConvAlgorithm::kDirect}}) {
    SCOPED_TRACE(convAlgorithmName(algorithm));
    CnnShape shape;
    shape.convChannels = channels;
    shape.hidden = 32;
    Result<CnnLayout> layout = CnnLayout::create(shape);
    ASSERT_TRUE(layout.isOk()) << layout.status().toString();
    BackendOptions options = testOptions(sgdMomentum());
    options.model = ModelLayout::cnn(*layout);
    options.convAlgorithm = algorithm;
    std::unique_ptr<Backend> gpu = makeGpu(options);
    std::unique_ptr<Backend> cpu = makeCpu(options);
    ASSERT_NE(gpu, nullptr);
    ASSERT_NE(cpu, nullptr);
    EXPECT_NE(gpu->description().find("cuDNN"), std::string::npos) << gpu->description();
    EXPECT_NE(
        gpu->description().find(std::string("conv algorithm ") + convAlgorithmName(algorithm)),
        std::string::npos)
        << gpu->description();

    std::mt19937 rng(13);
    for (int step = 0; step < kSteps; ++step) {
      const Batch batch = randomBatch(rng, options.model, kBatch);
      double cpuLoss = 0.0, gpuLoss = 0.0;
      StepTimings cpuTimings, gpuTimings;
      const BatchPosition position{step, 32};
      ASSERT_TRUE(cpu->trainStep(batch.x.data(), batch.labels.data(), kBatch, position, 0.02,
                                 &cpuLoss, &cpuTimings)
                      .isOk());
      const Status status = gpu->trainStep(batch.x.data(), batch.labels.data(), kBatch, position,
                                           0.02, &gpuLoss, &gpuTimings);
      ASSERT_TRUE(status.isOk()) << status.toString();
      EXPECT_NEAR(gpuLoss, cpuLoss, 1e-4 * std::max(1.0, std::abs(cpuLoss))) << "step " << step;
    }
    std::vector<float> cpuParams, gpuParams;
    OptimizerState cpuState, gpuState;
    ASSERT_TRUE(cpu->saveState(&cpuParams, &cpuState).isOk());
    ASSERT_TRUE(gpu->saveState(&gpuParams, &gpuState).isOk());
    EXPECT_LT(relativeL2(gpuParams, cpuParams), kParamTolerance);

    // Evaluation (no dropout) agrees too.
    const Batch data = randomBatch(rng, options.model, 100);
    EvalSums cpuSums, gpuSums;
    ASSERT_TRUE(cpu->evaluate(data.x.data(), data.labels.data(), 100, &cpuSums).isOk());
    ASSERT_TRUE(gpu->evaluate(data.x.data(), data.labels.data(), 100, &gpuSums).isOk());
    EXPECT_EQ(gpuSums.count, cpuSums.count);
    EXPECT_NEAR(gpuSums.lossSum, cpuSums.lossSum, 1e-4 * std::abs(cpuSums.lossSum));
  }
}

TEST_F(NcclBackendTest, EvaluateMatchesTheCpuBackend) {
  const BackendOptions options = testOptions(sgdMomentum());
  std::unique_ptr<Backend> gpu = makeGpu(options);
  std::unique_ptr<Backend> cpu = makeCpu(options);
  ASSERT_NE(gpu, nullptr);
  ASSERT_NE(cpu, nullptr);

  // 300 samples: four full chunks of maxBatch = 64 and a partial one.
  std::mt19937 rng(11);
  const Batch data = randomBatch(rng, options.model, 300);
  EvalSums cpuSums;
  EvalSums gpuSums;
  gpuSums.lossSum = 1.5;  // evaluate() adds to what is there
  gpuSums.correct = 2;
  gpuSums.count = 3;
  ASSERT_TRUE(cpu->evaluate(data.x.data(), data.labels.data(), data.count, &cpuSums).isOk());
  const Status status = gpu->evaluate(data.x.data(), data.labels.data(), data.count, &gpuSums);
  ASSERT_TRUE(status.isOk()) << status.toString();
  EXPECT_EQ(gpuSums.count - 3, cpuSums.count);
  EXPECT_EQ(cpuSums.count, 300);
  EXPECT_NEAR(gpuSums.lossSum - 1.5, cpuSums.lossSum, 1e-5 * cpuSums.lossSum);
  // An arg-max can flip only on a near tie between two logits; allow one such sample.
  EXPECT_NEAR(double(gpuSums.correct - 2), double(cpuSums.correct), 1.0);
}

TEST_F(NcclBackendTest, SaveLoadRoundTripsAndContinuesIdentically) {
  const BackendOptions options = testOptions(adamW());
  std::unique_ptr<Backend> trained = makeGpu(options);
  ASSERT_NE(trained, nullptr);
  std::mt19937 rng(3);
  double loss = 0.0;
  StepTimings timings;
  for (int step = 0; step < 5; ++step) {
    const Batch batch = randomBatch(rng, options.model, kBatch);
    ASSERT_TRUE(trained
                    ->trainStep(batch.x.data(), batch.labels.data(), kBatch, BatchPosition{}, 1e-3,
                                &loss, &timings)
                    .isOk());
  }
  std::vector<float> params;
  OptimizerState state;
  ASSERT_TRUE(trained->saveState(&params, &state).isOk());
  EXPECT_EQ(state.stepCount, 5);
  ASSERT_EQ(state.buffers.size(), 2u);

  // A backend started from another seed takes the checkpoint over completely.
  std::unique_ptr<Backend> restored = makeGpu(testOptions(adamW(), /*seed=*/99));
  ASSERT_NE(restored, nullptr);
  const Status loaded = restored->loadState(params, state);
  ASSERT_TRUE(loaded.isOk()) << loaded.toString();
  std::vector<float> roundTripParams;
  OptimizerState roundTripState;
  ASSERT_TRUE(restored->saveState(&roundTripParams, &roundTripState).isOk());
  EXPECT_EQ(roundTripParams, params);
  EXPECT_EQ(roundTripState.stepCount, state.stepCount);
  EXPECT_EQ(roundTripState.buffers, state.buffers);

  // Same state, same batches, same GPU: cuBLAS documents bit-wise reproducible results for the
  // same architecture and SM count, so the two continue identically.
  for (int step = 0; step < 3; ++step) {
    const Batch batch = randomBatch(rng, options.model, kBatch);
    ASSERT_TRUE(trained
                    ->trainStep(batch.x.data(), batch.labels.data(), kBatch, BatchPosition{}, 1e-3,
                                &loss, &timings)
                    .isOk());
    ASSERT_TRUE(restored
                    ->trainStep(batch.x.data(), batch.labels.data(), kBatch, BatchPosition{}, 1e-3,
                                &loss, &timings)
                    .isOk());
  }
  std::vector<float> trainedParams;
  ASSERT_TRUE(trained->saveState(&trainedParams, &state).isOk());
  ASSERT_TRUE(restored->saveState(&roundTripParams, &roundTripState).isOk());
  EXPECT_EQ(relativeL2(roundTripParams, trainedParams), 0.0);

  // The checkpoint moves to the CPU backend unchanged (same OptimizerState layout).
  std::unique_ptr<Backend> cpu = makeCpu(options);
  ASSERT_NE(cpu, nullptr);
  ASSERT_TRUE(cpu->loadState(trainedParams, state).isOk());
  std::vector<float> cpuParams;
  OptimizerState cpuState;
  ASSERT_TRUE(cpu->saveState(&cpuParams, &cpuState).isOk());
  EXPECT_EQ(cpuParams, trainedParams);
  EXPECT_EQ(cpuState.buffers, state.buffers);
}

TEST_F(NcclBackendTest, LoadStateRejectsMismatchedCheckpoints) {
  const BackendOptions options = testOptions(sgdMomentum());
  std::unique_ptr<Backend> gpu = makeGpu(options);
  ASSERT_NE(gpu, nullptr);
  const size_t numParams = options.model.numParams();

  OptimizerState state = makeOptimizerState(options.optimizer, numParams);
  Status status = gpu->loadState(std::vector<float>(numParams + 1), state);
  EXPECT_EQ(status.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(status.message().find("parameters"), std::string::npos) << status.message();

  status = gpu->loadState(std::vector<float>(numParams), makeOptimizerState(adamW(), numParams));
  EXPECT_EQ(status.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(status.message().find("optimizer buffers"), std::string::npos) << status.message();

  state.buffers[0].pop_back();
  status = gpu->loadState(std::vector<float>(numParams), state);
  EXPECT_EQ(status.code(), Status::Code::kInvalidArgument);

  // A rejected checkpoint leaves the backend usable.
  std::vector<float> params;
  EXPECT_TRUE(gpu->saveState(&params, &state).isOk());
}

TEST_F(NcclBackendTest, RejectsABatchLargerThanMaxBatch) {
  const BackendOptions options = testOptions(sgdMomentum());
  std::unique_ptr<Backend> gpu = makeGpu(options);
  ASSERT_NE(gpu, nullptr);
  std::mt19937 rng(5);
  const Batch batch = randomBatch(rng, options.model, options.maxBatch + 1);
  double loss = 0.0;
  StepTimings timings;
  const Status status = gpu->trainStep(batch.x.data(), batch.labels.data(), batch.count,
                                       BatchPosition{}, 0.1, &loss, &timings);
  EXPECT_EQ(status.code(), Status::Code::kInvalidArgument) << status.toString();
}

TEST_F(NcclBackendTest, DescriptionNamesDeviceAndLibraries) {
  std::unique_ptr<Backend> gpu = makeGpu(testOptions(sgdMomentum()));
  ASSERT_NE(gpu, nullptr);
  const std::string text = gpu->description();
  EXPECT_NE(text.find("sm_"), std::string::npos) << text;
  EXPECT_NE(text.find("NCCL"), std::string::npos) << text;
  EXPECT_NE(text.find("cuBLAS"), std::string::npos) << text;
}

// Runs everywhere, GPU or not: the loader finds the plugin this test links (not another copy).
TEST(NcclBackendBuild, LoaderFindsTheLinkedPlugin) {
  const Result<LoadedNcclPlugin>& plugin = ncclPlugin();
  ASSERT_TRUE(plugin.isOk()) << plugin.status().toString();
  // The same entry points as the table linked here (whose address in this executable may be a
  // copy: a copy relocation), and the same file.
  EXPECT_EQ(plugin->table->create, ringsideNcclBackend_v1.create) << plugin->path;
  EXPECT_EQ(plugin->table->visibleGpuCount, ringsideNcclBackend_v1.visibleGpuCount);
  Dl_info linked{};
  ASSERT_NE(dladdr(reinterpret_cast<void*>(ringsideNcclBackend_v1.create), &linked), 0);
  EXPECT_EQ(std::filesystem::canonical(plugin->path), std::filesystem::canonical(linked.dli_fname));
  EXPECT_EQ(plugin->symbol, "ringsideNcclBackend_v1");
  EXPECT_EQ(plugin->table->version, kNcclPluginVersion);
}

// Runs everywhere, GPU or not: the plugin must answer without a driver instead of aborting.
TEST(NcclBackendBuild, CountsGpusAndRefusesCleanlyWithoutOne) {
  std::string whyNone;
  const int gpus = visibleGpuCount(&whyNone);
  EXPECT_GE(gpus, 0);
  if (gpus > 0) GTEST_SKIP() << "a GPU is visible; the no-GPU path is not reachable here";
  EXPECT_NE(whyNone.find("cudaGetDeviceCount"), std::string::npos) << whyNone;
  std::unique_ptr<Communicator> comm = makeSelfCommunicator();
  Result<std::unique_ptr<Backend>> backend = makeNcclBackend(*comm, testOptions(sgdMomentum()));
  ASSERT_FALSE(backend.isOk());
  EXPECT_EQ(backend.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(backend.status().message().find("--backend mpi"), std::string::npos)
      << backend.status().message();
}

}  // namespace
}  // namespace ringside::trainer
