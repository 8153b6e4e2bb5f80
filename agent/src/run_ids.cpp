// Ids of runs and sweeps (run_ids.h).
#include "ringside/agent/run_ids.h"

#include <cstdio>
#include <ctime>
#include <random>

namespace ringside::agent {

std::string newTimestampedId(char prefix) {
  const std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::gmtime(&now));
  std::random_device device;
  char suffix[8];
  std::snprintf(suffix, sizeof suffix, "%04x", device() & 0xffff);
  return std::string(1, prefix) + stamp + "-" + suffix;
}

}  // namespace ringside::agent
