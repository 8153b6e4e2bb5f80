#include "ringside/agent/telemetry.h"

#include <chrono>
#include <fstream>
#include <iterator>
#include <sstream>
#include <utility>

#include "ringside/agent/inventory.h"

namespace ringside::agent {
namespace {

constexpr double kBytesPerMB = 1e6;  // MB as in node/net_*_MBps (docs/metrics.md): 1e6 bytes

// The whole file, or absent when it cannot be opened (/proc files report size 0, so this reads
// to EOF).
std::optional<std::string> readFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

double steadySeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double unixSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Sums `field` deltas over the interfaces present in both readings, as MB/s; absent when any
// of them went backwards.
std::optional<double> netRate(const std::map<std::string, NetBytes>& previous,
                              const std::map<std::string, NetBytes>& current, double elapsed,
                              uint64_t NetBytes::*field) {
  uint64_t bytes = 0;
  for (const auto& [name, now] : current) {
    auto before = previous.find(name);
    if (before == previous.end()) continue;
    if (now.*field < before->second.*field) return std::nullopt;
    bytes += now.*field - before->second.*field;
  }
  return static_cast<double>(bytes) / elapsed / kBytesPerMB;
}

}  // namespace

std::optional<CpuTimes> parseProcStatCpu(const std::string& procStat) {
  std::istringstream lines(procStat);
  for (std::string line; std::getline(lines, line);) {
    if (line.compare(0, 4, "cpu ") != 0) continue;
    std::istringstream fields(line.substr(4));
    // user nice system idle iowait irq softirq steal guest guest_nice (proc(5)); kernels older
    // than 2.6.11 have fewer, which count as 0.
    uint64_t value[8] = {};
    int count = 0;
    while (count < 8 && fields >> value[count]) ++count;
    if (count < 4) return std::nullopt;
    CpuTimes times;
    times.busy = value[0] + value[1] + value[2] + value[5] + value[6] + value[7];
    times.idle = value[3] + value[4];
    return times;
  }
  return std::nullopt;
}

std::optional<std::map<std::string, NetBytes>> parseNetDev(const std::string& netDev) {
  std::map<std::string, NetBytes> interfaces;
  std::istringstream lines(netDev);
  for (std::string line; std::getline(lines, line);) {
    size_t colon = line.find(':');
    // The two header lines have '|' separators and no colon before them.
    if (colon == std::string::npos || line.find('|') != std::string::npos) continue;
    std::string name = line.substr(0, colon);
    name.erase(0, name.find_first_not_of(" \t"));
    if (name.empty()) return std::nullopt;
    std::istringstream fields(line.substr(colon + 1));
    uint64_t value[9] = {};
    for (uint64_t& v : value) {
      if (!(fields >> v)) return std::nullopt;
    }
    if (name == "lo") continue;
    interfaces[name] = NetBytes{value[0], value[8]};
  }
  return interfaces;
}

TelemetrySampler::TelemetrySampler(TelemetryOptions options) : options_(std::move(options)) {
  if (!options_.monotonicSeconds) options_.monotonicSeconds = steadySeconds;
  if (!options_.wallSeconds) options_.wallSeconds = unixSeconds;
}

TelemetrySample TelemetrySampler::sample() {
  TelemetrySample result;
  result.wallTime = options_.wallSeconds();
  const double now = options_.monotonicSeconds();

  std::optional<CpuTimes> cpu;
  if (auto text = readFile(options_.root / "proc/stat")) cpu = parseProcStatCpu(*text);
  if (cpu) {
    if (previous_cpu_ && cpu->busy >= previous_cpu_->busy && cpu->idle >= previous_cpu_->idle) {
      uint64_t busy = cpu->busy - previous_cpu_->busy;
      uint64_t total = busy + (cpu->idle - previous_cpu_->idle);
      if (total > 0) result.cpuPct = 100.0 * static_cast<double>(busy) / static_cast<double>(total);
    }
    previous_cpu_ = cpu;
  }

  if (auto text = readFile(options_.root / "proc/meminfo")) {
    auto total = parseMeminfoKiB(*text, "MemTotal");
    auto available = parseMeminfoKiB(*text, "MemAvailable");  // Linux >= 3.14
    if (total && available && *available <= *total) {
      result.memUsedMiB = static_cast<double>(*total - *available) / 1024.0;
    }
  }

  std::optional<std::map<std::string, NetBytes>> net;
  if (auto text = readFile(options_.root / "proc/net/dev")) net = parseNetDev(*text);
  if (net) {
    double elapsed = now - previous_net_time_;
    if (previous_net_ && elapsed > 0) {
      result.netRxMBps = netRate(*previous_net_, *net, elapsed, &NetBytes::rx);
      result.netTxMBps = netRate(*previous_net_, *net, elapsed, &NetBytes::tx);
    }
    previous_net_ = std::move(net);
    previous_net_time_ = now;
  }

  if (options_.gpuProbe != nullptr) result.gpus = options_.gpuProbe->sample();
  return result;
}

v1::GpuTelemetry toProto(const GpuSample& gpu) {
  v1::GpuTelemetry out;
  out.set_index(gpu.index);
  if (gpu.utilPct) out.set_util_pct(*gpu.utilPct);
  if (gpu.memUsedMiB) out.set_mem_used_mib(*gpu.memUsedMiB);
  if (gpu.powerW) out.set_power_w(*gpu.powerW);
  if (gpu.tempC) out.set_temp_c(*gpu.tempC);
  if (gpu.memTotalMiB) out.set_mem_total_mib(*gpu.memTotalMiB);
  if (gpu.smClockMHz) out.set_sm_clock_mhz(*gpu.smClockMHz);
  if (gpu.pcieRxMBps) out.set_pcie_rx_mbps(*gpu.pcieRxMBps);
  if (gpu.pcieTxMBps) out.set_pcie_tx_mbps(*gpu.pcieTxMBps);
  if (gpu.nvlinkRxMBps) out.set_nvlink_rx_mbps(*gpu.nvlinkRxMBps);
  if (gpu.nvlinkTxMBps) out.set_nvlink_tx_mbps(*gpu.nvlinkTxMBps);
  return out;
}

v1::NodeTelemetry toProto(const TelemetrySample& sample) {
  v1::NodeTelemetry out;
  out.set_wall_time(sample.wallTime);
  if (sample.cpuPct) out.set_cpu_pct(*sample.cpuPct);
  if (sample.memUsedMiB) out.set_mem_used_mib(*sample.memUsedMiB);
  if (sample.netRxMBps) out.set_net_rx_mbps(*sample.netRxMBps);
  if (sample.netTxMBps) out.set_net_tx_mbps(*sample.netTxMBps);
  for (const GpuSample& gpu : sample.gpus) *out.add_gpus() = toProto(gpu);
  return out;
}

}  // namespace ringside::agent
