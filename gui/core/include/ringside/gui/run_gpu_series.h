// RunGpuSeries: the GPU telemetry of one run as chart series (docs/dashboard.md, "GPUs of the
// run"): per GPU of the run, identified by the node's first rank and the NVML index on that node
// (as stored, run_gpu_metrics.h), and per value (GpuField), points with x = the agent's sampling
// time (Unix seconds) and y = the value in the field's unit. Live telemetry and the samples
// stored with the run merge into the same series without duplicates (a stored sample has the
// telemetry message's exact wall time). A value a node could not read adds no point: a field
// no GPU reports has no series, never zeros. Not thread-safe: one thread (the GUI's) owns it.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "ringside/gui/decimation.h"
#include "ringside/gui/run_gpu_metrics.h"
#include "ringside/gui/run_placement.h"
#include "ringside/proto/ringside.pb.h"

namespace ringside::gui {

// One GPU of a run: the lowest rank placed on its node (nodeFirstRank) and its NVML index there.
struct RunGpu {
  int firstRank = 0;
  uint32_t index = 0;
  auto operator<=>(const RunGpu&) const = default;
};

class RunGpuSeries {
 public:
  // At most this many points per GPU and field; the oldest are dropped first (about 27 h at the
  // agent's default telemetry interval of 1 s).
  static constexpr size_t kMaxPoints = 100'000;

  // Adds the readings of one telemetry message from the node whose first rank is `firstRank`:
  // the GPUs in `used.gpus` (every GPU when `used.allGpus`; nothing when !used.ofRun), each
  // value it holds as one point at the message's wall time, and each GPU's memory total.
  // Returns true when a point was added.
  bool addTelemetry(int firstRank, const NodeGpus& used, const v1::NodeTelemetry& telemetry);

  // Merges stored points of one GPU's field (x = wall time, any order; NaN x skipped). A point
  // at an x the series already has is kept once.
  void addStored(RunGpu gpu, GpuField field, std::vector<SeriesPoint> points);

  // Merges every point of `other` as addStored() does (its memory totals are not taken).
  void merge(const RunGpuSeries& other);
  // Replaces every point with those of `other` (this one's memory totals stay); every series of
  // either counts as changed.
  void replacePoints(const RunGpuSeries& other);

  // The GPUs that have at least one point, in order (by first rank, then index).
  std::vector<RunGpu> gpus() const;
  // The points of one GPU's field, sorted by x; empty when there are none.
  const std::vector<SeriesPoint>& points(RunGpu gpu, GpuField field) const;
  // The GPU's memory size in MiB from the latest live reading that had it (it is not stored
  // with the run, so a finished run's GPUs have none).
  std::optional<double> memTotalMiB(RunGpu gpu) const;
  // The smallest x of any point; nullopt when there is none.
  std::optional<double> firstX() const;
  bool empty() const { return series_.empty(); }

  // The (GPU, field) series that changed since the last call, and forgets them.
  std::set<std::pair<RunGpu, GpuField>> takeChanged();

 private:
  void insert(std::vector<SeriesPoint>& series, SeriesPoint point);
  void trim(std::vector<SeriesPoint>& series);

  std::map<std::pair<RunGpu, GpuField>, std::vector<SeriesPoint>> series_;
  std::map<RunGpu, double> memTotalMiB_;
  std::set<std::pair<RunGpu, GpuField>> changed_;
};

}  // namespace ringside::gui
