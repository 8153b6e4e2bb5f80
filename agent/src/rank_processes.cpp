#include "ringside/agent/rank_processes.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <unordered_map>

#include "ringside/common/mutex.h"
#include "ringside/common/protocol.h"

namespace ringside::agent {

namespace fs = std::filesystem;

std::vector<uint32_t> parseVisibleDevices(std::string_view value) {
  std::vector<uint32_t> gpus;
  size_t begin = 0;
  while (begin < value.size()) {
    size_t end = value.find(',', begin);
    if (end == std::string_view::npos) end = value.size();
    const std::string item(value.substr(begin, end - begin));
    if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos ||
        item.size() > 6) {
      return {};
    }
    gpus.push_back(static_cast<uint32_t>(std::stoul(item)));
    begin = end + 1;
  }
  return gpus;
}

namespace {

// The whole of a small /proc file, read with one open and few reads; nullopt when it cannot be
// opened (the process is gone, or another user's).
std::optional<std::string> readProcFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string text;
  char buffer[4096];
  while (true) {
    const ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    text.append(buffer, static_cast<size_t>(got));
  }
  ::close(fd);
  return text;
}

// What names one exec of one process (proc(5), /proc/PID/stat): its start time (field 22, clock
// ticks after boot; with the pid, one process for as long as the machine runs) and where its
// environment lies in its memory (env_start and env_end, fields 48 and 49, Linux 3.5+), which
// an exec moves (a new stack; with address space randomization, a new place) while the pid and
// the start time stay.
struct ProcessKey {
  uint64_t startTicks = 0, envStart = 0, envEnd = 0;
  bool operator==(const ProcessKey&) const = default;
};

// The key from /proc/PID/stat; nullopt when unreadable.
std::optional<ProcessKey> processKey(const std::string& statPath) {
  const int fd = ::open(statPath.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  char buffer[2048];
  const ssize_t got = ::read(fd, buffer, sizeof buffer - 1);
  ::close(fd);
  if (got <= 0) return std::nullopt;
  buffer[got] = '\0';
  // The command name (field 2) may hold spaces and parentheses: field 3 follows its last ')'.
  const char* at = std::strrchr(buffer, ')');
  if (at == nullptr) return std::nullopt;
  ProcessKey key;
  for (int field = 3; field <= 49; ++field) {
    at = std::strchr(at + 1, ' ');
    if (at == nullptr) return field > 22 ? std::optional<ProcessKey>(key) : std::nullopt;
    if (field == 22 || field == 48 || field == 49) {
      const uint64_t value = std::strtoull(at + 1, nullptr, 10);
      (field == 22 ? key.startTicks : field == 48 ? key.envStart : key.envEnd) = value;
    }
  }
  return key;
}

// What a scan learnt of one process: a rank, or not one (outside our PID namespace, no run id or
// no rank), valid while the process with this pid has this key.
struct Known {
  ProcessKey key;
  std::optional<RankProcess> rank;
};

// The processes every scan of a /proc directory saw last, by pid. A process's environ is the
// one its last exec gave it, and its PID namespace is fixed at fork, so neither is read again
// while the pid keeps its key.
struct ScanCache {
  Mutex mutex;
  std::map<std::string, std::unordered_map<pid_t, Known>> byDir GUARDED_BY(mutex);
};

ScanCache& scanCache() {
  static ScanCache cache;
  return cache;
}

// The rank a process is, from its environ, or nullopt.
std::optional<RankProcess> parseRank(const std::string& environ, pid_t pid) {
  const std::string idPrefix = std::string(protocol::kRunIdEnv) + "=";
  // A multi-node run's ranks push to the owner's tcp:// rank endpoint; a one-node run's to the
  // ipc:// one (both carry a run key unless the agent runs --insecure).
  const std::string endpointPrefix = std::string(protocol::kAgentEndpointEnv) + "=tcp://";
  const std::string reservationPrefix = std::string(protocol::kReservationIdEnv) + "=";
  RankProcess rank;
  bool hasRank = false;
  for (size_t begin = 0; begin < environ.size();) {
    size_t end = environ.find('\0', begin);
    if (end == std::string::npos) end = environ.size();
    const std::string_view var(environ.data() + begin, end - begin);
    if (var.starts_with(idPrefix)) {
      rank.runId = std::string(var.substr(idPrefix.size()));
    } else if (var.starts_with("OMPI_COMM_WORLD_RANK=") || var.starts_with("PMIX_RANK=")) {
      hasRank = true;
      rank.rank = std::atoi(std::string(var.substr(var.find('=') + 1)).c_str());
    } else if (var.starts_with(endpointPrefix)) {
      rank.multiNode = true;
    } else if (var.starts_with(reservationPrefix)) {
      rank.reservationId = std::string(var.substr(reservationPrefix.size()));
    } else if (var.starts_with("CUDA_VISIBLE_DEVICES=")) {
      rank.gpus = parseVisibleDevices(var.substr(var.find('=') + 1));
    }
    begin = end + 1;
  }
  if (rank.runId.empty() || !hasRank) return std::nullopt;
  rank.pid = pid;
  return rank;
}

}  // namespace

std::vector<RankProcess> scanRankProcesses(const std::string& procDir) {
  std::error_code ec;
  // "pid:[inode]"; empty where there is no such link (a test's directory).
  const fs::path ownNamespace = fs::read_symlink("/proc/self/ns/pid", ec);
  std::vector<RankProcess> ranks;
  std::unordered_map<pid_t, Known> seen;
  ScanCache& cache = scanCache();
  MutexLock lock(cache.mutex);
  std::unordered_map<pid_t, Known>& known = cache.byDir[procDir];
  DIR* dir = ::opendir(procDir.c_str());
  if (dir == nullptr) {
    known.clear();
    return ranks;
  }
  while (const dirent* entry = ::readdir(dir)) {
    const std::string_view name(entry->d_name);
    if (name.empty() || name.find_first_not_of("0123456789") != std::string_view::npos) continue;
    const auto pid = static_cast<pid_t>(std::strtol(entry->d_name, nullptr, 10));
    const std::string base = procDir + "/" + entry->d_name;
    const std::optional<ProcessKey> key = processKey(base + "/stat");
    if (key) {
      auto it = known.find(pid);
      if (it != known.end() && it->second.key == *key) {
        if (it->second.rank) ranks.push_back(*it->second.rank);
        seen.emplace(pid, std::move(it->second));
        continue;
      }
    }
    Known process;
    process.key = key.value_or(ProcessKey{});
    std::error_code linkError;
    const fs::path pidNamespace = fs::read_symlink(base + "/ns/pid", linkError);
    const bool foreign = !linkError && !ownNamespace.empty() && pidNamespace != ownNamespace;
    if (!foreign) {
      const std::optional<std::string> environ = readProcFile(base + "/environ");
      if (!environ) continue;  // gone, or not ours to read: try again next time
      process.rank = parseRank(*environ, pid);
      if (process.rank) ranks.push_back(*process.rank);
    }
    // Without a key (a test's directory) nothing is kept: read again next time.
    if (key) seen.emplace(pid, std::move(process));
  }
  ::closedir(dir);
  known = std::move(seen);  // processes that are gone are forgotten
  return ranks;
}

}  // namespace ringside::agent
