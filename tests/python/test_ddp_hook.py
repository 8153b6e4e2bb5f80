"""ringside.torch.watch on real DDP ranks (gloo, CPU): gradients bit-identical to DDP's default
all-reduce, and the records it sends, step by step, from every rank.

Each run starts ranks of ddp_worker.py as torchrun would (so init_process_group's torchrun path
is used), which train a plain and a watched DDP model side by side."""

import collections
import pathlib
import unittest

from launch import json_lines, run_torchrun_like

WORKER = pathlib.Path(__file__).resolve().parent / "ddp_worker.py"
RANK_NAMES = {"time/step_ms", "time/compute_ms", "time/allreduce_ms", "time/exposed_comm_ms",
              "time/data_ms", "time/wait_ms", "time/runqueue_ms"}
GLOBAL_NAMES = {"time/step_ms", "time/compute_ms", "time/exposed_comm_ms", "time/allreduce_ms",
                "comm/bytes", "comm/algbw_GBps", "comm/busbw_GBps", "train/samples_per_s"}
# ddp_worker.model(): 64*512+512 + 2*(512*512+512) + 512*10+10 parameters, 4 bytes each.
MODEL_BYTES = 4 * (64 * 512 + 512 + 2 * (512 * 512 + 512) + 512 * 10 + 10)


def run(world, *args, timeout=240):
    results = run_torchrun_like(WORKER, list(args), world, timeout)
    for rank, (code, out, err) in enumerate(results):
        if code != 0:
            raise AssertionError(f"rank {rank} exited {code}:\n{err[-3000:]}\n{out[-2000:]}")
    return [json_lines(out) for _, out, _ in results]


def hook_records(lines):
    """(own values by step, global values by step) of the hook's records among one rank's lines
    (those with time/ or comm/ names)."""
    own, glob = collections.defaultdict(dict), collections.defaultdict(dict)
    for record in lines:
        if record["type"] == "metrics" and any(k.startswith(("time/", "comm/"))
                                               for k in record["metrics"]):
            target = own if "rank" in record else glob
            target[record["step"]].update(record["metrics"])
    return own, glob


