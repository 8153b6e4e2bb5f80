"""The arithmetic of ringside.torch.watch's metrics (docs/pytorch.md, "What is measured"), apart
from any clock or framework so that it can be tested on known timings.

Every time is in milliseconds on one rank's clock, relative to the step's forward start (the
host's ``time.perf_counter`` with gloo; the GPU's event timeline with CUDA). Definitions mirror
the trainer's (docs/metrics.md, "Communication"; trainer/include/ringside/trainer/
comm_timing.h):

- a bucket's all-reduce duration is completion - start; the bandwidths follow nccl-tests
  (NVIDIA/nccl-tests, doc/PERFORMANCE.md): algbw = bytes / time, busbw = algbw x 2(n-1)/n for an
  all-reduce on n ranks, in GB/s of 10^9 bytes/s;
- a step's all-reduce time is the sum of its buckets' durations; its exposed communication is
  the time from the end of backward to the completion of its last all-reduce; compute is step -
  exposed; wait is the exposed communication (the only collective of a step the hook sees).

Pure functions: thread-safe; a figure that cannot be computed is None, never 0.
"""

import math
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

# GB/s as nccl-tests prints them: 10^9 bytes per second.
BYTES_PER_GB = 1e9


def algbw_gbps(nbytes: float, ms: float) -> Optional[float]:
    """Algorithm bandwidth of one collective on ``nbytes`` bytes taking ``ms`` milliseconds:
    bytes / time (nccl-tests doc/PERFORMANCE.md), GB/s (1e9 B/s). None when ``ms`` is not a
    positive finite number or ``nbytes`` is not positive."""
    if not (math.isfinite(ms) and ms > 0.0) or not nbytes > 0:
        return None
    return nbytes / (ms * 1e-3) / BYTES_PER_GB


def allreduce_bus_factor(world_size: int) -> float:
    """2(n-1)/n for an all-reduce on n ranks (nccl-tests doc/PERFORMANCE.md, "AllReduce"): each
    rank sends and receives 2(n-1)/n of the buffer in a ring. 0 for n <= 1."""
    return 0.0 if world_size <= 1 else 2.0 * (world_size - 1) / world_size


def busbw_gbps(nbytes: float, ms: float, world_size: int) -> Optional[float]:
    """Bus bandwidth of an all-reduce: algbw x 2(n-1)/n, GB/s. None when algbw is, or for fewer
    than 2 ranks (nothing crosses a bus)."""
    algbw = algbw_gbps(nbytes, ms)
    if algbw is None or world_size < 2:
        return None
    return algbw * allreduce_bus_factor(world_size)


@dataclass
class BucketStamps:
    """One gradient bucket's all-reduce in one step of one rank.

    ``index``: DDP's bucket index (``GradBucket.index()``; 0 is the first bucket whose all-reduce
    starts: the last layers); ``nbytes``: its gradient bytes; ``ready_ms``: when the hook was
    called (the bucket's gradients are in its buffer: with gloo the all-reduce starts here; with
    CUDA a GPU event on the compute stream); ``done_ms``: its completion (gloo: the future's
    callback; CUDA: a GPU event after the collective). Times after the forward start, ms.
    """

    index: int
    nbytes: int
    ready_ms: float
    done_ms: float


@dataclass
class StepStamps:
    """The moments of one training step of one rank, ms after its forward start.

    ``data_ms``: from the end of the previous step's work (or of an evaluation, or watch() for the
    first step) to this forward's start, None when unknown. ``backward_end_ms``: autograd's
    backward finished (every bucket's all-reduce started). ``comm_end_ms``: DDP has waited for
    every bucket and written the gradients back. ``end_ms``: the step's work ended: the last
    optimizer step after comm_end_ms where the optimizer can be seen (PyTorch >= 2.0), else
    comm_end_ms. ``buckets`` in DDP's bucket order.
    """

    step: int
    data_ms: Optional[float]
    backward_end_ms: float
    comm_end_ms: float
    end_ms: float
    buckets: Tuple[BucketStamps, ...] = ()


@dataclass
class StepTiming:
    """One rank's figures for one step (docs/metrics.md's time/* names), ms; bucket figures in
    bucket order."""

    step: int
    step_ms: float
    compute_ms: float
    exposed_comm_ms: float
    allreduce_ms: float
    data_ms: Optional[float]
    wait_ms: float
    bucket_bytes: Tuple[int, ...] = ()
    bucket_ms: Tuple[float, ...] = ()


def bucket_durations_ms(buckets: Sequence[BucketStamps], serial: bool) -> List[float]:
    """Each bucket's own all-reduce duration, ms (0 where the clock went backwards).

    ``serial``: the collectives run one after another on one stream (NCCL), so a bucket starts
    at the later of its readiness and the previous bucket's completion; otherwise (gloo) it
    starts when the hook hands it over, and two buckets in flight at once are each counted for
    their whole duration, as the trainer's mpi backend counts them.
    """
    durations = []
    previous_done = -math.inf
    for bucket in buckets:
        start = max(bucket.ready_ms, previous_done) if serial else bucket.ready_ms
        durations.append(max(0.0, bucket.done_ms - start))
        previous_done = bucket.done_ms
    return durations


