#include "ringside/gui/chart_axis.h"

#include <algorithm>
#include <cmath>

namespace ringside::gui {

double toAxis(double value, bool log) { return log ? std::log10(value) : value; }
double fromAxis(double coordinate, bool log) {
  return log ? std::pow(10.0, coordinate) : coordinate;
}

double niceTickStep(double span, int ticks) {
  if (!(span > 0) || !std::isfinite(span)) return 1.0;
  const double raw = span / std::max(1, ticks - 1);
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double fraction = raw / magnitude;
  const double nice = fraction < 1.5    ? 1
                      : fraction < 2.25 ? 2
                      : fraction < 3.5  ? 2.5
                      : fraction < 7.5  ? 5
                                        : 10;
  return nice * magnitude;
}

std::vector<double> axisTicks(double low, double high, bool log, int ticks) {
  std::vector<double> positions;
  if (!usableRange({low, high}, log)) return positions;
  if (log) {
    for (int e = static_cast<int>(std::ceil(std::log10(low)));
         e <= static_cast<int>(std::floor(std::log10(high))); ++e) {
      positions.push_back(std::pow(10.0, e));
    }
    return positions;
  }
  const double step = niceTickStep(high - low, ticks);
  // Multiples of the step (not repeated additions), so rounding does not drift.
  const double first = std::ceil(low / step - 1e-9);
  for (double k = first; k * step <= high + step * 1e-9; k += 1) {
    const double tick = k * step;
    positions.push_back(std::abs(tick) < step * 1e-9 ? 0.0 : tick);
  }
  return positions;
}

AxisRange fitXRange(std::optional<AxisRange> data, bool log) {
  if (!data || !std::isfinite(data->first) || !std::isfinite(data->second)) {
    return log ? AxisRange{1.0, 10.0} : AxisRange{0.0, 1.0};
  }
  const auto [low, high] = *data;
  if (!(high > low)) return log ? AxisRange{low / 2, low * 2} : AxisRange{low - 0.5, high + 0.5};
  return {low, high};
}

AxisRange fitYRange(std::optional<AxisRange> data, bool log, bool stacked) {
  if (!data || !std::isfinite(data->first) || !std::isfinite(data->second)) {
    return log ? AxisRange{1.0, 10.0} : AxisRange{0.0, 1.0};
  }
  double low = data->first;
  const double high = data->second;
  if (log) {
    const double decadeLow = std::log10(low);
    const double decadeHigh = std::log10(high);
    const double pad = std::max((decadeHigh - decadeLow) * 0.05, 0.05);
    return {std::pow(10.0, decadeLow - pad), std::pow(10.0, decadeHigh + pad)};
  }
  if (stacked) low = std::min(low, 0.0);
  const double pad = high > low ? (high - low) * 0.05 : std::max(std::abs(high) * 0.05, 0.5);
  return {stacked && low >= 0 ? low : low - pad, high + pad};
}

AxisRange zoomedRange(AxisRange range, double factor, double center, bool log) {
  const double a = toAxis(range.first, log);
  const double b = toAxis(range.second, log);
  double c = log && !(center > 0) ? (a + b) / 2 : toAxis(center, log);
  if (!std::isfinite(c)) c = (a + b) / 2;
  return {fromAxis(c + (a - c) * factor, log), fromAxis(c + (b - c) * factor, log)};
}

AxisRange pannedRange(AxisRange range, double fraction, bool log) {
  const double a = toAxis(range.first, log);
  const double b = toAxis(range.second, log);
  const double shift = (b - a) * fraction;
  return {fromAxis(a + shift, log), fromAxis(b + shift, log)};
}

bool usableRange(AxisRange range, bool log) {
  return std::isfinite(range.first) && std::isfinite(range.second) && range.second > range.first &&
         (!log || range.first > 0);
}

std::vector<SeriesPoint> stackedOnto(std::span<const SeriesPoint> points,
                                     std::span<const SeriesPoint> below) {
  std::vector<SeriesPoint> top(points.begin(), points.end());
  if (below.empty()) return top;
  size_t j = 0;
  for (SeriesPoint& point : top) {
    while (j + 1 < below.size() && below[j + 1].x <= point.x) ++j;
    const double base = below[j].x <= point.x ? below[j].y : 0.0;
    if (std::isfinite(base)) point.y += base;
  }
  return top;
}

QPointF PlotMapping::toPixel(SeriesPoint point) const {
  const double x0 = toAxis(x.first, logX);
  const double x1 = toAxis(x.second, logX);
  const double y0 = toAxis(y.first, logY);
  const double y1 = toAxis(y.second, logY);
  const double fx = (toAxis(point.x, logX) - x0) / (x1 - x0);
  const double fy = (toAxis(point.y, logY) - y0) / (y1 - y0);
  return {plot.left() + fx * plot.width(), plot.bottom() - fy * plot.height()};
}

SeriesPoint PlotMapping::fromPixel(QPointF pixel) const {
  const double fx = plot.width() > 0 ? (pixel.x() - plot.left()) / plot.width() : 0;
  const double fy = plot.height() > 0 ? (plot.bottom() - pixel.y()) / plot.height() : 0;
  const double x0 = toAxis(x.first, logX);
  const double x1 = toAxis(x.second, logX);
  const double y0 = toAxis(y.first, logY);
  const double y1 = toAxis(y.second, logY);
  return {fromAxis(x0 + fx * (x1 - x0), logX), fromAxis(y0 + fy * (y1 - y0), logY)};
}

namespace {

// Liang-Barsky: the parameters [t0, t1] of the part of the segment a + t (b - a), t in [0, 1],
// inside `rect`; std::nullopt when no part is.
std::optional<std::pair<double, double>> clipSegment(QPointF a, QPointF b, const QRectF& rect) {
  const double dx = b.x() - a.x();
  const double dy = b.y() - a.y();
  const double p[] = {-dx, dx, -dy, dy};
  const double q[] = {a.x() - rect.left(), rect.right() - a.x(), a.y() - rect.top(),
                      rect.bottom() - a.y()};
  double t0 = 0.0;
  double t1 = 1.0;
  for (int i = 0; i < 4; ++i) {
    if (p[i] == 0) {
      if (q[i] < 0) return std::nullopt;  // parallel to this edge and outside it
      continue;
    }
    const double t = q[i] / p[i];
    if (p[i] < 0) {
      t0 = std::max(t0, t);
    } else {
      t1 = std::min(t1, t);
    }
    if (t0 > t1) return std::nullopt;
  }
  return std::pair{t0, t1};
}

}  // namespace

std::vector<QPolygonF> clipPolyline(const QPolygonF& line, const QRectF& rect) {
  std::vector<QPolygonF> parts;
  QPolygonF current;
  const auto finish = [&] {
    if (current.size() >= 2) parts.push_back(current);
    current.clear();
  };
  for (qsizetype i = 0; i + 1 < line.size(); ++i) {
    const QPointF a = line[i];
    const QPointF b = line[i + 1];
    const auto inside = clipSegment(a, b, rect);
    if (!inside) {
      finish();
      continue;
    }
    const QPointF from = a + (b - a) * inside->first;
    const QPointF to = a + (b - a) * inside->second;
    if (current.isEmpty() || inside->first > 0) {
      finish();
      current << from;
    }
    current << to;
    if (inside->second < 1) finish();
  }
  finish();
  return parts;
}

}  // namespace ringside::gui
