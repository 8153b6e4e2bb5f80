#!/usr/bin/python3
"""A small CNN on Fashion-MNIST with PyTorch DistributedDataParallel, watched by Ringside.

An ordinary DDP script plus three Ringside calls (marked "Ringside"): init_process_group, watch
and log (and config for its options). CPU with gloo on Debian's python3-torch 1.13, GPUs with
nccl on a recent PyTorch, whichever the machine has. The data are the IDX files of Debian's
dataset-fashion-mnist, read with numpy; nothing is downloaded.

    mpirun -np 2 python3 examples/pytorch/ddp_fashion_mnist.py --epochs 1
    torchrun --nproc-per-node 2 examples/pytorch/ddp_fashion_mnist.py

or as a "PyTorch script" job in Ringside's run form. Without an agent the records are printed on
stdout as JSON Lines (docs/metrics.md). docs/pytorch.md explains what is measured.

Testing aid: --inject-delay RANK:MS makes rank RANK sleep MS milliseconds while loading each
batch, a deliberate straggler for checking Ringside's straggler verdict; it is not a training
option.
"""

import argparse
import gzip
import math
import os
import struct
import sys
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data.distributed import DistributedSampler

import ringside
import ringside.torch

DEFAULT_DATA = "/usr/share/datasets/fashion-mnist"


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=DEFAULT_DATA,
                        help="folder with the Fashion-MNIST IDX files (.gz or not)")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch", type=int, default=128,
                        help="global batch: samples per step over all ranks")
    parser.add_argument("--lr", type=float, default=0.05, help="peak learning rate (cosine)")
    parser.add_argument("--momentum", type=float, default=0.9)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--max-steps", type=int, default=0, help="stop after this many steps")
    parser.add_argument("--train-samples", type=int, default=0,
                        help="use the first N training samples (0: all 60,000)")
    parser.add_argument("--test-samples", type=int, default=0,
                        help="use the first N test samples (0: all 10,000)")
    parser.add_argument("--log-every", type=int, default=1, help="steps per metrics record")
    parser.add_argument("--bucket-mb", type=float, default=25.0,
                        help="DistributedDataParallel's bucket_cap_mb (its default: 25)")
    parser.add_argument("--threads", type=int, default=0,
                        help="CPU threads per rank (0: the node's cores / ranks on the node)")
    parser.add_argument("--backend", choices=("nccl", "gloo"), default=None,
                        help="default: nccl where CUDA is available, else gloo")
    parser.add_argument("--inject-delay", metavar="RANK:MS", default="",
                        help="testing aid: rank RANK sleeps MS ms in each step's data loading")
    args = parser.parse_args(argv)
    args.inject_delay = parse_delay(parser, args.inject_delay)
    for name in ("epochs", "batch", "log_every"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    if not args.bucket_mb > 0:
        parser.error("--bucket-mb must be positive")
    return args


def parse_delay(parser, text):
    """'RANK:MS' -> (rank, seconds), or None for ''."""
    if not text:
        return None
    try:
        rank, ms = text.split(":")
        rank, ms = int(rank), float(ms)
    except ValueError:
        parser.error(f"--inject-delay must be RANK:MS, e.g. 1:20, not {text!r}")
    if rank < 0 or not ms >= 0:
        parser.error(f"--inject-delay {text}: the rank and the milliseconds must not be negative")
    return rank, ms / 1000.0


# ------------------------------------------------------------------------------------------------
# data


def read_idx(path):
    """An unsigned-byte IDX file (gzip'd or not) as a numpy array of its stored shape."""
    with (gzip.open if path.endswith(".gz") else open)(path, "rb") as f:
        data = f.read()
    zero, dtype, ndim = struct.unpack(">HBB", data[:4])
    if zero != 0 or dtype != 0x08:
        raise ValueError(f"{path} is not an unsigned-byte IDX file")
    shape = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(shape)


def find_idx(folder, stem):
    for name in (stem + ".gz", stem):
        if os.path.isfile(os.path.join(folder, name)):
            return os.path.join(folder, name)
    raise FileNotFoundError(f"Fashion-MNIST file {stem}(.gz) not found in {folder}: install "
                            f"dataset-fashion-mnist or pass --data DIR")


def load_split(folder, prefix, limit):
    """(images [N, 1, 28, 28] float32 in [0, 1], labels [N] int64), the first `limit` if > 0."""
    images = read_idx(find_idx(folder, f"{prefix}-images-idx3-ubyte"))
    labels = read_idx(find_idx(folder, f"{prefix}-labels-idx1-ubyte"))
    if limit > 0:
        images, labels = images[:limit], labels[:limit]
    x = torch.from_numpy(images.astype(np.float32) / 255.0).unsqueeze(1)
    return x, torch.from_numpy(labels.astype(np.int64))


# ------------------------------------------------------------------------------------------------
# model


class Net(nn.Module):
    """Two 3x3 conv layers (32 and 64 filters, each with ReLU and 2x2 max-pooling) and two dense
    layers (128 units, 10 classes): the layer sizes of ringside-trainer's --model cnn, 421,642
    parameters, which DDP's default bucketing puts in two buckets."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(64 * 7 * 7, 128), nn.ReLU(),
                                        nn.Linear(128, 10))

    def forward(self, x):
        return self.classifier(self.features(x))


def evaluate(model, x, y, rank, world, device):
    """Mean cross-entropy and accuracy over the test set, sharded across ranks and summed."""
    model.eval()
    sums = torch.zeros(3, dtype=torch.float64, device=device)  # loss sum, correct, count
    with torch.no_grad():
        for begin in range(rank * 500, x.shape[0], world * 500):
            xb, yb = x[begin:begin + 500].to(device), y[begin:begin + 500].to(device)
            logits = model(xb)
            sums[0] += F.cross_entropy(logits, yb, reduction="sum").double()
            sums[1] += (logits.argmax(dim=1) == yb).sum().double()
            sums[2] += yb.numel()
    dist.all_reduce(sums)
    model.train()
    return (sums[0] / sums[2]).item(), (sums[1] / sums[2]).item()


# ------------------------------------------------------------------------------------------------
# training


def main(argv=None):
    args = parse_args(argv)
    info = ringside.torch.init_process_group(backend=args.backend)  # Ringside
    rank, world = info.rank, info.world_size
    if args.batch % world != 0:
        sys.exit(f"--batch {args.batch} must be a multiple of the world size {world}")
    if info.device.type == "cpu":
        torch.set_num_threads(args.threads or max(1, (os.cpu_count() or 1) // info.local_world_size))
    ringside.config(vars(args) | {"world_size": world, "backend": info.backend})  # Ringside

    x_train, y_train = load_split(args.data, "train", args.train_samples)
    x_test, y_test = load_split(args.data, "t10k", args.test_samples)
    local_batch = args.batch // world
    sampler = DistributedSampler(range(x_train.shape[0]), num_replicas=world, rank=rank,
                                 shuffle=True, seed=args.seed, drop_last=True)
    steps_per_epoch = len(sampler) // local_batch
    if steps_per_epoch == 0:
        sys.exit(f"{x_train.shape[0]} training samples make no step of {args.batch}")
    total_steps = args.epochs * steps_per_epoch
    if args.max_steps:
        total_steps = min(total_steps, args.max_steps)

    torch.manual_seed(args.seed)  # the same initial weights on every rank (DDP broadcasts them too)
    model = DistributedDataParallel(Net().to(info.device), device_ids=info.device_ids,
                                    bucket_cap_mb=args.bucket_mb)
    ringside.torch.watch(model, global_batch=args.batch, log_every=args.log_every)  # Ringside
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: 0.5 * (1.0 + math.cos(math.pi * s / max(total_steps - 1, 1))))
    delay = args.inject_delay[1] if args.inject_delay and args.inject_delay[0] == rank else 0.0

    step, start = 0, time.perf_counter()
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        order = torch.tensor(list(sampler))
        loss_sum, epoch_steps = torch.zeros((), device=info.device), 0
        for i in range(steps_per_epoch):
            if step == total_steps:
                break
            # data: this rank's slice of the step's global batch
            idx = order[i * local_batch:(i + 1) * local_batch]
            xb = x_train[idx].to(info.device, non_blocking=True)
            yb = y_train[idx].to(info.device, non_blocking=True)
            if delay:
                time.sleep(delay)
            loss = F.cross_entropy(model(xb), yb)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            schedule.step()
            step += 1
            epoch_steps += 1
            loss_sum += loss.detach()
            if step % args.log_every == 0 or step == total_steps:
                ringside.log(step, {"train/loss": loss.item(),  # Ringside
                                    "train/lr": schedule.get_last_lr()[0]}, epoch=epoch)
        test_loss, test_accuracy = evaluate(model, x_test, y_test, rank, world, info.device)
        if info.is_main:
            ringside.log(step, {"test/loss": test_loss, "test/accuracy": test_accuracy},
                         epoch=epoch)  # Ringside
            print(f"epoch {epoch + 1}/{args.epochs}  step {step}/{total_steps}  train loss "
                  f"{loss_sum.item() / max(epoch_steps, 1):.4f}  test loss {test_loss:.4f}  accuracy "
                  f"{test_accuracy:.4f}  {time.perf_counter() - start:.1f} s", file=sys.stderr,
                  flush=True)
        if step == total_steps:
            break
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
