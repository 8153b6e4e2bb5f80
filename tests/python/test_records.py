"""ringside.log and ringside.config without an agent: JSON Lines records of docs/metrics.md on
stdout, rank 0's values as the run's, bounds and errors."""

import io
import json
import math
import os
import pathlib
import subprocess
import sys
import tempfile
import unittest

import ringside
from ringside import _records, _runtime

ROOT = pathlib.Path(__file__).resolve().parents[2]


def mpirun_env(rank, world):
    return {"OMPI_COMM_WORLD_RANK": str(rank), "OMPI_COMM_WORLD_SIZE": str(world),
            "OMPI_COMM_WORLD_LOCAL_RANK": str(rank), "OMPI_COMM_WORLD_LOCAL_SIZE": str(world)}


def records(out):
    return [json.loads(line) for line in out.getvalue().splitlines()]


class LogTest(unittest.TestCase):
    def make(self, environ):
        out = io.StringIO()
        return _runtime.Runtime(environ=environ, stdout=out), out

    def test_one_rank_writes_global_records_only(self):
        rt, out = self.make({})
        rt.log(1, {"train/loss": 0.5, "train/lr": 0.1}, epoch=0)
        [record] = records(out)
        self.assertEqual(list(record), ["type", "step", "epoch", "time", "metrics"])
        self.assertEqual(record["type"], "metrics")
        self.assertEqual((record["step"], record["epoch"]), (1, 0))
        self.assertEqual(record["metrics"], {"train/loss": 0.5, "train/lr": 0.1})
        self.assertAlmostEqual(record["time"], __import__("time").time(), delta=60)

    def test_rank_0_of_2_writes_the_global_record_and_its_own(self):
        rt, out = self.make(mpirun_env(0, 2))
        rt.log(7, {"train/loss": 0.25}, epoch=1)
        glob, own = records(out)
        self.assertNotIn("rank", glob)
        self.assertEqual(own["rank"], 0)
        self.assertEqual(glob["metrics"], own["metrics"])
        self.assertEqual((own["step"], own["epoch"]), (7, 1))

    def test_other_ranks_write_their_own_record_only(self):
        rt, out = self.make(mpirun_env(1, 2))
        rt.log(3, {"train/loss": 0.75})
        [own] = records(out)
        self.assertEqual(own["rank"], 1)
        self.assertEqual(own["metrics"], {"train/loss": 0.75})

    def test_torchrun_rank(self):
        rt, out = self.make({"RANK": "2", "WORLD_SIZE": "4"})
        rt.log(1, {"a/b": 1})
        self.assertEqual([r.get("rank") for r in records(out)], [2])

    def test_epoch_is_kept_until_given_again(self):
        rt, out = self.make({})
        rt.log(1, {"x/y": 1})
        rt.log(2, {"x/y": 1}, epoch=3)
        rt.log(3, {"x/y": 1})
        self.assertEqual([r["epoch"] for r in records(out)], [0, 3, 3])

    def test_non_finite_values_are_null(self):
        rt, out = self.make({})
        rt.log(1, {"train/loss": math.nan, "x/inf": math.inf, "x/ok": 2})
        self.assertEqual(records(out)[0]["metrics"],
                         {"train/loss": None, "x/inf": None, "x/ok": 2.0})

    def test_numbers_of_other_types(self):
        class Scalar:  # a 0-d tensor or NumPy scalar: has __float__
            def __float__(self):
                return 1.5
        rt, out = self.make({})
        rt.log(1, {"a/int": 3, "a/obj": Scalar(), "a/bool": True})
        self.assertEqual(records(out)[0]["metrics"], {"a/int": 3.0, "a/obj": 1.5, "a/bool": 1.0})

    def test_many_values_are_split_into_records_of_the_same_step(self):
        rt, out = self.make({})
        metrics = {f"comm/bucket{b}/bytes": b for b in range(100)}
        rt.log(5, metrics)
        lines = out.getvalue().splitlines()
        self.assertEqual(len(lines), 3)
        self.assertTrue(all(len(line) < 4096 for line in lines))
        merged = {}
        for record in map(json.loads, lines):
            self.assertEqual(record["step"], 5)
            merged.update(record["metrics"])
        self.assertEqual(merged, {k: float(v) for k, v in metrics.items()})

    def test_each_line_is_flushed(self):
        class Counting(io.StringIO):
            flushes = 0

            def flush(self):
                Counting.flushes += 1
        out = Counting()
        rt = _runtime.Runtime(environ={}, stdout=out)
        rt.log(1, {"a/b": 1})
        self.assertGreaterEqual(Counting.flushes, 1)

    def test_bad_input_is_refused_with_a_clear_error(self):
        rt, out = self.make({})
        cases = [
            (("1", {"a": 1}), TypeError, "step must be an integer"),
            ((-1, {"a": 1}), ValueError, "step=-1"),
            ((True, {"a": 1}), TypeError, "step must be an integer"),
            ((1, [("a", 1)]), TypeError, "dict"),
            ((1, {"": 1}), ValueError, "1 to 256 bytes"),
            ((1, {"x" * 257: 1}), ValueError, "1 to 256 bytes"),
            ((1, {"a\nb": 1}), ValueError, "printable"),
            ((1, {3: 1}), TypeError, "must be str"),
            ((1, {"a": "0.5"}), TypeError, "must be a number"),
            ((1, {"a": None}), TypeError, "must be a number"),
            ((1, {f"m{i}": i for i in range(1025)}), ValueError, "at most 1024"),
        ]
        for args, error, message in cases:
            with self.subTest(args=str(args)[:60]):
                with self.assertRaisesRegex(error, message):
                    rt.log(*args)
        with self.assertRaisesRegex(ValueError, "epoch=-2"):
            rt.log(1, {"a": 1}, epoch=-2)
        self.assertEqual(out.getvalue(), "")


