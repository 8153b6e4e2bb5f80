// Node telemetry: CPU, memory and network from /proc and per-GPU values from a GpuProbe, sampled
// by the agent every second (configurable) and published as v1::NodeTelemetry. Rates (CPU busy
// share, network MB/s) are deltas between two readings, so the sampler keeps the previous one.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ringside/agent/gpu_probe.h"
#include "ringside/proto/ringside.pb.h"

namespace ringside::agent {

// Cumulative CPU time of the aggregate "cpu" line of /proc/stat, in USER_HZ ticks (proc(5)).
// Guest time is already included in user/nice by the kernel, so it is not added again.
struct CpuTimes {
  uint64_t busy = 0;  // user + nice + system + irq + softirq + steal
  uint64_t idle = 0;  // idle + iowait
};

// Cumulative byte counters of one interface of /proc/net/dev.
struct NetBytes {
  uint64_t rx = 0;
  uint64_t tx = 0;
};

// One telemetry reading. Every value the node cannot read, or that needs a previous reading
// that does not exist yet, is absent (shown as N/A), never 0.
struct TelemetrySample {
  double wallTime = 0;           // Unix seconds
  std::optional<double> cpuPct;  // node/cpu_pct: busy share of all CPUs since last sample, 0-100
  std::optional<double> memUsedMiB;  // node/mem_used_MiB: MemTotal - MemAvailable, MiB
  std::optional<double> netRxMBps;   // node/net_rx_MBps: MB/s (1e6 bytes/s), non-loopback
  std::optional<double> netTxMBps;   // node/net_tx_MBps
  std::vector<GpuSample> gpus;       // gpu<i>/... from the probe; empty without one
};

struct TelemetryOptions {
  // Prefix for proc/stat, proc/meminfo and proc/net/dev: "/" on a real node, a fixture
  // directory in tests.
  std::filesystem::path root = "/";
  // An initialised probe, or null. Not owned; the sampler calls its sample() on every sample().
  GpuProbe* gpuProbe = nullptr;
  // Seconds on a clock that never goes back (rates are computed with it); default
  // std::chrono::steady_clock. Tests inject their own.
  std::function<double()> monotonicSeconds;
  // Unix seconds stamped on each sample; default std::chrono::system_clock.
  std::function<double()> wallSeconds;
};

// Keeps the previous /proc/stat and /proc/net/dev readings and turns each new one into rates.
// Not thread-safe: one thread (the agent's telemetry loop) calls sample().
class TelemetrySampler {
 public:
  explicit TelemetrySampler(TelemetryOptions options);

  // Reads /proc and the GPU probe once. Never fails: a missing or unparsable file leaves its
  // values absent. cpuPct and net rates are absent on the first call (no previous reading),
  // when no time passed, and when a counter went backwards (an interface that was reset or
  // re-created); the new reading then becomes the baseline for the next call. A reading that
  // fails keeps the older baseline, and the next rate spans the whole gap. Net rates sum the
  // interfaces present in both readings (one that appears or vanishes in between is skipped).
  // Cost: three small file reads plus the probe's sample().
  TelemetrySample sample();

 private:
  TelemetryOptions options_;
  std::optional<CpuTimes> previous_cpu_;
  std::optional<std::map<std::string, NetBytes>> previous_net_;
  double previous_net_time_ = 0;  // monotonic seconds of previous_net_
};

// The wire form. node_id, slots_used and draining are the caller's; absent values stay unset.
v1::NodeTelemetry toProto(const TelemetrySample& sample);
v1::GpuTelemetry toProto(const GpuSample& gpu);

// Parsers, exposed for tests.

// The aggregate "cpu " line of /proc/stat text; absent when missing or short (< 4 fields).
std::optional<CpuTimes> parseProcStatCpu(const std::string& procStat);
// Byte counters per interface from /proc/net/dev text (receive bytes is the first field after
// "name:", transmit bytes the ninth); loopback ("lo") is left out, so a node with only loopback
// gives an empty map. Absent when an interface line is malformed.
std::optional<std::map<std::string, NetBytes>> parseNetDev(const std::string& netDev);

}  // namespace ringside::agent
