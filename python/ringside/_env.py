"""Where this process sits in a run, read from its environment.

Three launchers give a rank its place, each with its own variables:

- Ringside's agent runs ``mpirun ... PYTHON SCRIPT``: Open MPI's ``OMPI_COMM_WORLD_RANK``,
  ``OMPI_COMM_WORLD_SIZE``, ``OMPI_COMM_WORLD_LOCAL_RANK`` and ``OMPI_COMM_WORLD_LOCAL_SIZE``, plus
  ``MASTER_ADDR`` and ``MASTER_PORT`` (the owner node and a port free on it) and the agent's own
  variables (:func:`read_agent_env`);
- plain ``mpirun -np N python3 train.py``: the ``OMPI_COMM_WORLD_*`` variables only;
- ``torchrun``: ``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``, ``LOCAL_WORLD_SIZE``, ``MASTER_ADDR`` and
  ``MASTER_PORT``.

When both ``RANK`` and ``WORLD_SIZE`` are set they win over Open MPI's (``torchrun`` started by
``mpirun``, one per node, gives each worker its own ``RANK`` while Open MPI counts the
``torchrun`` processes); otherwise Open MPI's are used; with neither, the process is rank 0 of 1.

Pure functions of the mapping they are given (``os.environ`` by default): thread-safe.
"""

import ipaddress
import os
from dataclasses import dataclass
from typing import Mapping, Optional, Tuple

# torch.distributed's own default rendezvous port (torchrun --master-port), used when a single-node
# run was started without MASTER_PORT (plain mpirun).
DEFAULT_MASTER_PORT = 29500
DEFAULT_MASTER_ADDR = "127.0.0.1"

# The agent's variables (common/include/ringside/common/protocol.h).
AGENT_ENDPOINT_ENV = "RINGSIDE_AGENT_ENDPOINT"
RUN_ID_ENV = "RINGSIDE_RUN_ID"
AGENT_PUBLIC_KEY_ENV = "RINGSIDE_AGENT_PUBLIC_KEY"
RUN_PUBLIC_KEY_ENV = "RINGSIDE_RUN_PUBLIC_KEY"
RUN_SECRET_KEY_ENV = "RINGSIDE_RUN_SECRET_KEY"

# A CURVE key in Z85 text is 40 characters (32 bytes).
_Z85_KEY_CHARS = 40


@dataclass(frozen=True)
class DistEnv:
    """This process's place in the run.

    ``rank`` in [0, world_size); ``local_rank`` in [0, local_world_size): the rank's index among the
    ranks on its node, which picks its GPU. ``master_addr``/``master_port`` are None when the
    environment does not set them. ``launcher`` is ``"torchrun"``, ``"mpirun"``, ``"srun"``
    or ``"none"``.
    """

    rank: int
    world_size: int
    local_rank: int
    local_world_size: int
    master_addr: Optional[str]
    master_port: Optional[int]
    launcher: str


@dataclass(frozen=True)
class AgentEnv:
    """The agent's sink for this rank: the ZeroMQ ``endpoint`` of its PULL socket (``ipc://`` on
    the owner's node, ``tcp://`` with CURVE from other nodes), the ``run_id`` every message
    carries, and for CURVE the agent's public key and the run's keypair (Z85 text, else None)."""

    endpoint: str
    run_id: str
    agent_public_key: Optional[str] = None
    run_public_key: Optional[str] = None
    run_secret_key: Optional[str] = None

    @property
    def curve(self) -> bool:
        """True when the connection is encrypted with CURVE."""
        return self.agent_public_key is not None


def _int_var(environ: Mapping[str, str], name: str, minimum: int) -> Optional[int]:
    """The integer value of ``name``, None when unset; ValueError naming it when not an integer
    >= minimum."""
    text = environ.get(name)
    if text is None or text.strip() == "":
        return None
    try:
        value = int(text.strip())
    except ValueError:
        raise ValueError(f"{name}={text!r} is not an integer") from None
    if value < minimum:
        raise ValueError(f"{name}={value} must be at least {minimum}")
    return value


def _port_var(environ: Mapping[str, str]) -> Optional[int]:
    port = _int_var(environ, "MASTER_PORT", 1)
    if port is not None and port > 65535:
        raise ValueError(f"MASTER_PORT={port} is not a TCP port (1-65535)")
    return port


