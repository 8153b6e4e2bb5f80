// What telemetry_bench's parts share: the command line's options and the clock. The parts:
// telemetry_stream (what the simulated ranks send, and the check of what comes back),
// agent_harness (the ringside-agent process and a control client), noise_meter (other processes'
// CPU time while a phase is timed), sqlite_reference (the raw SQLite inserts compared against);
// telemetry_bench.cpp runs them. bench/README.md has the command and figures.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "build_paths.h"

namespace ringside::bench {

using Clock = std::chrono::steady_clock;

// How long a receive loop polls before it looks at its deadline again.
constexpr std::chrono::milliseconds kPollInterval{100};

struct Options {
  std::string agentPath = ringside::test::agentBin();
  std::string mpirunPath = ringside::test::mpiexec();
  int ranks = 2;
  uint64_t samples = 2'000'000;
  uint32_t batchPoints = 1000;
  double timeoutS = 300;
  double targetSamplesPerS = 200'000;
  bool keepDir = false;
};

// Seconds from `start` to `end`.
inline double secondsSince(Clock::time_point start, Clock::time_point end = Clock::now()) {
  return std::chrono::duration<double>(end - start).count();
}

}  // namespace ringside::bench
