// Tests of the shared small-file helpers (common/include/ringside/common/file_io.h).
#include "ringside/common/file_io.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace ringside {
namespace {

namespace fs = std::filesystem;

class FileIoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ringside_file_io_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  static unsigned modeOf(const fs::path& path) {
    struct stat info {};
    return ::stat(path.c_str(), &info) == 0 ? info.st_mode & 07777 : 0u;
  }
  fs::path dir_;
};

TEST_F(FileIoTest, WriteReplacesTheFileWholeAndReadReturnsIt) {
  const std::string path = (dir_ / "state").string();
  ASSERT_TRUE(writeFileAtomic(path, "first version\n", 0600).isOk());
  ASSERT_TRUE(writeFileAtomic(path, "second", 0600).isOk());
  struct stat info {};
  Result<std::string> read = readSmallFile(path, 1024, &info);
  ASSERT_TRUE(read.isOk()) << read.status().toString();
  EXPECT_EQ(*read, "second");
  EXPECT_EQ(info.st_size, 6);
  EXPECT_EQ(modeOf(path), 0600u);
  // No temporary file is left beside it.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

// A temporary file left by a crash, with a wide mode, must not make the new file wider.
TEST_F(FileIoTest, StaleTemporaryFileDoesNotWidenTheMode) {
  const std::string path = (dir_ / "secret").string();
  const std::string stale = path + ".tmp." + std::to_string(::getpid());
  std::ofstream(stale) << "stale";
  ASSERT_EQ(::chmod(stale.c_str(), 0666), 0);
  ASSERT_TRUE(writeFileAtomic(path, "key\n", 0600).isOk());
  EXPECT_EQ(modeOf(path), 0600u);
  EXPECT_FALSE(fs::exists(stale));
}

TEST_F(FileIoTest, ReadRefusesMissingLargeAndNonRegularFiles) {
  EXPECT_EQ(readSmallFile((dir_ / "missing").string(), 10, nullptr).status().code(),
            Status::Code::kNotFound);
  const std::string big = (dir_ / "big").string();
  ASSERT_TRUE(writeFileAtomic(big, std::string(100, 'x'), 0644).isOk());
  EXPECT_EQ(readSmallFile(big, 99, nullptr).status().code(), Status::Code::kCorruption);
  EXPECT_TRUE(readSmallFile(big, 100, nullptr).isOk());
  EXPECT_EQ(readSmallFile(dir_.string(), 100, nullptr).status().code(), Status::Code::kCorruption);
}

TEST_F(FileIoTest, WriteIntoAMissingDirectoryIsAnIoErrorNamingThePath) {
  const std::string path = (dir_ / "no" / "such" / "file").string();
  const Status status = writeFileAtomic(path, "x", 0600);
  EXPECT_EQ(status.code(), Status::Code::kIOError);
  EXPECT_NE(status.message().find(path), std::string::npos) << status.message();
}

TEST_F(FileIoTest, FileTailStartsAtTheFirstWholeLineOfTheLastBytes) {
  const std::string path = (dir_ / "log").string();
  ASSERT_TRUE(writeFileAtomic(path, "first line\nsecond line\nthird\n", 0600).isOk());
  EXPECT_EQ(readFileTail(path, 1000), "first line\nsecond line\nthird\n");
  EXPECT_EQ(readFileTail(path, 15), "third\n");  // "ond line\nthird\n" without the cut line
  EXPECT_EQ(readFileTail((dir_ / "missing").string(), 10), "");
}

}  // namespace
}  // namespace ringside
