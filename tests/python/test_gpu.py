"""The example and the hook on GPUs with nccl (ctest label gpu; exit status 77, skipped, where
torch sees no GPU): CUDA-event timings of every step and bucket, read without synchronising."""

import os
import pathlib
import sys
import unittest

from launch import ROOT, json_lines, run_torchrun_like

EXAMPLE = ROOT / "examples" / "pytorch" / "ddp_fashion_mnist.py"
DATA = os.environ.get("RINGSIDE_FASHION_MNIST", "/usr/share/datasets/fashion-mnist")


class GpuExampleTest(unittest.TestCase):
    def test_example_with_nccl(self):
        import torch
        world = min(2, torch.cuda.device_count())
        results = run_torchrun_like(EXAMPLE, ["--data", DATA, "--train-samples", "8192",
                                              "--test-samples", "2000", "--max-steps", "40",
                                              "--epochs", "1"], world, timeout=300)
        for rank, (code, out, err) in enumerate(results):
            self.assertEqual(code, 0, f"rank {rank}: {err[-3000:]}")
        records = json_lines(results[0][1])
        [config] = [r for r in records if r["type"] == "config"]
        self.assertEqual(config["params"]["backend"], "nccl")
        glob = {}
        for r in records:
            if r["type"] == "metrics" and "rank" not in r:
                glob.setdefault(r["step"], {}).update(r["metrics"])
        self.assertEqual(sorted(s for s in glob if "time/step_ms" in glob[s]), list(range(1, 41)))
        for step in range(1, 41):
            self.assertGreater(glob[step]["time/step_ms"], 0.0)
            if world > 1:
                self.assertGreater(glob[step]["comm/bucket0/allreduce_ms"], 0.0)
                self.assertIn("comm/busbw_GBps", glob[step])

    def test_cuda_event_bucket_timings_in_process(self):
        import torch
        import torch.distributed as dist
        import torch.nn.functional as F
        from torch.nn.parallel import DistributedDataParallel
        import ringside.torch
        from launch import free_port

        os.environ.update(RANK="0", WORLD_SIZE="1", MASTER_ADDR="127.0.0.1",
                          MASTER_PORT=str(free_port()))
        info = ringside.torch.init_process_group()
        self.assertEqual((info.backend, info.device.type), ("nccl", "cuda"))
        net = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.ReLU(),
                                  torch.nn.Linear(4096, 4096), torch.nn.ReLU(),
                                  torch.nn.Linear(4096, 10)).to(info.device)
        model = DistributedDataParallel(net, device_ids=info.device_ids, bucket_cap_mb=16)
        watcher = ringside.torch.watch(model, global_batch=256)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
        x = torch.randn(256, 1024, device=info.device)
        y = torch.randint(0, 10, (256,), device=info.device)
        for _ in range(20):
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        watcher.close()
        timing = watcher.last_timing
        self.assertEqual((watcher.steps, timing.step), (20, 20))
        self.assertGreaterEqual(len(timing.bucket_ms), 2)
        self.assertTrue(all(ms > 0.0 for ms in timing.bucket_ms), timing)
        self.assertGreater(timing.step_ms, 0.0)
        self.assertGreaterEqual(timing.compute_ms, 0.0)
        dist.destroy_process_group()


if __name__ == "__main__":
    try:
        import torch
    except ImportError:
        print("test_gpu: no torch: skipped")
        sys.exit(77)
    if not torch.cuda.is_available():
        print("test_gpu: torch sees no GPU: skipped")
        sys.exit(77)
    unittest.main()
