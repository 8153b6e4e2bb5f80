#include "ringside/gui/decimation.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

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
  // The nearest drawable point left of the view (NaN runs and, in log scale, x <= 0 skipped).
  for (size_t i = begin; i > 0; --i) {
    if (drawable(points[i - 1], scale)) {
      out.push_back(points[i - 1]);
      break;
    }
  }

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

  for (size_t i = end; i < points.size(); ++i) {
    if (drawable(points[i], scale)) {
      out.push_back(points[i]);
      break;
    }
  }
  return out;
}

}  // namespace ringside::gui
