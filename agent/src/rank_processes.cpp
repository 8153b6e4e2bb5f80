#include "ringside/agent/rank_processes.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

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

std::vector<RankProcess> scanRankProcesses(const std::string& procDir) {
  const std::string idPrefix = std::string(protocol::kRunIdEnv) + "=";
  const std::string keyPrefix = std::string(protocol::kRunPublicKeyEnv) + "=";
  const std::string reservationPrefix = std::string(protocol::kReservationIdEnv) + "=";
  std::error_code ec;
  // "pid:[inode]"; empty where there is no such link (a test's directory).
  const fs::path ownNamespace = fs::read_symlink("/proc/self/ns/pid", ec);
  std::vector<RankProcess> ranks;
  for (const auto& entry : fs::directory_iterator(procDir, ec)) {
    const std::string name = entry.path().filename();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::error_code linkError;
    const fs::path pidNamespace = fs::read_symlink(entry.path() / "ns" / "pid", linkError);
    if (!linkError && !ownNamespace.empty() && pidNamespace != ownNamespace) continue;
    std::ifstream in(entry.path() / "environ", std::ios::binary);
    if (!in) continue;
    std::stringstream buffer;
    buffer << in.rdbuf();
    const std::string environ = buffer.str();
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
      } else if (var.starts_with(keyPrefix)) {
        rank.multiNode = true;
      } else if (var.starts_with(reservationPrefix)) {
        rank.reservationId = std::string(var.substr(reservationPrefix.size()));
      } else if (var.starts_with("CUDA_VISIBLE_DEVICES=")) {
        rank.gpus = parseVisibleDevices(var.substr(var.find('=') + 1));
      }
      begin = end + 1;
    }
    if (rank.runId.empty() || !hasRank) continue;
    rank.pid = static_cast<pid_t>(std::stol(name));
    ranks.push_back(std::move(rank));
  }
  return ranks;
}

}  // namespace ringside::agent
