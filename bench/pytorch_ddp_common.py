"""What bench/pytorch_ddp_mlp.py and bench/pytorch_ddp_cnn.py share: the data, the training loop
of the PyTorch DDP reference (batching, cosine schedule, per-epoch timing and evaluation), the
exposed-communication probe, the BLAS probe, and reading and checking ours' records.

Not a program: both references import it from their own folder. Run them with Debian's
/usr/bin/python3 (python3-torch 1.13).
"""

import ctypes
import gzip
import json
import math
import os
import socket
import struct
import sys
import time

EVAL_BATCH = 1000


def gemm_flops_per_sample(layers):
    """Forward + backward GEMM FLOPs per training sample of Linear layers of widths `layers`.

    Forward 2*in*out per layer; backward 2*in*out for the weight gradient of every layer and
    2*in*out for the input gradient of every layer but the first (nothing needs d/d input).
    Bias, activation, loss and optimizer work is not counted.
    """
    pairs = list(zip(layers[:-1], layers[1:]))
    forward = sum(2 * i * o for i, o in pairs)
    weight_grads = forward
    input_grads = sum(2 * i * o for i, o in pairs[1:])
    return forward + weight_grads + input_grads


# ---------------------------------------------------------------------------------------------
# data


def read_idx(path):
    """Reads an IDX file (.gz or raw) into a numpy array of its stored shape."""
    import numpy as np

    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    zero, dtype_code, ndim = struct.unpack(">HBB", data[:4])
    if zero != 0 or dtype_code != 0x08:
        raise ValueError(f"{path}: not an unsigned-byte IDX file")
    dims = struct.unpack(">" + "I" * ndim, data[4 : 4 + 4 * ndim])
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def find_idx(data_dir, stem):
    for candidate in (os.path.join(data_dir, stem + ".gz"), os.path.join(data_dir, stem)):
        if os.path.isfile(candidate):
            return candidate
    raise FileNotFoundError(f"{stem}(.gz) not found in {data_dir}: pass --data DIR")


def load_data(data_dir):
    """Returns (x_train, y_train, x_test, y_test) as torch tensors, features normalized."""
    import numpy as np
    import torch

    def split(prefix):
        images = read_idx(find_idx(data_dir, f"{prefix}-images-idx3-ubyte"))
        labels = read_idx(find_idx(data_dir, f"{prefix}-labels-idx1-ubyte"))
        return images.reshape(images.shape[0], -1), labels.astype(np.int64)

    train_images, train_labels = split("train")
    test_images, test_labels = split("t10k")
    # Mean and std over all training pixels after scaling to [0, 1], in double (as ours).
    scaled = train_images.astype(np.float64) / 255.0
    mean = scaled.mean()
    std = scaled.std()

    def normalize(images):
        return torch.from_numpy(((images.astype(np.float32) / 255.0 - mean) / std).astype(np.float32))

    return (normalize(train_images), torch.from_numpy(train_labels),
            normalize(test_images), torch.from_numpy(test_labels))


def blas_info():
    """Which BLAS this process really mapped, and OpenBLAS's kernel and threads if it is one."""
    libs = set()
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1]
            name = os.path.basename(path)
            if "blas" in name or "lapack" in name or "mkl" in name:
                libs.add(path)
    info = {"libraries": sorted(libs), "openblas": None}
    openblas = sorted(p for p in libs if "libopenblas" in os.path.basename(p))
    if openblas:
        # dlopen of an already-mapped library returns that same instance.
        lib = ctypes.CDLL(openblas[0])
        lib.openblas_get_corename.restype = ctypes.c_char_p
        lib.openblas_get_config.restype = ctypes.c_char_p
        info["openblas"] = {
            "path": openblas[0],
            "core": lib.openblas_get_corename().decode(),
            "config": lib.openblas_get_config().decode(),
            "threads": lib.openblas_get_num_threads(),
        }
    return info


