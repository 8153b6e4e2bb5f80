#include "ringside/common/private_dir.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace ringside {

namespace {

std::string modeText(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

}  // namespace

Status preparePrivateDirectory(const std::string& dir, std::string_view option) {
  const std::string named = std::string(option) + " " + dir;
  if (dir.empty())
    return Status::invalidArgument(std::string(option) + " is empty: name a directory");
  struct stat info {};
  if (::stat(dir.c_str(), &info) != 0) {
    if (errno != ENOENT) {
      return Status::ioError("cannot examine " + named + ": " + std::strerror(errno));
    }
    const std::filesystem::path parent = std::filesystem::path(dir).parent_path();
    std::error_code ec;
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
    if (ec) return Status::ioError("cannot create the parents of " + named + ": " + ec.message());
    // mkdir's mode is narrowed by the umask, never widened: 0700 at most, then exactly 0700.
    if (::mkdir(dir.c_str(), 0700) == 0) {
      if (::chmod(dir.c_str(), 0700) != 0) {
        return Status::ioError("cannot chmod 0700 the new " + named + ": " + std::strerror(errno));
      }
      return Status::ok();
    }
    if (errno != EEXIST) {
      return Status::ioError("cannot create " + named + ": " + std::strerror(errno));
    }
    // Another process made it meanwhile: check it like any existing directory.
    if (::stat(dir.c_str(), &info) != 0) {
      return Status::ioError("cannot examine " + named + ": " + std::strerror(errno));
    }
  }
  if (!S_ISDIR(info.st_mode)) {
    return Status::invalidArgument(named +
                                   " is not a directory: name a directory (a missing one "
                                   "is created with mode 0700)");
  }
  if (info.st_uid != ::geteuid()) {
    return Status::invalidArgument(named + " is owned by uid " + std::to_string(info.st_uid) +
                                   ", not by this user (uid " + std::to_string(::geteuid()) +
                                   "): run as its owner, or name a directory of this user's own "
                                   "(a missing one is created with mode 0700)");
  }
  if ((info.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return Status::invalidArgument(
        named + " is writable by other users (mode " + modeText(info.st_mode) +
        "), who could replace the keys, allowlist or journal in it; it was left unchanged. Name "
        "a directory of its own (a missing one is created with mode 0700, e.g. " +
        (std::filesystem::path(dir) / "ringside-agent").string() + "), or run `chmod go-w " + dir +
        "` if it is yours alone");
  }
  return Status::ok();
}

}  // namespace ringside
