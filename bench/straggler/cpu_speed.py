#!/usr/bin/python3
"""Are this machine's CPUs equally fast? The reference for bench/straggler_trials' controls.

Runs the same single-threaded float32 GEMM (NumPy on OpenBLAS, 64 x 784 by 784 x 512: the MLP's
first layer at a local batch of 64) pinned to each CPU at once, and prints every interval each
CPU's rate in GEMMs per millisecond of its own thread CPU time: time the scheduler gave to other
processes does not count, so a CPU slower here is slower in the hardware (a shared host's other
tenants on the same core or cache, frequency), which no process in this machine can see or fix.
A rank on such a CPU is a real straggler, and the straggler verdict should name it.

  bench/straggler/cpu_speed.py [--seconds 40] [--interval 0.5] [--cpus 0,1]

Prints one line per interval and a summary: the share of intervals where the slowest CPU ran at
most 1/1.15 of the fastest (bench/straggler_trials' STEADY_SLOWER), and the largest gap.
Needs python3-numpy. Exit status 0; 2 on bad arguments.
"""
import argparse
import multiprocessing
import os
import sys
import time


def probe(cpu, seconds, interval, queue):
    import numpy as np
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    os.sched_setaffinity(0, {cpu})
    rng = np.random.default_rng(cpu)
    a = rng.random((64, 784), dtype=np.float32)
    b = rng.random((784, 512), dtype=np.float32)
    start = time.monotonic()
    while time.monotonic() < start + seconds:
        wall, cpu_time, n = time.monotonic(), time.thread_time(), 0
        while time.monotonic() < wall + interval:
            for _ in range(10):
                a @ b
            n += 10
        used = time.thread_time() - cpu_time
        queue.put((cpu, round((wall - start) / interval), n / (used * 1e3) if used > 0 else 0.0))
    queue.put((cpu, None, None))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=40.0)
    parser.add_argument("--interval", type=float, default=0.5)
    parser.add_argument("--cpus", default=None, help="comma-separated CPUs (default: all allowed)")
    args = parser.parse_args()
    cpus = ([int(c) for c in args.cpus.split(",")] if args.cpus
            else sorted(os.sched_getaffinity(0)))
    if len(cpus) < 2 or args.seconds <= 0 or args.interval <= 0:
        print("cpu_speed: needs at least 2 CPUs, --seconds and --interval > 0", file=sys.stderr)
        return 2
    os.environ["OPENBLAS_NUM_THREADS"] = "1"  # before NumPy loads OpenBLAS in the children
    queue = multiprocessing.Queue()
    workers = [multiprocessing.Process(target=probe, args=(c, args.seconds, args.interval, queue))
               for c in cpus]
    for w in workers:
        w.start()
    rates, done = {}, 0
    while done < len(cpus):
        cpu, slot, rate = queue.get()
        if slot is None:
            done += 1
        else:
            rates.setdefault(slot, {})[cpu] = rate
    for w in workers:
        w.join()
    print(f"cpu_speed: GEMMs per ms of thread CPU time on CPUs {cpus}, every {args.interval} s; "
          f"1-minute load {os.getloadavg()[0]:.2f} at the end")
    print(f"{'t (s)':>6} " + " ".join(f"{'cpu' + str(c):>7}" for c in cpus) + f" {'slowest':>8}")
    gaps = []
    for slot in sorted(rates):
        row = rates[slot]
        if len(row) < len(cpus) or min(row.values()) <= 0:
            continue
        gap = max(row.values()) / min(row.values())
        gaps.append(gap)
        print(f"{slot * args.interval:>6.1f} " + " ".join(f"{row[c]:>7.3f}" for c in cpus) +
              f" {1 / gap:>7.0%}{'  <' if gap >= 1.15 else ''}")
    if gaps:
        slow = sum(g >= 1.15 for g in gaps)
        print(f"intervals where the slowest CPU ran at most 1/1.15 of the fastest: {slow} of "
              f"{len(gaps)} ({slow / len(gaps):.0%}); the largest gap: the slowest at "
              f"{1 / max(gaps):.0%} of the fastest")
    return 0


if __name__ == "__main__":
    sys.exit(main())
