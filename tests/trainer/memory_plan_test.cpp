// The memory plan of a run (memory_plan.h): its parts follow the allocations, absurd sizes
// saturate, and a run that cannot fit is refused with what it needs and what there is.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "ringside/trainer/cnn.h"
#include "ringside/trainer/memory_plan.h"
#include "ringside/trainer/trainer.h"

namespace ringside::trainer {
namespace {

OptimizerConfig sgdWithMomentum() {
  OptimizerConfig config;
  config.kind = OptimizerKind::kSgd;
  config.momentum = 0.9;
  return config;
}

TEST(MemoryPlanTest, PartsFollowTheAllocations) {
  auto layout = MlpLayout::create({784, 256, 128, 10});
  ASSERT_TRUE(layout.isOk());
  const uint64_t params = layout->numParams();  // 235,146
  MemoryPlanInput input;
  input.localBatch = 64;
  input.evalBatch = 1000;
  input.writesCheckpoints = true;
  input.datasetBytes = 12345;
  const HostMemoryPlan plan = planHostMemory(*layout, sgdWithMomentum(), input);
  EXPECT_EQ(plan.parameters, params * 4);
  EXPECT_EQ(plan.gradients, params * 4);
  EXPECT_EQ(plan.optimizerState, params * 4) << "one momentum buffer";
  EXPECT_EQ(plan.activationBatch, 1000);
  // MlpWorkspace: [1000, 256] + [1000, 128] + [1000, 10] + 2 x [1000, 784] floats.
  EXPECT_EQ(plan.activations, uint64_t{1000} * (256 + 128 + 10 + 2 * 784) * 4);
  EXPECT_EQ(plan.inputBatches, uint64_t{64 + 1000} * (784 * 4 + 4));
  EXPECT_EQ(plan.checkpointCopies, 2 * 2 * params * 4) << "state copy and serialized bytes";
  EXPECT_EQ(plan.dataset, 12345u);
  EXPECT_EQ(plan.total(), plan.parameters + plan.gradients + plan.optimizerState +
                              plan.activations + plan.inputBatches + plan.checkpointCopies +
                              plan.dataset);

  // The nccl backend keeps the model on the GPU; ranks other than 0 write no checkpoints.
  input.modelOnHost = false;
  input.writesCheckpoints = false;
  const HostMemoryPlan gpu = planHostMemory(*layout, sgdWithMomentum(), input);
  EXPECT_EQ(gpu.gradients + gpu.optimizerState + gpu.activations + gpu.checkpointCopies, 0u);
  EXPECT_EQ(gpu.parameters, params * 4) << "the host copy made at start-up";
}

// --micro-batch: activations for one pass of micro-batch samples, and two more gradient buffers
// (the earlier passes' sum and one pass's gradients, cpu_model.h).
TEST(MemoryPlanTest, MicroBatchesShrinkActivationsAndAddTwoGradientBuffers) {
  auto layout = CnnLayout::create(CnnShape{});
  ASSERT_TRUE(layout.isOk());
  const ModelLayout model = ModelLayout::cnn(*layout);
  const uint64_t params = model.numParams();
  MemoryPlanInput input;
  input.localBatch = 1024;
  input.evalBatch = 100;
  const HostMemoryPlan whole = planHostMemory(model, sgdWithMomentum(), input);
  input.microBatch = 128;
  const HostMemoryPlan passes = planHostMemory(model, sgdWithMomentum(), input);
  EXPECT_EQ(whole.gradients, params * 4);
  EXPECT_EQ(passes.gradients, 3 * params * 4);
  EXPECT_EQ(whole.activationBatch, 1024);
  EXPECT_EQ(passes.activationBatch, 128);
  EXPECT_EQ(passes.activations, (CnnWorkspace::planFloats(*layout, 128, true) +
                                 2 * CnnWorkspace::planFloats(*layout, 100, false)) *
                                    4);
  EXPECT_LT(passes.total(), whole.total());
  EXPECT_EQ(passes.inputBatches, whole.inputBatches) << "the trainer still gathers the whole batch";
  // A micro-batch of the whole local batch is one pass.
  input.microBatch = 1024;
  EXPECT_EQ(planHostMemory(model, sgdWithMomentum(), input).total(), whole.total());
}

// The conv primitives' shared scratchpad is a part of its own: the largest a training or
// evaluation plan asks for, exactly what a workspace holds after both ran, and several MB with
// Winograd (its tile transforms) where the CPU has it.
TEST(MemoryPlanTest, ConvScratchpadIsWhatTheWorkspaceHolds) {
  auto layout = CnnLayout::create(CnnShape{});
  ASSERT_TRUE(layout.isOk());
  const ModelLayout model = ModelLayout::cnn(*layout);
  MemoryPlanInput input;
  input.localBatch = 32;
  input.evalBatch = 40;
  for (ConvAlgorithm algorithm : {ConvAlgorithm::kDirect, ConvAlgorithm::kAuto}) {
    SCOPED_TRACE(convAlgorithmName(algorithm));
    input.convAlgorithm = algorithm;
    const HostMemoryPlan plan = planHostMemory(model, sgdWithMomentum(), input);
    EXPECT_EQ(plan.convScratchpad,
              std::max(CnnWorkspace::scratchpadBytes(*layout, 32, true, algorithm),
                       CnnWorkspace::scratchpadBytes(*layout, 40, false, algorithm)));
    EXPECT_EQ(plan.total(), plan.parameters + plan.gradients + plan.optimizerState +
                                plan.activations + plan.convScratchpad + plan.inputBatches +
                                plan.checkpointCopies + plan.dataset);

    // A real workspace: one training step and one evaluation.
    std::vector<float> params(model.numParams()), grads(model.numParams());
    initParameters(model, 1, params.data());
    std::vector<float> x(size_t(40) * model.inputDim(), 0.5f);
    std::vector<int32_t> labels(40, 3);
    CnnWorkspace workspace(*layout, 1, algorithm);
    const BatchPosition position{0, 0};
    workspace.forward(params.data(), x.data(), labels.data(), 32, &position, nullptr);
    workspace.backward(params.data(), grads.data());
    workspace.forward(params.data(), x.data(), labels.data(), 40, nullptr, nullptr);
    EXPECT_EQ(workspace.scratchpadBytesHeld(), plan.convScratchpad);

    const bool winograd =
        CnnWorkspace::convImplementations(*layout, 32, algorithm)[1].rfind("winograd", 0) == 0;
    if (winograd) {
      EXPECT_GT(plan.convScratchpad, 1u << 20) << "Winograd's transforms: several MB";
      EXPECT_NE(plan.describe().find("convolution scratchpad"), std::string::npos)
          << plan.describe();
    }
  }
}

// The bug: `--hidden 100000000` and `--eval-batch 2000000000` ended in std::bad_alloc (exit 134).
// The plan of a model that cannot fit anywhere is refused, saying what it needs and what there is.
TEST(MemoryPlanTest, HugeHiddenLayerIsRefusedWithTheMemoryItNeeds) {
  auto layout = MlpLayout::create({784, 1 << 20, 1 << 20, 10});
  ASSERT_TRUE(layout.isOk());
  MemoryPlanInput input;
  input.localBatch = 128;
  input.evalBatch = 1000;
  input.writesCheckpoints = true;
  const HostMemoryPlan plan = planHostMemory(*layout, sgdWithMomentum(), input);
  EXPECT_GT(plan.parameters, uint64_t{4} << 40) << "2^40 weights of 4 bytes";
  const AvailableMemory available{uint64_t{16} << 30, "MemAvailable in /proc/meminfo"};
  const Status status = checkMemoryFits(plan, 2, available, "node7");
  ASSERT_FALSE(status.isOk());
  EXPECT_EQ(status.code(), Status::Code::kResourceExhausted) << "exit status 1, not 2";
  const std::string& message = status.message();
  for (const char* part :
       {"not enough memory for this run on node7", "parameters 4.0 TiB", "optimizer state",
        "activations", "for batches of up to 1000", "the 2 ranks on this node",
        "16.0 GiB is available (MemAvailable in /proc/meminfo)", "--hidden", "--eval-batch"}) {
    EXPECT_NE(message.find(part), std::string::npos) << part << " in: " << message;
  }
  EXPECT_TRUE(checkMemoryFits(plan, 1, {std::numeric_limits<uint64_t>::max(), "test"}, "h").isOk());
}

TEST(MemoryPlanTest, AbsurdSizesSaturateInsteadOfWrapping) {
  auto layout = MlpLayout::create({std::numeric_limits<int>::max(), 1 << 20, 10});
  ASSERT_TRUE(layout.isOk());
  MemoryPlanInput input;
  input.localBatch = std::numeric_limits<int>::max();
  input.evalBatch = std::numeric_limits<int>::max();
  input.writesCheckpoints = true;
  const HostMemoryPlan plan = planHostMemory(*layout, sgdWithMomentum(), input);
  EXPECT_EQ(plan.inputBatches, std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(plan.total(), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(formatBytes(plan.total()), "more than 16 EiB");
  EXPECT_FALSE(checkMemoryFits(plan, 1, {uint64_t{1} << 62, "test"}, "h").isOk());
}

TEST(MemoryPlanTest, AvailableMemoryComesFromTheSystem) {
  const auto available = availableMemory();
  ASSERT_TRUE(available.has_value()) << "Linux has MemAvailable in /proc/meminfo";
  EXPECT_GT(available->bytes, uint64_t{0});
  EXPECT_FALSE(available->source.empty());
}

TEST(MemoryPlanTest, FormatsBytesInBinaryUnits) {
  EXPECT_EQ(formatBytes(12), "12 bytes");
  EXPECT_EQ(formatBytes(1536), "1.5 KiB");
  EXPECT_EQ(formatBytes(uint64_t{3} << 30), "3.0 GiB");
  EXPECT_EQ(formatBytes(uint64_t{4} << 40), "4.0 TiB");
}

// `--eval-batch 2000000000` needs no more than the test set: a rank's buffers are sized for its
// shard of it at most.
TEST(MemoryPlanTest, HugeEvalBatchIsSizedForTheTestShardOnly) {
  EXPECT_EQ(evaluationBatch(2000000000, 10000, 1), 10000);
  EXPECT_EQ(evaluationBatch(2000000000, 10001, 2), 5001);
  EXPECT_EQ(evaluationBatch(1000, 10000, 2), 1000);
  EXPECT_EQ(evaluationBatch(1000, 0, 4), 1);
}

}  // namespace
}  // namespace ringside::trainer
