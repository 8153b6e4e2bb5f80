#include "ringside/gui/run_gpu_series.h"

#include <algorithm>
#include <cmath>

namespace ringside::gui {

namespace {

bool byX(const SeriesPoint& a, const SeriesPoint& b) { return a.x < b.x; }

}  // namespace

bool RunGpuSeries::addTelemetry(int firstRank, const NodeGpus& used,
                                const v1::NodeTelemetry& telemetry) {
  if (!used.ofRun || !std::isfinite(telemetry.wall_time())) return false;
  bool added = false;
  for (const v1::GpuTelemetry& reading : telemetry.gpus()) {
    if (!used.allGpus && !used.gpus.contains(reading.index())) continue;
    const RunGpu gpu{.firstRank = firstRank, .index = reading.index()};
    if (reading.has_mem_total_mib()) memTotalMiB_[gpu] = reading.mem_total_mib();
    for (GpuField field : kGpuFields) {
      const std::optional<double> value = gpuFieldValue(reading, field);
      if (!value) continue;
      std::vector<SeriesPoint>& series = series_[{gpu, field}];
      const size_t before = series.size();
      insert(series, SeriesPoint{.x = telemetry.wall_time(), .y = *value});
      if (series.size() != before) {
        trim(series);
        changed_.insert({gpu, field});
        added = true;
      }
    }
  }
  return added;
}

void RunGpuSeries::addStored(RunGpu gpu, GpuField field, std::vector<SeriesPoint> points) {
  std::erase_if(points, [](const SeriesPoint& point) { return std::isnan(point.x); });
  if (points.empty()) return;
  std::stable_sort(points.begin(), points.end(), byX);
  std::vector<SeriesPoint>& series = series_[{gpu, field}];
  std::vector<SeriesPoint> merged;
  merged.reserve(series.size() + points.size());
  // Ties keep the point already held (a live reading and its stored copy are the same value).
  std::merge(series.begin(), series.end(), points.begin(), points.end(), std::back_inserter(merged),
             byX);
  merged.erase(std::unique(merged.begin(), merged.end(),
                           [](const SeriesPoint& a, const SeriesPoint& b) { return a.x == b.x; }),
               merged.end());
  series = std::move(merged);
  trim(series);
  changed_.insert({gpu, field});
}

void RunGpuSeries::merge(const RunGpuSeries& other) {
  for (const auto& entry : other.series_) {
    addStored(entry.first.first, entry.first.second, entry.second);
  }
}

void RunGpuSeries::replacePoints(const RunGpuSeries& other) {
  for (const auto& entry : series_) changed_.insert(entry.first);
  for (const auto& entry : other.series_) changed_.insert(entry.first);
  series_ = other.series_;
}

void RunGpuSeries::insert(std::vector<SeriesPoint>& series, SeriesPoint point) {
  if (series.empty() || series.back().x < point.x) {
    series.push_back(point);
    return;
  }
  auto at = std::lower_bound(series.begin(), series.end(), point, byX);
  if (at != series.end() && at->x == point.x) return;
  series.insert(at, point);
}

void RunGpuSeries::trim(std::vector<SeriesPoint>& series) {
  if (series.size() <= kMaxPoints) return;
  series.erase(series.begin(),
               series.begin() + static_cast<std::ptrdiff_t>(series.size() - kMaxPoints));
}

std::vector<RunGpu> RunGpuSeries::gpus() const {
  std::vector<RunGpu> result;
  for (const auto& entry : series_) {
    if (entry.second.empty()) continue;
    if (result.empty() || result.back() != entry.first.first) result.push_back(entry.first.first);
  }
  return result;
}

const std::vector<SeriesPoint>& RunGpuSeries::points(RunGpu gpu, GpuField field) const {
  static const std::vector<SeriesPoint> kNone;
  auto it = series_.find({gpu, field});
  return it == series_.end() ? kNone : it->second;
}

std::optional<double> RunGpuSeries::memTotalMiB(RunGpu gpu) const {
  auto it = memTotalMiB_.find(gpu);
  return it == memTotalMiB_.end() ? std::nullopt : std::optional<double>(it->second);
}

std::optional<double> RunGpuSeries::firstX() const {
  std::optional<double> first;
  for (const auto& entry : series_) {
    if (!entry.second.empty() && (!first || entry.second.front().x < *first)) {
      first = entry.second.front().x;
    }
  }
  return first;
}

std::set<std::pair<RunGpu, GpuField>> RunGpuSeries::takeChanged() {
  return std::exchange(changed_, {});
}

}  // namespace ringside::gui
