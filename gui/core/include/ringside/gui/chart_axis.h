// The arithmetic behind MetricChart (gui/widgets), with no Qt Widgets so it is tested without a
// display: axis coordinates on linear and log axes, nice tick steps and tick positions, the
// ranges a chart fits to its data, zoom and pan of a range, stacked-area sums, the mapping between
// value space and a plot rectangle in pixels, and clipping of lines and areas to that rectangle
// (for painters that cannot clip, such as QSvgGenerator's in Qt 6.4).
//
// Thread-safety: pure functions and value types; safe from any thread.
#pragma once

#include <QPointF>
#include <QPolygonF>
#include <QRectF>

#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "ringside/gui/decimation.h"

namespace ringside::gui {

// A closed interval [first, second] of an axis in value space (not log10 on a log axis).
using AxisRange = std::pair<double, double>;

// A value's coordinate along its axis: log10(value) on a log axis, the value itself otherwise;
// fromAxis is the inverse. A value <= 0 on a log axis gives -inf or NaN (the caller filters).
double toAxis(double value, bool log);
double fromAxis(double coordinate, bool log);

// A tick interval of 1, 2, 2.5 or 5 times a power of ten giving about `ticks` ticks over `span`:
// the raw interval span / (ticks - 1) rounded to the nearest such number (Heckbert, "Nice numbers
// for graph labels", Graphics Gems, 1990, with 2.5 added), so a span of 1.66 over 4 ticks gets
// 0.5 (ticks 0.5, 1, 1.5), not 1 (a single tick). 1 for a span that is not positive and finite.
double niceTickStep(double span, int ticks);

// Tick positions within [low, high]: multiples of niceTickStep(high - low, ticks) on a linear
// axis (a tick within rounding of 0 is exactly 0), the powers of ten on a log axis. Empty when
// the range is not finite, not increasing, or (log) not positive.
std::vector<double> axisTicks(double low, double high, bool log, int ticks = 6);

// The x range that shows [dataLow, dataHigh] (the first and last drawable x over all series;
// std::nullopt when there is none): the data's range itself; a point alone gets ±0.5 (log:
// halved and doubled); no data gets [0, 1] (log: [1, 10]).
AxisRange fitXRange(std::optional<AxisRange> data, bool log);

// The y range that shows [dataLow, dataHigh] (the smallest and largest visible y; std::nullopt
// when no point is visible) with 5 % air above and below (on a log axis 5 % of the decades, at
// least 0.05 decades; a constant series gets ±5 % of its value, at least ±0.5). Stacked areas
// start at 0 when every value is >= 0. No data gets [0, 1] (log: [1, 10]).
AxisRange fitYRange(std::optional<AxisRange> data, bool log, bool stacked);

// `range` zoomed by `factor` (< 1 zooms in) about `center`, in axis coordinates (so a log axis
// zooms by decades). A center that is not finite (or <= 0 on a log axis) zooms about the middle.
AxisRange zoomedRange(AxisRange range, double factor, double center, bool log);
// `range` moved by `fraction` of its width (0.1 = a tenth towards larger values).
AxisRange pannedRange(AxisRange range, double fraction, bool log);
// Whether a chart can show `range`: finite, increasing, and (log) starting above 0.
bool usableRange(AxisRange range, bool log);

// Stacked areas: each point of `points` raised by the value of `below` (the sum of the series
// under it, sorted by x) at the same or the nearest earlier x; 0 where `below` has no such point
// and where its value is not finite. Output has the input's length and x values.
std::vector<SeriesPoint> stackedOnto(std::span<const SeriesPoint> points,
                                     std::span<const SeriesPoint> below);

// The mapping between value space and a plot rectangle in pixels (y grows downwards), for the
// ranges and scales a chart shows. A point outside the ranges maps outside the rectangle.
struct PlotMapping {
  QRectF plot;  // pixels
  AxisRange x{0, 1};
  AxisRange y{0, 1};
  bool logX = false;
  bool logY = false;

  QPointF toPixel(SeriesPoint point) const;
  // The inverse of toPixel; a degenerate plot (zero width or height) maps to the range's start.
  SeriesPoint fromPixel(QPointF pixel) const;
};

// The parts of the polyline `line` inside `rect` (Liang and Barsky, "A new concept and method for
// line clipping", ACM TOG 3(1), 1984, per segment), each a polyline of at least two points, in
// order; segments that run along the rectangle's edge are kept.
std::vector<QPolygonF> clipPolyline(const QPolygonF& line, const QRectF& rect);

}  // namespace ringside::gui