def free_loopback_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---------------------------------------------------------------------------------------------
# train


def evaluate(torch, model, x, y):
    """Mean cross-entropy and accuracy of `model` on (x, y), in batches of EVAL_BATCH."""
    import torch.nn.functional as F

    model.eval()
    loss_sum, correct = 0.0, 0
    with torch.no_grad():
        for begin in range(0, x.shape[0], EVAL_BATCH):
            logits = model(x[begin : begin + EVAL_BATCH])
            target = y[begin : begin + EVAL_BATCH]
            loss_sum += F.cross_entropy(logits, target, reduction="sum").item()
            correct += (logits.argmax(dim=1) == target).sum().item()
    model.train()
    return loss_sum / x.shape[0], correct / x.shape[0]


def sgd_with_cosine(torch, model, lr, momentum, total_steps):
    """SGD (Nesterov) and its per-step cosine schedule lr0 * 0.5 * (1 + cos(pi * step / (total - 1)))."""
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=momentum, nesterov=True)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: 0.5 * (1.0 + math.cos(math.pi * step / max(total_steps - 1, 1))))
    return optimizer, schedule


def make_train_step(model, optimizer, x_train, y_train, rank, global_batch, local_batch):
    """train_step(order, step): one step on this rank's contiguous slice of the step's batch of
    the permutation `order`; returns the loss tensor."""
    import torch.nn.functional as F

    def train_step(order, step):
        begin = step * global_batch + rank * local_batch
        idx = order[begin : begin + local_batch]
        loss = F.cross_entropy(model(x_train[idx]), y_train[idx])
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        return loss

    return train_step


def train_epochs(torch, dist, args, rank, model, train_step, schedule, data, steps_per_epoch):
    """Runs args.epochs epochs of `steps_per_epoch` steps, each after a barrier and timed with
    perf_counter, then evaluates on the test split. `data` is (x_train, y_train, x_test, y_test).
    Returns (epoch_seconds, epoch_log); rank 0 prints one line per epoch on stderr."""
    x_train, _, x_test, y_test = data
    epoch_seconds, epoch_log = [], []
    for epoch in range(args.epochs):
        # One permutation per epoch, the same on every rank (DistributedSampler's scheme).
        order = torch.randperm(x_train.shape[0], generator=torch.Generator().manual_seed(
            args.seed + epoch))
        loss_sum = 0.0
        dist.barrier()
        start = time.perf_counter()
        for step in range(steps_per_epoch):
            loss = train_step(order, step)
            schedule.step()
            loss_sum += loss.item()  # ours also returns every step's loss
        epoch_seconds.append(time.perf_counter() - start)
        test_loss, test_accuracy = evaluate(torch, model.module, x_test, y_test)
        epoch_log.append({"epoch": epoch + 1, "train_seconds": epoch_seconds[-1],
                          "train_loss": loss_sum / steps_per_epoch, "test_loss": test_loss,
                          "test_accuracy": test_accuracy})
        if rank == 0:
            print(f"torch world {args.world} epoch {epoch + 1}/{args.epochs}: train "
                  f"{epoch_seconds[-1]:.3f} s, loss {loss_sum / steps_per_epoch:.4f}, test accuracy "
                  f"{test_accuracy:.4f}", file=sys.stderr, flush=True)
    return epoch_seconds, epoch_log


