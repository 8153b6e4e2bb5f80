"""ringside.torch.watch: a DDP communication hook that all-reduces exactly as DDP does by default
and times every bucket, plus the hooks that find a step's forward, end of backward and end of
communication (docs/pytorch.md, "What is measured").

How a step is seen, on one rank:

- forward start: a forward pre-hook on the DDP module (the first training forward after the
  previous step, so the micro-batches of ``no_sync()`` gradient accumulation count as compute);
- each bucket: DDP calls the hook when the bucket's gradients are in its buffer; the hook divides
  them by the world size, starts ``all_reduce`` and stamps the start, and the future's callback
  stamps the completion;
- end of backward: an autograd engine callback queued by the step's first bucket, which runs
  before DDP's own (queued after its last bucket) that waits for the all-reduces;
- end of communication: a callback queued from the previous one, which therefore runs after
  DDP has waited for every bucket and written the gradients back;
- end of the step's work: the optimizer's step, where PyTorch (>= 2.0) lets every optimizer be
  seen (``register_optimizer_step_post_hook``); before 2.0 the step ends with its communication
  and the optimizer's update counts as data time.

Stamps are ``time.perf_counter()`` with CPU tensors (gloo: the future's callback runs when the
work completes) and CUDA events on the current stream with CUDA tensors (read with
``elapsed_time`` once ``query()`` says they completed, at a later step, so the training stream is
never synchronised; at exit they are waited for, at most 5 s).
"""

import collections
import sys
import threading
import time
from typing import Any, Deque, List, Optional

import torch
import torch.distributed as dist
import torch.optim.optimizer as _optimizer_module
from torch.autograd import Variable
from torch.nn.parallel import DistributedDataParallel

from .. import _activity, _comm_math, _run_queue
from .._runtime import runtime

# Steps whose CUDA events have not completed yet are kept at most this long; older ones are
# dropped (a GPU this far behind the host has stopped).
_MAX_PENDING_STEPS = 1024
# At close (exit), how long to wait for the last steps' CUDA events, seconds.
_FINAL_WAIT_S = 5.0


class _HostClock:
    """Host time: stamps are ``time.perf_counter()`` seconds."""

    serial = False  # gloo may run two buckets' all-reduces at once

    @staticmethod
    def stamp() -> float:
        return time.perf_counter()

    @staticmethod
    def ready(stamp: Any) -> bool:
        return True

    @staticmethod
    def ms(start: Any, end: Any) -> float:
        return (end - start) * 1e3


class _CudaClock:
    """GPU time: stamps are CUDA events recorded on the calling thread's current stream of the
    model's device."""

    serial = True  # NCCL runs a group's collectives one after another on one stream

    def __init__(self, device: torch.device) -> None:
        self._device = device

    def stamp(self) -> Any:
        event = torch.cuda.Event(enable_timing=True)
        event.record(torch.cuda.current_stream(self._device))
        return event

    @staticmethod
    def ready(stamp: Any) -> bool:
        return stamp.query()

    @staticmethod
    def ms(start: Any, end: Any) -> float:
        return start.elapsed_time(end)


class _Step:
    """The stamps of one step as they arrive."""

    __slots__ = ("step", "forward", "host_forward", "previous_end", "backward_end", "comm_end",
                 "end", "buckets", "hooked")

    def __init__(self, step: int, forward: Any, previous_end: Any) -> None:
        self.step = step
        self.forward = forward
        self.host_forward = time.perf_counter()
        self.previous_end = previous_end  # end of the last activity before it (data start)
        self.backward_end: Any = None
        self.comm_end: Any = None
        self.end: Any = None
        self.buckets: List[list] = []  # [index, bytes, ready stamp, done stamp]
        self.hooked = False  # the end-of-backward callback is queued

    def stamps(self) -> List[Any]:
        out = [self.forward, self.backward_end, self.comm_end, self.end]
        if self.previous_end is not None:
            out.append(self.previous_end)
        for bucket in self.buckets:
            out.extend(bucket[2:])
        return out


def _timed_allreduce_hook(state: "Watcher", bucket: dist.GradBucket
                          ) -> torch.futures.Future[torch.Tensor]:
    """The DDP communication hook (``register_comm_hook(state, hook)``): returns the future of
    the bucket's all-reduced, averaged gradients, as PyTorch's ``allreduce_hook`` does (one
    ``all_reduce`` per bucket of the DDP model's process group), timed by ``state``."""
    return state._allreduce(bucket)


