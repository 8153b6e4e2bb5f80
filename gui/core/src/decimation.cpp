#include "ringside/gui/decimation.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
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
// a search per column.
constexpr size_t kIndexedPointsPerColumn = 8;

// The first smallest and first largest non-NaN y seen so far. Fed in index order with strict
// comparisons, it keeps the first such point on ties, as decimateMinMax does.
struct Extremes {
  int64_t minIndex = -1;
  int64_t maxIndex = -1;
  double minY = 0;
  double maxY = 0;

  void add(int64_t candidateMin, double candidateMinY, int64_t candidateMax, double candidateMaxY) {
    if (candidateMin < 0) return;
    if (minIndex < 0 || candidateMinY < minY) {
      minIndex = candidateMin;
      minY = candidateMinY;
    }
    if (maxIndex < 0 || candidateMaxY > maxY) {
      maxIndex = candidateMax;
      maxY = candidateMaxY;
    }
  }

  void addPoints(std::span<const SeriesPoint> points, size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      const double y = points[i].y;
      if (std::isnan(y)) continue;
      const auto index = static_cast<int64_t>(i);
      add(index, y, index, y);
    }
  }
};

}  // namespace

MinMaxIndex::MinMaxIndex(std::span<const SeriesPoint> points) : points_(points) {
  const size_t blocks = (points.size() + kBlock - 1) / kBlock;
  blocks_.resize(blocks);
  for (size_t b = 0; b < blocks; ++b) {
    const size_t begin = b * kBlock;
    Extremes extremes;
    extremes.addPoints(points, begin, std::min(points.size(), begin + kBlock));
    blocks_[b] = {points[begin].x, extremes.minY, extremes.maxY, extremes.minIndex,
                  extremes.maxIndex};
  }
}

std::pair<int64_t, int64_t> MinMaxIndex::argMinMax(size_t begin, size_t end) const {
  Extremes extremes;
  const size_t firstBlock = (begin + kBlock - 1) / kBlock;
  const size_t endBlock = end / kBlock;
  if (firstBlock >= endBlock) {
    extremes.addPoints(points_, begin, end);
  } else {
    // In index order: the head of a partial block, whole blocks by their summaries, the tail.
    extremes.addPoints(points_, begin, firstBlock * kBlock);
    for (size_t b = firstBlock; b < endBlock; ++b) {
      const Block& block = blocks_[b];
      extremes.add(block.minIndex, block.minY, block.maxIndex, block.maxY);
    }
    extremes.addPoints(points_, endBlock * kBlock, end);
  }
  return {extremes.minIndex, extremes.maxIndex};
}

template <typename ColumnOf>
size_t MinMaxIndex::columnEnd(size_t first, size_t end, int column,
                              const ColumnOf& columnOf) const {
  // The first block starting beyond the column, by a forward scan of the block summaries: the
  // next column starts where this one ends, so the scans of one decimation visit each block of
  // the view once.
  const size_t lastBlock = (end - 1) / kBlock;
  size_t block = first / kBlock + 1;  // blocks before `block` start inside the column (or before)
  while (block <= lastBlock && columnOf(blocks_[block].firstX) <= column) ++block;
  // The column ends inside block - 1: scan its points forward. A sequential scan of the block
  // (1 KiB) is served by the prefetcher and leaves the block cached for argMinMax, where a binary
  // search would miss the cache at every step.
  size_t beyond = std::max(first, (block - 1) * kBlock) + 1;
  const size_t blockEnd = std::min(end, block * kBlock);
  while (beyond < blockEnd && columnOf(points_[beyond].x) <= column) ++beyond;
  return beyond;
}

std::vector<SeriesPoint> MinMaxIndex::decimate(double xMin, double xMax, int pixelColumns,
                                               AxisScale scale) const {
  std::vector<SeriesPoint> out;
  const VisibleRange range = visibleRange(points_, xMin, xMax, pixelColumns, scale);
  if (!range.drawable) return out;
  const size_t begin = range.begin;
  const size_t end = range.end;
  if (blocks_.empty() ||
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
