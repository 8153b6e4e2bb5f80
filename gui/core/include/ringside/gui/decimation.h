// Min/max decimation of a long series for charting (docs/design.md decision 8): a series of any
// length is reduced to at most two points per pixel column before it is drawn, so redraw cost
// depends on the chart's width, not on the run's length. The full data stays in SQLite.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace ringside::gui {

// One chart point: x in the axis unit (step, epoch or Unix seconds), y the metric value.
struct SeriesPoint {
  double x = 0.0;
  double y = 0.0;
};

// How pixel columns are spaced along x.
enum class AxisScale {
  kLinear,  // equal widths in x
  kLog,     // equal widths in log10(x); only points with x > 0 are drawn
};

// The indices [begin, end) of the points of `points` (sorted by x) with xMin <= x <= xMax.
// `drawable` is false, and the range empty, when the view cannot be drawn: no pixel columns, a
// non-finite bound, xMax <= xMin, or log scale with xMin <= 0. Shared by decimateMinMax and the
// chart's indexed decimation so both agree on the view.
struct VisibleRange {
  size_t begin = 0;
  size_t end = 0;
  bool drawable = false;
};
VisibleRange visibleRange(std::span<const SeriesPoint> points, double xMin, double xMax,
                          int pixelColumns, AxisScale scale);

// Reduces `points` (sorted by x ascending, no NaN x) to what a line chart of `pixelColumns`
// columns spanning [xMin, xMax] needs to look exactly like the full series:
//  - for every column, the point with the smallest y and the point with the largest y (the first
//    such point on ties), emitted in x order, so the polyline's vertical extent per column is
//    exact; a column with a single point yields it once;
//  - the nearest drawable point left of xMin and the nearest right of xMax, so the line enters
//    and leaves the view at the right height.
// Points whose y is NaN are skipped (a gap in the data, not a value). The result is sorted by x
// and holds at most 2 * pixelColumns + 2 points, all taken unchanged from `points`.
// Cost: two binary searches plus one pass over the visible points, O(log n + visible).
// Returns an empty vector when nothing is drawable or the arguments are unusable
// (pixelColumns < 1, xMax <= xMin, a non-finite bound, or xMin <= 0 with AxisScale::kLog).
// Thread-safe (a pure function).
std::vector<SeriesPoint> decimateMinMax(std::span<const SeriesPoint> points, double xMin,
                                        double xMax, int pixelColumns,
                                        AxisScale scale = AxisScale::kLinear);

// Exact min/max decimation of one series with a precomputed index: per block of 64 points, the
// x of its first point and its first smallest and largest y (value and index). decimate() returns
// the same points as decimateMinMax(points, ...) but reads the points themselves only inside the
// blocks where a pixel column starts or ends and walks whole blocks by their summaries, so it
// costs O(visible / 64 + columns * 64) instead of O(visible): for 8 series of 1,000,000 points
// at ~1,130 columns, ~4.7 ms for the full view (bench/README.md, "chart"). `points` must outlive
// the index and must not change; rebuild after any change (O(n) time, 40 bytes per 64 points).
// Thread-safety: const methods may run concurrently; the index is immutable once built.
class MinMaxIndex {
 public:
  MinMaxIndex() = default;
  explicit MinMaxIndex(std::span<const SeriesPoint> points);

  std::vector<SeriesPoint> decimate(double xMin, double xMax, int pixelColumns,
                                    AxisScale scale = AxisScale::kLinear) const;

 private:
  struct Block {
    double firstX;     // x of the block's first point
    double minY;       // smallest non-NaN y (unset when minIndex < 0)
    double maxY;       // largest non-NaN y
    int64_t minIndex;  // first index of minY in points_; -1 when the block is all NaN
    int64_t maxIndex;  // first index of maxY
  };

  // First indices of the smallest and the largest non-NaN y in [begin, end); -1 when all are NaN.
  std::pair<int64_t, int64_t> argMinMax(size_t begin, size_t end) const;
  // The first index in (first, end) whose pixel column is beyond `column`, or `end`.
  template <typename ColumnOf>
  size_t columnEnd(size_t first, size_t end, int column, const ColumnOf& columnOf) const;

  std::span<const SeriesPoint> points_;
  std::vector<Block> blocks_;
};

}  // namespace ringside::gui