class Watcher:
    """What ringside.torch.watch returns: the hooks on one DDP model and its step counter.

    ``steps``: training steps completed on this rank; ``last_timing``: the figures of the last
    step turned into a record (a StepTiming of ms values, buckets in DDP's order), None before
    the first. close() writes the last record and removes the forward and optimizer hooks (the
    communication hook stays, as DDP cannot remove one; it then all-reduces without timing).
    Not thread-safe beyond what DDP's own threads do to it.
    """

    def __init__(self, model: DistributedDataParallel, global_batch: Optional[int],
                 log_every: int) -> None:
        self._global_batch = global_batch
        self._log_every = log_every
        self._group = model.process_group
        self._world = self._group.size()
        self._rank = dist.get_rank(self._group)
        # DDP's default reducer multiplies every gradient by 1/n while copying it into the bucket
        # (reducer.cpp, mark_variable_ready_dense: at::mul_out with 1./div_factor_); the same
        # product here keeps the gradients bit-identical to it for any world size.
        self._scale = 1.0 / self._world
        device = next(model.parameters()).device
        self._clock = _CudaClock(device) if device.type == "cuda" else _HostClock()
        self._activity = runtime.activity
        self._steps = 0
        self._open: Optional[_Step] = None
        self._last: Optional[_Step] = None  # completed; the optimizer may still end it
        self._gap_start: Any = self._clock.stamp()
        self._pending: Deque[_Step] = collections.deque()
        self._interval: List[_comm_math.StepTiming] = []
        self._last_timing: Optional[_comm_math.StepTiming] = None
        self._dropped_steps = 0
        # The training thread (the one that runs forward) and its run-queue delay when the
        # current log interval started, ms (None: not known yet, or not on this kernel).
        self._training_thread: Optional[int] = None
        self._run_queue_start: Optional[float] = None
        self._closed = False
        self._handles: List[Any] = []
        model.register_comm_hook(self, _timed_allreduce_hook)
        self._handles.append(model.register_forward_pre_hook(self._on_forward))
        self._handles.append(model.register_forward_hook(self._on_forward_end))
        # Global optimizer hooks exist from PyTorch 2.0 on.
        pre = getattr(_optimizer_module, "register_optimizer_step_pre_hook", None)
        post = getattr(_optimizer_module, "register_optimizer_step_post_hook", None)
        if pre is not None and post is not None:
            self._handles.append(pre(self._on_optimizer_start))
            self._handles.append(post(self._on_optimizer_end))
        runtime.set_identity(dist.get_rank(), dist.get_world_size())
        runtime.start()
        runtime.add_finisher(self.close)

    @property
    def steps(self) -> int:
        return self._steps

    @property
    def last_timing(self) -> Optional[_comm_math.StepTiming]:
        return self._last_timing

    # ---- hooks (training thread, autograd threads, the communication library's threads)

    def _on_forward(self, module: Any, inputs: Any) -> None:
        if self._closed:
            return
        if self._last is not None:
            # Any forward after a step comes after its optimizer update: the step is complete.
            self._pending.append(self._last)
            self._last = None
        if not (module.training and torch.is_grad_enabled()):
            self._activity.set_phase(_activity.EVALUATION)
            self._resolve(final=False)
            return
        if self._open is not None and not self._open.hooked:
            return  # a further micro-batch of the same step
        # (An open step whose backward began but never ended raised an exception in it, which
        # the script caught: that step is abandoned.)
        if self._training_thread is None:
            self._training_thread = threading.get_native_id()
            self._run_queue_start = _run_queue.thread_run_queue_ms(self._training_thread)
        self._open = _Step(self._steps + 1, self._clock.stamp(), self._gap_start)
        self._activity.set_phase(_activity.COMPUTE)
        self._resolve(final=False)

    def _on_forward_end(self, module: Any, inputs: Any, output: Any) -> None:
        if not (module.training and torch.is_grad_enabled()) and not self._closed:
            self._gap_start = self._clock.stamp()  # an evaluation batch is not data time
            self._activity.work_done()

    def _on_optimizer_start(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        if self._open is None and self._last is not None:
            self._activity.set_phase(_activity.OPTIMIZER)

    def _on_optimizer_end(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        if self._open is None and self._last is not None and not self._closed:
            self._last.end = self._gap_start = self._clock.stamp()
            self._activity.set_phase(_activity.DATA)

    def _allreduce(self, bucket: dist.GradBucket) -> torch.futures.Future[torch.Tensor]:
        tensor = bucket.buffer()
        tensor.mul_(self._scale)
        if self._closed:
            return (dist.all_reduce(tensor, group=self._group, async_op=True).get_future()
                    .then(lambda fut: fut.value()[0]))
        step = self._open
        if step is None:  # a forward that bypassed the module's hooks (model.forward(x))
            step = self._open = _Step(self._steps + 1, None, None)
        if not step.hooked:
            step.hooked = True
            Variable._execution_engine.queue_callback(self._on_backward_end)
        record = [bucket.index(), tensor.numel() * tensor.element_size(), self._clock.stamp(),
                  None]
        if step.forward is None:
            step.forward = record[2]
        step.buckets.append(record)
        clock, activity = self._clock, self._activity

        def done(fut: torch.futures.Future) -> torch.Tensor:
            record[3] = clock.stamp()
            if activity.phase == _activity.ALLREDUCE:
                activity.set_bucket(_first_unfinished(step.buckets))
            return fut.value()[0]

        return dist.all_reduce(tensor, group=self._group, async_op=True).get_future().then(done)

    def _on_backward_end(self) -> None:
        step = self._open
        step.backward_end = self._clock.stamp()
        self._activity.set_phase(_activity.ALLREDUCE)
        self._activity.set_bucket(_first_unfinished(step.buckets))
        self._activity.begin_wait(_activity.WAIT_ALLREDUCE)
        Variable._execution_engine.queue_callback(self._on_comm_end)

    def _on_comm_end(self) -> None:
        step = self._open
        step.comm_end = step.end = self._gap_start = self._clock.stamp()
        self._activity.end_wait()
        self._steps = step.step
        self._activity.step_completed(step.step, (time.perf_counter() - step.host_forward) * 1e3)
        self._activity.set_phase(_activity.DATA)
        self._last, self._open = step, None

    # ---- records (training thread)

    def _resolve(self, final: bool) -> None:
        """Turns completed steps whose stamps can be read into timings, oldest first. ``final``:
        waits for them, but at most _FINAL_WAIT_S in all (a GPU stuck in a collective whose
        peer died must not keep the process from exiting); what is still unread is dropped."""
        while len(self._pending) > _MAX_PENDING_STEPS:
            self._pending.popleft()
            self._dropped_steps += 1
        deadline = time.monotonic() + _FINAL_WAIT_S
        while self._pending:
            step = self._pending[0]
            stamps = step.stamps()
            while not all(self._clock.ready(stamp) for stamp in stamps):
                if not final:
                    return
                if time.monotonic() > deadline:
                    self._dropped_steps += len(self._pending)
                    self._pending.clear()
                    return
                time.sleep(0.001)
            self._pending.popleft()
            self._add(_comm_math.step_timing(self._stamps_of(step), self._clock.serial))

    def _stamps_of(self, step: _Step) -> _comm_math.StepStamps:
        ms = self._clock.ms
        origin = step.forward
        data = None if step.previous_end is None else ms(step.previous_end, origin)
        buckets = tuple(
            _comm_math.BucketStamps(index, nbytes, ms(origin, ready), ms(origin, done))
            for index, nbytes, ready, done in step.buckets)
        return _comm_math.StepStamps(step.step, data, ms(origin, step.backward_end),
                                     ms(origin, step.comm_end), ms(origin, step.end), buckets)

    def _add(self, timing: _comm_math.StepTiming) -> None:
        self._last_timing = timing
        self._interval.append(timing)
        if timing.step % self._log_every == 0:
            self._emit()

    def _emit(self) -> None:
        values = _comm_math.interval_values(self._interval, self._world, self._global_batch)
        step = self._interval[-1].step
        steps = len(self._interval)
        self._interval = []
        rank_values = values.rank if self._world > 1 else None
        # The training thread's run-queue delay per step over the interval, first: the agent's
        # straggler rule judges a step at the last of its data, compute and wait times.
        now = (None if self._training_thread is None
               else _run_queue.thread_run_queue_ms(self._training_thread))
        if rank_values is not None and now is not None and self._run_queue_start is not None:
            delay = max(0.0, now - self._run_queue_start) / steps
            rank_values = {"time/runqueue_ms": delay, **rank_values}
        if now is not None:
            self._run_queue_start = now
        global_values = values.global_ if self._rank == 0 else None
        runtime.emit(step, runtime.epoch, rank_values, global_values)

    def close(self) -> None:
        """Writes the steps not yet written (waiting for their CUDA events) and removes the
        forward and optimizer hooks. Runs by itself at exit. Idempotent."""
        if self._closed:
            return
        if self._last is not None:
            self._pending.append(self._last)
            self._last = None
        self._resolve(final=True)
        if self._interval:
            self._emit()
        self._closed = True
        for handle in self._handles:
            handle.remove()
        if self._dropped_steps:
            print(f"ringside: rank {self._rank}: {self._dropped_steps} steps were not timed: "
                  f"their CUDA events did not complete in time", file=sys.stderr, flush=True)


def _first_unfinished(buckets: List[list]) -> int:
    """The index of the first bucket whose all-reduce has not completed; -1: none."""
    for record in list(buckets):
        if record[3] is None:
            return record[0]
    return -1


def watch(ddp_model: DistributedDataParallel, global_batch: Optional[int] = None,
          log_every: int = 1) -> Watcher:
    """Times every gradient bucket's all-reduce and every step of ``ddp_model`` and sends them.

    Registers a DDP communication hook (``ddp_model.register_comm_hook``) that all-reduces
    exactly as DDP does without one: each bucket's gradients multiplied by 1/world size, as DDP's
    reducer does while filling the bucket, then one ``all_reduce`` (sum) of the bucket on the
    model's process group; the gradients are bit-identical to DDP's default. It measures, per
    bucket and step, bytes, all-reduce duration, algbw and busbw (nccl-tests' definitions), and per
    step the step, compute, exposed communication, data and wait times (docs/pytorch.md).

    Every ``log_every`` steps (and at the last step, at exit) each rank sends the means over those
    steps of its own ``time/step_ms``, ``time/compute_ms``, ``time/allreduce_ms``,
    ``time/exposed_comm_ms``, ``time/data_ms`` and ``time/wait_ms`` (with more than one rank), and
    rank 0 the run's: its time/* values, ``comm/bytes``, ``comm/algbw_GBps``, ``comm/busbw_GBps``,
    ``comm/bucket<b>/{bytes,allreduce_ms,algbw_GBps,busbw_GBps}`` and, with ``global_batch``
    (samples per step over all ranks), ``train/samples_per_s``. Steps are counted 1, 2, ... by
    completed backward passes with gradient synchronisation: pass the same numbers to
    ringside.log. With CUDA the figures of a step are sent one or a few steps later, once its
    GPU events have completed.

    Call it once per model, after wrapping it in DistributedDataParallel and before the first
    step. Returns the Watcher. Raises TypeError when ``ddp_model`` is not a
    DistributedDataParallel, ValueError for a ``global_batch`` or ``log_every`` below 1, and
    RuntimeError when the model already has a communication hook.
    """
    if not isinstance(ddp_model, DistributedDataParallel):
        raise TypeError(f"watch() takes a torch.nn.parallel.DistributedDataParallel model, not "
                        f"{type(ddp_model).__name__}: wrap it first, e.g. "
                        f"DistributedDataParallel(model, device_ids=info.device_ids)")
    if global_batch is not None and (isinstance(global_batch, bool) or
                                     not isinstance(global_batch, int) or global_batch < 1):
        raise ValueError(f"global_batch must be a positive int (samples per step over all "
                         f"ranks), not {global_batch!r}")
    if isinstance(log_every, bool) or not isinstance(log_every, int) or log_every < 1:
        raise ValueError(f"log_every must be a positive int (steps per record), not "
                         f"{log_every!r}")
    try:
        return Watcher(ddp_model, global_batch, log_every)
    except RuntimeError as e:
        if "can only be called once" in str(e):
            raise RuntimeError("this model already has a DDP communication hook, and DDP takes "
                               "only one: watch() registers its own, which all-reduces as DDP's "
                               "default does; remove the other register_comm_hook call") from e
        raise
