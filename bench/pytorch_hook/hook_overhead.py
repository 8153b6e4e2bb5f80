#!/usr/bin/python3
"""The cost of ringside.torch.watch: the example's training step with and without it, in one run.

Each rank trains three copies of examples/pytorch/ddp_fashion_mnist.py's CNN in DDP on the same
data: ``plain`` (DDP's default all-reduce, no Ringside), ``allreduce_hook`` (PyTorch's own
``allreduce_hook`` registered as the communication hook: what any Python comm hook costs, the
reference for ours) and ``watched`` (ringside.torch.watch with the example's settings, plus
ringside.log of the loss every step, as the example does). Blocks of --steps steps run in rounds
A-B-C then C-B-A (--rounds rounds), each timed after a barrier, so that drift in the machine's
speed falls on all alike. Each model sees the same batches in the same order, so at the end
``plain`` and ``watched`` must hold bit-identical parameters: the check that the figures come
from a correct hook.

Prints ms/step of every block (wall time, and CPU time of the rank's process), each kind's
median, the ratios (median over rounds of the ratio within each round: adjacent blocks see nearly
the same machine), and the CPU time spent inside ringside's own hooks and ringside.log per step
(each wrapped with the thread's CPU clock), which on a busy machine measures the cost more
tightly than the difference of two noisy step times. The watched model's records go where
ringside sends them: --sink stdout writes them to a file per rank (JSON Lines, as without an
agent); --sink agent pushes them to a PULL socket of this launcher (as to an agent, with
heartbeats).

    bench/pytorch_hook/hook_overhead.py [--world 2] [--device cpu|cuda] [--steps 20] [--rounds 4]
                                        [--batch 128] [--model cnn|linear] [--sink stdout|agent]

Run with Debian's /usr/bin/python3 (python3-torch) on CPU; on a GPU machine with its PyTorch.
Exit status 0 when the parameters match, 1 when they do not, 2 for bad usage.
"""

