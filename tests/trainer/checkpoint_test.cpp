#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "ringside/trainer/checkpoint.h"
#include "test_util.h"

namespace ringside::trainer {
namespace {

namespace fs = std::filesystem;

TrainingCheckpoint sample() {
  TrainingCheckpoint c;
  c.layerSizes = {4, 3, 2};
  c.optimizer = OptimizerKind::kAdamW;
  c.step = 1234;
  c.epoch = 2;
  c.stepInEpoch = 17;
  c.seed = 99;
  c.globalBatch = 64;
  c.trainSamples = 60000;
  c.worldSize = 2;
  c.params = {1.5f, -2.0f, 3.25f, 0.0f};
  c.optimizerState.stepCount = 1234;
  c.optimizerState.buffers = {{0.1f, 0.2f, 0.3f, 0.4f}, {1, 2, 3, 4}};
  return c;
}

TEST(CheckpointTest, RoundTrip) {
  TempDir dir;
  const std::string path = checkpointFileName(dir.path(), 1234);
  EXPECT_EQ(fs::path(path).filename(), "ckpt-00001234.rsck");
  ASSERT_TRUE(writeCheckpoint(path, sample()).isOk());
  auto read = readCheckpoint(path);
  ASSERT_TRUE(read.isOk()) << read.status().toString();
  const TrainingCheckpoint expected = sample();
  EXPECT_EQ(read->layerSizes, expected.layerSizes);
  EXPECT_EQ(read->optimizer, expected.optimizer);
  EXPECT_EQ(read->step, expected.step);
  EXPECT_EQ(read->epoch, expected.epoch);
  EXPECT_EQ(read->stepInEpoch, expected.stepInEpoch);
  EXPECT_EQ(read->seed, expected.seed);
  EXPECT_EQ(read->globalBatch, expected.globalBatch);
  EXPECT_EQ(read->trainSamples, expected.trainSamples);
  EXPECT_EQ(read->worldSize, expected.worldSize);
  EXPECT_EQ(read->params, expected.params);
  EXPECT_EQ(read->optimizerState.stepCount, expected.optimizerState.stepCount);
  EXPECT_EQ(read->optimizerState.buffers, expected.optimizerState.buffers);
  // No temporary file is left beside it.
  int files = 0;
  for (const auto& entry : fs::directory_iterator(dir.path())) files += entry.is_regular_file();
  EXPECT_EQ(files, 1);
}

TEST(CheckpointTest, EveryFlippedByteIsDetected) {
  TempDir dir;
  const std::string path = dir.path() + "/c.rsck";
  ASSERT_TRUE(writeCheckpoint(path, sample()).isOk());
  std::vector<char> bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::vector<char> damaged = bytes;
    damaged[i] ^= 0x40;
    std::ofstream(path, std::ios::binary).write(damaged.data(), std::streamsize(damaged.size()));
    auto read = readCheckpoint(path);
    ASSERT_FALSE(read.isOk()) << "flipped byte " << i << " was not detected";
    EXPECT_EQ(read.status().code(), Status::Code::kCorruption);
  }
}

TEST(CheckpointTest, TruncatedAndForeignFilesAreCorruption) {
  TempDir dir;
  const std::string path = dir.path() + "/c.rsck";
  ASSERT_TRUE(writeCheckpoint(path, sample()).isOk());
  fs::resize_file(path, fs::file_size(path) - 9);
  auto truncated = readCheckpoint(path);
  ASSERT_FALSE(truncated.isOk());
  EXPECT_NE(truncated.status().message().find("older checkpoint"), std::string::npos);

  std::ofstream(path) << "hello, not a checkpoint";
  auto foreign = readCheckpoint(path);
  ASSERT_FALSE(foreign.isOk());
  EXPECT_NE(foreign.status().message().find("not a Ringside checkpoint"), std::string::npos);

  auto missing = readCheckpoint(dir.path() + "/none.rsck");
  EXPECT_EQ(missing.status().code(), Status::Code::kNotFound);
}

// Bytes this process has read through read(2) and friends so far (proc(5), /proc/self/io rchar).
uint64_t bytesReadSoFar() {
  std::ifstream io("/proc/self/io");
  std::string key;
  uint64_t value = 0;
  while (io >> key >> value) {
    if (key == "rchar:") return value;
  }
  return 0;
}

// Resume from a 10 GB sparse file read all of it (79 s, 10.5 GB of memory per
// rank) before it looked at the magic. Now the header comes first and nothing is read in bulk.
TEST(CheckpointTest, ResumeFromATenGigabyteSparseFileReadItAllBeforeCheckingTheMagic) {
  TempDir dir;
  const std::string path = dir.path() + "/huge.rsck";
  std::ofstream(path).close();
  fs::resize_file(path, uint64_t{10} << 30);  // sparse: no data written
  uint64_t before = bytesReadSoFar();
  auto read = readCheckpoint(path);
  ASSERT_FALSE(read.isOk());
  EXPECT_EQ(read.status().code(), Status::Code::kCorruption);
  EXPECT_EQ(read.status().message(), path + " is not a Ringside checkpoint (bad magic)");
  EXPECT_LT(bytesReadSoFar() - before, uint64_t{1} << 20) << "read the file to find the magic";

  // A valid header at the front of 10 GB: its sizes do not add up to the file's, so it is
  // refused without reading the rest.
  ASSERT_TRUE(writeCheckpoint(path, sample()).isOk());
  const uint64_t real = fs::file_size(path);
  fs::resize_file(path, uint64_t{10} << 30);
  before = bytesReadSoFar();
  read = readCheckpoint(path);
  ASSERT_FALSE(read.isOk());
  EXPECT_EQ(read.status().code(), Status::Code::kCorruption);
  EXPECT_EQ(read.status().message(),
            path + " is 10737418240 bytes but its header describes " + std::to_string(real) +
                ": inconsistent sizes: the file is damaged; resume from an older checkpoint");
  EXPECT_LT(bytesReadSoFar() - before, uint64_t{1} << 20);

  // The header alone, as the trainer checks it before it reads the parameters.
  fs::resize_file(path, real);
  auto header = readCheckpointHeader(path);
  ASSERT_TRUE(header.isOk()) << header.status().toString();
  EXPECT_EQ(header->checkpoint.layerSizes, sample().layerSizes);
  EXPECT_EQ(header->checkpoint.step, 1234);
  EXPECT_EQ(header->numParams, 4u);
  EXPECT_EQ(header->bufferSizes, (std::vector<uint64_t>{4, 4}));
  EXPECT_TRUE(header->checkpoint.params.empty());
  EXPECT_EQ(header->fileBytes, real);
}

TEST(CheckpointTest, DirectoryResolvesToNewestAndPruneKeepsNewest) {
  TempDir dir;
  for (int64_t step : {5, 40, 300, 20}) {
    ASSERT_TRUE(writeCheckpoint(checkpointFileName(dir.path(), step), sample()).isOk());
  }
  auto newest = resolveCheckpointPath(dir.path());
  ASSERT_TRUE(newest.isOk());
  EXPECT_EQ(*newest, checkpointFileName(dir.path(), 300));
  pruneCheckpoints(dir.path(), 2);
  EXPECT_FALSE(fs::exists(checkpointFileName(dir.path(), 5)));
  EXPECT_FALSE(fs::exists(checkpointFileName(dir.path(), 20)));
  EXPECT_TRUE(fs::exists(checkpointFileName(dir.path(), 40)));
  EXPECT_TRUE(fs::exists(checkpointFileName(dir.path(), 300)));

  TempDir empty;
  EXPECT_EQ(resolveCheckpointPath(empty.path()).status().code(), Status::Code::kNotFound);
}

// Found by checkpoint_header_fuzzer (UBSan: "null pointer passed as argument 1" in
// Reader::getFloats): a checkpoint with no parameters copied 0 bytes into an empty vector's null
// data(). It reads back, empty; the sanitize preset's build checks that no null is passed.
TEST(CheckpointTest, EmptyParameterListReadsBackWithoutCopyingToNull) {
  TempDir dir;
  TrainingCheckpoint empty = sample();
  empty.params.clear();
  empty.optimizerState.buffers = {{}, {}};
  const std::string path = dir.path() + "/empty.rsck";
  ASSERT_TRUE(writeCheckpoint(path, empty).isOk());
  auto read = readCheckpoint(path);
  ASSERT_TRUE(read.isOk()) << read.status().toString();
  EXPECT_TRUE(read->params.empty());
  ASSERT_EQ(read->optimizerState.buffers.size(), 2u);
  EXPECT_TRUE(read->optimizerState.buffers[0].empty());
}

// The bug: an unwritable --checkpoint-dir was found only after training, when the first
// checkpoint was written. The trainer checks it at start with this.
TEST(CheckpointTest, UnwritableCheckpointDirIsFoundBeforeTraining) {
  TempDir dir;
  // A missing directory is created, parents included, and left empty.
  const std::string fresh = dir.path() + "/a/b/checkpoints";
  ASSERT_TRUE(checkCheckpointDirWritable(fresh).isOk());
  EXPECT_TRUE(fs::is_directory(fresh));
  EXPECT_TRUE(fs::is_empty(fresh)) << "the probe file is removed";

  // A file where the directory should be (also where a parent should be): IOError naming it.
  const std::string file = dir.path() + "/plain";
  std::ofstream(file) << "x";
  for (const std::string& bad : {file, file + "/checkpoints"}) {
    const Status status = checkCheckpointDirWritable(bad);
    ASSERT_FALSE(status.isOk()) << bad;
    EXPECT_EQ(status.code(), Status::Code::kIOError);
    EXPECT_NE(status.message().find(bad), std::string::npos) << status.message();
    EXPECT_NE(status.message().find("--checkpoint-dir"), std::string::npos) << status.message();
  }
}

TEST(CheckpointTest, CheckpointDirWithoutWritePermissionIsFoundBeforeTraining) {
  TempDir dir;
  // Root writes to it anyway: then there is nothing to check.
  const std::string locked = dir.path() + "/locked";
  fs::create_directory(locked);
  fs::permissions(locked, fs::perms::owner_read | fs::perms::owner_exec);
  if (::access(locked.c_str(), W_OK) == 0) {
    fs::permissions(locked, fs::perms::owner_all);
    GTEST_SKIP() << "this user can write to a mode-0500 directory (root)";
  }
  const Status status = checkCheckpointDirWritable(locked);
  fs::permissions(locked, fs::perms::owner_all);
  ASSERT_FALSE(status.isOk());
  EXPECT_NE(status.message().find("Permission denied"), std::string::npos) << status.message();
}

}  // namespace
}  // namespace ringside::trainer
