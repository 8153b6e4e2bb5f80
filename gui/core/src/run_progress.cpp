#include "ringside/gui/run_progress.h"

namespace ringside::gui {

std::vector<SeriesPoint> stepsToEpochs(std::vector<SeriesPoint> byStep, int64_t stepsPerEpoch) {
  if (stepsPerEpoch <= 0) return byStep;
  const double perEpoch = static_cast<double>(stepsPerEpoch);
  for (SeriesPoint& point : byStep) point.x /= perEpoch;
  return byStep;
}

}  // namespace ringside::gui
