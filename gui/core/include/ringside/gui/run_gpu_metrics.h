// GPU telemetry stored with a run (docs/metrics.md, "GPU telemetry of a run"): while a run is
// running, each telemetry message of a node of the run becomes metric samples gpu<i>/... of the
// run's GPUs on that node, so History and Compare show a finished run's GPU history.
// Pure functions, thread-safe.
#pragma once

#include <QString>

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "ringside/proto/ringside.pb.h"

namespace ringside::gui {

// The GPU values stored with a run, in the order the dashboard charts them. Each is stored as
// gpu<i>/<gpuFieldSuffix>, in the unit the suffix names (docs/metrics.md).
enum class GpuField {
  kUtilPct,       // util_pct: % of the sample period a kernel ran, 0-100
  kMemUsedMiB,    // mem_used_MiB: MiB
  kPowerW,        // power_W: W
  kTempC,         // temp_C: degrees Celsius
  kSmClockMHz,    // sm_clock_MHz: MHz
  kPcieRxMBps,    // pcie_rx_MBps: MB/s (1e6 bytes/s)
  kPcieTxMBps,    // pcie_tx_MBps
  kNvlinkRxMBps,  // nvlink_rx_MBps: MB/s, summed over links
  kNvlinkTxMBps,  // nvlink_tx_MBps
};
inline constexpr int kGpuFieldCount = 9;
// Every field, in enum order.
inline constexpr std::array<GpuField, kGpuFieldCount> kGpuFields = {
    GpuField::kUtilPct,    GpuField::kMemUsedMiB,   GpuField::kPowerW,
    GpuField::kTempC,      GpuField::kSmClockMHz,   GpuField::kPcieRxMBps,
    GpuField::kPcieTxMBps, GpuField::kNvlinkRxMBps, GpuField::kNvlinkTxMBps};

// The metric name's part after "gpu<i>/", e.g. "power_W".
const char* gpuFieldSuffix(GpuField field);
// "gpu<index>/<suffix>", e.g. gpuMetricName(1, GpuField::kTempC) = "gpu1/temp_C".
QString gpuMetricName(uint32_t index, GpuField field);

// A stored GPU metric's name taken apart: NVML index and field.
struct GpuMetric {
  uint32_t index = 0;
  GpuField field = GpuField::kUtilPct;
};
// nullopt for any name that is not gpu<i>/<suffix> with a decimal i of at most 9 digits.
std::optional<GpuMetric> parseGpuMetricName(const QString& name);

// The field's value in one telemetry reading; nullopt where the node could not read it.
std::optional<double> gpuFieldValue(const v1::GpuTelemetry& gpu, GpuField field);

// The rank that names the node `hostName` in the run's GPU metrics: the lowest rank placed on
// it (placement lists hosts in rank order, so the first entry's node is 0, the next starts
// after the first's ranks). Matching as runGpusOnNode (run_placement.h): host names
// case-insensitively, the owner also the first entry; an empty placement is the owner's node,
// rank 0. nullopt when the node runs no rank of the run.
std::optional<int> nodeFirstRank(const std::vector<v1::HostSlots>& placement,
                                 const QString& hostName, bool owner);

// The samples of `telemetry` for the run's GPUs on this node (all of the node's GPUs when the
// placement is empty), one per value the node could read, named gpu<i>/util_pct,
// gpu<i>/mem_used_MiB, gpu<i>/power_W, gpu<i>/temp_C, gpu<i>/sm_clock_MHz,
// gpu<i>/pcie_rx_MBps, gpu<i>/pcie_tx_MBps, gpu<i>/nvlink_rx_MBps, gpu<i>/nvlink_tx_MBps
// (i = NVML index on that node), with rank = nodeFirstRank and wall_time = the telemetry's.
// seq, step and epoch are left 0 for the store to fill. Empty when the node is not of the run.
std::vector<v1::MetricSample> runGpuSamples(const std::vector<v1::HostSlots>& placement,
                                            const QString& hostName, bool owner,
                                            const v1::NodeTelemetry& telemetry);

}  // namespace ringside::gui
