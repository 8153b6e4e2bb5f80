#include "ringside/common/file_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <utility>

namespace ringside {

namespace {

std::string errnoText(int error) { return std::strerror(error); }

// Closes a file descriptor on scope exit.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

}  // namespace

Result<std::string> readSmallFile(const std::string& path, off_t maxBytes, struct stat* info) {
  struct stat ignored {};
  if (info == nullptr) info = &ignored;
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    const int error = errno;
    if (error == ENOENT) return Status::notFound(path + " does not exist");
    return Status::ioError("cannot open " + path + ": " + errnoText(error));
  }
  if (::fstat(fd.get(), info) != 0) {
    return Status::ioError("cannot stat " + path + ": " + errnoText(errno));
  }
  if (!S_ISREG(info->st_mode)) return Status::corruption(path + " is not a regular file");
  if (info->st_size > maxBytes) {
    return Status::corruption(path + " is " + std::to_string(info->st_size) +
                              " bytes, more than the " + std::to_string(maxBytes) +
                              " expected; is it the right file?");
  }
  std::string content;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::ioError("cannot read " + path + ": " + errnoText(errno));
    if (n == 0) break;
    content.append(buffer, static_cast<size_t>(n));
    if (static_cast<off_t>(content.size()) > maxBytes) {
      return Status::corruption(path + " grew past " + std::to_string(maxBytes) + " bytes");
    }
  }
  return content;
}

Status writeFileAtomic(const std::string& path, std::string_view content, mode_t mode) {
  const std::string temp = path + ".tmp." + std::to_string(::getpid());
  // A fresh file (O_EXCL after removing a stale one left by a crash), so its mode is `mode`
  // narrowed by the umask and never the wider mode an old file might have.
  ::unlink(temp.c_str());
  Fd fd(::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode));
  if (fd.get() < 0) return Status::ioError("cannot create " + temp + ": " + errnoText(errno));
  auto fail = [&](const std::string& what) {
    const int error = errno;
    ::unlink(temp.c_str());
    return Status::ioError("cannot " + what + " " + temp + ": " + errnoText(error));
  };
  size_t written = 0;
  while (written < content.size()) {
    const ssize_t n = ::write(fd.get(), content.data() + written, content.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail("write");
    written += static_cast<size_t>(n);
  }
  if (::fsync(fd.get()) != 0) return fail("fsync");
  if (::close(fd.release()) != 0) return fail("close");
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(temp.c_str());
    return Status::ioError("cannot rename " + temp + " to " + path + ": " + errnoText(error));
  }
  const std::string dir = std::filesystem::path(path).parent_path().string();
  Fd dirFd(::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dirFd.get() >= 0) ::fsync(dirFd.get());  // best effort: the rename is already visible
  return Status::ok();
}

std::string trimSpace(std::string_view text) {
  const char* kSpace = " \t\r\n";
  const size_t begin = text.find_first_not_of(kSpace);
  if (begin == std::string_view::npos) return {};
  const size_t end = text.find_last_not_of(kSpace);
  return std::string(text.substr(begin, end - begin + 1));
}

std::string readFileTail(const std::string& path, size_t maxBytes) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return "";
  const std::streamoff size = in.tellg();
  const std::streamoff from =
      std::max<std::streamoff>(0, size - static_cast<std::streamoff>(maxBytes));
  in.seekg(from);
  std::string text(static_cast<size_t>(size - from), '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (from > 0) text.erase(0, std::min(text.size(), text.find('\n') + 1));
  return text;
}

}  // namespace ringside
