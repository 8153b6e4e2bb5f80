#!/usr/bin/python3
"""bench/sweep: ASHA against running every trial to its end, through a real agent.

The same configurations of the trainer's MLP on Fashion-MNIST (a grid of learning rates x hidden
widths, 1 rank per trial, at most 2 trials at once on the agent's CPU slots) run twice as sweeps of
one agent: first every trial to its last epoch (no early stopping: the reference), then with ASHA
(eta 4, grace period 1 epoch, rungs at 1 and 4 epochs of 16). Prints, and checks:

- the wall time of each sweep, from launch_sweep's reply to the sweep's end, and their ratio
  (goal: ASHA <= 35 % of the reference);
- the best test accuracy of each (goal: ASHA within 0.5 points of the reference's best);
- the slots' busy share of the ASHA sweep: the slot-seconds its trials' runs held (from each run's
  start_time to its end_time) over the slot-seconds available, from the sweep's launch until its
  last run started (the last rung's promotion; after it one trial trains to the end alone)
  (goal >= 90 %), and until its last new trial started;
- correctness: both sweeps complete, each trial's runs are its attempts 1, 2, ... with none run
  twice (the reference's: one each, all completed), and ASHA's stopped trials name their rung.

Usage: bench/sweep/sweep_bench.py [--agent build/release/agent/ringside-agent]
         [--trainer build/release/trainer/ringside-trainer] [--epochs 16] [--train-samples 0]
Needs python3-zmq and python3-protobuf (scripts/install-deps --test). Exit status 1 when a
correctness check fails (a missed goal is printed, not an error: the figures are the result).
"""
import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
import zmq  # noqa: E402
from google.protobuf import json_format  # noqa: E402
from ringside._proto import ringside_pb2 as pb  # noqa: E402

LEARNING_RATES = [0.001, 0.01, 0.05, 0.2]
HIDDEN = [[32], [128], [256, 128], [512, 256]]


class Agent:
    """A ringside-agent on loopback without CURVE (--insecure), in a temporary state directory."""

    def __init__(self, args, workdir):
        ready = workdir / "ready.json"
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        self.process = subprocess.Popen(
            [args.agent, "--state-dir", str(workdir / "state"), "--insecure", "--control-port", "0",
             "--events-port", "0", "--trainer", args.trainer, "--mpirun", args.mpirun,
             "--ready-file", str(ready), "--log-level", "warning"],
            env=env, stderr=open(workdir / "agent.err", "w"))
        deadline = time.time() + 30
        while not ready.exists() or not ready.read_text().strip():
            if time.time() > deadline or self.process.poll() is not None:
                sys.exit("the agent did not start: " + (workdir / "agent.err").read_text())
            time.sleep(0.05)
        endpoints = json.loads(ready.read_text())
        self.context = zmq.Context()
        self.dealer = self.context.socket(zmq.DEALER)
        self.dealer.linger = 0
        self.dealer.connect(endpoints["control_endpoint"])
        self.ids = 0

    def request(self, **body):
        self.ids += 1
        envelope = pb.Envelope(protocol_version=2, request_id=self.ids, **body)
        self.dealer.send(envelope.SerializeToString())
        while self.dealer.poll(30000):
            reply = pb.Envelope.FromString(self.dealer.recv())
            if reply.request_id != self.ids:
                continue
            if reply.WhichOneof("body") == "error":
                raise RuntimeError(reply.error.message)
            return getattr(reply, reply.WhichOneof("body"))
        raise TimeoutError("the agent did not answer")

    def runs(self):
        out, token = {}, ""
        while True:
            page = self.request(list_runs=pb.ListRunsRequest(include_ended=True, page_token=token))
            for run in page.runs:
                out[run.run_id] = run
            token = page.next_page_token
            if not token:
                return out

    def close(self):
        self.process.terminate()
        self.process.wait(60)


def sweep_spec(args, name, asha):
    config = {"backend": "mpi", "epochs": args.epochs, "quiet": True, "log_every": 50,
              "train_samples": args.train_samples}
    spec = {
        "name": name, "method": "GRID", "metric": "test/accuracy", "goal": "MAXIMIZE",
        "max_concurrent": 2,
        "base": {"name": "mlp", "ranks_per_node": 1, "trainer": {"config": config}},
        "parameters": [{"name": "lr", "values": LEARNING_RATES},
                       {"name": "hidden", "values": HIDDEN}],
    }
    if asha:
        spec["early_stopping"] = {"asha": {"eta": 4, "grace_period": 1}}
    return json_format.ParseDict(spec, pb.SweepSpec())


def run_sweep(agent, spec):
    start = time.time()
    sweep = agent.request(launch_sweep=pb.LaunchSweepRequest(spec=spec)).sweep
    while True:
        time.sleep(0.5)
        listed = agent.request(list_sweeps=pb.ListSweepsRequest(include_ended=True)).sweeps
        sweep = next(s for s in listed if s.sweep_id == sweep.sweep_id)
        if sweep.state in (pb.SWEEP_COMPLETED, pb.SWEEP_STOPPED):
            end = time.time()
            return sweep, start, end


