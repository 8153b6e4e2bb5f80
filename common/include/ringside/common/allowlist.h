// The allowlist of CURVE client public keys a Ringside server accepts (see curve.h for keys).
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "ringside/common/mutex.h"
#include "ringside/common/status.h"

namespace ringside::curve {

// The client public keys a server accepts. File format: one Z85 key per line, optionally followed
// by whitespace and a `#` comment (kept); lines that are empty or start with `#` are ignored.
// Thread-safe: every method may be called from any thread (a shared mutex; contains() takes it
// shared, so the ZAP thread never waits on another reader).
class Allowlist {
 public:
  Allowlist() = default;
  Allowlist(const Allowlist&) = delete;
  Allowlist& operator=(const Allowlist&) = delete;

  // Replaces the contents with those of `path` and remembers the path for reload()/save().
  // A missing file is an empty allowlist (OK). Errors (the contents are then unchanged):
  // Corruption naming the line of an invalid key; InvalidArgument when the file is group- or
  // world-writable (anyone could authorize themselves); IOError.
  Status load(const std::string& path);

  // load() of the remembered path. Errors: as load(); InvalidArgument when load() was never called.
  Status reload();

  // reload() when the file's modification time or size changed since the last load or save;
  // OK without reading it otherwise. For polling: the agent calls it every second and reports
  // its errors (the previous keys stay in force).
  Status reloadIfChanged();

  // Writes the keys atomically (temporary file in the same directory, fsync, rename) with mode
  // 0600 to `path`, or to the remembered path when `path` is empty. Errors: IOError;
  // InvalidArgument when there is no path.
  Status save(const std::string& path = "") const;

  // Adds `key` with an optional one-line comment. OK when already present (the comment is
  // replaced when non-empty). Errors: InvalidArgument from validateKey.
  Status add(const std::string& key, const std::string& comment = "");

  // Removes `key`; false when it was not present.
  bool remove(const std::string& key);

  bool contains(std::string_view key) const;
  std::vector<std::string> keys() const;  // sorted
  size_t size() const;

 private:
  // Identifies a version of the file: a save() by another process renames a new inode into place.
  struct FileStamp {
    int64_t inode = -1;
    int64_t mtimeNs = -1;
    int64_t size = -1;
    bool operator==(const FileStamp&) const = default;
  };
  static FileStamp stampOf(const std::string& path);  // {} when it cannot be stat'ed
  static FileStamp stampOf(const struct stat& info);

  mutable SharedMutex mutex_;
  std::map<std::string, std::string, std::less<>> keys_ GUARDED_BY(mutex_);  // key -> comment
  std::string path_ GUARDED_BY(mutex_);
  mutable FileStamp stamp_ GUARDED_BY(mutex_);
};

}  // namespace ringside::curve
