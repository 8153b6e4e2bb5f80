// Training checkpoints: everything needed to continue a run exactly where it stopped. The byte
// format is documented in docs/checkpoint.md; keep the two in step.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ringside/common/status.h"
#include "ringside/trainer/model.h"
#include "ringside/trainer/optimizer.h"

namespace ringside::trainer {

// Version 2 added the model kind (the CNN); version 1 files (MLP only) are still read, as MLPs.
inline constexpr uint32_t kCheckpointVersion = 2;
inline constexpr uint32_t kOldestCheckpointVersion = 1;
inline constexpr const char* kCheckpointExtension = ".rsck";

struct TrainingCheckpoint {
  ModelKind model = ModelKind::kMlp;
  // The model's shape (ModelLayout::shapeVector): MLP {inputDim, hidden..., numClasses}; CNN
  // {channels, height, width, convChannels..., hidden, numClasses}.
  std::vector<int> layerSizes;
  OptimizerKind optimizer = OptimizerKind::kSgd;
  int64_t step = 0;               // global optimizer steps completed
  int64_t epoch = 0;              // epoch of the next step
  int64_t stepInEpoch = 0;        // position of the next step in its epoch (sampler state)
  uint64_t seed = 0;              // the run seed: the shuffle of every epoch derives from it
                                  // (sampler.h), so it is the whole RNG state of a run
  int64_t globalBatch = 0;        // the sampler's global batch when written
  int64_t trainSamples = 0;       // training-set size when written
  int32_t worldSize = 0;          // informational: a run may resume at another world size
  std::vector<float> params;      // [numParams], flat layout of model.h
  OptimizerState optimizerState;  // buffers in the same layout
};

// Writes `checkpoint` to `path` atomically: a temporary file in the same directory, fsync, then
// rename over `path`, so a crash leaves either the old file or the new one, never a torn one.
// Errors: IOError naming the path and the OS error.
Status writeCheckpoint(const std::string& path, const TrainingCheckpoint& checkpoint);

// What a checkpoint's header says, read without its parameters: every field of `checkpoint`
// but params and optimizerState.buffers (left empty), the sizes of those, and the file's size.
struct CheckpointHeader {
  TrainingCheckpoint checkpoint;      // params and optimizer buffers empty
  uint64_t numParams = 0;             // floats in the parameter buffer
  std::vector<uint64_t> bufferSizes;  // floats in each optimizer buffer
  uint64_t fileBytes = 0;
};

// Reads a checkpoint's header and the size fields between its buffers (seeking over the buffers),
// a few hundred bytes whatever the file's size, and checks that the sizes add up to the file's
// size exactly: a file that is not a checkpoint (a 10 GB sparse file, /dev/zero's copy) or whose
// sizes are damaged is refused before anything is read in bulk or allocated. The CRC-32 is not
// checked (readCheckpoint does). Errors: NotFound when `path` is not a regular file; IOError when
// it cannot be read; Corruption for a bad magic, an unknown version, an out-of-range field or
// sizes that disagree with the file's size (the message says which).
Result<CheckpointHeader> readCheckpointHeader(const std::string& path);

// Reads and verifies a checkpoint (magic, version, sizes, CRC-32): the header first
// (readCheckpointHeader), then the whole file in one allocation of its size. Writes the current
// version; reads versions kOldestCheckpointVersion to kCheckpointVersion.
// Errors: NotFound when the file does not exist; Corruption when the magic, version, checksum or
// a size is wrong (the message says what and suggests an older checkpoint).
Result<TrainingCheckpoint> readCheckpoint(const std::string& path);

// `path` itself when it is a file; for a directory, its checkpoint with the highest step.
// Errors: NotFound when there is none.
Result<std::string> resolveCheckpointPath(const std::string& path);

// Makes sure checkpoints can be written to `dir` before a run spends time training: creates it
// (and its parents) when missing, then creates, writes, syncs and removes a probe file in it
// (".ringside-probe-<pid>"). Errors: IOError naming the directory (absolute), the step and the OS
// error (e.g. "Permission denied", "Not a directory", "Read-only file system"), and saying to
// pass a writable --checkpoint-dir. Thread-safe (no shared state; the probe's name is this
// process's).
Status checkCheckpointDirWritable(const std::string& dir);

// "<dir>/ckpt-<step, 8 digits>.rsck".
std::string checkpointFileName(const std::string& dir, int64_t step);

// Deletes all but the `keep` newest checkpoints in `dir` (keep <= 0 keeps all). Best effort.
void pruneCheckpoints(const std::string& dir, int keep);

}  // namespace ringside::trainer
