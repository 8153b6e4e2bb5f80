// The IDX reader and the dataset loader on small files the test writes, including broken ones.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <filesystem>
#include <fstream>

#include "ringside/common/run_spec.h"
#include "ringside/trainer/dataset.h"
#include "ringside/trainer/idx_reader.h"
#include "test_util.h"

namespace ringside::trainer {
namespace {

namespace fs = std::filesystem;

IdxArray images(uint32_t count, uint32_t rows, uint32_t cols) {
  IdxArray a;
  a.dims = {count, rows, cols};
  a.data.resize(size_t(count) * rows * cols);
  for (size_t i = 0; i < a.data.size(); ++i) a.data[i] = static_cast<uint8_t>(i * 7);
  return a;
}

IdxArray labels(uint32_t count, int classes) {
  IdxArray a;
  a.dims = {count};
  for (uint32_t i = 0; i < count; ++i) a.data.push_back(static_cast<uint8_t>(i % classes));
  return a;
}

void writeBytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
}

std::vector<uint8_t> readBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class IdxReaderTest : public ::testing::Test {
 protected:
  TempDir dir_;
};

TEST_F(IdxReaderTest, RoundTripsRawAndGzip) {
  const IdxArray original = images(3, 4, 5);
  for (bool gzip : {false, true}) {
    const std::string path = dir_.path() + (gzip ? "/a.gz" : "/a");
    ASSERT_TRUE(writeIdxFile(path, original, gzip).isOk());
    auto read = readIdxFile(path);
    ASSERT_TRUE(read.isOk()) << read.status().toString();
    EXPECT_EQ(read->dims, original.dims);
    EXPECT_EQ(read->data, original.data);
  }
}

TEST_F(IdxReaderTest, MissingFileIsNotFound) {
  auto read = readIdxFile(dir_.path() + "/nope");
  ASSERT_FALSE(read.isOk());
  EXPECT_EQ(read.status().code(), Status::Code::kNotFound);
}

TEST_F(IdxReaderTest, TruncatedDataIsCorruptionWithSizes) {
  const std::string path = dir_.path() + "/t";
  ASSERT_TRUE(writeIdxFile(path, images(2, 3, 3), false).isOk());
  auto bytes = readBytes(path);
  bytes.resize(bytes.size() - 5);
  writeBytes(path, bytes);
  auto read = readIdxFile(path);
  ASSERT_FALSE(read.isOk());
  EXPECT_EQ(read.status().code(), Status::Code::kCorruption);
  EXPECT_NE(
      read.status().message().find("truncated: header promises 18 bytes of data, file has 13"),
      std::string::npos)
      << read.status().message();
}

TEST_F(IdxReaderTest, TruncatedGzipIsCorruption) {
  const std::string path = dir_.path() + "/t.gz";
  ASSERT_TRUE(writeIdxFile(path, images(20, 28, 28), true).isOk());
  auto bytes = readBytes(path);
  bytes.resize(bytes.size() / 2);
  writeBytes(path, bytes);
  auto read = readIdxFile(path);
  ASSERT_FALSE(read.isOk());
  EXPECT_EQ(read.status().code(), Status::Code::kCorruption);
}

TEST_F(IdxReaderTest, TruncatedHeaderBadMagicWrongTypeAndTrailingBytes) {
  const std::string path = dir_.path() + "/h";
  writeBytes(path, {0, 0, 8});
  EXPECT_NE(readIdxFile(path).status().message().find("truncated IDX header"), std::string::npos);
  writeBytes(path, {'G', 'I', 'F', '8', 0, 0, 0, 1});
  EXPECT_NE(readIdxFile(path).status().message().find("not an IDX file"), std::string::npos);
  writeBytes(path, {0, 0, 0x0D, 1, 0, 0, 0, 1, 0, 0, 0, 0});  // float data
  EXPECT_NE(readIdxFile(path).status().message().find("only 0x08"), std::string::npos);
  writeBytes(path, {0, 0, 8, 1, 0, 0, 0, 2, 1, 2, 3});
  EXPECT_NE(readIdxFile(path).status().message().find("trailing bytes"), std::string::npos);
  writeBytes(path, {0, 0, 8, 1, 0, 0, 0});
  EXPECT_NE(readIdxFile(path).status().message().find("dimension 0 missing"), std::string::npos);
}

// The bug: the type byte 0x0d (float data) was reported as "0x13", its decimal value after "0x".
TEST_F(IdxReaderTest, TypeByte0x0dIsReportedAs0x0dNot0x13) {
  const std::string path = dir_.path() + "/float";
  writeBytes(path, {0, 0, 0x0D, 1, 0, 0, 0, 1, 0, 0, 0, 0});
  const std::string message = readIdxFile(path).status().message();
  EXPECT_NE(message.find("IDX type 0x0d (float) is not supported"), std::string::npos) << message;
  EXPECT_EQ(message.find("0x13"), std::string::npos) << message;
  writeBytes(path, {0, 0, 0xAB, 1, 0, 0, 0, 1, 0});
  EXPECT_NE(readIdxFile(path).status().message().find("IDX type 0xab"), std::string::npos);
}

long peakRssKib() {
  struct rusage usage = {};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

// A damaged header promising 8 GiB of data in a file of a few bytes is refused as truncated
// without allocating what the header promises (the buffer grows with the data really read).
TEST_F(IdxReaderTest, HeaderPromisingGigabytesAllocatesOnlyWhatTheFileHolds) {
  const std::string path = dir_.path() + "/liar";
  // Dimensions 2^30 x 8: 8 GiB of unsigned bytes, under the 2^34-element bound.
  writeBytes(path, {0, 0, 8, 2, 0x40, 0, 0, 0, 0, 0, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
  const long before = peakRssKib();
  auto read = readIdxFile(path);
  ASSERT_FALSE(read.isOk());
  EXPECT_NE(read.status().message().find("header promises 8589934592 bytes of data, file has 10"),
            std::string::npos)
      << read.status().message();
  EXPECT_LT(peakRssKib() - before, 256 * 1024) << "peak RSS grew by more than 256 MiB";
}

// A header whose rows * cols is zero is refused, not read as images of no pixels (the same check
// refuses a product over 2^31 - 1, computed in 64 bits where 32 would wrap around).
TEST_F(IdxReaderTest, ImagesOfZeroPixelsAreCorruption) {
  const std::string d = dir_.path();
  ASSERT_TRUE(writeIdxFile(d + "/train-labels-idx1-ubyte", labels(2, 2), false).isOk());
  ASSERT_TRUE(writeIdxFile(d + "/t10k-images-idx3-ubyte", images(2, 2, 3), false).isOk());
  ASSERT_TRUE(writeIdxFile(d + "/t10k-labels-idx1-ubyte", labels(2, 2), false).isOk());
  IdxArray empty;
  empty.dims = {2, 0, 28};
  ASSERT_TRUE(writeIdxFile(d + "/train-images-idx3-ubyte", empty, false).isOk());
  auto data = loadMnistFormat(d);
  ASSERT_FALSE(data.isOk());
  EXPECT_EQ(data.status().code(), Status::Code::kCorruption);
  EXPECT_NE(data.status().message().find("images of 0 x 28 pixels"), std::string::npos)
      << data.status().message();
}

TEST_F(IdxReaderTest, LoadsDatasetAndNormalizes) {
  const std::string d = dir_.path();
  ASSERT_TRUE(writeIdxFile(d + "/train-images-idx3-ubyte.gz", images(10, 2, 3), true).isOk());
  ASSERT_TRUE(writeIdxFile(d + "/train-labels-idx1-ubyte.gz", labels(10, 4), true).isOk());
  ASSERT_TRUE(writeIdxFile(d + "/t10k-images-idx3-ubyte", images(4, 2, 3), false).isOk());
  ASSERT_TRUE(writeIdxFile(d + "/t10k-labels-idx1-ubyte", labels(4, 4), false).isOk());
  auto data = loadMnistFormat(d, 8, 0);
  ASSERT_TRUE(data.isOk()) << data.status().toString();
  EXPECT_EQ(data->train.count, 8);
  EXPECT_EQ(data->test.count, 4);
  EXPECT_EQ(data->train.featureDim, 6);
  EXPECT_EQ(data->train.numClasses, 4);

  // Normalized training pixels have mean 0 and standard deviation 1.
  std::vector<int64_t> all(8);
  for (int i = 0; i < 8; ++i) all[i] = i;
  std::vector<float> x(8 * 6);
  std::vector<int32_t> y(8);
  gatherBatch(data->train, data->normalization, all, x.data(), y.data());
  double sum = 0, sumSquares = 0;
  for (float v : x) {
    sum += v;
    sumSquares += double(v) * v;
  }
  EXPECT_NEAR(sum / x.size(), 0.0, 1e-5);
  EXPECT_NEAR(sumSquares / x.size(), 1.0, 1e-4);
  EXPECT_EQ(y[5], 1);
}

TEST_F(IdxReaderTest, MissingDatasetSaysWhatToInstall) {
  auto data = loadMnistFormat(defaultTrainerConfig().data() + "-missing");
  ASSERT_FALSE(data.isOk());
  EXPECT_EQ(data.status().code(), Status::Code::kNotFound);
  EXPECT_NE(data.status().message().find("--data"), std::string::npos);

  auto empty = loadMnistFormat(dir_.path());
  ASSERT_FALSE(empty.isOk());
  EXPECT_NE(empty.status().message().find("train-images-idx3-ubyte[.gz] not found in"),
            std::string::npos)
      << empty.status().message();
}

TEST_F(IdxReaderTest, MismatchedImageAndLabelCountsAreCorruption) {
  const std::string d = dir_.path();
  ASSERT_TRUE(writeIdxFile(d + "/train-images-idx3-ubyte", images(10, 2, 3), false).isOk());
  ASSERT_TRUE(writeIdxFile(d + "/train-labels-idx1-ubyte", labels(9, 4), false).isOk());
  ASSERT_TRUE(writeIdxFile(d + "/t10k-images-idx3-ubyte", images(4, 2, 3), false).isOk());
  ASSERT_TRUE(writeIdxFile(d + "/t10k-labels-idx1-ubyte", labels(4, 4), false).isOk());
  auto data = loadMnistFormat(d);
  ASSERT_FALSE(data.isOk());
  EXPECT_NE(data.status().message().find("has 10 images but"), std::string::npos)
      << data.status().message();
}

}  // namespace
}  // namespace ringside::trainer
