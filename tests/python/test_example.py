"""examples/pytorch/ddp_fashion_mnist.py at 2 ranks under plain mpirun: JSON Lines records with
the ranks and the hook's time/* and comm/* names on stdout; the same run pushing to a fake agent
(a PULL socket in the test, as RINGSIDE_AGENT_ENDPOINT names it); an injected slow rank."""

import collections
import os
import pathlib
import statistics
import tempfile
import unittest

from launch import ROOT, json_lines, mpirun, run_mpirun

EXAMPLE = ROOT / "examples" / "pytorch" / "ddp_fashion_mnist.py"
DATA = pathlib.Path("/usr/share/datasets/fashion-mnist")
SHORT = ["--train-samples", "4096", "--test-samples", "1000", "--epochs", "1"]
TIME_NAMES = {"time/step_ms", "time/compute_ms", "time/allreduce_ms", "time/exposed_comm_ms",
              "time/data_ms", "time/wait_ms"}


def values_by(records):
    """{(rank or None, step): {name: value}} of the metrics records."""
    out = collections.defaultdict(dict)
    for r in records:
        if r["type"] == "metrics":
            out[(r.get("rank"), r["step"])].update(r["metrics"])
    return out


@unittest.skipUnless(mpirun(), "mpirun not found (openmpi-bin)")
@unittest.skipUnless(DATA.is_dir(), f"{DATA} missing (dataset-fashion-mnist)")
class ExampleUnderMpirunTest(unittest.TestCase):
    def test_two_ranks_print_records_with_rank_and_the_hooks_names(self):
        done = run_mpirun(EXAMPLE, SHORT + ["--max-steps", "24"], 2, timeout=600)
        self.assertEqual(done.returncode, 0, done.stderr[-3000:])
        records = json_lines(done.stdout)
        configs = [r for r in records if r["type"] == "config"]
        self.assertEqual(len(configs), 1)
        self.assertEqual(configs[0]["params"]["world_size"], 2)
        self.assertEqual(configs[0]["params"]["backend"], "gloo")
        values = values_by(records)
        for rank in (0, 1):
            for step in range(1, 25):
                got = values[(rank, step)]
                self.assertTrue(TIME_NAMES <= set(got), f"rank {rank} step {step}: {sorted(got)}")
                self.assertIn("train/loss", got)
        for step in range(1, 25):
            glob = values[(None, step)]
            for name in ("train/loss", "train/samples_per_s", "time/allreduce_ms", "comm/bytes",
                         "comm/busbw_GBps", "comm/bucket0/allreduce_ms"):
                self.assertIn(name, glob, f"step {step}")
            if step > 1:  # DDP rebuilds its buckets after the first step: two from then on
                self.assertIn("comm/bucket1/bytes", glob, f"step {step}")
            self.assertEqual(glob["train/loss"], values[(0, step)]["train/loss"])
        # The test set's values come once, as the run's, after the epoch (cut at step 24).
        self.assertIn("test/accuracy", values[(None, 24)])
        self.assertNotIn("test/accuracy", values[(1, 24)])
        # 421,642 parameters of 4 bytes in DDP's buckets.
        self.assertEqual(values[(None, 24)]["comm/bytes"], 4 * 421642)

    def test_injected_delay_makes_the_slow_rank_show_data_time_and_the_other_wait(self):
        # 100 ms: well over what another process on a loaded 2-core machine (ctest -j2) takes
        # from a step's compute, which 40 ms was not.
        done = run_mpirun(EXAMPLE, SHORT + ["--max-steps", "30", "--inject-delay", "1:100"], 2,
                          timeout=600)
        self.assertEqual(done.returncode, 0, done.stderr[-3000:])
        values = values_by(json_lines(done.stdout))
        steps = range(6, 31)
        data = {r: statistics.median(values[(r, s)]["time/data_ms"] for s in steps)
                for r in (0, 1)}
        wait = {r: statistics.median(values[(r, s)]["time/wait_ms"] for s in steps)
                for r in (0, 1)}
        self.assertGreater(data[1] - data[0], 90.0, (data, wait))
        self.assertGreater(wait[0] - wait[1], 60.0, (data, wait))

    def test_bad_option_is_refused(self):
        done = run_mpirun(EXAMPLE, ["--inject-delay", "one:5"], 1, timeout=120)
        self.assertNotEqual(done.returncode, 0)
        self.assertIn("--inject-delay must be RANK:MS", done.stderr)


@unittest.skipUnless(mpirun(), "mpirun not found (openmpi-bin)")
@unittest.skipUnless(DATA.is_dir(), f"{DATA} missing (dataset-fashion-mnist)")
class ExampleToFakeAgentTest(unittest.TestCase):
    def test_two_ranks_send_metrics_heartbeats_and_params_and_print_no_records(self):
        import zmq
        from test_agent_sink import FakeAgent, points_of

        context = zmq.Context()
        with tempfile.TemporaryDirectory() as folder:
            agent = FakeAgent(context, f"ipc://{folder}/ranks.sock")
            try:
                done = run_mpirun(EXAMPLE, SHORT + ["--max-steps", "12"], 2, timeout=600,
                                  extra_env={"RINGSIDE_AGENT_ENDPOINT": agent.endpoint,
                                             "RINGSIDE_RUN_ID": "run-9"},
                                  forward=["RINGSIDE_AGENT_ENDPOINT", "RINGSIDE_RUN_ID"])
                self.assertEqual(done.returncode, 0, done.stderr[-3000:])
                self.assertEqual(json_lines(done.stdout), [])
                agent.receive(lambda e: False, timeout_s=1.0)  # everything sent by now
            finally:
                agent.close()
                context.destroy(linger=0)
        batches = agent.bodies("rank_metrics")
        for rank in (0, 1):
            seqs = [b.batch_seq for b in batches if b.rank == rank]
            self.assertEqual(seqs, list(range(1, len(seqs) + 1)), f"rank {rank}")
        own = collections.defaultdict(lambda: collections.defaultdict(set))  # rank -> step -> names
        glob = collections.defaultdict(set)  # step -> names
        for batch in batches:
            self.assertEqual(batch.run_id, "run-9")
            for p in batch.points:
                target = glob if getattr(p, "global") else own[batch.rank]
                target[p.step].add(p.name)
        for rank in (0, 1):
            for step in range(1, 13):
                self.assertTrue(TIME_NAMES | {"train/loss"} <= own[rank][step],
                                f"rank {rank} step {step}")
        self.assertIn("comm/busbw_GBps", glob[12])
        self.assertIn("test/accuracy", glob[12])
        beats = agent.bodies("rank_heartbeat")
        self.assertEqual({b.rank for b in beats}, {0, 1})
        self.assertEqual(len({b.pid for b in beats}), 2)
        [params] = agent.bodies("run_params")
        self.assertEqual((params.rank, params.params["world_size"]), (0, "2"))


if __name__ == "__main__":
    unittest.main()
