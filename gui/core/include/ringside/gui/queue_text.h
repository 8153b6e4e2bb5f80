// The words the GUI shows for a queued run (RunInfo.queue_position and waiting_reason, which the
// owner agent computes: docs/queue.md). Thread-safe (uses the installed translators, set before
// any window).
#pragma once

#include <QString>

#include "ringside/proto/ringside.pb.h"

namespace ringside::gui {

// "Queued: position 2, estimated start 14:05. waiting for 1 CPU slot: 0 of 2 free; 2 slots held
// by run r-... (a)" for a QUEUED run (the estimate in the local time zone, only when the agent
// has one); "" for a run in any other state. The agent's sentence is kept as it wrote it.
QString queuedText(const v1::RunInfo& run);

}  // namespace ringside::gui
