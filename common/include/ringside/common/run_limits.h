// Bounds on what an agent says about a run and on the metric samples it journals for one, so that
// a run of many ranks (up to kMaxWorldSize), or a rank that sends garbage, cannot make a record,
// an event or a reply that a client has to clip. docs/protocol.md#limits lists them.
//
// Thread-safety: constants only.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ringside {

// StallVerdict.summary, and the failure reason of a run ended by its hang timeout, which holds
// the summary: at most 4 KiB of UTF-8. Past a few ranks the summary names ranges of ranks
// ("ranks 0-8191 on 64 nodes wait in ...") with one example sentence per group instead of a
// sentence per rank; what still passes the bound is cut at a character boundary and ends in "…".
// 4 KiB is a paragraph: enough for the verdict of any run, small enough for a status line.
inline constexpr size_t kMaxStallSummaryBytes = 4096;

// StallVerdict.ranks: the state of at most 1,024 ranks (every rank of a run up to that size;
// beyond it, the stuck ranks first, then the others from rank 0 up to the bound). A verdict is
// journaled whenever it names other ranks, so its size is bounded, not its world size.
inline constexpr size_t kMaxStallVerdictRanks = 1024;

// What a rank's heartbeat may put in a verdict: its host name (RFC 1123 names are at most 253
// bytes) and the collective it waits in; longer text is cut, ending in "…".
inline constexpr size_t kMaxHeartbeatHostBytes = 255;
inline constexpr size_t kMaxHeartbeatWaitingInBytes = 256;

// Largest step and epoch of a journaled metric sample: 2^53, the largest integer that every JSON
// reader (a double) holds exactly; the same bound as a metrics record printed by a custom command
// (log_tailer.h). A sample with a negative step or epoch, or one past 2^53, is refused.
inline constexpr int64_t kMaxMetricStep = int64_t{1} << 53;

}  // namespace ringside
