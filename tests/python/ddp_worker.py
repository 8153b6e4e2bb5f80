"""One rank of test_ddp_hook.py's runs (started by the test with torchrun's variables).

Trains two identical models side by side on the same data in one process group: ``plain`` with
DDP's default all-reduce and ``watched`` with ringside.torch.watch. After every step it checks
that the gradients and parameters are bit-identical (torch.equal) and prints one JSON line
``{"type":"check",...}`` per step; ringside prints the watched model's records on stdout.

Usage: ddp_worker.py --steps N [--log-every K] [--bucket-view] [--eval-after S]
                     [--accumulate-at S] [--deferred-clock]

--deferred-clock stands in for CUDA events on a machine without a GPU: the watcher's stamps
become readable only a few queries after they were taken, as events of a GPU running behind the
host do, so steps are turned into records later, and the rest at exit (where the watcher polls
them until they are ready).
"""

import argparse
import gc
import json
import sys
import time
import weakref

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.nn.parallel import DistributedDataParallel

import ringside
import ringside.torch


class DeferredClock:
    """Host time whose stamps are "ready" only after their third query (see --deferred-clock)."""

    serial = True

    def stamp(self):
        return [time.perf_counter(), 0]

    def ready(self, stamp):
        stamp[1] += 1
        return stamp[1] > 3

    def ms(self, start, end):
        return (end[0] - start[0]) * 1e3


def model():
    """An MLP whose layers of about 1 MiB each make several DDP buckets (cap 0.5 MB)."""
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(64, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                         nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))


def batch(rank, step, micro=0):
    g = torch.Generator().manual_seed(1000 * step + 10 * rank + micro)
    return torch.randn(32, 64, generator=g), torch.randint(0, 10, (32,), generator=g)


def train_step(ddp, optimizer, rank, step, accumulate, set_to_none):
    """One step; with ``accumulate`` two micro-batches, the first under no_sync()."""
    optimizer.zero_grad(set_to_none=set_to_none)
    if accumulate:
        with ddp.no_sync():
            x, y = batch(rank, step, micro=1)
            F.cross_entropy(ddp(x), y).backward()
    x, y = batch(rank, step)
    loss = F.cross_entropy(ddp(x), y)
    loss.backward()
    return loss


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, required=True)
    parser.add_argument("--log-every", type=int, default=1)
    parser.add_argument("--bucket-view", action="store_true")
    parser.add_argument("--eval-after", type=int, default=0)
    parser.add_argument("--accumulate-at", type=int, default=0)
    parser.add_argument("--deferred-clock", action="store_true")
    args = parser.parse_args()
    if args.deferred_clock:
        from ringside.torch import _watch
        _watch._HostClock = DeferredClock
    torch.set_num_threads(1)

    info = ringside.torch.init_process_group()
    options = dict(bucket_cap_mb=0.5, gradient_as_bucket_view=args.bucket_view)
    plain = DistributedDataParallel(model(), **options)
    watched = DistributedDataParallel(model(), **options)
    watcher = ringside.torch.watch(watched, global_batch=32 * info.world_size,
                                   log_every=args.log_every)
    opt_plain = torch.optim.SGD(plain.parameters(), lr=0.1, momentum=0.9)
    opt_watched = torch.optim.SGD(watched.parameters(), lr=0.1, momentum=0.9)
    # With gradient_as_bucket_view the gradients stay views of the buckets between steps.
    set_to_none = not args.bucket_view

    ok = True
    for step in range(1, args.steps + 1):
        accumulate = step == args.accumulate_at
        train_step(plain, opt_plain, info.rank, step, accumulate, set_to_none)
        loss = train_step(watched, opt_watched, info.rank, step, accumulate, set_to_none)
        grads_equal = all(torch.equal(a.grad, b.grad)
                          for a, b in zip(plain.parameters(), watched.parameters()))
        opt_plain.step()
        opt_watched.step()
        params_equal = all(torch.equal(a, b)
                           for a, b in zip(plain.parameters(), watched.parameters()))
        ok = ok and grads_equal and params_equal
        print(json.dumps({"type": "check", "rank": info.rank, "step": step,
                          "grads_equal": grads_equal, "params_equal": params_equal,
                          "hook_steps": watcher.steps}), flush=True)
        ringside.log(step, {"train/loss": loss.item()})
        if step == args.eval_after:
            watched.eval()
            with torch.no_grad():
                for micro in range(3):
                    watched(batch(info.rank, 9999, micro)[0])
            watched.train()
    # Nothing of ringside's keeps the watched model alive once the script lets go of it: a model
    # left to the interpreter's shutdown frees its process group's threads there, where they
    # cannot take the GIL (PyTorch then aborts the process: "terminate called without an active
    # exception").
    probe = weakref.ref(watched)
    del watched, opt_watched, loss
    gc.collect()
    print(json.dumps({"type": "freed", "rank": info.rank, "model": probe() is None}), flush=True)
    dist.barrier()
    dist.destroy_process_group()
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
