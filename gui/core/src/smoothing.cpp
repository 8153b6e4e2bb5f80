#include "ringside/gui/smoothing.h"

#include <algorithm>
#include <cmath>

namespace ringside::gui {

std::vector<SeriesPoint> emaSmooth(std::span<const SeriesPoint> points, double weight) {
  std::vector<SeriesPoint> out(points.begin(), points.end());
  if (!(weight > 0.0) || out.empty()) return out;
  weight = std::min(weight, 0.999);
  // TensorBoard leaves a constant series alone (its debiasing would only add rounding noise).
  const bool constant = std::all_of(
      out.begin(), out.end(), [&](const SeriesPoint& point) { return point.y == out.front().y; });
  if (constant) return out;
  double last = 0.0;
  double weightPower = 1.0;  // weight^k after k finite values
  for (SeriesPoint& point : out) {
    if (!std::isfinite(point.y)) continue;
    last = last * weight + (1.0 - weight) * point.y;
    weightPower *= weight;
    point.y = last / (1.0 - weightPower);
  }
  return out;
}

}  // namespace ringside::gui
