// Noise: CPU time other processes took while a phase of telemetry_bench was timed (2 cores are
// easily shared), from /proc.
#pragma once

#include <string>
#include <utility>

#include "telemetry_bench.h"

namespace ringside::bench {

// More than this share of the cores taken by others during a phase: the figures are disturbed
// (rerun).
constexpr double kDisturbedPct = 5.0;

// Seconds the whole machine spent busy (user, nice, system, irq, softirq, steal in /proc/stat),
// summed over all CPUs. 0 when /proc/stat cannot be read.
double machineBusySeconds();

// Seconds the hypervisor ran something else while this machine's CPUs had work (/proc/stat,
// "steal"), summed over all CPUs. 0 when /proc/stat cannot be read or the machine is not virtual.
double machineStealSeconds();

// User + system CPU seconds of process `pid` ("self" for this one), all its threads; 0 when gone.
double processCpuSeconds(const std::string& pid);

// CPU time the rest of the machine took during a phase: busy time minus this process's and the
// agent's own (`agentPid`, empty: none).
class NoiseMeter {
 public:
  explicit NoiseMeter(std::string agentPid = "");
  // Other processes' CPU seconds since construction, and their share of all cores' time, %.
  std::pair<double, double> otherCpu() const;

 private:
  double ownSeconds() const;

  std::string agentPid_;
  Clock::time_point start_;
  double busy_ = 0, own_ = 0;
};

}  // namespace ringside::bench