def read_dist_env(environ: Mapping[str, str] = os.environ) -> DistEnv:
    """The rank, world size, local rank and rendezvous of this process (see the module's text for
    which variables win).

    Raises ValueError naming the variable when one is not an integer, or when the rank is not
    below the world size (or the local rank below the local world size).
    """
    addr = environ.get("MASTER_ADDR") or None
    port = _port_var(environ)
    if environ.get("RANK") is not None and environ.get("WORLD_SIZE") is not None:
        names = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE")
        launcher = "torchrun"
    elif environ.get("OMPI_COMM_WORLD_RANK") is not None:
        names = ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
                 "OMPI_COMM_WORLD_LOCAL_SIZE")
        launcher = "mpirun"
    elif environ.get("SLURM_PROCID") is not None and environ.get("SLURM_NTASKS") is not None:
        names = ("SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NTASKS_PER_NODE")
        launcher = "srun"
        # "2(x3)": 2 tasks on each of 3 nodes, as Slurm writes a repeated count.
        per_node = environ.get("SLURM_NTASKS_PER_NODE")
        if per_node is not None and "(" in per_node:
            environ = dict(environ)
            environ["SLURM_NTASKS_PER_NODE"] = per_node.split("(", 1)[0]
    else:
        return DistEnv(0, 1, 0, 1, addr, port, "none")
    rank = _int_var(environ, names[0], 0)
    world = _int_var(environ, names[1], 1)
    if world is None:
        raise ValueError(f"{names[0]} is set but {names[1]} is not: the launcher must set both")
    local_rank = _int_var(environ, names[2], 0)
    local_world = _int_var(environ, names[3], 1)
    # Without the local variables (an older launcher), one node is assumed.
    if local_rank is None:
        local_rank = rank if local_world is None else rank % local_world
    if local_world is None:
        local_world = world
    if rank >= world:
        raise ValueError(f"{names[0]}={rank} is not below {names[1]}={world}")
    if local_rank >= local_world:
        raise ValueError(f"{names[2]}={local_rank} is not below {names[3]}={local_world}")
    return DistEnv(rank, world, local_rank, local_world, addr, port, launcher)


def rendezvous(env: DistEnv) -> Tuple[str, int]:
    """MASTER_ADDR and MASTER_PORT for ``torch.distributed``'s TCP rendezvous.

    Unset values default to 127.0.0.1 and 29500 when every rank is on this node; a multi-node
    run needs both set (the agent sets them; torchrun does too). Raises ValueError saying what to
    set otherwise.
    """
    multi_node = env.local_world_size < env.world_size
    if multi_node and (env.master_addr is None or env.master_port is None):
        raise ValueError(
            f"this is rank {env.rank} of {env.world_size} with {env.local_world_size} on this "
            f"node: a run across nodes needs MASTER_ADDR (the host of rank 0, as the other nodes "
            f"reach it) and MASTER_PORT (a free TCP port there) in every rank's environment, e.g. "
            f"mpirun -x MASTER_ADDR=node-1 -x MASTER_PORT=29500 ... (Ringside's agent sets both)")
    return (env.master_addr or DEFAULT_MASTER_ADDR, env.master_port or DEFAULT_MASTER_PORT)


def _is_loopback_tcp(endpoint: str) -> bool:
    """True for tcp://127.x.x.x:PORT, tcp://[::1]:PORT and tcp://localhost:PORT."""
    host = endpoint[len("tcp://"):].rsplit(":", 1)[0].strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def read_agent_env(environ: Mapping[str, str] = os.environ) -> Optional[AgentEnv]:
    """The agent's sink from RINGSIDE_AGENT_ENDPOINT and its companions; None without an agent.

    Raises ValueError, saying what is wrong, when the endpoint is set without RINGSIDE_RUN_ID, when
    only some of the three CURVE keys are set or one is not 40 characters of Z85, and when a
    tcp:// endpoint off loopback comes without keys (metrics never cross nodes in plaintext).
    """
    endpoint = environ.get(AGENT_ENDPOINT_ENV, "")
    if endpoint == "":
        return None
    run_id = environ.get(RUN_ID_ENV, "")
    if run_id == "":
        raise ValueError(f"{AGENT_ENDPOINT_ENV} is set but {RUN_ID_ENV} is not: the agent sets "
                         f"both; unset {AGENT_ENDPOINT_ENV} to print records on stdout instead")
    key_names = (AGENT_PUBLIC_KEY_ENV, RUN_PUBLIC_KEY_ENV, RUN_SECRET_KEY_ENV)
    keys = [environ.get(name) or None for name in key_names]
    if any(keys) and not all(keys):
        missing = ", ".join(n for n, k in zip(key_names, keys) if k is None)
        raise ValueError(f"CURVE keys for {endpoint} are incomplete: {missing} not set (the agent "
                         f"sets all three for ranks on other nodes)")
    for name, key in zip(key_names, keys):
        if key is not None and len(key) != _Z85_KEY_CHARS:
            raise ValueError(f"{name} must be a CURVE key of {_Z85_KEY_CHARS} Z85 characters, "
                             f"not {len(key)}")
    if endpoint.startswith("tcp://") and not _is_loopback_tcp(endpoint) and not all(keys):
        raise ValueError(f"{AGENT_ENDPOINT_ENV}={endpoint} is tcp:// but no CURVE keys were given "
                         f"({', '.join(key_names)}): metrics never cross nodes in plaintext; the "
                         f"agent sets them for multi-node runs")
    return AgentEnv(endpoint, run_id, *keys)
