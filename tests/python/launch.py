"""Starting a few ranks of a Python script for the tests: as torchrun would (its variables, a
free rendezvous port on 127.0.0.1) or under Open MPI's mpirun."""

import json
import os
import pathlib
import shutil
import socket
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def base_env(extra=None):
    """The test's environment without any agent's variables, the package on the path, one
    thread per rank."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("RINGSIDE_", "OMPI_", "PMIX_")) and
           k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR",
                     "MASTER_PORT")}
    env["PYTHONPATH"] = str(ROOT / "python")
    env["OMP_NUM_THREADS"] = "1"
    env.update(extra or {})
    return env


def run_torchrun_like(script, args, world, timeout, extra_env=None):
    """Runs `world` ranks of `script` with RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE,
    MASTER_ADDR and MASTER_PORT; returns [(returncode, stdout, stderr)] by rank."""
    port = free_port()
    procs = []
    for rank in range(world):
        env = base_env(extra_env)
        env.update(RANK=str(rank), WORLD_SIZE=str(world), LOCAL_RANK=str(rank),
                   LOCAL_WORLD_SIZE=str(world), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
        procs.append(subprocess.Popen([PYTHON, str(script), *args], env=env, text=True,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    results = []
    try:
        for proc in procs:
            out, err = proc.communicate(timeout=timeout)
            results.append((proc.returncode, out, err))
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return results


def mpirun():
    return shutil.which("mpirun")


def run_mpirun(script, args, world, timeout, extra_env=None, forward=()):
    """Runs `world` ranks of `script` under plain mpirun (no agent); returns the
    CompletedProcess (stdout: every rank's lines). `forward`: more variables passed to the
    ranks (mpirun -x)."""
    env = base_env(extra_env)
    if os.getuid() == 0:
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    exported = [arg for name in ("PYTHONPATH", "OMP_NUM_THREADS", *forward) for arg in ("-x", name)]
    command = [mpirun(), "-np", str(world), "--oversubscribe", "--bind-to", "none", *exported,
               PYTHON, str(script), *args]
    return subprocess.run(command, env=env, text=True, capture_output=True, timeout=timeout)


def json_lines(text):
    """The JSON objects among `text`'s lines (other lines are skipped)."""
    out = []
    for line in text.splitlines():
        if line.startswith("{"):
            out.append(json.loads(line))
    return out