class BitIdenticalGradientsTest(unittest.TestCase):
    def check(self, outputs, steps):
        for rank, lines in enumerate(outputs):
            checks = [r for r in lines if r["type"] == "check"]
            self.assertEqual([c["step"] for c in checks], list(range(1, steps + 1)))
            for c in checks:
                self.assertTrue(c["grads_equal"], f"rank {rank} step {c['step']}: gradients differ")
                self.assertTrue(c["params_equal"], f"rank {rank} step {c['step']}: parameters differ")
                self.assertEqual(c["hook_steps"], c["step"])
            freed = [r["model"] for r in lines if r["type"] == "freed"]
            self.assertEqual(freed, [True], f"rank {rank}: the watched model outlived the script")

    def test_two_ranks_with_evaluation_and_gradient_accumulation(self):
        outputs = run(2, "--steps", "6", "--eval-after", "3", "--accumulate-at", "5")
        self.check(outputs, 6)
        for rank, lines in enumerate(outputs):
            own, glob = hook_records(lines)
            # Every rank sends the six per-rank timings at every step, counted as the script does.
            self.assertEqual(sorted(own), list(range(1, 7)), f"rank {rank}")
            for step, values in own.items():
                self.assertEqual(set(values), RANK_NAMES, f"rank {rank} step {step}")
                self.assertGreater(values["time/step_ms"], 0.0)
                self.assertAlmostEqual(values["time/compute_ms"] + values["time/exposed_comm_ms"],
                                       values["time/step_ms"], places=6)
                self.assertEqual(values["time/wait_ms"], values["time/exposed_comm_ms"])
                self.assertGreaterEqual(values["time/runqueue_ms"], 0.0)
            # The run-queue delay comes first in each of the rank's own timing records: the
            # agent's straggler rule judges a step at the last of its other timings.
            for record in lines:
                if record["type"] == "metrics" and "rank" in record \
                        and "time/runqueue_ms" in record["metrics"]:
                    self.assertEqual(next(iter(record["metrics"])), "time/runqueue_ms")
            if rank != 0:
                self.assertEqual(glob, {})
        _, glob = hook_records(outputs[0])
        self.assertEqual(sorted(glob), list(range(1, 7)))
        for step, values in glob.items():
            buckets = {k.split("/")[1] for k in values if k.startswith("comm/bucket")}
            # DDP may start with other buckets and rebuilds them after the first step.
            if step > 1:
                self.assertGreaterEqual(len(buckets), 2, f"step {step}: {sorted(values)}")
            self.assertEqual(set(values) - {k for k in values if k.startswith("comm/bucket")},
                             GLOBAL_NAMES)
            bucket_bytes = sum(values[f"comm/{b}/bytes"] for b in buckets)
            self.assertEqual(bucket_bytes, MODEL_BYTES)
            self.assertEqual(values["comm/bytes"], MODEL_BYTES)
            self.assertAlmostEqual(values["time/allreduce_ms"],
                                   sum(values[f"comm/{b}/allreduce_ms"] for b in buckets))
            for b in buckets:
                algbw = values[f"comm/{b}/bytes"] / values[f"comm/{b}/allreduce_ms"] / 1e6
                self.assertAlmostEqual(values[f"comm/{b}/algbw_GBps"], algbw)
                self.assertAlmostEqual(values[f"comm/{b}/busbw_GBps"], algbw)  # 2(2-1)/2 = 1
        # The user's log() steps agree with the hook's.
        user_steps = [r["step"] for r in outputs[1] if "train/loss" in r.get("metrics", {})]
        self.assertEqual(user_steps, list(range(1, 7)))

    def test_three_ranks(self):
        # 1/3 is not a power of two: multiplying by it (DDP's default) and dividing by 3
        # (allreduce_hook) differ in the last bit, so this pins which one the hook does.
        self.check(run(3, "--steps", "4"), 4)

    def test_gradient_as_bucket_view(self):
        self.check(run(2, "--steps", "4", "--bucket-view"), 4)

    def test_one_rank_sends_global_records_without_communication_figures(self):
        [lines] = run(1, "--steps", "3")
        own, glob = hook_records(lines)
        self.assertEqual(own, {})
        self.assertEqual(sorted(glob), [1, 2, 3])
        for values in glob.values():
            self.assertEqual((values["comm/bytes"], values["time/allreduce_ms"]), (0.0, 0.0))
            self.assertFalse(any(k.startswith("comm/bucket") or k.endswith("GBps")
                                 for k in values))

    def test_stamps_read_later_still_give_every_step_in_order(self):
        # As with CUDA events: a step becomes a record once its stamps can be read.
        outputs = run(2, "--steps", "8", "--deferred-clock", "--eval-after", "4")
        self.check(outputs, 8)
        for lines in outputs:
            own, _ = hook_records(lines)
            self.assertEqual(sorted(own), list(range(1, 9)))
            steps_in_order = [r["step"] for r in lines
                              if r["type"] == "metrics" and "rank" in r
                              and "time/step_ms" in r["metrics"]]
            self.assertEqual(steps_in_order, list(range(1, 9)))
            # Some steps were written only after later steps had started.
            checks_before = {}
            for position, r in enumerate(lines):
                if r["type"] == "check":
                    checks_before[r["step"]] = position
            first_record = min(position for position, r in enumerate(lines)
                               if r["type"] == "metrics" and "time/step_ms" in r["metrics"])
            self.assertGreater(first_record, checks_before[2])

    def test_log_every_and_the_last_step_at_exit(self):
        outputs = run(2, "--steps", "7", "--log-every", "3")
        for lines in outputs:
            own, _ = hook_records(lines)
            self.assertEqual(sorted(own), [3, 6, 7])
        _, glob = hook_records(outputs[0])
        self.assertEqual(sorted(glob), [3, 6, 7])


if __name__ == "__main__":
    unittest.main()
