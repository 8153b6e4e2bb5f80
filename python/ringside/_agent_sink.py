"""AgentSink: one rank's metrics, heartbeats and parameters to the Ringside agent over ZeroMQ.

The Python twin of the trainer's ``ZmqMetricSink`` (trainer/include/ringside/trainer/
zmq_metrics_sink.h; docs/metrics.md, "The agent sink"), speaking the same wire format: one frame
per message on a PUSH socket connected to RINGSIDE_AGENT_ENDPOINT, each a serialized
``ringside.v1.Envelope`` (common/proto/ringside.proto) with protocol_version 2 and request_id 0,
whose body is ``rank_metrics``, ``rank_heartbeat`` or ``run_params``.

The training thread only appends to a bounded queue (write_points never waits for the network).
A sender thread owns the socket: at least every 100 ms it packs the queue into batches of at most
1,024 points, numbered batch_seq = 1, 2, ... per rank, and sends them without waiting. While no
agent is connected the points wait in the queue; when it is full a new record is dropped whole
and counted (every batch carries the running count in dropped_total; stderr says so at once,
then at most every 10 s). Each connection event (the socket monitor's CONNECTED) puts the last
256 sent batches back in front of anything new, since a connection that died may have lost them
in transit; the agent skips a batch_seq it already journaled. Heartbeats are never queued or
resent: the next one replaces a lost one. At exit flush() waits up to 2 s for the queue, and the
socket lingers 1 s more.

Thread-safety: write_points, send_params, flush and close may be called from any thread; the
socket belongs to the sender thread. A forked child (a DataLoader worker) never touches the
parent's socket: every call is a no-op in another process.
"""

import collections
import errno
import os
import socket
import sys
import threading
import time
from dataclasses import dataclass
from typing import Deque, List, Mapping, NamedTuple, Optional

import zmq
import zmq.utils.monitor

from . import _activity
from ._env import AgentEnv
from ._proto import ringside_pb2 as pb

# Envelope.protocol_version of every message sent (RunParams needs 2; the agent takes rank
# messages with 1 or 2).
PROTOCOL_VERSION = 2
_DROP_REPORT_INTERVAL_S = 10.0
# RankMetricPoint.global as keyword arguments ("global" is a Python keyword).
_GLOBAL_FIELD = {True: {"global": True}, False: {}}


class Point(NamedTuple):
    """One metric value: ``step`` and ``epoch`` numbers, ``wall_time`` in Unix seconds, ``glob``
    for a value of the run (rank 0 only) rather than the rank's own, the metric ``name`` and its
    ``value``."""

    step: int
    epoch: int
    wall_time: float
    glob: bool
    name: str
    value: float


@dataclass(frozen=True)
class SinkOptions:
    """The sink's bounds and periods (the trainer's ZmqMetricSinkOptions defaults)."""

    queue_capacity: int = 65536  # points waiting for the sender
    resend_window: int = 256  # batches kept after sending, sent again after a reconnect
    flush_interval_s: float = 0.1  # the sender packs and sends at least this often
    max_batch_points: int = 1024  # points per RankMetrics message
    send_high_water_mark: int = 64  # ZMQ_SNDHWM, messages
    reconnect_interval_ms: int = 100  # ZMQ_RECONNECT_IVL
    flush_timeout_s: float = 2.0  # how long flush() waits by default
    linger_ms: int = 1000  # ZMQ_LINGER when the socket closes
    heartbeat_interval_s: float = 1.0


@dataclass
class SinkStats:
    """Counters of an AgentSink, for tests and the report at exit."""

    dropped_points: int = 0  # dropped because the queue was full
    queued_points: int = 0  # accepted into the queue
    sent_batches: int = 0  # RankMetrics sent for the first time (the last batch_seq)
    resent_batches: int = 0  # messages sent again after a reconnect
    heartbeats: int = 0  # heartbeats handed to ZeroMQ


class _Outgoing:
    __slots__ = ("frame", "points", "resend")

    def __init__(self, frame: bytes, points: int, resend: bool) -> None:
        self.frame = frame
        self.points = points  # metric points in it (0 for RunParams)
        self.resend = resend  # already sent once (from the window)


