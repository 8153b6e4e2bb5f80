#include "ringside/common/allowlist.h"

#include <sstream>
#include <utility>

#include "ringside/common/curve.h"
#include "ringside/common/file_io.h"

namespace ringside::curve {

namespace {

// Allowlists are small; refuse anything larger rather than read it whole.
constexpr off_t kMaxAllowlistBytes = 4 * 1024 * 1024;

}  // namespace

Allowlist::FileStamp Allowlist::stampOf(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return {};
  return stampOf(info);
}

Allowlist::FileStamp Allowlist::stampOf(const struct stat& info) {
  return FileStamp{static_cast<int64_t>(info.st_ino),
                   static_cast<int64_t>(info.st_mtim.tv_sec) * 1000000000 + info.st_mtim.tv_nsec,
                   static_cast<int64_t>(info.st_size)};
}

Status Allowlist::load(const std::string& path) {
  struct stat info {};
  Result<std::string> content = readSmallFile(path, kMaxAllowlistBytes, &info);
  std::map<std::string, std::string, std::less<>> keys;
  FileStamp stamp;
  if (content.isOk()) {
    if ((info.st_mode & 022) != 0) {
      return Status::invalidArgument("allowlist " + path +
                                     " is writable by group or others, so anyone could authorize "
                                     "a key; run `chmod 600 " +
                                     path + "`");
    }
    std::istringstream lines(*content);
    std::string line;
    for (int number = 1; std::getline(lines, line); ++number) {
      const std::string text = trimSpace(line);
      if (text.empty() || text.front() == '#') continue;
      const size_t end = text.find_first_of(" \t");
      const std::string key = text.substr(0, end);
      std::string comment;
      if (end != std::string::npos) {
        const std::string rest = trimSpace(std::string_view(text).substr(end));
        if (rest.front() != '#') {
          return Status::corruption(path + ":" + std::to_string(number) +
                                    ": unexpected text after the key (comments start with #)");
        }
        comment = trimSpace(std::string_view(rest).substr(1));
      }
      Status valid = validateKey(key);
      if (!valid.isOk()) {
        return Status::corruption(path + ":" + std::to_string(number) + ": " + valid.message());
      }
      keys[key] = comment;
    }
    stamp = stampOf(info);
  } else if (content.status().code() != Status::Code::kNotFound) {
    return content.status();
  }
  WriterMutexLock lock(mutex_);
  keys_ = std::move(keys);
  path_ = path;
  stamp_ = stamp;
  return Status::ok();
}

Status Allowlist::reload() {
  std::string path;
  {
    ReaderMutexLock lock(mutex_);
    path = path_;
  }
  if (path.empty()) return Status::invalidArgument("the allowlist was never loaded from a file");
  return load(path);
}

Status Allowlist::reloadIfChanged() {
  std::string path;
  FileStamp stamp;
  {
    ReaderMutexLock lock(mutex_);
    path = path_;
    stamp = stamp_;
  }
  if (path.empty()) return Status::ok();
  if (stampOf(path) == stamp) return Status::ok();
  return load(path);
}

Status Allowlist::save(const std::string& path) const {
  WriterMutexLock lock(mutex_);
  const std::string target = path.empty() ? path_ : path;
  if (target.empty()) return Status::invalidArgument("no allowlist path to save to");
  std::string content =
      "# Ringside allowlist: CURVE public keys (Z85) of the clients this agent serves.\n"
      "# One key per line, optionally followed by a # comment. Edit with `ringside-agent "
      "authorize KEY` and `revoke KEY`.\n";
  for (const auto& [key, comment] : keys_) {
    content += key;
    if (!comment.empty()) content += "  # " + comment;
    content += '\n';
  }
  RINGSIDE_RETURN_IF_ERROR(writeFileAtomic(target, content, 0600));
  if (target == path_) stamp_ = stampOf(target);
  return Status::ok();
}

Status Allowlist::add(const std::string& key, const std::string& comment) {
  RINGSIDE_RETURN_IF_ERROR(validateKey(key));
  // A comment is one line: newlines would let it inject keys into the file.
  std::string oneLine = comment;
  for (char& c : oneLine) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  WriterMutexLock lock(mutex_);
  auto [it, inserted] = keys_.try_emplace(key, oneLine);
  if (!inserted && !oneLine.empty()) it->second = oneLine;
  return Status::ok();
}

bool Allowlist::remove(const std::string& key) {
  WriterMutexLock lock(mutex_);
  return keys_.erase(key) > 0;
}

bool Allowlist::contains(std::string_view key) const {
  ReaderMutexLock lock(mutex_);
  return keys_.find(key) != keys_.end();
}

std::vector<std::string> Allowlist::keys() const {
  ReaderMutexLock lock(mutex_);
  std::vector<std::string> result;
  result.reserve(keys_.size());
  for (const auto& entry : keys_) result.push_back(entry.first);
  return result;
}

size_t Allowlist::size() const {
  ReaderMutexLock lock(mutex_);
  return keys_.size();
}

}  // namespace ringside::curve
