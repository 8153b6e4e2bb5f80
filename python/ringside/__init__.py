"""Ringside for your own PyTorch DDP scripts (docs/pytorch.md).

Three calls make a DistributedDataParallel script a Ringside run with the trainer's dashboard::

    import ringside, ringside.torch
    info = ringside.torch.init_process_group()          # from the agent's, mpirun's or torchrun's env
    model = DistributedDataParallel(net.to(info.device), device_ids=info.device_ids)
    ringside.torch.watch(model, global_batch=256)       # per-bucket all-reduce time, busbw, step times
    ...
    ringside.log(step, {"train/loss": loss.item()}, epoch=epoch)

Launched by a Ringside agent (RINGSIDE_AGENT_ENDPOINT set), records go to the agent's sink over
ZeroMQ in the trainer's wire format, with heartbeats; otherwise they are printed on stdout as
JSON Lines (docs/metrics.md), so ``mpirun -np 2 python3 train.py`` shows them too.

This module needs only the standard library (plus pyzmq and protobuf to reach an agent);
``torch`` is imported by ``ringside.torch`` only.
"""

import json
import os
from typing import Any, Dict, Mapping, Optional

from ._runtime import runtime as _process_runtime

__all__ = ["log", "config", "params", "flush", "__version__"]

# The agent sets it for the ranks of a sweep's trial (agent/include/ringside/agent/sweep/trial_spec.h).
PARAMS_ENV = "RINGSIDE_PARAMS"

# The Ringside release this package belongs to (CMakeLists.txt's project version).
__version__ = "0.1.0"


def log(step: int, metrics: Mapping[str, float], epoch: Optional[int] = None) -> None:
    """Records this rank's metric values at a training step.

    ``step``: global optimizer steps completed, the first step being 1 (the step numbers
    ``ringside.torch.watch`` counts). ``metrics``: name -> number, names as docs/metrics.md has
    them (``train/loss`` in nats, ``train/lr``, ``test/loss``, ``test/accuracy`` as a fraction
    0-1, or any ``group/name`` of your own, which gets a chart of its own); a value may be any
    number ``float()`` accepts (a 0-d tensor's ``.item()`` is best: a CUDA tensor makes the call
    wait for the GPU). ``epoch``: 0-based; None keeps the epoch given last (0 at first).

    Rank 0's values are also the run's (global) values, which the dashboard's charts show; every
    other rank's are its own (per-rank views). With one rank there are only global values.
    Non-finite values are written as ``null`` on stdout and left out for the agent.

    Never blocks on the network: under an agent the values join a bounded queue (a record that
    does not fit is dropped whole and counted on stderr). Thread-safe. Raises TypeError for a
    step, epoch, name or value of the wrong type and ValueError for a negative step or epoch, an
    empty or over-long (256 bytes) name, or more than 1,024 names; ValueError also when the
    launcher's environment is inconsistent (e.g. OMPI_COMM_WORLD_RANK without its size).
    """
    _process_runtime.log(step, metrics, epoch)


def config(params: Mapping[str, Any]) -> None:
    """Declares the run's hyperparameters, stored with the run (History shows them as columns,
    Compare diffs them key by key).

    ``params``: a dict, nested dicts becoming dotted keys (``{"optimizer": {"lr": 0.1}}`` is
    ``optimizer.lr``), or an ``argparse.Namespace``. Values are kept as JSON: numbers, strings,
    true/false/null, a list as its JSON text; other objects as their ``str()``. Call it once
    (later calls add keys and replace values). Rank 0 sends them; other ranks only check them.
    Without an agent rank 0 prints ``{"type":"config","params":{...}}`` on stdout.

    Raises TypeError for a params that is not a mapping or a key that is not a str, and
    ValueError past the bounds the agent keeps: 1,024 keys in all, keys of at most 256 bytes,
    values of at most 4 KiB of JSON text.
    """
    _process_runtime.config(params)


def params(defaults: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
    """The parameter values of this run when it is a trial of a Ringside sweep (docs/sweeps.md),
    over ``defaults``: a new dict, name -> value (numbers, strings, booleans, lists of numbers as
    the sweep's parameters give them). Outside a sweep it is a copy of ``defaults`` (empty without
    them), so a script runs the same by hand::

        hp = ringside.params({"lr": 0.1, "width": 256})
        model = make_model(width=int(hp["width"]))

    The agent records a trial's values as the run's parameters itself: there is no need to pass
    them to :func:`config` (doing so is harmless). Reads the environment variable RINGSIDE_PARAMS
    (a JSON object) on every call; raises ValueError when it holds something else.
    """
    values: Dict[str, Any] = dict(defaults or {})
    text = os.environ.get(PARAMS_ENV)
    if text:
        try:
            given = json.loads(text)
        except ValueError as error:
            raise ValueError(f"{PARAMS_ENV} is not JSON ({error}): {text[:200]}") from None
        if not isinstance(given, dict):
            raise ValueError(f"{PARAMS_ENV} is not a JSON object: {text[:200]}")
        values.update(given)
    return values


def flush(timeout: Optional[float] = None) -> bool:
    """Waits until the records so far have been handed over: to the agent's socket (at most
    ``timeout`` seconds, 2 by default), or to stdout. Returns False when some are still queued
    because no agent was reachable. Runs by itself at exit; call it before ``os._exit``."""
    return _process_runtime.flush(timeout)
