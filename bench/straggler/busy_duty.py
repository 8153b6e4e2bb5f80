#!/usr/bin/python3
"""A busy process with a duty cycle, pinned to one CPU: the contention a noisy neighbour makes.

Spins for DUTY x PERIOD of every PERIOD (default 100 ms, the period of Linux's CPU bandwidth
control, so a duty of 0.3 is what a container limited to 30 % of a CPU does), on the CPU given,
until SIGTERM or SIGINT. With --duty 1 it never sleeps. bench/straggler_trials starts it on one
rank's CPU; bench/README.md ("straggler_trials") describes the trials.

Exit status: 0 after a signal; 2 on a bad argument (a duty outside (0, 1], a period <= 0, or a
CPU this process may not run on).
"""
import argparse
import os
import signal
import sys
import time


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cpu", type=int, required=True, help="the CPU to spin on")
    parser.add_argument("--duty", type=float, default=1.0, help="busy share of each period, (0, 1]")
    parser.add_argument("--period-ms", type=float, default=100.0)
    args = parser.parse_args()
    if not 0.0 < args.duty <= 1.0 or args.period_ms <= 0.0:
        print("busy_duty: --duty must be in (0, 1] and --period-ms above 0", file=sys.stderr)
        return 2
    try:
        os.sched_setaffinity(0, {args.cpu})
    except OSError as error:
        print(f"busy_duty: cannot pin to CPU {args.cpu}: {error}", file=sys.stderr)
        return 2
    stop = False

    def on_signal(signum, frame):
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    period = args.period_ms / 1000.0
    busy = args.duty * period
    start = time.monotonic()
    while not stop:
        period_start = start + ((time.monotonic() - start) // period) * period
        while not stop and time.monotonic() < period_start + busy:
            pass
        if args.duty < 1.0 and not stop:
            time.sleep(max(0.0, period_start + period - time.monotonic()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
