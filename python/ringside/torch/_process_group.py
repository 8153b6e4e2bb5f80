"""ringside.torch.init_process_group: torch.distributed from the launcher's environment."""

import datetime
import os
from dataclasses import dataclass
from typing import List, Optional, Union

import torch
import torch.distributed as dist

from .. import _activity, _env
from .._runtime import runtime


@dataclass(frozen=True)
class ProcessGroupInfo:
    """Where this rank sits and what it computes on.

    ``device``: ``cuda:<i>`` (the rank's GPU among those visible to it) with nccl, else ``cpu``;
    ``device_ids``: ``[i]`` to pass to DistributedDataParallel with CUDA, None on CPU.
    ``master_addr``/``master_port``: the rendezvous used.
    """

    rank: int
    world_size: int
    local_rank: int
    local_world_size: int
    backend: str
    device: torch.device
    device_ids: Optional[List[int]]
    master_addr: str
    master_port: int

    @property
    def is_main(self) -> bool:
        """True on rank 0 (the rank whose values are the run's)."""
        return self.rank == 0


def _choose_backend(backend: Optional[str]) -> str:
    if backend is not None:
        return backend
    return "nccl" if torch.cuda.is_available() and dist.is_nccl_available() else "gloo"


def _cuda_device(env: _env.DistEnv) -> int:
    """The rank's GPU index among the visible ones: its local rank, as one GPU per rank."""
    visible = torch.cuda.device_count()
    if env.local_rank >= visible:
        assigned = os.environ.get("CUDA_VISIBLE_DEVICES")
        shown = f" (CUDA_VISIBLE_DEVICES={assigned!r})" if assigned is not None else ""
        raise RuntimeError(
            f"rank {env.rank} is local rank {env.local_rank} of {env.local_world_size} on this "
            f"node but only {visible} GPU(s) are visible{shown}: NCCL needs one GPU per rank; "
            f"start at most {visible} ranks per node, or pass backend='gloo'")
    return env.local_rank


def _timeout(timeout: Union[None, float, datetime.timedelta]) -> Optional[datetime.timedelta]:
    if timeout is None or isinstance(timeout, datetime.timedelta):
        return timeout
    if not timeout > 0:
        raise ValueError(f"timeout must be positive seconds or a timedelta, not {timeout!r}")
    return datetime.timedelta(seconds=float(timeout))


def _export(env: _env.DistEnv, addr: str, port: int) -> None:
    """Sets torchrun's variables where the launcher did not, so that code reading LOCAL_RANK and
    the like (and torch's env:// rendezvous) finds them."""
    for name, value in (("RANK", env.rank), ("WORLD_SIZE", env.world_size),
                        ("LOCAL_RANK", env.local_rank),
                        ("LOCAL_WORLD_SIZE", env.local_world_size), ("MASTER_ADDR", addr),
                        ("MASTER_PORT", port)):
        if not os.environ.get(name):
            os.environ[name] = str(value)


def _info(env: _env.DistEnv, backend: str, addr: str, port: int) -> ProcessGroupInfo:
    rank, world = dist.get_rank(), dist.get_world_size()
    if backend == "nccl":
        index = _cuda_device(env)
        device, device_ids = torch.device("cuda", index), [index]
    else:
        device, device_ids = torch.device("cpu"), None
    return ProcessGroupInfo(rank, world, env.local_rank, env.local_world_size, backend, device,
                            device_ids, addr, port)


def init_process_group(backend: Optional[str] = None,
                       timeout: Union[None, float, datetime.timedelta] = None
                       ) -> ProcessGroupInfo:
    """Joins ``torch.distributed``'s default process group as the launcher placed this process.

    Rank, world size and local rank come from the environment of Ringside's agent or plain Open
    MPI ``mpirun`` (``OMPI_COMM_WORLD_*``) or ``torchrun`` (``RANK``, ``WORLD_SIZE``,
    ``LOCAL_RANK``, ...); the rendezvous from ``MASTER_ADDR``/``MASTER_PORT`` (127.0.0.1:29500 when
    unset and every rank is on this node). ``backend``: None picks ``nccl`` where CUDA is
    available (the agent hides the GPUs from a CPU run: ``CUDA_VISIBLE_DEVICES=""``), else
    ``gloo``; with nccl the rank's GPU is its local rank among the visible ones, made the current
    device. ``timeout``: seconds or a timedelta for collectives (torch's default when None).

    Also sets RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR and MASTER_PORT in
    ``os.environ`` where unset, and, under an agent, starts the rank's heartbeat (phase set-up,
    waiting in the rendezvous until every rank has joined).

    Returns the rank's ProcessGroupInfo. When the default group already exists it is not joined
    again; its rank and size are returned. Raises ValueError for an inconsistent environment or a
    multi-node run without MASTER_ADDR/MASTER_PORT (saying what to set), RuntimeError when there
    are more ranks on this node than visible GPUs with nccl, and what torch.distributed raises
    when the rendezvous fails or times out.
    """
    env = _env.read_dist_env()
    addr, port = _env.rendezvous(env)
    chosen = _choose_backend(backend)
    kwargs = {"timeout": _timeout(timeout)} if timeout is not None else {}
    if dist.is_initialized():
        info = _info(env, dist.get_backend(), addr, port)
    else:
        _export(env, addr, port)
        if chosen == "nccl":
            torch.cuda.set_device(_cuda_device(env))
        runtime.set_identity(env.rank, env.world_size)
        runtime.start()  # heartbeats during the rendezvous
        runtime.activity.begin_wait(_activity.WAIT_RENDEZVOUS)
        try:
            dist.init_process_group(chosen, init_method="env://", rank=env.rank,
                                    world_size=env.world_size, **kwargs)
        finally:
            runtime.activity.end_wait()
        info = _info(env, chosen, addr, port)
    if info.device.type == "cuda":
        torch.cuda.set_device(info.device)
    runtime.set_identity(info.rank, info.world_size)
    return info
