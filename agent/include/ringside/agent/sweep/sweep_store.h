// SweepStore: the sweeps an agent keeps, one file per sweep, <dir>/<sweep id>.json: a SweepInfo in
// protobuf's JSON mapping (field names as in ringside.proto), replaced atomically and durably
// (writeFileAtomic), so that a crash leaves the old file or the new one.
//
// Thread-safety: not thread-safe; one store per folder.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ringside/common/status.h"
#include "ringside/proto/ringside.pb.h"

namespace ringside::agent {

class SweepStore {
 public:
  // Largest sweep file read: 64 MiB (1,000 trials with their rung records fit many times over).
  static constexpr off_t kMaxSweepFileBytes = off_t{64} << 20;

  explicit SweepStore(std::string dir) : dir_(std::move(dir)) {}

  // A new sweep id, "s<UTC yyyymmdd-hhmmss>-<4 hex digits>" (as run ids, with an s).
  static std::string newSweepId();

  // Writes the sweep (creating the folder when missing). Errors: IOError naming the file and the
  // failed step; Internal when the sweep cannot be written as JSON.
  Status write(const v1::SweepInfo& sweep) const;

  // Every sweep kept, oldest first (by created_time). A file that cannot be read, does not parse,
  // or whose sweep id is not its name is left in place and reported through `report` (a sentence
  // naming the file); the others are read. Unknown fields (a newer agent's) are ignored. Errors:
  // IOError when the folder cannot be created or listed.
  Result<std::vector<v1::SweepInfo>> readAll(
      const std::function<void(const std::string&)>& report) const;

  const std::string& dir() const { return dir_; }

 private:
  std::string path(const std::string& sweepId) const;
  std::string dir_;
};

}  // namespace ringside::agent
