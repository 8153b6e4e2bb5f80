// Progress and ETA of a run (the arithmetic is ringside/common/run_progress.h, which the agent's
// queue uses too) and the fractional epoch axis of its charts. Pure arithmetic with no Qt, so the
// dashboard's read-outs are tested without a display.
//
// Thread-safety: pure functions; safe from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ringside/common/run_progress.h"
#include "ringside/gui/decimation.h"

namespace ringside::gui {

// The progress and ETA arithmetic (ringside/common/run_progress.h), shared with the agent.
using ringside::etaSeconds;
using ringside::ProgressFacts;
using ringside::RunProgress;
using ringside::runProgress;

// A series by step (x = global steps completed, the first step is 1) with x as fractional epochs:
// step / stepsPerEpoch, so the steps of epoch e (0-based) spread over (e, e + 1] and its last
// step, where its test metrics are recorded, is at e + 1. A resumed run keeps its global steps and
// so its epochs. The input unchanged when stepsPerEpoch <= 0 (unknown).
std::vector<SeriesPoint> stepsToEpochs(std::vector<SeriesPoint> byStep, int64_t stepsPerEpoch);

}  // namespace ringside::gui