import argparse
import importlib.util
import json
import os
import pathlib
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "pytorch" / "ddp_fashion_mnist.py"
KINDS = ("plain", "allreduce_hook", "watched")


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--world", type=int, default=2, help="ranks (processes)")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--steps", type=int, default=20, help="steps per block")
    parser.add_argument("--rounds", type=int, default=4,
                        help="rounds of three blocks, A-B-C then C-B-A")
    parser.add_argument("--batch", type=int, default=128, help="global batch")
    parser.add_argument("--model", choices=("cnn", "linear"), default="cnn",
                        help="cnn: the example's; linear: one 784x10 layer, whose step is so "
                             "short that the hook's own cost per step shows in absolute terms")
    parser.add_argument("--threads", type=int, default=1, help="CPU threads per rank")
    parser.add_argument("--sink", choices=("stdout", "agent"), default="stdout")
    parser.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    parser.add_argument("--rank-worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--result", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if min(args.world, args.steps, args.rounds, args.batch, args.threads) < 1:
        parser.error("--world, --steps, --rounds, --batch and --threads must be at least 1")
    if args.batch % args.world:
        parser.error("--batch must be a multiple of --world")
    return args


# ------------------------------------------------------------------------------------------------
# one rank


def load_example():
    spec = importlib.util.spec_from_file_location("ddp_fashion_mnist", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class SelfTime:
    """CPU time spent inside ringside's own code, on any thread: its hooks and callbacks on the
    watched model (each wrapped with the calling thread's CPU clock, time.thread_time, so that
    time the thread waits or is descheduled is not counted) and ringside.log. The
    all-reduce the hook starts is in it too, where DDP's default would start one in C++; the
    future's completion callback (a few microseconds, on gloo's thread) is not."""

    def __init__(self):
        self.seconds = 0.0

    def wrap(self, owner, name):
        original = getattr(owner, name)

        def timed(*args, **kwargs):
            start = time.thread_time()
            try:
                return original(*args, **kwargs)
            finally:
                self.seconds += time.thread_time() - start

        setattr(owner, name, timed)


def rank_main(args):
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    import torch.distributed.algorithms.ddp_comm_hooks.default_hooks as default_hooks
    from torch.nn.parallel import DistributedDataParallel

    import ringside
    import ringside.torch

    from ringside.torch import _watch

    self_time = SelfTime()
    for name in ("_on_forward", "_on_forward_end", "_on_optimizer_start", "_on_optimizer_end",
                 "_allreduce", "_on_backward_end", "_on_comm_end"):
        self_time.wrap(_watch.Watcher, name)
    self_time.wrap(ringside, "log")
    example = load_example()
    info = ringside.torch.init_process_group(backend="nccl" if args.device == "cuda" else "gloo")
    torch.set_num_threads(args.threads)
    local_batch = args.batch // info.world_size
    x, y = example.load_split(args.data, "train", 0)
    order = torch.randperm(x.shape[0], generator=torch.Generator().manual_seed(7))

    def build():
        torch.manual_seed(1)
        net = (example.Net() if args.model == "cnn" else
               torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(28 * 28, 10)))
        return DistributedDataParallel(net.to(info.device), device_ids=info.device_ids)

    models = {kind: build() for kind in KINDS}
    models["allreduce_hook"].register_comm_hook(None, default_hooks.allreduce_hook)
    ringside.torch.watch(models["watched"], global_batch=args.batch)
    optimizers = {k: torch.optim.SGD(m.parameters(), lr=0.05, momentum=0.9)
                  for k, m in models.items()}
    done = {kind: 0 for kind in KINDS}  # steps each model has trained

    def step(kind):
        model, optimizer = models[kind], optimizers[kind]
        i = done[kind]
        begin = (i * args.batch + info.rank * local_batch) % (x.shape[0] - args.batch)
        idx = order[begin:begin + local_batch]
        xb = x[idx].to(info.device, non_blocking=True)
        yb = y[idx].to(info.device, non_blocking=True)
        loss = F.cross_entropy(model(xb), yb)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        value = loss.item()  # every model reads its loss, as a training loop does
        done[kind] = i + 1
        if kind == "watched":
            ringside.log(done[kind], {"train/loss": value})

    for kind in KINDS:  # warm-up: first-step work (bucket rebuild, allocations) outside blocks
        for _ in range(3):
            step(kind)
    blocks = []
    for r in range(2 * args.rounds):
        for kind in (KINDS if r % 2 == 0 else KINDS[::-1]):
            dist.barrier()
            if args.device == "cuda":
                torch.cuda.synchronize()
            start, cpu_start, self_start = (time.perf_counter(), time.process_time(),
                                            self_time.seconds)
            for _ in range(args.steps):
                step(kind)
            if args.device == "cuda":
                torch.cuda.synchronize()
            blocks.append({"round": r, "kind": kind,
                           "ms_per_step": (time.perf_counter() - start) * 1e3 / args.steps,
                           "cpu_ms_per_step": (time.process_time() - cpu_start) * 1e3
                           / args.steps,
                           "ringside_ms_per_step": (self_time.seconds - self_start) * 1e3
                           / args.steps})

    def same(a, b):
        return all(torch.equal(p, q) for p, q in zip(models[a].parameters(),
                                                     models[b].parameters()))

    assert len(set(done.values())) == 1
    result = {"rank": info.rank, "world": info.world_size, "device": str(info.device),
              "torch": torch.__version__, "blocks": blocks,
              "params_identical": same("plain", "watched"),
              "allreduce_hook_identical": same("plain", "allreduce_hook"),
              "steps_per_model": done["plain"]}
    pathlib.Path(args.result).write_text(json.dumps(result))
    dist.barrier()
    dist.destroy_process_group()


# ------------------------------------------------------------------------------------------------
# the launcher


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def collect(endpoint, stop, counts):
    """A fake agent: receives and counts what the ranks push."""
    import zmq
    context = zmq.Context()
    pull = context.socket(zmq.PULL)
    pull.bind(endpoint)
    while not stop.is_set():
        if pull.poll(100):
            counts["frames"] += 1
            counts["bytes"] += len(pull.recv())
    pull.close(linger=0)
    context.term()


def launch(args):
    folder = pathlib.Path(tempfile.mkdtemp(prefix="ringside-hook-bench-"))
    port = free_port()
    stop, counts = threading.Event(), {"frames": 0, "bytes": 0}
    collector = None
    agent_env = {}
    if args.sink == "agent":
        endpoint = f"ipc://{folder}/ranks.sock"
        collector = threading.Thread(target=collect, args=(endpoint, stop, counts))
        collector.start()
        agent_env = {"RINGSIDE_AGENT_ENDPOINT": endpoint, "RINGSIDE_RUN_ID": "bench"}
    procs = []
    for rank in range(args.world):
        env = {k: v for k, v in os.environ.items() if not k.startswith(("RINGSIDE_", "OMPI_"))}
        env.update(agent_env, RANK=str(rank), WORLD_SIZE=str(args.world), LOCAL_RANK=str(rank),
                   LOCAL_WORLD_SIZE=str(args.world), MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=str(port), OMP_NUM_THREADS=str(args.threads),
                   PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT / "python"),
                                                            env.get("PYTHONPATH")])))
        if args.device == "cpu":
            env["CUDA_VISIBLE_DEVICES"] = ""
        command = [sys.executable, __file__, "--rank-worker", "--result",
                   str(folder / f"result-{rank}.json")] + sys.argv[1:]
        out = open(folder / f"records-rank{rank}.jsonl", "w")
        procs.append((subprocess.Popen(command, env=env, stdout=out), out))
    codes = []
    for proc, out in procs:
        codes.append(proc.wait())
        out.close()
    stop.set()
    if collector:
        collector.join()
    if any(codes):
        print(f"hook_overhead: a rank failed (exit {codes}); its records are in {folder}",
              file=sys.stderr)
        return 1
    results = [json.loads((folder / f"result-{r}.json").read_text()) for r in range(args.world)]
    report(args, results, folder, counts)
    return 0 if all(r["params_identical"] for r in results) else 1


