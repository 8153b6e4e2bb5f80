#include "ringside/trainer/run_queue.h"

#include <cstdio>
#include <sstream>

namespace ringside::trainer {

std::optional<double> parseSchedstatRunQueueMs(const std::string& text) {
  std::istringstream in(text);
  long long onCpuNs = -1, runQueueNs = -1, slices = -1;
  if (!(in >> onCpuNs >> runQueueNs >> slices) || onCpuNs < 0 || runQueueNs < 0 || slices < 0) {
    return std::nullopt;
  }
  return static_cast<double>(runQueueNs) / 1e6;
}

std::optional<double> threadRunQueueDelayMs() {
  std::FILE* file = std::fopen("/proc/thread-self/schedstat", "r");
  if (file == nullptr) return std::nullopt;
  char text[128] = {};
  const size_t read = std::fread(text, 1, sizeof text - 1, file);
  std::fclose(file);
  return parseSchedstatRunQueueMs(std::string(text, read));
}

}  // namespace ringside::trainer
