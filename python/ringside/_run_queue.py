"""A thread's run-queue delay: the time it was ready to run but waited for a CPU, as the Linux
scheduler counts it (``/proc/<pid>/task/<tid>/schedstat``, second field, ns; the kernel's
Documentation/scheduler/sched-stats.rst: "time spent waiting on a runqueue").

A rank whose CPU another process takes (a busy loop on its core, a noisy neighbour) accumulates it
at once, whatever the transport; a rank on a slower CPU does not. ``ringside.torch.watch`` reports
the training thread's mean per step as ``time/runqueue_ms`` (docs/metrics.md), the same figure as
``ringside-trainer`` (trainer/include/ringside/trainer/run_queue.h), and the owner agent's straggler
rule charges a rank's excess of it. Thread-safe: each call reads a file.
"""

import os
from typing import Optional


def parse_schedstat_ms(text: str) -> Optional[float]:
    """The run-queue delay in the text of a schedstat file (``"<on-cpu ns> <run-queue ns>
    <slices>"``), ms; None when the text does not hold three non-negative integers."""
    fields = text.split()
    if len(fields) < 3:
        return None
    try:
        values = [int(f) for f in fields[:3]]
    except ValueError:
        return None
    if min(values) < 0:
        return None
    return values[1] / 1e6


def thread_run_queue_ms(native_id: int) -> Optional[float]:
    """The total run-queue delay of this process's thread ``native_id``
    (``threading.get_native_id()``) since it started, ms; None where the kernel does not provide
    it (not Linux, or built without CONFIG_SCHED_INFO) or the thread has gone."""
    try:
        with open(f"/proc/{os.getpid()}/task/{native_id}/schedstat", encoding="ascii") as f:
            return parse_schedstat_ms(f.read())
    except OSError:
        return None
