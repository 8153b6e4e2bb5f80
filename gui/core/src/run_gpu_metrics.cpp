#include "ringside/gui/run_gpu_metrics.h"

#include "ringside/gui/run_placement.h"

namespace ringside::gui {

const char* gpuFieldSuffix(GpuField field) {
  switch (field) {
    case GpuField::kUtilPct:
      return "util_pct";
    case GpuField::kMemUsedMiB:
      return "mem_used_MiB";
    case GpuField::kPowerW:
      return "power_W";
    case GpuField::kTempC:
      return "temp_C";
    case GpuField::kSmClockMHz:
      return "sm_clock_MHz";
    case GpuField::kPcieRxMBps:
      return "pcie_rx_MBps";
    case GpuField::kPcieTxMBps:
      return "pcie_tx_MBps";
    case GpuField::kNvlinkRxMBps:
      return "nvlink_rx_MBps";
    case GpuField::kNvlinkTxMBps:
      return "nvlink_tx_MBps";
  }
  return "";
}

QString gpuMetricName(uint32_t index, GpuField field) {
  return QStringLiteral("gpu%1/%2").arg(index).arg(QLatin1String(gpuFieldSuffix(field)));
}

std::optional<GpuMetric> parseGpuMetricName(const QString& name) {
  if (!name.startsWith(QLatin1String("gpu"))) return std::nullopt;
  const qsizetype slash = name.indexOf(QLatin1Char('/'));
  const qsizetype digits = slash - 3;
  if (slash < 0 || digits < 1 || digits > 9) return std::nullopt;
  uint32_t index = 0;
  for (qsizetype i = 3; i < slash; ++i) {
    const char16_t digit = name[i].unicode();
    if (digit < u'0' || digit > u'9') return std::nullopt;
    index = index * 10 + static_cast<uint32_t>(digit - u'0');
  }
  const QStringView suffix = QStringView(name).mid(slash + 1);
  for (GpuField field : kGpuFields) {
    if (suffix == QLatin1String(gpuFieldSuffix(field))) {
      return GpuMetric{.index = index, .field = field};
    }
  }
  return std::nullopt;
}

std::optional<double> gpuFieldValue(const v1::GpuTelemetry& gpu, GpuField field) {
  const auto value = [](bool has, double v) {
    return has ? std::optional<double>(v) : std::nullopt;
  };
  switch (field) {
    case GpuField::kUtilPct:
      return value(gpu.has_util_pct(), gpu.util_pct());
    case GpuField::kMemUsedMiB:
      return value(gpu.has_mem_used_mib(), gpu.mem_used_mib());
    case GpuField::kPowerW:
      return value(gpu.has_power_w(), gpu.power_w());
    case GpuField::kTempC:
      return value(gpu.has_temp_c(), gpu.temp_c());
    case GpuField::kSmClockMHz:
      return value(gpu.has_sm_clock_mhz(), gpu.sm_clock_mhz());
    case GpuField::kPcieRxMBps:
      return value(gpu.has_pcie_rx_mbps(), gpu.pcie_rx_mbps());
    case GpuField::kPcieTxMBps:
      return value(gpu.has_pcie_tx_mbps(), gpu.pcie_tx_mbps());
    case GpuField::kNvlinkRxMBps:
      return value(gpu.has_nvlink_rx_mbps(), gpu.nvlink_rx_mbps());
    case GpuField::kNvlinkTxMBps:
      return value(gpu.has_nvlink_tx_mbps(), gpu.nvlink_tx_mbps());
  }
  return std::nullopt;
}

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
  for (const v1::GpuTelemetry& gpu : telemetry.gpus()) {
    if (!used.allGpus && !used.gpus.contains(gpu.index())) continue;
    for (GpuField field : kGpuFields) {
      const std::optional<double> value = gpuFieldValue(gpu, field);
      if (!value) continue;
      v1::MetricSample& sample = samples.emplace_back();
      sample.set_rank(*rank);
      sample.set_wall_time(telemetry.wall_time());
      sample.set_name(gpuMetricName(gpu.index(), field).toStdString());
      sample.set_value(*value);
    }
  }
  return samples;
}

}  // namespace ringside::gui
