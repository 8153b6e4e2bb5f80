// libFuzzer target for the agent's reader of a custom command's JSON Lines output
// (ringside::agent::parseMetricsLine, agent/src/log_tailer.cpp): any line must give samples, or
// nothing with or without a problem, never a crash (one malformed line aborted the agent
// with nlohmann's type_error and crash-looped it), a leak or undefined behaviour. What it returns
// is bounded: a malformed record gives no samples, and a record gives at most
// kMaxMetricsPerRecord samples, each with a name of 1 to kMaxMetricNameBytes bytes.
#include <google/protobuf/stubs/logging.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "ringside/agent/log_tailer.h"

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ringside::agent;
  const std::string line(reinterpret_cast<const char*>(data), size);
  std::string problem;
  const auto samples = parseMetricsLine(line, &problem);
  if (!problem.empty() && !samples.empty()) std::abort();
  if (samples.size() > kMaxMetricsPerRecord + 2) std::abort();  // + run/total_steps, per_epoch
  for (const auto& sample : samples) {
    if (sample.name().empty() || sample.name().size() > kMaxMetricNameBytes) std::abort();
  }
  (void)parseMetricsLine(line);  // without a problem string too
  return 0;
}
