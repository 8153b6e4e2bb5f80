"""What this rank is doing right now, for its heartbeat (docs/metrics.md, "Hangs").

The training thread (through ringside.torch's hooks) sets the phase, the steps completed and the
collective it is blocked in; the agent sink's sender thread reads a snapshot about once a second
and sends it as ``RankHeartbeat``, also while the training thread is blocked in an all-reduce, so
the owner agent can say where a run hangs and which rank it waits for. It mirrors the trainer's
``RankActivity`` (trainer/include/ringside/trainer/rank_activity.h), wait descriptions included,
so that ranks of either kind that wait in the same collective read the same.

Thread-safety: setters are called from the training thread and the communication library's
callback threads; snapshot() from any thread. Each field is one attribute store (atomic under
the interpreter lock); a snapshot may mix two consecutive updates, which a once-a-second report
tolerates.
"""

import time
from dataclasses import dataclass
from typing import Optional

# RankPhase of common/proto/ringside.proto, by number, so that this module needs no protobuf.
SETUP = 1
DATA = 2
COMPUTE = 3
ALLREDUCE = 4
OPTIMIZER = 5
EVALUATION = 6
CHECKPOINT = 7
SYNC = 8
FINISHING = 9

# The kinds of collective a rank waits in (RankActivity's kWait* in the trainer).
WAIT_ALLREDUCE = "all-reduce"
WAIT_RENDEZVOUS = "process-group rendezvous"


@dataclass(frozen=True)
class ActivitySnapshot:
    """One reading of a RankActivity; times in seconds, ``last_step_ms`` in ms."""

    phase: int
    phase_seconds: float
    step: int  # steps completed
    bucket: int  # ALLREDUCE: the bucket waited for; -1 otherwise
    work_done: int
    last_step_ms: float
    waiting_in: Optional[str]  # a WAIT_* kind while blocked, else None
    waiting_seconds: float


class RankActivity:
    """The rank's phase, steps completed, work done and the collective it waits in."""

    def __init__(self) -> None:
        self._phase = SETUP
        self._phase_start = time.monotonic()
        self._step = 0
        self._bucket = -1
        self._work_done = 0
        self._last_step_ms = 0.0
        self._waiting_in: Optional[str] = None
        self._wait_start = 0.0

    def set_phase(self, phase: int) -> None:
        """Enters ``phase`` (a RankPhase number); restarts its clock when it changes."""
        if phase != self._phase:
            self._phase_start = time.monotonic()
            self._phase = phase
            if phase != ALLREDUCE:
                self._bucket = -1

    @property
    def phase(self) -> int:
        return self._phase

    def set_bucket(self, bucket: int) -> None:
        """The gradient bucket an ALLREDUCE phase waits for; -1: none."""
        self._bucket = bucket

    def step_completed(self, step: int, step_ms: float) -> None:
        """A training step completed: ``step`` in all, the last one took ``step_ms`` ms."""
        self._last_step_ms = step_ms
        self._step = step
        self._work_done += 1

    def work_done(self) -> None:
        """Another unit of work outside training steps completed (an evaluation batch)."""
        self._work_done += 1

    def begin_wait(self, what: str) -> None:
        """The training thread blocks in the collective ``what`` (a WAIT_* kind) until
        end_wait()."""
        self._wait_start = time.monotonic()
        self._waiting_in = what

    def end_wait(self) -> None:
        self._waiting_in = None

    def snapshot(self) -> ActivitySnapshot:
        now = time.monotonic()
        waiting_in = self._waiting_in
        return ActivitySnapshot(
            phase=self._phase, phase_seconds=max(0.0, now - self._phase_start), step=self._step,
            bucket=self._bucket, work_done=self._work_done, last_step_ms=self._last_step_ms,
            waiting_in=waiting_in,
            waiting_seconds=max(0.0, now - self._wait_start) if waiting_in else 0.0)


def describe_wait(snapshot: ActivitySnapshot) -> str:
    """"the all-reduce of bucket 2 of step 1752", "the process-group rendezvous during set-up":
    the collective a snapshot waits in, worded as the trainer's RankActivity::describeWait words
    it; "" when it does not wait."""
    if snapshot.waiting_in is None:
        return ""
    text = "the " + snapshot.waiting_in
    if snapshot.phase == ALLREDUCE and snapshot.bucket >= 0:
        text += f" of bucket {snapshot.bucket}"
    if snapshot.phase == SETUP:
        return text + " during set-up"
    if snapshot.phase == EVALUATION:
        return text + f" of the evaluation after step {snapshot.step}"
    if snapshot.phase == CHECKPOINT:
        return text + f" of the checkpoint at step {snapshot.step}"
    if snapshot.phase == FINISHING:
        return text + f" at the end of the run (step {snapshot.step})"
    if snapshot.phase == SYNC:
        return text + f" after step {snapshot.step}"
    return text + f" of step {snapshot.step + 1}"
