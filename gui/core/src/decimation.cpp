#include "ringside/gui/decimation.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>

namespace ringside::gui {

namespace {

// Maps x to its pixel column in [0, columns - 1]; x == xMax falls into the last column.
class ColumnMap {
 public:
  ColumnMap(double xMin, double xMax, int columns, AxisScale scale)
      : log_(scale == AxisScale::kLog),
        origin_(log_ ? std::log10(xMin) : xMin),
        scale_(columns / ((log_ ? std::log10(xMax) : xMax) - origin_)),
        lastColumn_(columns - 1) {}

  int column(double x) const {
    const double offset = ((log_ ? std::log10(x) : x) - origin_) * scale_;
    const int column = static_cast<int>(offset);
    return std::clamp(column, 0, lastColumn_);
  }

 private:
  bool log_;
  double origin_;
  double scale_;  // columns per x unit (or per decade in log scale)
  int lastColumn_;
};

bool drawable(const SeriesPoint& point, AxisScale scale) {
  return !std::isnan(point.y) && (scale == AxisScale::kLinear || point.x > 0.0);
}

// Appends the nearest drawable point before index `begin` (NaN runs and, in log scale, x <= 0
// skipped), if any: the line enters the view at the right height.
void appendNeighbourBefore(std::span<const SeriesPoint> points, size_t begin, AxisScale scale,
                           std::vector<SeriesPoint>& out) {
  for (size_t i = begin; i > 0; --i) {
    if (drawable(points[i - 1], scale)) {
      out.push_back(points[i - 1]);
      return;
    }
  }
}

// Appends the nearest drawable point at or after index `end`, if any: the line leaves the view at
// the right height.
void appendNeighbourAfter(std::span<const SeriesPoint> points, size_t end, AxisScale scale,
                          std::vector<SeriesPoint>& out) {
  for (size_t i = end; i < points.size(); ++i) {
    if (drawable(points[i], scale)) {
      out.push_back(points[i]);
      return;
    }
  }
}

}  // namespace

VisibleRange visibleRange(std::span<const SeriesPoint> points, double xMin, double xMax,
                          int pixelColumns, AxisScale scale) {
  if (pixelColumns < 1 || !std::isfinite(xMin) || !std::isfinite(xMax) || !(xMax > xMin) ||
      (scale == AxisScale::kLog && !(xMin > 0.0))) {
    return {};
  }
  const auto byX = [](const SeriesPoint& point, double x) { return point.x < x; };
  const auto xBelow = [](double x, const SeriesPoint& point) { return x < point.x; };
  VisibleRange range;
  range.begin = static_cast<size_t>(std::lower_bound(points.begin(), points.end(), xMin, byX) -
                                    points.begin());
  range.end = static_cast<size_t>(std::upper_bound(points.begin(), points.end(), xMax, xBelow) -
                                  points.begin());
  range.drawable = true;
  return range;
}

std::vector<SeriesPoint> decimateMinMax(std::span<const SeriesPoint> points, double xMin,
                                        double xMax, int pixelColumns, AxisScale scale) {
  std::vector<SeriesPoint> out;
  const VisibleRange range = visibleRange(points, xMin, xMax, pixelColumns, scale);
  if (!range.drawable) return out;
  const size_t begin = range.begin;
  const size_t end = range.end;

  out.reserve(2 * static_cast<size_t>(pixelColumns) + 2);
  appendNeighbourBefore(points, begin, scale, out);

  const ColumnMap columns(xMin, xMax, pixelColumns, scale);
  int current = -1;
  size_t minIndex = 0;
  size_t maxIndex = 0;
  const auto flush = [&] {
    if (current < 0) return;
    // Emit in x order so the polyline visits both extremes of the column.
    const size_t first = std::min(minIndex, maxIndex);
    const size_t second = std::max(minIndex, maxIndex);
    out.push_back(points[first]);
    if (second != first) out.push_back(points[second]);
  };
  for (size_t i = begin; i < end; ++i) {
    const SeriesPoint& point = points[i];
    if (std::isnan(point.y)) continue;
    const int column = columns.column(point.x);
    if (column != current) {
      flush();
      current = column;
      minIndex = i;
      maxIndex = i;
    } else if (point.y < points[minIndex].y) {
      minIndex = i;
    } else if (point.y > points[maxIndex].y) {
      maxIndex = i;
    }
  }
  flush();

  appendNeighbourAfter(points, end, scale, out);
  return out;
}

// ---- MinMaxIndex

namespace {

constexpr size_t kBlock = 64;  // points per block of the min/max index
// Below this many visible points per pixel column a plain pass (decimateMinMax) is cheaper than
// one binary search per column.
constexpr size_t kIndexedPointsPerColumn = 8;

}  // namespace

namespace {

// The better of two candidate indices (-1 = none): smaller y for the minimum, larger for the
// maximum, the smaller index on ties (the first such point, as decimateMinMax keeps).
template <bool kMin>
int64_t better(std::span<const SeriesPoint> points, int64_t a, int64_t b) {
  if (a < 0) return b;
  if (b < 0) return a;
  const double ya = points[static_cast<size_t>(a)].y;
  const double yb = points[static_cast<size_t>(b)].y;
  if (kMin ? ya < yb : ya > yb) return a;
  if (kMin ? yb < ya : yb > ya) return b;
  return std::min(a, b);
}

template <bool kMin>
int64_t scan(std::span<const SeriesPoint> points, size_t begin, size_t end) {
  int64_t best = -1;
  for (size_t i = begin; i < end; ++i) {
    const double y = points[i].y;
    if (std::isnan(y)) continue;
    if (best < 0 || (kMin ? y < points[static_cast<size_t>(best)].y
                          : y > points[static_cast<size_t>(best)].y)) {
      best = static_cast<int64_t>(i);
    }
  }
  return best;
}

template <bool kMin>
std::vector<std::vector<int32_t>> buildTable(std::span<const SeriesPoint> points) {
  const size_t blocks = (points.size() + kBlock - 1) / kBlock;
  std::vector<std::vector<int32_t>> table;
  if (blocks == 0) return table;
  table.emplace_back(blocks);
  for (size_t b = 0; b < blocks; ++b) {
    table[0][b] = static_cast<int32_t>(
        scan<kMin>(points, b * kBlock, std::min(points.size(), (b + 1) * kBlock)));
  }
  for (size_t level = 1; (size_t{1} << level) <= blocks; ++level) {
    const size_t half = size_t{1} << (level - 1);
    const size_t count = blocks - (size_t{1} << level) + 1;
    std::vector<int32_t> row(count);
    const auto& previous = table[level - 1];
    for (size_t b = 0; b < count; ++b) {
      row[b] = static_cast<int32_t>(better<kMin>(points, previous[b], previous[b + half]));
    }
    table.push_back(std::move(row));
  }
  return table;
}

// First indices of the smallest and largest non-NaN y in [begin, end), one pass.
std::pair<int64_t, int64_t> scanMinMax(std::span<const SeriesPoint> points, size_t begin,
                                       size_t end) {
  int64_t minIndex = -1;
  int64_t maxIndex = -1;
  double minY = 0;
  double maxY = 0;
  for (size_t i = begin; i < end; ++i) {
    const double y = points[i].y;
    if (std::isnan(y)) continue;
    if (minIndex < 0) {
      minIndex = maxIndex = static_cast<int64_t>(i);
      minY = maxY = y;
    } else if (y < minY) {
      minIndex = static_cast<int64_t>(i);
      minY = y;
    } else if (y > maxY) {
      maxIndex = static_cast<int64_t>(i);
      maxY = y;
    }
  }
  return {minIndex, maxIndex};
}

}  // namespace

MinMaxIndex::MinMaxIndex(std::span<const SeriesPoint> points) : points_(points) {
  if (points.size() >= static_cast<size_t>(std::numeric_limits<int32_t>::max())) return;
  minTable_ = buildTable<true>(points);
  maxTable_ = buildTable<false>(points);
  blockX_.resize(minTable_.empty() ? 0 : minTable_[0].size());
  for (size_t b = 0; b < blockX_.size(); ++b) blockX_[b] = points[b * kBlock].x;
}

std::pair<int64_t, int64_t> MinMaxIndex::argMinMax(size_t begin, size_t end) const {
  const size_t firstBlock = (begin + kBlock - 1) / kBlock;
  const size_t endBlock = end / kBlock;
  if (firstBlock >= endBlock) return scanMinMax(points_, begin, end);
  auto [minIndex, maxIndex] = scanMinMax(points_, begin, firstBlock * kBlock);
  const size_t blocks = endBlock - firstBlock;
  const size_t level = static_cast<size_t>(std::bit_width(blocks) - 1);
  const size_t second = endBlock - (size_t{1} << level);
  minIndex = better<true>(points_, minIndex, minTable_[level][firstBlock]);
  minIndex = better<true>(points_, minIndex, minTable_[level][second]);
  maxIndex = better<false>(points_, maxIndex, maxTable_[level][firstBlock]);
  maxIndex = better<false>(points_, maxIndex, maxTable_[level][second]);
  const auto [tailMin, tailMax] = scanMinMax(points_, endBlock * kBlock, end);
  return {better<true>(points_, minIndex, tailMin), better<false>(points_, maxIndex, tailMax)};
}

template <typename ColumnOf>
size_t MinMaxIndex::columnEnd(size_t first, size_t end, int column,
                              const ColumnOf& columnOf) const {
  // The first block starting beyond the column: gallop, then binary search over blockX_.
  const size_t lastBlock = (end - 1) / kBlock;
  size_t low = first / kBlock + 1;  // blocks before `low` start inside the column (or before)
  size_t high = low;
  size_t step = 1;
  while (high <= lastBlock && columnOf(blockX_[high]) <= column) {
    low = high + 1;
    high += step;
    step *= 2;
  }
  high = std::min(high, lastBlock + 1);
  while (low < high) {
    const size_t middle = low + (high - low) / 2;
    if (columnOf(blockX_[middle]) <= column) {
      low = middle + 1;
    } else {
      high = middle;
    }
  }
  // The column ends inside block low - 1: binary search its points.
  size_t inside = std::max(first, (low - 1) * kBlock);  // known inside the column
  size_t beyond = std::min(end, low * kBlock);          // known beyond it, or the end
  while (beyond - inside > 1) {
    const size_t middle = inside + (beyond - inside) / 2;
    if (columnOf(points_[middle].x) <= column) {
      inside = middle;
    } else {
      beyond = middle;
    }
  }
  return beyond;
}

std::vector<SeriesPoint> MinMaxIndex::decimate(double xMin, double xMax, int pixelColumns,
                                               AxisScale scale) const {
  std::vector<SeriesPoint> out;
  const VisibleRange range = visibleRange(points_, xMin, xMax, pixelColumns, scale);
  if (!range.drawable) return out;
  const size_t begin = range.begin;
  const size_t end = range.end;
  if (minTable_.empty() ||
      end - begin < kIndexedPointsPerColumn * static_cast<size_t>(pixelColumns)) {
    return decimateMinMax(points_, xMin, xMax, pixelColumns, scale);
  }

  out.reserve(2 * static_cast<size_t>(pixelColumns) + 2);
  appendNeighbourBefore(points_, begin, scale, out);
  const ColumnMap columns(xMin, xMax, pixelColumns, scale);
  size_t first = begin;
  while (first < end) {
    const int column = columns.column(points_[first].x);
    const size_t high = columnEnd(first, end, column, [&](double x) { return columns.column(x); });
    const auto [minIndex, maxIndex] = argMinMax(first, high);
    if (minIndex >= 0) {
      const size_t a = static_cast<size_t>(std::min(minIndex, maxIndex));
      const size_t b = static_cast<size_t>(std::max(minIndex, maxIndex));
      out.push_back(points_[a]);
      if (b != a) out.push_back(points_[b]);
    }
    first = high;
  }
  appendNeighbourAfter(points_, end, scale, out);
  return out;
}

}  // namespace ringside::gui
