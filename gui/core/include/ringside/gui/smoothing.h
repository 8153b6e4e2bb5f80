// Smoothing of a noisy metric series for display (the dashboard's smoothing slider).
#pragma once

#include <span>
#include <vector>

#include "ringside/gui/decimation.h"

namespace ringside::gui {

// TensorBoard's debiased exponential moving average ("smoothing" slider): with weight w in
// [0, 0.99], last = w * last + (1 - w) * y and the output is last / (1 - w^k) after k finite
// values, so the first points are not pulled towards 0. Non-finite y values are passed through
// unchanged and do not update the average; a series whose values are all equal is returned as is
// (as TensorBoard does). w <= 0 returns the input. Output has the input's length and x values.
// Thread-safe (a pure function).
std::vector<SeriesPoint> emaSmooth(std::span<const SeriesPoint> points, double weight);

}  // namespace ringside::gui
