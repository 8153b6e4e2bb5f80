// The calling thread's run-queue delay: the time it was ready to run but waited for a CPU, as the
// Linux scheduler counts it (/proc/thread-self/schedstat, second field, ns; the kernel's
// Documentation/scheduler/sched-stats.rst, "/proc/<pid>/schedstat": "time spent waiting on a
// runqueue"). A rank whose CPU another process takes (a busy loop on its core, a noisy neighbour)
// accumulates it at once, whatever the transport; a rank on a slower CPU does not. The trainer
// reports its mean per step as time/runqueue_ms (docs/metrics.md), and the owner agent's straggler
// rule charges a rank's excess of it (straggler_detector.h).
//
// Thread-safety: thread-safe. Each thread opens its own file on its first call and keeps it open
// until it exits (one pread a reading); a forked child opens its own (pthread_atfork).
#pragma once

#include <optional>
#include <string>

namespace ringside::trainer {

// The calling thread's total run-queue delay since it started, ms; std::nullopt where the kernel
// does not provide it (not Linux, or built without CONFIG_SCHED_INFO) or the file cannot be read.
std::optional<double> threadRunQueueDelayMs();

// The run-queue delay in the text of a schedstat file ("<on-cpu ns> <run-queue ns> <slices>\n"),
// ms; std::nullopt when the text does not hold three non-negative integers.
std::optional<double> parseSchedstatRunQueueMs(const std::string& text);

}  // namespace ringside::trainer