class ConfigTest(unittest.TestCase):
    def test_nested_dict_becomes_dotted_keys_with_json_values(self):
        flat = _records.flatten_params({
            "optimizer": {"lr": 0.1, "name": "sgd", "betas": [0.9, 0.99]},
            "epochs": 5, "amp": False, "resume": None, "empty": {}, "path": pathlib.Path("/d"),
            "inf": math.inf})
        self.assertEqual(flat, {"optimizer.lr": "0.1", "optimizer.name": '"sgd"',
                                "optimizer.betas": "[0.9,0.99]", "epochs": "5", "amp": "false",
                                "resume": "null", "empty": "{}", "path": '"/d"', "inf": "null"})

    def test_rank_0_prints_a_config_record(self):
        out = io.StringIO()
        rt = _runtime.Runtime(environ=mpirun_env(0, 2), stdout=out)
        rt.config({"optimizer": {"lr": 0.1}, "name": "ü"})
        [record] = records(out)
        self.assertEqual(record, {"type": "config", "params": {"optimizer.lr": 0.1, "name": "ü"}})

    def test_other_ranks_check_but_print_nothing(self):
        out = io.StringIO()
        rt = _runtime.Runtime(environ=mpirun_env(1, 2), stdout=out)
        rt.config({"lr": 0.1})
        self.assertEqual(out.getvalue(), "")
        with self.assertRaises(ValueError):
            rt.config({"": 1})

    def test_argparse_namespace(self):
        import argparse
        out = io.StringIO()
        rt = _runtime.Runtime(environ={}, stdout=out)
        rt.config(argparse.Namespace(lr=0.5, epochs=2))
        self.assertEqual(records(out)[0]["params"], {"lr": 0.5, "epochs": 2})

    def test_bounds(self):
        rt = _runtime.Runtime(environ={}, stdout=io.StringIO())
        with self.assertRaisesRegex(ValueError, "at most 1024 parameters"):
            rt.config({f"k{i}": i for i in range(1025)})
        with self.assertRaisesRegex(ValueError, "at most 256"):
            rt.config({"k" * 257: 1})
        with self.assertRaisesRegex(ValueError, "at most 4096"):
            rt.config({"notes": "x" * 5000})
        with self.assertRaisesRegex(ValueError, "printable"):
            rt.config({"a\tb": 1})
        with self.assertRaisesRegex(TypeError, "dict"):
            rt.config([1, 2])
        with self.assertRaisesRegex(TypeError, "keys must be str"):
            rt.config({(1, 2): 1})
        # The bound holds over several calls too.
        rt.config({f"a{i}": i for i in range(1000)})
        with self.assertRaisesRegex(ValueError, "it would have 1030"):
            rt.config({f"b{i}": i for i in range(30)})


class PublicApiTest(unittest.TestCase):
    def test_version_matches_the_project(self):
        version = os.environ.get("RINGSIDE_PROJECT_VERSION")
        if version is None:
            self.skipTest("RINGSIDE_PROJECT_VERSION is set by ctest")
        self.assertEqual(ringside.__version__, version)

    def test_script_without_agent_prints_records_and_never_imports_torch(self):
        script = ("import ringside, sys\n"
                  "ringside.config({'lr': 0.1})\n"
                  "ringside.log(1, {'train/loss': 0.5})\n"
                  "assert 'torch' not in sys.modules and 'zmq' not in sys.modules\n")
        env = {k: v for k, v in os.environ.items() if not k.startswith("RINGSIDE_")}
        env["PYTHONPATH"] = str(ROOT / "python")
        done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                              text=True, timeout=60)
        self.assertEqual(done.returncode, 0, done.stderr)
        lines = [json.loads(line) for line in done.stdout.splitlines()]
        self.assertEqual([r["type"] for r in lines], ["config", "metrics"])
        self.assertEqual(done.stderr, "")

    def test_missing_pyzmq_under_an_agent_falls_back_to_stdout_and_says_so_once(self):
        with tempfile.TemporaryDirectory() as shadow:
            # A zmq module that cannot be imported, ahead of the real one on the path.
            pathlib.Path(shadow, "zmq.py").write_text("raise ImportError('No module named zmq')\n")
            env = dict(os.environ, PYTHONPATH=f"{shadow}:{ROOT / 'python'}",
                       RINGSIDE_AGENT_ENDPOINT="ipc:///nonexistent/ranks.sock",
                       RINGSIDE_RUN_ID="run-1")
            script = ("import ringside\n"
                      "ringside.log(1, {'train/loss': 0.5})\n"
                      "ringside.log(2, {'train/loss': 0.4})\n")
            done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                                  text=True, timeout=60)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual([json.loads(l)["step"] for l in done.stdout.splitlines()], [1, 2])
        self.assertEqual(len(done.stderr.splitlines()), 1, done.stderr)
        self.assertIn("python3-zmq", done.stderr)

    def test_endpoint_without_run_id_is_an_error(self):
        rt = _runtime.Runtime(environ={"RINGSIDE_AGENT_ENDPOINT": "ipc:///tmp/x"},
                              stdout=io.StringIO())
        with self.assertRaisesRegex(ValueError, "RINGSIDE_RUN_ID"):
            rt.log(1, {"a": 1})


if __name__ == "__main__":
    unittest.main()
