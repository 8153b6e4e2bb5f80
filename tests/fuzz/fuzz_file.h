// For fuzz targets whose code under test reads a file by path (the IDX reader, the checkpoint
// reader): one anonymous in-memory file (memfd) per process, rewritten with each input and passed
// as /proc/self/fd/N, so that no input touches the disk.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace ringside::fuzz {

// The path of the in-memory file after replacing its contents with data[size]. Aborts when the
// file cannot be made (that is the harness failing, not a finding).
inline const std::string& writeFuzzFile(const uint8_t* data, size_t size) {
  static const int fd = memfd_create("ringside-fuzz", MFD_CLOEXEC);
  static const std::string path = "/proc/self/fd/" + std::to_string(fd);
  if (fd < 0 || ftruncate(fd, 0) != 0) std::abort();
  size_t done = 0;
  while (done < size) {
    const ssize_t wrote = pwrite(fd, data + done, size - done, static_cast<off_t>(done));
    if (wrote <= 0) std::abort();
    done += static_cast<size_t>(wrote);
  }
  return path;
}

}  // namespace ringside::fuzz
