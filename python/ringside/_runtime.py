"""The process's one Ringside runtime: where records go, this rank's identity and activity, and
what runs at exit.

Records go to the agent's sink (AgentSink) when RINGSIDE_AGENT_ENDPOINT is set and pyzmq and
protobuf import, else to stdout as JSON Lines (docs/metrics.md), which the agent also reads from a
script's output. Created lazily by the first call that needs it, so importing ringside does
nothing.

Thread-safety: every method may be called from any thread (one lock around the output).
"""

import atexit
import math
import os
import sys
import threading
import time
from typing import Any, Callable, Dict, List, Mapping, Optional, TextIO, Tuple

from . import _activity, _env, _records


class _StdoutOutput:
    """Records as JSON Lines on a text stream, each line written and flushed whole."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def metrics(self, step: int, epoch: int, wall_time: float,
                records: List[Tuple[Optional[int], Mapping[str, float]]]) -> None:
        lines = [line for rank, values in records
                 for line in _records.metrics_lines(step, epoch, wall_time, rank, values)]
        self._stream.write("\n".join(lines) + "\n")  # one write, one flush: lines stay whole
        self._stream.flush()

    def params(self, flat: Mapping[str, str]) -> None:
        self._stream.write(_records.config_line(flat) + "\n")
        self._stream.flush()

    def flush(self, timeout_s: Optional[float]) -> bool:
        self._stream.flush()
        return True

    def close(self) -> None:
        try:
            self._stream.flush()
        except (OSError, ValueError):
            pass  # stdout already closed at exit


class _AgentOutput:
    """Records as points of the agent's sink; non-finite values are left out (the agent skips
    them too when they come as null on stdout)."""

    def __init__(self, sink: Any) -> None:
        self._sink = sink
        self._point = sink.Point

    def metrics(self, step: int, epoch: int, wall_time: float,
                records: List[Tuple[Optional[int], Mapping[str, float]]]) -> None:
        for rank, values in records:  # each record is kept or dropped whole
            glob = rank is None
            points = [self._point(step, epoch, wall_time, glob, name, value)
                      for name, value in values.items() if math.isfinite(value)]
            self._sink.sink.write_points(points)

    def params(self, flat: Mapping[str, str]) -> None:
        self._sink.sink.send_params(flat)

    def flush(self, timeout_s: Optional[float]) -> bool:
        return self._sink.sink.flush(timeout_s)

    def close(self) -> None:
        self._sink.sink.flush()
        self._sink.sink.close()


class _SinkHandle:
    """The agent sink with the module that defines its Point (imported only when used)."""

    def __init__(self, module: Any, sink: Any) -> None:
        self.Point = module.Point
        self.sink = sink


def _open_agent_sink(agent: _env.AgentEnv, rank: int,
                     activity: _activity.RankActivity) -> Optional[_SinkHandle]:
    """An AgentSink, or None (with one line on stderr) when pyzmq or protobuf cannot be
    imported. Raises ValueError for an endpoint or keys ZeroMQ refuses."""
    try:
        from . import _agent_sink
    except Exception as e:  # ImportError, or a protobuf runtime that refuses the bindings
        print(f"ringside: cannot send to the agent at {agent.endpoint} ({type(e).__name__}: {e}); "
              f"records go to stdout as JSON Lines instead, which the agent also reads, but "
              f"without heartbeats: install python3-zmq and python3-protobuf (pyzmq, protobuf "
              f">= 3.20)", file=sys.stderr, flush=True)
        return None
    return _SinkHandle(_agent_sink, _agent_sink.AgentSink(agent, rank, activity))


class Runtime:
    """Where this process's records go. ``environ`` and ``stdout`` are for tests."""

    def __init__(self, environ: Mapping[str, str] = os.environ,
                 stdout: Optional[TextIO] = None) -> None:
        self.activity = _activity.RankActivity()
        self._environ = environ
        self._stdout = stdout
        self._lock = threading.RLock()
        self._output: Any = None
        self._identity: Optional[Tuple[int, int]] = None
        self._epoch = 0
        self._param_keys: set = set()
        self._finishers: List[Callable[[], None]] = []
        self._pid = os.getpid()
        self._closed = False

    # ---- identity

    def identity(self) -> Tuple[int, int]:
        """(rank, world size): from set_identity(), else the environment (ringside._env).
        Raises ValueError when the environment's variables are wrong."""
        if self._identity is None:
            env = _env.read_dist_env(self._environ)
            self._identity = (env.rank, env.world_size)
        return self._identity

    def set_identity(self, rank: int, world_size: int) -> None:
        """The process group's own rank and size (ringside.torch sets them once it has joined)."""
        self._identity = (rank, world_size)

    @property
    def epoch(self) -> int:
        """The epoch last given to log() (0 before any)."""
        return self._epoch

    # ---- output

    def _get_output(self) -> Any:
        with self._lock:
            if self._output is None:
                agent = _env.read_agent_env(self._environ)
                handle = None
                if agent is not None:
                    handle = _open_agent_sink(agent, self.identity()[0], self.activity)
                if handle is not None:
                    self._output = _AgentOutput(handle)
                else:
                    self._output = _StdoutOutput(self._stdout or sys.stdout)
                if self._stdout is None:
                    atexit.register(self.shutdown)
            return self._output

    def start(self) -> None:
        """Opens the output now (ringside.torch does, so that heartbeats flow during set-up)."""
        self._get_output()

    @property
    def to_agent(self) -> bool:
        """True when records go to the agent's sink rather than stdout."""
        return isinstance(self._get_output(), _AgentOutput)

    def emit(self, step: int, epoch: int, rank_values: Optional[Mapping[str, float]],
             global_values: Optional[Mapping[str, float]], wall_time: Optional[float] = None
             ) -> None:
        """Writes this rank's own values (rank_values) and the run's (global_values) for one
        step; either may be None or empty. ``wall_time``: Unix seconds, now by default."""
        if os.getpid() != self._pid or self._closed:
            return
        rank, _ = self.identity()
        output = self._get_output()
        wall = time.time() if wall_time is None else wall_time
        records: List[Tuple[Optional[int], Mapping[str, float]]] = []
        if global_values:
            records.append((None, global_values))
        if rank_values:
            records.append((rank, rank_values))
        if records:
            with self._lock:
                output.metrics(step, epoch, wall, records)

    def log(self, step: int, metrics: Mapping[str, Any], epoch: Optional[int] = None) -> None:
        """ringside.log: the values are this rank's; rank 0's are also the run's (global)."""
        step = _records.check_step("step", step)
        if epoch is not None:
            self._epoch = _records.check_step("epoch", epoch)
        values = _records.check_metrics(metrics)
        rank, world = self.identity()
        if world == 1:
            self.emit(step, self._epoch, None, values)
        else:
            self.emit(step, self._epoch, values, values if rank == 0 else None)

    def config(self, params: Any) -> Dict[str, str]:
        """ringside.config: checks and flattens ``params``; rank 0 sends or prints them.
        Returns the flat parameters."""
        if not isinstance(params, Mapping) and hasattr(params, "__dict__"):
            params = vars(params)  # an argparse.Namespace
        flat = _records.flatten_params(params)
        with self._lock:
            keys = self._param_keys | flat.keys()
            if len(keys) > _records.MAX_RUN_PARAMS:
                raise ValueError(f"a run holds at most {_records.MAX_RUN_PARAMS} parameters; with "
                                 f"these it would have {len(keys)}")
            self._param_keys = keys
        if self.identity()[0] == 0 and flat and os.getpid() == self._pid and not self._closed:
            output = self._get_output()
            with self._lock:
                output.params(flat)
        return flat

    def flush(self, timeout_s: Optional[float] = None) -> bool:
        """Waits until the records so far are sent (agent: at most timeout_s, 2 s by default)."""
        if self._output is None or os.getpid() != self._pid or self._closed:
            return True
        return self._output.flush(timeout_s)

    def add_finisher(self, finisher: Callable[[], None]) -> None:
        """Runs ``finisher`` at shutdown, before the output is flushed (newest first)."""
        with self._lock:
            self._finishers.append(finisher)

    def shutdown(self) -> None:
        """At exit: the finishers (ringside.torch's watchers write their last step), then the
        output is flushed (up to 2 s) and closed. Idempotent; nothing in a forked child."""
        if os.getpid() != self._pid or self._closed:
            return
        self.activity.set_phase(_activity.FINISHING)
        while self._finishers:
            finisher = self._finishers.pop()
            try:
                finisher()
            except Exception as e:  # never let one hide the others or the flush
                print(f"ringside: at exit: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
        if self._output is not None:
            self._output.close()
        self._closed = True


runtime = Runtime()
