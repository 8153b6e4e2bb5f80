// GPUs that processes other than Ringside's ranks compute on (run_manager.h: setGpuProcesses,
// foreignGpus): they count as taken, and a queued run says who holds them.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <set>
#include <string>

#include "ringside/agent/run_manager.h"

namespace ringside::agent {
namespace {

// /proc/PID/comm without its newline; "" when the process is gone or not readable.
std::string commandOf(uint32_t pid) {
  std::ifstream file("/proc/" + std::to_string(pid) + "/comm");
  std::string command;
  std::getline(file, command);
  return command;
}

}  // namespace

void RunManager::setGpuProcesses(const std::map<uint32_t, std::vector<GpuProcess>>& processes) {
  std::vector<ForeignGpuUse> foreign;
  bool rescanned = false;
  std::set<uint32_t> strangers;  // this sample's foreign pids, for the next one
  for (uint32_t gpu : options_.gpuIndices) {
    auto listed = processes.find(gpu);
    if (listed == processes.end()) {
      // Not listed this time (an NVML error, too many processes): what was known stands, so a
      // failed read never frees a GPU someone else computes on.
      for (const ForeignGpuUse& before : foreignGpus_) {
        if (before.gpu == gpu) foreign.push_back(before);
      }
      continue;
    }
    ForeignGpuUse use;
    use.gpu = gpu;
    bool found = false;
    for (const GpuProcess& process : listed->second) {
      auto isRank = [&] {
        const std::vector<RankProcess>& ranks = rankProcesses();
        return std::any_of(ranks.begin(), ranks.end(), [&](const RankProcess& rank) {
          return rank.pid == static_cast<pid_t>(process.pid);
        });
      };
      bool rank = isRank();
      if (!rank && !rescanned && !foreignPids_.contains(process.pid)) {
        // A rank that started since the last scan (at most a second ago) is not a stranger. A
        // process already found foreign last time is not looked for again (in a container the
        // driver's pids are the host's and never match a rank: no scan at every sample).
        rescanned = true;
        rankProcesses(/*fresh=*/true);
        rank = isRank();
      }
      if (rank) continue;
      strangers.insert(process.pid);
      if (!found) {
        found = true;
        use.pid = process.pid;
        use.command = commandOf(process.pid);
        use.usedMiB = process.usedMiB;
      } else {
        ++use.otherProcesses;
      }
    }
    if (found) foreign.push_back(use);
  }
  const bool changed =
      foreign.size() != foreignGpus_.size() ||
      !std::equal(foreign.begin(), foreign.end(), foreignGpus_.begin(),
                  [](const ForeignGpuUse& a, const ForeignGpuUse& b) {
                    return a.gpu == b.gpu && a.pid == b.pid &&
                           a.otherProcesses == b.otherProcesses;
                  });
  foreignGpus_ = std::move(foreign);
  foreignPids_ = std::move(strangers);
  // GPUs that freed up (or were taken) change what the queue can start and what it says.
  if (changed) queueDirty_ = true;
}

std::string RunManager::foreignGpuText() const {
  std::string text;
  for (const ForeignGpuUse& use : foreignGpus_) {
    std::string what = use.command;
    if (use.usedMiB) {
      char memory[32];
      std::snprintf(memory, sizeof memory, "%.0f MiB", *use.usedMiB);
      what += (what.empty() ? "" : ", ") + std::string(memory);
    }
    text += (text.empty() ? "" : "; ") + std::string("GPU ") + std::to_string(use.gpu) +
            " used by PID " + std::to_string(use.pid) + (what.empty() ? "" : " (" + what + ")");
    if (use.otherProcesses > 0) {
      text += " and " + std::to_string(use.otherProcesses) + " more process" +
              (use.otherProcesses == 1 ? "" : "es");
    }
    text += ", not a Ringside run";
  }
  return text;
}

}  // namespace ringside::agent
