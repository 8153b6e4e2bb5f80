// Writes the seed corpora of idx_header_fuzzer and checkpoint_header_fuzzer with the trainer's own
// writers: IDX files (raw and gzip; labels, images, other ranks) and checkpoints (SGD with and
// without momentum, AdamW) without their trailing CRC-32, which the checkpoint fuzzer appends.
// Usage: trainer_fuzz_seeds IDX_DIR CHECKPOINT_DIR
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "ringside/trainer/checkpoint.h"
#include "ringside/trainer/idx_reader.h"

namespace {

using namespace ringside::trainer;
namespace fs = std::filesystem;

ringside::trainer::IdxArray array(std::vector<uint32_t> dims) {
  IdxArray a;
  a.dims = std::move(dims);
  size_t count = 1;
  for (uint32_t d : a.dims) count *= d;
  for (size_t i = 0; i < count; ++i) a.data.push_back(static_cast<uint8_t>(i * 37));
  return a;
}

bool writeIdxSeeds(const fs::path& dir) {
  bool ok = true;
  ok &= writeIdxFile(dir / "labels-idx1", array({10}), false).isOk();
  ok &= writeIdxFile(dir / "images-idx3", array({3, 4, 5}), false).isOk();
  ok &= writeIdxFile(dir / "images-idx3.gz", array({2, 28, 28}), true).isOk();
  ok &= writeIdxFile(dir / "labels-idx1.gz", array({5}), true).isOk();
  ok &= writeIdxFile(dir / "tensor-idx4", array({2, 1, 2, 3}), false).isOk();
  // What the fuzzer found against the reader before it grew its buffer with the data: a header
  // promising 2^30 x 8 bytes in a file of 10 (it allocated the 8 GiB first). Kept as a seed.
  const char liar[] = {0, 0, 8, 2, 0x40, 0, 0, 0, 0, 0, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  std::ofstream out(dir / "header-promises-8GiB", std::ios::binary | std::ios::trunc);
  out.write(liar, sizeof liar);
  ok &= static_cast<bool>(out);
  return ok;
}

TrainingCheckpoint checkpoint(OptimizerKind kind, int buffers) {
  TrainingCheckpoint c;
  c.layerSizes = {4, 3, 2};
  c.optimizer = kind;
  c.step = 20;
  c.epoch = 1;
  c.stepInEpoch = 5;
  c.seed = 42;
  c.globalBatch = 64;
  c.trainSamples = 1000;
  c.worldSize = 2;
  c.params.assign(4 * 3 + 3 + 3 * 2 + 2, 0.25f);
  c.optimizerState.stepCount = 20;
  c.optimizerState.buffers.assign(buffers, std::vector<float>(c.params.size(), -0.5f));
  return c;
}

// Writes `c` through writeCheckpoint, then keeps it without its last 4 bytes (the CRC-32).
bool writeCheckpointSeed(const fs::path& dir, const std::string& name,
                         const TrainingCheckpoint& c) {
  const fs::path full = dir / (name + ".full");
  if (!writeCheckpoint(full.string(), c).isOk()) return false;
  std::ifstream in(full, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  in.close();
  fs::remove(full);
  if (bytes.size() < 4) return false;
  bytes.resize(bytes.size() - 4);
  std::ofstream out(dir / name, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return static_cast<bool>(out);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: trainer_fuzz_seeds IDX_DIR CHECKPOINT_DIR\n";
    return 2;
  }
  const fs::path idxDir = argv[1];
  const fs::path checkpointDir = argv[2];
  fs::create_directories(idxDir);
  fs::create_directories(checkpointDir);
  bool ok = writeIdxSeeds(idxDir);
  ok &= writeCheckpointSeed(checkpointDir, "sgd-momentum", checkpoint(OptimizerKind::kSgd, 1));
  ok &= writeCheckpointSeed(checkpointDir, "sgd-plain", checkpoint(OptimizerKind::kSgd, 0));
  ok &= writeCheckpointSeed(checkpointDir, "adamw", checkpoint(OptimizerKind::kAdamW, 2));
  // What the fuzzer found first (UB in Reader::getFloats for 0 floats): kept as a seed.
  TrainingCheckpoint empty = checkpoint(OptimizerKind::kAdamW, 2);
  empty.params.clear();
  for (auto& buffer : empty.optimizerState.buffers) buffer.clear();
  ok &= writeCheckpointSeed(checkpointDir, "no-parameters", empty);
  if (!ok) {
    std::cerr << "trainer_fuzz_seeds: could not write the seeds\n";
    return 1;
  }
  return 0;
}
