// Small-file helpers shared by the parts that keep state on disk (keys, allowlist, checkpoints,
// log offsets): a bounded whole-file read and an atomic, durable replace.
// Thread-safety: free functions without shared state; concurrent writers of one path each
// replace the file whole (the last rename wins).
#pragma once

#include <sys/stat.h>

#include <string>
#include <string_view>

#include "ringside/common/status.h"

namespace ringside {

// Reads the whole regular file `path` of at most `maxBytes` bytes; `info` (may be null) receives
// its fstat. Errors: NotFound (the file does not exist), IOError (the OS refused, with errno
// text), Corruption (not a regular file, or larger than maxBytes).
Result<std::string> readSmallFile(const std::string& path, off_t maxBytes, struct stat* info);

// The last `maxBytes` bytes of the file `path` (all of a smaller one), from the first whole line in
// them when the file is longer: for the end of a log that can be of any size. Empty when the file
// cannot be read.
std::string readFileTail(const std::string& path, size_t maxBytes);

// Replaces `path` with `content` atomically and durably, with `mode` narrowed by the umask (as
// open(2) creates files; never wider than `mode`): a temporary file in the same directory, fsync,
// rename over `path`, fsync of the directory. A reader sees the old file or the new one, never a
// mix; after a crash the file is one of the two. Errors: IOError naming the file and the failed
// step (the temporary file is removed).
Status writeFileAtomic(const std::string& path, std::string_view content, mode_t mode);

// `text` without the spaces, tabs, carriage returns and newlines around it (for the lines of
// small text files such as key files and the allowlist).
std::string trimSpace(std::string_view text);

}  // namespace ringside
