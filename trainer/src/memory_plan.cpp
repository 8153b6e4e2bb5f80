#include "ringside/trainer/memory_plan.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>
#include <vector>

#include "ringside/trainer/cnn.h"

namespace ringside::trainer {

namespace {

constexpr uint64_t kSaturated = std::numeric_limits<uint64_t>::max();

uint64_t mulSat(uint64_t a, uint64_t b) {
  uint64_t product = 0;
  return __builtin_mul_overflow(a, b, &product) ? kSaturated : product;
}

uint64_t addSat(uint64_t a, uint64_t b) {
  uint64_t sum = 0;
  return __builtin_add_overflow(a, b, &sum) ? kSaturated : sum;
}

// The first number of the line of /proc/meminfo named `key` (in kB there), in bytes.
std::optional<uint64_t> meminfoBytes(const std::string& key) {
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + ":", 0) != 0) continue;
    std::istringstream fields(line.substr(key.size() + 1));
    uint64_t kib = 0;
    if (fields >> kib) return mulSat(kib, 1024);
  }
  return std::nullopt;
}

// A cgroup v2 file's single number; std::nullopt for "max", absence or garbage.
std::optional<uint64_t> cgroupNumber(const std::string& path) {
  std::ifstream in(path);
  std::string text;
  if (!(in >> text) || text.empty() || text.find_first_not_of("0123456789") != std::string::npos) {
    return std::nullopt;
  }
  try {
    return std::stoull(text);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// This process's cgroup v2 directory and its ancestors up to the root, innermost first.
std::vector<std::string> cgroupDirectories() {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  std::vector<std::string> dirs;
  while (std::getline(in, line)) {
    if (line.rfind("0::", 0) != 0) continue;  // the unified (v2) hierarchy
    std::string path = line.substr(3);
    for (;;) {
      dirs.push_back("/sys/fs/cgroup" + (path == "/" ? std::string() : path));
      if (path.empty() || path == "/") break;
      const size_t slash = path.rfind('/');
      path = slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
    }
  }
  return dirs;
}

}  // namespace

uint64_t HostMemoryPlan::total() const {
  uint64_t sum = 0;
  for (uint64_t part : {parameters, gradients, optimizerState, activations, convScratchpad,
                        inputBatches, checkpointCopies, dataset}) {
    sum = addSat(sum, part);
  }
  return sum;
}

std::string HostMemoryPlan::describe() const {
  std::string text;
  auto add = [&text](uint64_t bytes, const std::string& what) {
    if (bytes == 0) return;
    text += (text.empty() ? "" : ", ") + what + " " + formatBytes(bytes);
  };
  add(parameters, "parameters");
  add(gradients, "gradients");
  add(optimizerState, "optimizer state");
  add(activations, "activations");
  if (activations != 0) text += " for batches of up to " + std::to_string(activationBatch);
  add(convScratchpad, "convolution scratchpad");
  add(inputBatches, "input batches");
  add(checkpointCopies, "checkpoint copies");
  add(dataset, "dataset");
  return text;
}

HostMemoryPlan planHostMemory(const MlpLayout& layout, const OptimizerConfig& optimizer,
                              const MemoryPlanInput& input) {
  return planHostMemory(ModelLayout::mlp(layout), optimizer, input);
}

HostMemoryPlan planHostMemory(const ModelLayout& model, const OptimizerConfig& optimizer,
                              const MemoryPlanInput& input) {
  constexpr uint64_t kFloat = sizeof(float);
  const uint64_t paramBytes = mulSat(model.numParams(), kFloat);
  const uint64_t buffers = static_cast<uint64_t>(optimizerBufferCount(optimizer));
  // Parameters plus optimizer state: what a checkpoint holds.
  const uint64_t stateBytes = mulSat(paramBytes, 1 + buffers);
  const uint64_t localBatch = static_cast<uint64_t>(std::max(input.localBatch, 0));
  const uint64_t evalBatch = static_cast<uint64_t>(std::max(input.evalBatch, 0));

  const bool microBatches = input.microBatch > 0 && input.microBatch < input.localBatch;
  const int passBatch = microBatches ? input.microBatch : input.localBatch;

  HostMemoryPlan plan;
  plan.parameters = paramBytes;
  plan.activationBatch = std::max(passBatch, input.evalBatch);
  if (input.modelOnHost) {
    plan.gradients = mulSat(paramBytes, microBatches ? 3 : 1);
    plan.optimizerState = mulSat(paramBytes, buffers);
    if (model.isCnn()) {
      const int chunk = std::clamp(input.evalBatch, 1, kCnnEvalChunk);
      plan.activationBatch = std::max(passBatch, chunk);
      const uint64_t floats =
          addSat(CnnWorkspace::planFloats(model.cnn(), passBatch, /*training=*/true),
                 mulSat(2, CnnWorkspace::planFloats(model.cnn(), chunk, /*training=*/false)));
      plan.activations = mulSat(floats, kFloat);
      // One buffer shared by every plan of the workspace: the largest they ask for.
      plan.convScratchpad =
          std::max(CnnWorkspace::scratchpadBytes(model.cnn(), passBatch, /*training=*/true,
                                                 input.convAlgorithm),
                   CnnWorkspace::scratchpadBytes(model.cnn(), chunk, /*training=*/false,
                                                 input.convAlgorithm));
    } else {
      // MlpWorkspace: one [batch, out] buffer per layer and two [batch, widest] gradient buffers.
      const MlpLayout& layout = model.mlp();
      uint64_t widths = mulSat(2, static_cast<uint64_t>(layout.maxWidth()));
      for (const LinearLayerShape& layer : layout.layers()) widths = addSat(widths, layer.out);
      plan.activations =
          mulSat(mulSat(static_cast<uint64_t>(plan.activationBatch), widths), kFloat);
    }
  }
  const uint64_t perSample =
      addSat(mulSat(static_cast<uint64_t>(model.inputDim()), kFloat), sizeof(int32_t));
  plan.inputBatches = mulSat(addSat(localBatch, evalBatch), perSample);
  // checkpoint.cpp holds the parsed or copied state and its serialized bytes at the same time.
  if (input.writesCheckpoints) {
    plan.checkpointCopies = mulSat(stateBytes, 2);
  } else if (input.resumes) {
    plan.checkpointCopies = stateBytes;
  }
  plan.dataset = input.datasetBytes;
  return plan;
}

std::optional<AvailableMemory> availableMemory() {
  std::optional<AvailableMemory> best;
  if (auto bytes = meminfoBytes("MemAvailable")) {
    best = AvailableMemory{*bytes, "MemAvailable in /proc/meminfo"};
  }
  for (const std::string& dir : cgroupDirectories()) {
    const auto limit = cgroupNumber(dir + "/memory.max");
    if (!limit) continue;
    const uint64_t used = cgroupNumber(dir + "/memory.current").value_or(0);
    const uint64_t left = *limit > used ? *limit - used : 0;
    if (!best || left < best->bytes) {
      best = AvailableMemory{left, "the limit of cgroup " + dir + " (memory.max " +
                                       formatBytes(*limit) + ", " + formatBytes(used) + " in use)"};
    }
  }
  return best;
}

Status checkMemoryFits(const HostMemoryPlan& plan, int ranksOnNode,
                       const AvailableMemory& available, const std::string& host) {
  const int ranks = std::max(ranksOnNode, 1);
  const uint64_t perRank = plan.total();
  const uint64_t needed = mulSat(perRank, static_cast<uint64_t>(ranks));
  if (needed <= available.bytes) return Status::ok();
  std::string text = "not enough memory for this run on " + host + ": a rank needs about " +
                     formatBytes(perRank) + " (" + plan.describe() + ")";
  if (ranks > 1) {
    text += ", the " + std::to_string(ranks) + " ranks on this node " + formatBytes(needed);
  }
  text += ", and " + formatBytes(available.bytes) + " is available (" + available.source +
          "): use a smaller --hidden (or --channels), --global-batch or --eval-batch" +
          (ranks > 1 ? std::string(", or fewer ranks per node") : std::string());
  return Status::resourceExhausted(text);
}

std::string formatBytes(uint64_t bytes) {
  if (bytes == kSaturated) return "more than 16 EiB";
  if (bytes < 1024) return std::to_string(bytes) + " bytes";
  static const char* const kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = static_cast<double>(bytes) / 1024.0;
  int unit = 0;
  while (value >= 1024.0 && unit < 5) {
    value /= 1024.0;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.1f %s", value, kUnits[unit]);
  return text;
}

}  // namespace ringside::trainer
