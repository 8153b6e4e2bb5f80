// GPU telemetry stored with a run (docs/metrics.md, "GPU telemetry of a run"): while a run is
// running, each telemetry message of a node of the run becomes metric samples gpu<i>/... of the
// run's GPUs on that node, so History and Compare show a finished run's GPU history.
// Pure functions, thread-safe.
#pragma once

#include <QString>

#include <optional>
#include <vector>

#include "ringside/proto/ringside.pb.h"

namespace ringside::gui {

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
