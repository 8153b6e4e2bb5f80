#include "ringside/gui/run_gpu_metrics.h"

#include <string>

#include "ringside/gui/run_placement.h"

namespace ringside::gui {

std::optional<int> nodeFirstRank(const std::vector<v1::HostSlots>& placement,
                                 const QString& hostName, bool owner) {
  if (placement.empty()) return owner ? std::optional<int>(0) : std::nullopt;
  int firstRank = 0;
  for (const v1::HostSlots& host : placement) {
    if (!hostName.isEmpty() &&
        QString::fromStdString(host.host()).compare(hostName, Qt::CaseInsensitive) == 0) {
      return firstRank;
    }
    firstRank += static_cast<int>(host.ranks());
  }
  if (owner) return 0;
  return std::nullopt;
}

std::vector<v1::MetricSample> runGpuSamples(const std::vector<v1::HostSlots>& placement,
                                            const QString& hostName, bool owner,
                                            const v1::NodeTelemetry& telemetry) {
  std::vector<v1::MetricSample> samples;
  const std::optional<int> rank = nodeFirstRank(placement, hostName, owner);
  const NodeGpus used = runGpusOnNode(placement, hostName, owner);
  if (!rank || !used.ofRun) return samples;
  struct Field {
    const char* suffix;
    bool (v1::GpuTelemetry::*has)() const;
    double (v1::GpuTelemetry::*get)() const;
  };
  static const Field kFields[] = {
      {"util_pct", &v1::GpuTelemetry::has_util_pct, &v1::GpuTelemetry::util_pct},
      {"mem_used_MiB", &v1::GpuTelemetry::has_mem_used_mib, &v1::GpuTelemetry::mem_used_mib},
      {"power_W", &v1::GpuTelemetry::has_power_w, &v1::GpuTelemetry::power_w},
      {"temp_C", &v1::GpuTelemetry::has_temp_c, &v1::GpuTelemetry::temp_c},
      {"sm_clock_MHz", &v1::GpuTelemetry::has_sm_clock_mhz, &v1::GpuTelemetry::sm_clock_mhz},
      {"pcie_rx_MBps", &v1::GpuTelemetry::has_pcie_rx_mbps, &v1::GpuTelemetry::pcie_rx_mbps},
      {"pcie_tx_MBps", &v1::GpuTelemetry::has_pcie_tx_mbps, &v1::GpuTelemetry::pcie_tx_mbps},
      {"nvlink_rx_MBps", &v1::GpuTelemetry::has_nvlink_rx_mbps, &v1::GpuTelemetry::nvlink_rx_mbps},
      {"nvlink_tx_MBps", &v1::GpuTelemetry::has_nvlink_tx_mbps, &v1::GpuTelemetry::nvlink_tx_mbps},
  };
  for (const v1::GpuTelemetry& gpu : telemetry.gpus()) {
    if (!used.allGpus && !used.gpus.contains(gpu.index())) continue;
    const std::string prefix = "gpu" + std::to_string(gpu.index()) + "/";
    for (const Field& field : kFields) {
      if (!(gpu.*field.has)()) continue;
      v1::MetricSample& sample = samples.emplace_back();
      sample.set_rank(*rank);
      sample.set_wall_time(telemetry.wall_time());
      sample.set_name(prefix + field.suffix);
      sample.set_value((gpu.*field.get)());
    }
  }
  return samples;
}

}  // namespace ringside::gui