def round_ratios(results, figure, numerator, denominator):
    """The ratio numerator / denominator of `figure` within each round of each rank."""
    ratios = []
    for r in results:
        by_round = {}
        for block in r["blocks"]:
            by_round.setdefault(block["round"], {})[block["kind"]] = block[figure]
        ratios += [kinds[numerator] / kinds[denominator] for kinds in by_round.values()]
    return ratios


def report(args, results, folder, counts):
    r0 = results[0]
    print(f"hook_overhead: {args.world} ranks on {r0['device']} (torch {r0['torch']}), model "
          f"{args.model}, global batch {args.batch}, {args.steps} steps per block, "
          f"{2 * args.rounds} rounds A-B-C / C-B-A, records to {args.sink}")
    print(f"{'round':>5}  {'model':<15} " + "  ".join(
        f"rank{r['rank']} wall/CPU ms/step" for r in results))
    for b, block in enumerate(r0["blocks"]):
        print(f"{block['round'] + 1:>5}  {block['kind']:<15} " + "  ".join(
            f"{r['blocks'][b]['ms_per_step']:>12.3f} {r['blocks'][b]['cpu_ms_per_step']:>8.3f}"
            for r in results))
    for figure, what in (("ms_per_step", "wall ms/step"),
                         ("cpu_ms_per_step", "CPU ms/step (the rank's process)")):
        medians = {kind: statistics.median(b[figure] for r in results for b in r["blocks"]
                                           if b["kind"] == kind) for kind in KINDS}
        print(f"{what}, median over ranks and blocks: " + ", ".join(
            f"{kind} {medians[kind]:.3f}" for kind in KINDS))
        for numerator, denominator in (("watched", "plain"), ("watched", "allreduce_hook"),
                                       ("allreduce_hook", "plain")):
            ratio = statistics.median(round_ratios(results, figure, numerator, denominator))
            print(f"  {numerator} / {denominator}: {ratio:.4f} ({(ratio - 1) * 100:+.2f} %), "
                  f"median of the {2 * args.rounds * len(results)} per-round ratios")
    for r in results:
        own = [b["ringside_ms_per_step"] for b in r["blocks"] if b["kind"] == "watched"]
        plain = statistics.median(b["ms_per_step"] for b in r["blocks"] if b["kind"] == "plain")
        plain_cpu = statistics.median(b["cpu_ms_per_step"] for b in r["blocks"]
                                      if b["kind"] == "plain")
        mine = statistics.median(own)
        print(f"rank {r['rank']}: CPU time inside ringside's hooks and log(): median "
              f"{mine * 1e3:.0f} us/step (blocks {min(own) * 1e3:.0f}-{max(own) * 1e3:.0f}): "
              f"{mine / plain * 100:.2f} % of plain's wall ms/step, {mine / plain_cpu * 100:.2f} % "
              f"of its CPU ms/step")
    identical = all(r["params_identical"] for r in results)
    print(f"check: parameters of the plain and watched models after {r0['steps_per_model']} "
          f"steps each are {'bit-identical' if identical else 'DIFFERENT'} on every rank "
          f"(allreduce_hook's: {'identical' if all(r['allreduce_hook_identical'] for r in results) else 'differ: it divides where DDP multiplies by 1/n'})")
    if args.sink == "agent":
        print(f"fake agent received {counts['frames']} messages, {counts['bytes']} bytes")
    else:
        lines = sum(1 for _ in open(folder / "records-rank0.jsonl"))
        print(f"rank 0 wrote {lines} record lines ({folder}/records-rank0.jsonl)")


def main():
    args = parse_args()
    if args.rank_worker:
        rank_main(args)
        return 0
    return launch(args)


if __name__ == "__main__":
    sys.exit(main())