def probe_exposed_comm(torch, dist, args, model, train_step, train_samples):
    """Exposed communication: the same training step with DDP's all-reduce and under no_sync()
    (no all-reduce, every rank computes alone), in alternating blocks (A-B-B-A, args.probe_blocks
    pairs of args.probe_steps steps) after training. With all-reduce every step waits for the
    slowest rank, so the baseline is the slowest rank's no_sync time; the difference is what the
    all-reduce adds to a step. Returns the probe's record (ms per step)."""
    probe = {"blocks": args.probe_blocks, "steps_per_block": args.probe_steps}
    order = torch.randperm(train_samples, generator=torch.Generator().manual_seed(args.seed))
    sums = {"sync": 0.0, "no_sync": 0.0}
    for block in range(2 * args.probe_blocks):
        mode = ("sync", "no_sync")[(block + block // 2) % 2]  # sync, no_sync, no_sync, sync, ...
        dist.barrier()
        start = time.perf_counter()
        for step in range(args.probe_steps):
            if mode == "sync":
                train_step(order, step).item()
            else:
                with model.no_sync():
                    train_step(order, step).item()
        sums[mode] += time.perf_counter() - start
    per_step = torch.tensor([sums["sync"], sums["no_sync"]], dtype=torch.float64)
    per_step /= args.probe_blocks * args.probe_steps
    dist.all_reduce(per_step, op=dist.ReduceOp.MAX)
    probe["sync_step_ms"] = per_step[0].item() * 1e3
    probe["no_sync_step_ms"] = per_step[1].item() * 1e3
    probe["exposed_comm_ms"] = probe["sync_step_ms"] - probe["no_sync_step_ms"]
    return probe


# ---------------------------------------------------------------------------------------------
# report


def load_json(path):
    with open(path) as f:
        return json.load(f)


def load_ours(path):
    """The trainer's JSON Lines output: returns its end record with the start record under "start"."""
    start, end = None, None
    with open(path) as f:
        for line in f:
            record = json.loads(line)
            if record.get("type") == "start":
                start = record
            elif record.get("type") == "end":
                end = record
    if end is None:
        raise SystemExit(f"{path}: no end record")
    end["start"] = start
    return end


def number(value):
    """A metric as float; NaN where the producer wrote null (nlohmann::json writes NaN as null)."""
    return float(value) if isinstance(value, (int, float)) else float("nan")


def check_accuracy(ours, torch_runs, min_accuracy):
    """Prints the correctness check of every run (accuracy >= min_accuracy, finite loss) and
    returns the failures."""
    failures = []
    for label, runs in (("ours", ours), ("torch", torch_runs)):
        for world, r in runs.items():
            acc, loss = r["test_accuracy"], r["test_loss"]
            ok = math.isfinite(loss) and math.isfinite(acc) and acc >= min_accuracy
            print(f"  {label}-{world}: test accuracy {acc:.4f} >= {min_accuracy}, loss {loss:.4f} "
                  f"finite: {'PASS' if ok else 'FAIL'}")
            if not ok:
                failures.append(f"{label}-{world} accuracy {acc} / loss {loss}")
    return failures


def check_ours_config(ours, torch_runs, expected, show_steps):
    """Prints whether each of ours' runs ran the reference's configuration (`expected`, against
    its start record), world size and number of steps, and returns the failures. `show_steps`:
    the line names the reference's step count."""
    failures = []
    for world, r in ours.items():
        start = r["start"] or {}
        config = start.get("config", {})
        wrong = {k: config.get(k) for k, v in expected.items() if config.get(k) != v}
        if start.get("world_size") != world:
            wrong["world_size"] = start.get("world_size")
        if r.get("step") != torch_runs[world]["steps"]:
            wrong["steps run"] = r.get("step")
        steps = f" ({torch_runs[world]['steps']} steps)" if show_steps else ""
        print(f"  ours-{world}: configuration and steps as the reference's{steps}: "
              f"{'FAIL ' + str(wrong) if wrong else 'PASS'}")
        if wrong:
            failures.append(f"ours-{world} differs from the reference: {wrong}")
    return failures


def exit_status(failures, misses):
    """Prints the bench's verdict and returns its exit status: 1 when a correctness check
    failed, 3 when only a speed or accuracy target was missed, 0 when every check passed."""
    if failures:
        print("CORRECTNESS FAILED: " + "; ".join(failures))
        return 1
    if misses:
        print("TARGETS MISSED: " + "; ".join(misses))
        return 3
    print("all checks passed")
    return 0