def busy_share(sweep, runs, start, first_attempts_only):
    """The share of the 2 slots' time the sweep's runs held them, from `start` until the last run
    started (`first_attempts_only`: until the last new trial started, its first run)."""
    ids = set()
    for trial in sweep.trials:
        ids.update(trial.earlier_run_ids)
        ids.add(trial.run_id)
    sweep_runs = [runs[i] for i in ids if i in runs]
    marks = [r for r in sweep_runs if not first_attempts_only or r.spec.sweep_trial.attempt == 1]
    last_start = max(r.start_time for r in marks)
    window = last_start - start
    if window <= 0:
        return 1.0, window
    held = sum(max(0.0, min(r.end_time, last_start) - max(r.start_time, start)) for r in sweep_runs)
    return held / (2 * window), window


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agent", default=str(ROOT / "build/release/agent/ringside-agent"))
    parser.add_argument("--trainer", default=str(ROOT / "build/release/trainer/ringside-trainer"))
    parser.add_argument("--mpirun", default=shutil.which("mpirun") or "mpirun")
    parser.add_argument("--epochs", type=int, default=16)
    parser.add_argument("--train-samples", type=int, default=0, help="0: all 60,000")
    args = parser.parse_args()
    failures = []
    with tempfile.TemporaryDirectory(prefix="ringside-sweep-bench-") as tmp:
        agent = Agent(args, pathlib.Path(tmp))
        try:
            results = {}
            for name, asha in (("every trial to the end", False), ("ASHA eta 4", True)):
                sweep, start, end = run_sweep(agent, sweep_spec(args, name, asha))
                runs = agent.runs()
                results[name] = (sweep, start, end, runs)
                ran = [r for r in runs.values() if r.spec.sweep_trial.sweep_id == sweep.sweep_id]
                if sweep.state != pb.SWEEP_COMPLETED:
                    failures.append(f"{name}: the sweep ended {pb.SweepState.Name(sweep.state)}")
                if len(sweep.trials) != 16:
                    failures.append(f"{name}: {len(sweep.trials)} trials, not 16")
                # Each trial's runs are its attempts 1, 2, ... (a promotion resumes it as one more),
                # none twice; without early stopping, one each.
                attempts = {}
                for run in ran:
                    key = (run.spec.sweep_trial.trial, run.spec.sweep_trial.attempt)
                    if key in attempts:
                        failures.append(f"{name}: trial {key[0]} attempt {key[1]} ran twice")
                    attempts[key] = run
                for trial in sweep.trials:
                    expected = len(trial.earlier_run_ids) + 1
                    if sorted(a for (t, a) in attempts if t == trial.trial) != \
                            list(range(1, expected + 1)):
                        failures.append(f"{name}: trial {trial.trial}'s runs are not its attempts")
                    if not asha and expected != 1:
                        failures.append(f"{name}: trial {trial.trial} ran {expected} times")
                for trial in sweep.trials:
                    if not asha and trial.state != pb.COMPLETED:
                        failures.append(f"{name}: trial {trial.trial} {trial.reason}")
                    if trial.stopped_early and not trial.reason.startswith("stopped at rung "):
                        failures.append(f"{name}: trial {trial.trial}: {trial.reason}")
        finally:
            agent.close()
    (full, full_start, full_end, _), (asha, asha_start, asha_end, asha_runs) = results.values()
    full_wall, asha_wall = full_end - full_start, asha_end - asha_start
    full_best = full.trials[full.best_trial].best_value
    asha_best = asha.trials[asha.best_trial].best_value
    share, window = busy_share(asha, asha_runs, asha_start, first_attempts_only=False)
    drawn_share, drawn_window = busy_share(asha, asha_runs, asha_start, first_attempts_only=True)
    stopped = sum(t.stopped_early for t in asha.trials)
    epochs = sum(t.resource for t in asha.trials)
    run_count = sum(len(t.earlier_run_ids) + 1 for t in asha.trials)
    print(f"sweep bench: 16 configurations (lr {LEARNING_RATES} x hidden {HIDDEN}) of the MLP, "
          f"{args.epochs} epochs, train samples {args.train_samples or 'all'}, 1 rank per "
          f"trial, 2 at once")
    print(f"  every trial to the end: {full_wall:7.1f} s, best test/accuracy {full_best:.4f} "
          f"(trial {full.best_trial}, {dict(full.trials[full.best_trial].params)})")
    print(f"  ASHA eta 4:             {asha_wall:7.1f} s, best test/accuracy {asha_best:.4f} "
          f"(trial {asha.best_trial}, {dict(asha.trials[asha.best_trial].params)}); "
          f"{stopped} trials stopped early, {epochs:g} of {16 * args.epochs} epochs trained in "
          f"{run_count} runs")
    print(f"  ASHA / reference wall time: {100 * asha_wall / full_wall:.1f} % (goal <= 35 %)")
    print(f"  best accuracy, ASHA - reference: {100 * (asha_best - full_best):+.2f} points "
          f"(goal >= -0.5)")
    print(f"  ASHA slots busy until its last run started, the last rung's promotion "
          f"({window:.1f} s): {100 * share:.1f} % (goal >= 90 %)")
    print(f"  ASHA slots busy until its last new trial started ({drawn_window:.1f} s): "
          f"{100 * drawn_share:.1f} %")
    for failure in failures:
        print(f"  FAILED: {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
