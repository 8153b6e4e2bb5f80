// The words the GUI shows for a stalled run (RunInfo.stall, docs/metrics.md "Hangs"): the
// dashboard's banner. Thread-safe (uses the installed translators, set before any window).
#pragma once

#include <QString>

#include "ringside/proto/ringside.pb.h"

namespace ringside::gui {

// "Stalled: no progress for 1 min 05 s since step 1751 (threshold 10 s). rank 1 on node-2 has
// not reported for 14 s (process stopped); rank 0 waits in the all-reduce of bucket 0 of step
// 1752". `now`: Unix seconds; the duration counts from the verdict's `since`, so it grows while
// the verdict stands. The agent's own sentence follows, without its "no progress for ..." head,
// which was true when it was written.
QString stallBannerText(const v1::StallVerdict& verdict, double now);

}  // namespace ringside::gui