class AgentSink:
    """Sends this rank's points, heartbeats and parameters to the agent at ``agent.endpoint``.

    ``rank`` goes into every message; ``activity``, when given, is read for a heartbeat every
    ``options.heartbeat_interval_s``. Raises ValueError for an endpoint or a CURVE key ZeroMQ
    refuses (naming it) and zmq.ZMQError when the socket cannot be made.
    """

    def __init__(self, agent: AgentEnv, rank: int,
                 activity: Optional[_activity.RankActivity] = None,
                 options: SinkOptions = SinkOptions()) -> None:
        self._agent = agent
        self._rank = rank
        self._activity = activity
        self._options = options
        self._pid = os.getpid()
        self._host = socket.gethostname()
        self._mutex = threading.Lock()
        self._wake = threading.Condition(self._mutex)  # sender: new points, flush or stop
        self._drained = threading.Condition(self._mutex)  # flush(): the sender went idle
        self._queue: Deque[Point] = collections.deque()  # guarded by _mutex
        self._params: List[Mapping[str, str]] = []  # guarded by _mutex
        self._flush_requested = False  # guarded by _mutex
        self._sender_idle = True  # guarded by _mutex: queue empty and nothing unsent
        self._stop = False
        self._closed = False
        self.stats = SinkStats()
        # Sender thread state.
        self._next_seq = 1
        self._outbox: Deque[_Outgoing] = collections.deque()
        self._window: Deque[bytes] = collections.deque()
        self._send_error_reported = False
        self._context = zmq.Context()
        try:
            self._push, self._monitor = self._connect()
        except zmq.ZMQError as e:
            self._context.destroy(linger=0)
            if e.errno in (errno.EINVAL, errno.EPROTONOSUPPORT, errno.ENOENT):
                raise ValueError(f"cannot use agent endpoint {agent.endpoint!r}: {e} "
                                 f"(RINGSIDE_AGENT_ENDPOINT must be a ZeroMQ endpoint such as "
                                 f"ipc:///run/ringside/ranks.sock)") from None
            raise
        self._thread = threading.Thread(target=self._sender_loop, daemon=True,
                                        name=f"ringside-sink-rank{rank}")
        self._thread.start()

    # ---- the training thread's side

    def write_points(self, points: List[Point]) -> bool:
        """Queues one record's points; never blocks on the network. False when the queue could
        not take all of them: the whole record is dropped and counted."""
        if not points or os.getpid() != self._pid or self._closed:
            return not points
        with self._mutex:
            if len(self._queue) + len(points) > self._options.queue_capacity:
                self.stats.dropped_points += len(points)
                return False
            self._queue.extend(points)
            self.stats.queued_points += len(points)
            self._sender_idle = False
            if len(self._queue) >= self._options.max_batch_points:
                self._wake.notify_all()
        return True

    def send_params(self, params: Mapping[str, str]) -> None:
        """Queues a RunParams message (flat keys -> JSON text, already within the bounds)."""
        if os.getpid() != self._pid or self._closed:
            return
        with self._mutex:
            self._params.append(dict(params))
            self._sender_idle = False
            self._wake.notify_all()

    def flush(self, timeout_s: Optional[float] = None) -> bool:
        """Waits until everything queued has been handed to ZeroMQ, at most ``timeout_s``
        (options.flush_timeout_s by default). False when some is still unsent (no agent
        reachable in that time)."""
        if os.getpid() != self._pid or self._closed:
            return True
        deadline = time.monotonic() + (self._options.flush_timeout_s if timeout_s is None
                                       else timeout_s)
        with self._mutex:
            if self._sender_idle:
                return True
            self._flush_requested = True
            self._wake.notify_all()
            while not self._sender_idle:
                left = deadline - time.monotonic()
                if left <= 0 or not self._thread.is_alive():
                    return False
                self._drained.wait(left)
        return True

    def close(self) -> None:
        """Stops the sender after one last attempt to send what is queued, closes the socket
        (waiting at most options.linger_ms for what ZeroMQ holds) and says on stderr how many
        points the agent did not get, if any. Idempotent."""
        if os.getpid() != self._pid or self._closed:
            return
        with self._mutex:
            self._stop = True
            self._wake.notify_all()
        self._thread.join()
        self._closed = True
        with self._mutex:
            unsent = len(self._queue) + sum(o.points for o in self._outbox if not o.resend)
        dropped = self.stats.dropped_points
        if dropped or unsent:
            why = []
            if dropped:
                why.append(f"{dropped} dropped because the queue "
                           f"({self._options.queue_capacity} points) was full")
            if unsent:
                why.append(f"{unsent} unsent at exit")
            print(f"ringside: rank {self._rank}: the agent at {self._agent.endpoint} did not get "
                  f"{dropped + unsent} metric points: {', '.join(why)}", file=sys.stderr,
                  flush=True)
        self._push.disable_monitor()
        self._monitor.close(linger=0)
        self._push.close(linger=self._options.linger_ms)
        self._context.term()

    # ---- the sender thread

    def _connect(self):
        push = self._context.socket(zmq.PUSH)
        # Queue nothing for an agent that is not connected: batches stay here, where they are
        # counted, bounded and resent, instead of in a ZeroMQ pipe that dies with a connection.
        push.setsockopt(zmq.IMMEDIATE, 1)
        push.setsockopt(zmq.SNDHWM, self._options.send_high_water_mark)
        push.setsockopt(zmq.LINGER, self._options.linger_ms)
        push.setsockopt(zmq.RECONNECT_IVL, self._options.reconnect_interval_ms)
        if self._agent.curve:
            try:
                push.curve_serverkey = self._agent.agent_public_key.encode()
                push.curve_publickey = self._agent.run_public_key.encode()
                push.curve_secretkey = self._agent.run_secret_key.encode()
            except zmq.ZMQError as e:
                push.close(linger=0)
                raise ValueError(f"agent metrics sink CURVE keys: {e}") from None
        # The monitor is attached before connecting so that the first CONNECTED is seen.
        monitor = push.get_monitor_socket(zmq.EVENT_CONNECTED | zmq.EVENT_DISCONNECTED)
        try:
            push.connect(self._agent.endpoint)
        except zmq.ZMQError:
            push.disable_monitor()
            monitor.close(linger=0)
            push.close(linger=0)
            raise
        return push, monitor

    def _handle_monitor_events(self) -> None:
        """On each new connection the resend window goes to the front of the outbox."""
        while True:
            try:
                event = zmq.utils.monitor.recv_monitor_message(self._monitor, zmq.NOBLOCK)
            except zmq.Again:
                return
            except zmq.ZMQError:
                return
            if event["event"] == zmq.EVENT_CONNECTED:
                while self._outbox and self._outbox[0].resend:
                    self._outbox.popleft()
                for frame in reversed(self._window):
                    self._outbox.appendleft(_Outgoing(frame, 0, True))

    def _take(self) -> bool:
        """Moves the next message (parameters first, else up to max_batch_points points) from
        the queue into the outbox; False when there is nothing."""
        with self._mutex:
            if self._params:
                params = self._params.pop(0)
                points = None
            elif self._queue:
                count = min(len(self._queue), self._options.max_batch_points)
                points = [self._queue.popleft() for _ in range(count)]
            else:
                return False
            self._sender_idle = False
        envelope = pb.Envelope(protocol_version=PROTOCOL_VERSION)
        if points is None:
            message = envelope.run_params
            message.run_id = self._agent.run_id
            message.rank = self._rank
            message.params.update(params)
            self._outbox.append(_Outgoing(envelope.SerializeToString(), 0, False))
            return True
        metrics = envelope.rank_metrics
        metrics.run_id = self._agent.run_id
        metrics.rank = self._rank
        metrics.batch_seq = self._next_seq
        metrics.dropped_total = self.stats.dropped_points
        add = metrics.points.add
        for p in points:
            add(step=p.step, epoch=p.epoch, wall_time=p.wall_time, name=p.name, value=p.value,
                **_GLOBAL_FIELD[p.glob])
        self._next_seq += 1
        self._outbox.append(_Outgoing(envelope.SerializeToString(), len(points), False))
        return True

    def _send_front(self) -> bool:
        """Sends the outbox's first message without waiting; False when no agent is connected
        or its pipe is full (the message stays first)."""
        front = self._outbox[0]
        try:
            self._push.send(front.frame, zmq.NOBLOCK, copy=False)
        except zmq.Again:
            return False
        except zmq.ZMQError as e:
            if not self._send_error_reported:
                print(f"ringside: rank {self._rank}: sending metrics to the agent failed: {e}",
                      file=sys.stderr, flush=True)
                self._send_error_reported = True
            return False
        self._outbox.popleft()
        if front.resend:
            self.stats.resent_batches += 1
        else:
            if front.points:
                self.stats.sent_batches += 1
            if self._options.resend_window > 0:
                self._window.append(front.frame)
                while len(self._window) > self._options.resend_window:
                    self._window.popleft()
        return True

    def _send_heartbeat(self) -> None:
        a = self._activity.snapshot()
        envelope = pb.Envelope(protocol_version=PROTOCOL_VERSION)
        beat = envelope.rank_heartbeat
        beat.run_id = self._agent.run_id
        beat.rank = self._rank
        beat.host = self._host
        beat.pid = self._pid
        beat.phase = a.phase
        beat.phase_seconds = a.phase_seconds
        beat.step = a.step
        beat.bucket = a.bucket
        if a.waiting_in is not None:
            beat.waiting_in = _activity.describe_wait(a)
            beat.waiting_seconds = a.waiting_seconds
        beat.work_done = a.work_done
        beat.last_step_ms = a.last_step_ms
        beat.wall_time = time.time()
        try:
            self._push.send(envelope.SerializeToString(), zmq.NOBLOCK)
            self.stats.heartbeats += 1
        except zmq.ZMQError:
            pass  # no agent connected or its pipe full: the next heartbeat tries again

    def _wait_for_agent(self, timeout_s: float) -> None:
        poller = zmq.Poller()
        poller.register(self._push, zmq.POLLOUT)
        poller.register(self._monitor, zmq.POLLIN)
        try:
            poller.poll(timeout_s * 1000.0)
        except zmq.ZMQError:
            pass

    def _report_drops(self, reported: int, last_report: float, stopping: bool):
        dropped = self.stats.dropped_points
        now = time.monotonic()
        if dropped > reported and (reported == 0 or stopping
                                   or now - last_report >= _DROP_REPORT_INTERVAL_S):
            if not stopping:
                print(f"ringside: rank {self._rank}: the metrics queue for the agent at "
                      f"{self._agent.endpoint} is full ({self._options.queue_capacity} points; is "
                      f"the agent running?): {dropped} points dropped so far", file=sys.stderr,
                      flush=True)
            return dropped, now
        return reported, last_report

    def _sender_loop(self) -> None:
        reported_drops, last_drop_report = 0, 0.0
        next_heartbeat = time.monotonic()
        while True:
            # Read before sending, so that the last pass sends everything queued before close().
            stopping = self._stop
            self._handle_monitor_events()
            if self._activity is not None and not stopping and time.monotonic() >= next_heartbeat:
                self._send_heartbeat()
                next_heartbeat = time.monotonic() + self._options.heartbeat_interval_s
            blocked = False
            while True:
                if not self._outbox and not self._take():
                    break
                # A connection made since the last look must get the resend window before
                # anything new: the agent skips a batch_seq lower than one it has journaled.
                self._handle_monitor_events()
                if not self._send_front():
                    blocked = True
                    break
            with self._mutex:
                self._sender_idle = (not blocked and not self._queue and not self._params
                                     and not self._outbox)
                if self._sender_idle:
                    self._flush_requested = False
                self._drained.notify_all()
            reported_drops, last_drop_report = self._report_drops(reported_drops,
                                                                  last_drop_report, stopping)
            if stopping:
                return
            wait_s = self._options.flush_interval_s
            if self._activity is not None:
                wait_s = max(0.0, min(wait_s, next_heartbeat - time.monotonic()))
            if blocked:
                # Wake when the agent (re)connects or its pipe has room, or to retry.
                self._wait_for_agent(wait_s)
                continue
            with self._mutex:
                if (not self._stop and not self._flush_requested and not self._params
                        and len(self._queue) < self._options.max_batch_points):
                    self._wake.wait(wait_s)