def step_timing(stamps: StepStamps, serial: bool) -> StepTiming:
    """The step's figures from its moments (see the module's definitions).

    step_ms = end_ms (from the forward start to the end of the step's work); exposed =
    comm_end_ms - backward_end_ms; compute = step - exposed; all-reduce = the sum of the bucket
    durations; wait = exposed.
    """
    durations = bucket_durations_ms(stamps.buckets, serial)
    step_ms = max(0.0, stamps.end_ms)
    exposed = min(step_ms, max(0.0, stamps.comm_end_ms - stamps.backward_end_ms))
    return StepTiming(
        step=stamps.step, step_ms=step_ms, compute_ms=step_ms - exposed, exposed_comm_ms=exposed,
        allreduce_ms=sum(durations),
        data_ms=None if stamps.data_ms is None else max(0.0, stamps.data_ms), wait_ms=exposed,
        bucket_bytes=tuple(b.nbytes for b in stamps.buckets), bucket_ms=tuple(durations))


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def bucket_metric(bucket: int, what: str) -> str:
    """``comm/bucket<b>/<what>`` (common/include/ringside/common/metric_names.h's bucketMetric)."""
    return f"comm/bucket{bucket}/{what}"


@dataclass
class IntervalValues:
    """A log interval's record values: this rank's own (``rank``) and, on rank 0, the run's
    (``global_``), name -> value in the units of docs/metrics.md."""

    rank: Dict[str, float] = field(default_factory=dict)
    global_: Dict[str, float] = field(default_factory=dict)


def interval_values(timings: Sequence[StepTiming], world_size: int,
                    global_batch: Optional[int]) -> IntervalValues:
    """The values of one record from the steps since the previous one (their means).

    Per rank: time/step_ms, time/compute_ms, time/allreduce_ms, time/exposed_comm_ms,
    time/data_ms (when any step has it) and time/wait_ms. Global (filled by every rank; only rank
    0 sends it): time/step_ms, time/compute_ms, time/exposed_comm_ms, time/allreduce_ms,
    comm/bytes, comm/algbw_GBps, comm/busbw_GBps, per bucket comm/bucket<b>/{bytes, allreduce_ms,
    algbw_GBps, busbw_GBps}, and train/samples_per_s = global_batch x steps / (their data + step
    time) when global_batch is given. Bucket figures come from the steps with the last step's
    bucket layout (DDP rebuilds its buckets once, after the first step). With one rank the
    buckets are not reported (nothing crosses a bus; the trainer has none then): comm/bytes and
    time/allreduce_ms are 0 and the bandwidths absent. ``timings`` must not be empty.
    """
    out = IntervalValues()
    count = len(timings)
    step_ms = _mean([t.step_ms for t in timings])
    compute_ms = _mean([t.compute_ms for t in timings])
    exposed_ms = _mean([t.exposed_comm_ms for t in timings])
    data = [t.data_ms for t in timings if t.data_ms is not None]
    out.rank = {"time/step_ms": step_ms, "time/compute_ms": compute_ms,
                "time/allreduce_ms": _mean([t.allreduce_ms for t in timings]),
                "time/exposed_comm_ms": exposed_ms}
    if data:
        out.rank["time/data_ms"] = _mean(data)
    out.rank["time/wait_ms"] = _mean([t.wait_ms for t in timings])

    out.global_ = {"time/step_ms": step_ms, "time/compute_ms": compute_ms,
                   "time/exposed_comm_ms": exposed_ms}
    if global_batch is not None:
        seconds = sum(t.step_ms + (t.data_ms or 0.0) for t in timings) * 1e-3
        if seconds > 0:
            out.global_["train/samples_per_s"] = global_batch * count / seconds
    layout = timings[-1].bucket_bytes
    same = [t for t in timings if t.bucket_bytes == layout]
    buckets = len(layout) if world_size > 1 else 0
    bucket_ms = [_mean([t.bucket_ms[b] for t in same]) for b in range(buckets)]
    total_bytes = sum(layout[:buckets])
    total_ms = float(sum(bucket_ms))
    out.global_["time/allreduce_ms"] = total_ms
    out.global_["comm/bytes"] = float(total_bytes)
    _put_bandwidths(out.global_, "comm/algbw_GBps", "comm/busbw_GBps", total_bytes, total_ms,
                    world_size)
    for b in range(buckets):
        out.global_[bucket_metric(b, "bytes")] = float(layout[b])
        out.global_[bucket_metric(b, "allreduce_ms")] = bucket_ms[b]
        _put_bandwidths(out.global_, bucket_metric(b, "algbw_GBps"),
                        bucket_metric(b, "busbw_GBps"), layout[b], bucket_ms[b], world_size)
    return out


def _put_bandwidths(values: Dict[str, float], algbw_name: str, busbw_name: str, nbytes: float,
                    ms: float, world_size: int) -> None:
    algbw = algbw_gbps(nbytes, ms) if world_size > 1 else None
    busbw = busbw_gbps(nbytes, ms, world_size)
    if algbw is not None:
        values[algbw_name] = algbw
    if busbw is not None:
        values[busbw_name] = busbw
