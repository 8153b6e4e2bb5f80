// preparePrivateDirectory (common/include/ringside/common/private_dir.h): the agent's state and
// runtime directories. `--state-dir` on a mode-1777 directory chmod-ed it to 0700 (at
// /tmp that breaks every user); a shared directory is now refused and left as it was.
#include "ringside/common/private_dir.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace ringside {
namespace {

namespace fs = std::filesystem;

class PrivateDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/ringside-private-dir-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  static unsigned modeOf(const std::string& path) {
    struct stat info {};
    return ::stat(path.c_str(), &info) == 0 ? info.st_mode & 07777 : 0u;
  }
  std::string dir_;
};

TEST_F(PrivateDirTest, StateDirWritableByOthersIsRefusedWithoutChangingItsMode) {
  for (const mode_t mode : {01777, 0777, 0770, 0720}) {
    const std::string shared = dir_ + "/shared";
    fs::create_directory(shared);
    ASSERT_EQ(::chmod(shared.c_str(), mode), 0);
    const Status status = preparePrivateDirectory(shared, "--state-dir");
    EXPECT_EQ(status.code(), Status::Code::kInvalidArgument) << std::oct << mode;
    EXPECT_NE(status.message().find("--state-dir " + shared), std::string::npos)
        << status.message();
    EXPECT_NE(status.message().find("writable by other users"), std::string::npos)
        << status.message();
    EXPECT_EQ(modeOf(shared), mode) << "a refused directory is left as it was";
    fs::remove(shared);
  }
}

TEST_F(PrivateDirTest, MissingDirectoryIsCreatedMode0700WhateverTheUmask) {
  for (const mode_t mask : {0000, 0022, 0077}) {
    const mode_t previous = ::umask(mask);
    const std::string state = dir_ + "/parent" + std::to_string(mask) + "/state";
    const Status status = preparePrivateDirectory(state, "--state-dir");
    ::umask(previous);
    ASSERT_TRUE(status.isOk()) << status.toString();
    EXPECT_EQ(modeOf(state), 0700u) << "umask " << std::oct << mask;
  }
}

TEST_F(PrivateDirTest, ExistingPrivateDirectoryIsAcceptedAsItIs) {
  for (const mode_t mode : {0700, 0750, 0755}) {
    const std::string own = dir_ + "/own";
    fs::create_directory(own);
    ASSERT_EQ(::chmod(own.c_str(), mode), 0);
    EXPECT_TRUE(preparePrivateDirectory(own, "--state-dir").isOk()) << std::oct << mode;
    EXPECT_EQ(modeOf(own), mode) << "an existing directory is never chmod-ed";
    fs::remove(own);
  }
}

TEST_F(PrivateDirTest, FileAndForeignDirectoryAreRefused) {
  const std::string file = dir_ + "/file";
  std::ofstream(file) << "x\n";
  const Status notDir = preparePrivateDirectory(file, "--runtime-dir");
  EXPECT_EQ(notDir.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(notDir.message().find("not a directory"), std::string::npos) << notDir.message();
  if (::geteuid() != 0) GTEST_SKIP() << "giving a directory to another user needs root";
  const std::string foreign = dir_ + "/foreign";
  fs::create_directory(foreign);
  ASSERT_EQ(::chmod(foreign.c_str(), 0700), 0);
  ASSERT_EQ(::chown(foreign.c_str(), 65534, 65534), 0);
  const Status status = preparePrivateDirectory(foreign, "--state-dir");
  EXPECT_EQ(status.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(status.message().find("owned by uid 65534"), std::string::npos) << status.message();
}

}  // namespace
}  // namespace ringside
