#!/usr/bin/python3
"""A small Ringside client in Python, written from docs/protocol.md and ringside.proto alone.

Needs Debian's python3-zmq and python3-protobuf, and the bindings generated from the schema:
    protoc -I common/proto --python_out=DIR common/proto/ringside.proto   # DIR/ringside_pb2.py

Usage:
    ringside_client.py [--pb2 DIR] [--agent-key KEY | --insecure] [--keys DIR] HOST COMMAND
    COMMAND: public-key         print this client's public key (created on first use)
             info               the node and its runs
             launch SPEC.json   launch a trainer run (a run spec as `ringside-trainer --config`
                                reads it, docs/run-spec.md)
                                with --ranks N and --priority high|normal|low; on busy
                                slots it waits in the agent's queue (docs/queue.md);
                                --follow follows it to its end
             follow RUN_ID      catch up on a run from the journal, then follow it live
             cancel RUN_ID      stop a run (a queued one leaves the queue, never started)
             move RUN_ID        move a queued run --places N (negative: towards the head)
                                and/or give it --priority high|normal|low
             sweep SWEEP.json   start a sweep (a SweepSpec in protobuf's JSON mapping,
                                docs/sweeps.md); --follow follows it to its end
             sweeps             the agent's sweeps and their trials
             follow-sweep ID    follow a sweep to its end (exit 0: it completed)
             pause-sweep ID, resume-sweep ID, stop-sweep ID
             extend-sweep ID    --trials N more trials
             rerun-trial ID     --trial K again, as a new run
HOST is e.g. tcp://127.0.0.1; --control-port and --events-port default to 47600 and 47601.
Exit status: 0 ok (follow: the run completed), 1 failure, 2 usage.
"""
import argparse
import itertools
import os
import pathlib
import sys

import zmq
from google.protobuf import json_format

PROTOCOL_VERSION = 2
TIMEOUT_MS = 10000
ENDED = ("COMPLETED", "FAILED", "STOPPED")


def client_keys(directory):
    """Loads or creates this client's CURVE keypair (Z85 text files, the secret one 0600)."""
    directory = pathlib.Path(directory).expanduser()
    secret_file, public_file = directory / "client.key_secret", directory / "client.key"
    if not secret_file.exists():
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        public, secret = zmq.curve_keypair()
        fd = os.open(secret_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.write(fd, secret + b"\n")
        os.close(fd)
        public_file.write_bytes(public + b"\n")
    return public_file.read_bytes().strip(), secret_file.read_bytes().strip()


class Client:
    def __init__(self, pb, args):
        self.pb = pb
        self.ids = itertools.count(1)
        self.context = zmq.Context()
        self.dealer = self.context.socket(zmq.DEALER)
        self.sub = self.context.socket(zmq.SUB)
        keys = None if args.insecure else client_keys(args.keys)
        for socket in (self.dealer, self.sub):
            socket.linger = 0
            if keys:
                socket.curve_serverkey = args.agent_key.encode()
                socket.curve_publickey, socket.curve_secretkey = keys
        self.sub.setsockopt(zmq.SUBSCRIBE, b"")  # subscribe before any fetch (catch-up rule)
        self.dealer.connect(f"{args.host}:{args.control_port}")
        self.sub.connect(f"{args.host}:{args.events_port}")

    def request(self, **body):
        """Sends one request and returns its reply body; raises on an ErrorReply or time-out."""
        pb = self.pb
        envelope = pb.Envelope(protocol_version=PROTOCOL_VERSION, request_id=next(self.ids), **body)
        self.dealer.send(envelope.SerializeToString())
        while self.dealer.poll(TIMEOUT_MS):
            reply = pb.Envelope.FromString(self.dealer.recv())
            if reply.request_id != envelope.request_id:
                continue  # a late reply to an earlier request
            if reply.WhichOneof("body") == "error":
                raise RuntimeError(f"{pb.ErrorReply.Code.Name(reply.error.code)}: "
                                   f"{reply.error.message}")
            return getattr(reply, reply.WhichOneof("body"))
        raise TimeoutError("no reply: is the agent running and this client's key authorized?")

    def info(self):
        pb = self.pb
        node = self.request(hello=pb.HelloRequest(client_name="ringside_client.py")).node
        print(f"node {node.hostname}: {node.os}; {node.cpu_model}, {node.cpu_cores} cores, "
              f"{node.memory_total_mib} MiB, {len(node.gpus)} GPUs; "
              f"{node.cpu_slots_used}/{node.cpu_slots_total} CPU slots used; "
              f"agent {node.agent_version}{' (draining)' if node.draining else ''}")
        if node.engine == "slurm":
            for partition in node.slurm_partitions:
                states = ", ".join(f"{n.name} {n.state}" + (f" {n.gpus} GPUs" if n.gpus else "")
                                   for n in partition.nodes)
                print(f"slurm partition {partition.name}{' (default)' if partition.is_default else ''}"
                      f" {partition.availability}, time limit {partition.time_limit}: {states}")
        token = ""
        while True:  # list_runs is paged by bytes: follow next_page_token
            page = self.request(list_runs=pb.ListRunsRequest(include_ended=True, page_token=token))
            for run in page.runs:
                print(f"run {run.run_id} {run.spec.name!r} {pb.RunState.Name(run.state)} "
                      f"ranks {run.world_size} last_seq {run.last_seq} {run.reason}")
            token = page.next_page_token
            if not token:
                break

    def launch(self, spec_json, ranks, name, priority="normal", slurm_json=None):
        pb = self.pb
        # The run spec is a typed TrainerConfig; its JSON is protobuf's JSON mapping, the same
        # keys as a `ringside-trainer --config` file. An unknown key raises ParseError here.
        config = json_format.Parse(spec_json, pb.TrainerConfig())
        spec = pb.RunSpec(name=name, ranks_per_node=ranks, trainer=pb.TrainerJob(config=config),
                          priority=pb.RunPriority.Value(priority.upper() + "_PRIORITY"))
        if slurm_json:
            # A Slurm node's job (docs/slurm.md): {"nodes": 2, "partition": "gpu", ...}.
            spec.slurm.CopyFrom(json_format.Parse(slurm_json, pb.SlurmOptions()))
        run = self.request(launch_run=pb.LaunchRunRequest(spec=spec)).run
        if run.state == pb.QUEUED and run.slurm_job.job_id:
            print(f"launched {run.run_id} (QUEUED: {run.waiting_reason})")
        elif run.state == pb.QUEUED:
            print(f"launched {run.run_id} (QUEUED: position {run.queue_position}, "
                  f"{run.waiting_reason})")
        else:
            print(f"launched {run.run_id} ({pb.RunState.Name(run.state)})")
        return run.run_id

    def move(self, run_id, places, priority=None):
        pb = self.pb
        request = pb.ReorderQueuedRunRequest(run_id=run_id, places=places)
        if priority is not None:
            request.priority = pb.RunPriority.Value(priority.upper() + "_PRIORITY")
        run = self.request(reorder_queued_run=request).run
        print(f"run {run.run_id} {pb.RunState.Name(run.state)} position {run.queue_position}")

    def cancel(self, run_id):
        run = self.request(stop_run=self.pb.StopRunRequest(run_id=run_id)).run
        print(f"run {run.run_id} {self.pb.RunState.Name(run.state)} {run.reason}")

    def launch_sweep(self, spec_json):
        pb = self.pb
        spec = json_format.Parse(spec_json, pb.SweepSpec())
        sweep = self.request(launch_sweep=pb.LaunchSweepRequest(spec=spec)).sweep
        print(f"sweep {sweep.sweep_id} {pb.SweepState.Name(sweep.state)}: "
              f"{len(sweep.trials)} trials queued")
        return sweep.sweep_id

    def print_sweep(self, sweep):
        pb = self.pb
        spec = sweep.spec
        best = (f"; best: trial {sweep.best_trial} with {spec.metric} "
                f"{sweep.trials[sweep.best_trial].best_value:.4g}" if sweep.best_trial >= 0 else "")
        print(f"sweep {sweep.sweep_id} {spec.name!r} {pb.SweepState.Name(sweep.state)} "
              f"{sweep.reason}{best}")
        for trial in sweep.trials:
            values = ", ".join(f"{k}={v}" for k, v in sorted(trial.params.items()))
            value = f" best {trial.best_value:.4g}" if trial.HasField("best_value") else ""
            state = pb.RunState.Name(trial.state) if trial.state else "WAITING"
            print(f"  trial {trial.trial} [{values}] {state} run {trial.run_id or '-'} "
                  f"at {trial.resource:g}{value} {trial.reason}")

    def sweeps(self):
        for sweep in self.request(list_sweeps=self.pb.ListSweepsRequest(include_ended=True)).sweeps:
            self.print_sweep(sweep)

    def control_sweep(self, sweep_id, action, trials=0, trial=0):
        pb = self.pb
        request = pb.ControlSweepRequest(sweep_id=sweep_id, action=pb.SweepAction.Value(action),
                                         trials=trials, trial=trial)
        self.print_sweep(self.request(control_sweep=request).sweep)

    def follow_sweep(self, sweep_id):
        """Prints the sweep's trials as they change (its SweepEvents) until it ends; returns its
        final state's name."""
        pb = self.pb
        ended = ("SWEEP_COMPLETED", "SWEEP_STOPPED")
        listed = self.request(list_sweeps=pb.ListSweepsRequest(include_ended=True)).sweeps
        current = next((s for s in listed if s.sweep_id == sweep_id), None)
        if current is None:
            raise RuntimeError(f"no sweep {sweep_id} on this agent")
        shown = {}
        while True:
            for trial in current.trials:
                line = (pb.RunState.Name(trial.state), trial.stopped_early, trial.reason)
                if shown.get(trial.trial) != line:
                    shown[trial.trial] = line
                    print(f"trial {trial.trial} {line[0]}{' (stopped early)' if line[1] else ''} "
                          f"{line[2]}")
            if pb.SweepState.Name(current.state) in ended:
                self.print_sweep(current)
                return pb.SweepState.Name(current.state)
            if not self.sub.poll(1000):
                # Events may be missed (PUB drops when a subscriber lags): ask now and then.
                listed = self.request(list_sweeps=pb.ListSweepsRequest(include_ended=True)).sweeps
                current = next((s for s in listed if s.sweep_id == sweep_id), current)
                continue
            event = pb.Envelope.FromString(self.sub.recv())
            if event.WhichOneof("body") == "sweep_event" and \
                    event.sweep_event.sweep.sweep_id == sweep_id:
                current = event.sweep_event.sweep

    def follow(self, run_id):
        """Catches up from seq 0 through the journal, then follows live events; checks that the
        sequence numbers it sees run 1, 2, 3, ... without a gap. Returns the final state name."""
        pb = self.pb
        seen = 0       # highest seq handled
        samples = 0
        state = None

        def handle(seq, kind, entry):
            nonlocal seen, samples, state
            if seq <= seen:
                return  # already had it from the fetch
            if seq != seen + 1:
                raise RuntimeError(f"gap: seq {seen + 1}..{seq - 1} missing")
            seen = seq
            if kind == "sample":
                samples += 1
                if entry.name in ("train/loss", "train/lr") and entry.rank < 0:
                    print(f"step {entry.step} {entry.name} {entry.value:.6g}")
                elif entry.name == "test/accuracy":
                    print(f"epoch {entry.epoch} test/accuracy {entry.value:.4f}")
            elif kind == "state":
                state = pb.RunState.Name(entry.run.state)
                print(f"state {state} {entry.run.reason}")

        def catch_up():
            more = True
            while more:
                page = self.request(fetch_run_data=pb.FetchRunDataRequest(run_id=run_id,
                                                                           after_seq=seen))
                entries = ([(s.seq, "sample", s) for s in page.samples] +
                           [(l.seq, "log", l) for l in page.log_lines] +
                           [(e.seq, "state", e) for e in page.states])
                for seq, kind, entry in sorted(entries, key=lambda e: e[0]):
                    handle(seq, kind, entry)
                more = page.more

        catch_up()
        while state not in ENDED:
            if not self.sub.poll(1000):
                continue
            event = pb.Envelope.FromString(self.sub.recv())
            kind = event.WhichOneof("body")
            if kind == "metric_batch" and event.metric_batch.run_id == run_id:
                entries = [(s.seq, "sample", s) for s in event.metric_batch.samples]
            elif kind == "log_batch" and event.log_batch.run_id == run_id:
                entries = [(l.seq, "log", l) for l in event.log_batch.lines]
            elif kind == "run_state" and event.run_state.run.run_id == run_id:
                entries = [(event.run_state.seq, "state", event.run_state)]
            else:
                continue
            if entries and entries[0][0] > seen + 1:
                catch_up()  # missed something (PUB may drop): fetch it from the journal
            for seq, kind, entry in entries:
                handle(seq, kind, entry)
        catch_up()  # entries journaled after the final state (the last log lines)
        print(f"followed {run_id}: {samples} samples, last seq {seen}, state {state}")
        return state


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("host")
    parser.add_argument("command", choices=["public-key", "info", "launch", "follow", "cancel",
                                            "move", "sweep", "sweeps", "follow-sweep",
                                            "pause-sweep", "resume-sweep", "stop-sweep",
                                            "extend-sweep", "rerun-trial"])
    parser.add_argument("argument", nargs="?")
    parser.add_argument("--pb2", help="directory holding ringside_pb2.py")
    parser.add_argument("--agent-key", help="the agent's public key (ringside-agent print-public-key)")
    parser.add_argument("--insecure", action="store_true", help="plaintext, for --insecure agents")
    parser.add_argument("--keys", default="~/.config/ringside-py", help="this client's key directory")
    parser.add_argument("--control-port", type=int, default=47600)
    parser.add_argument("--events-port", type=int, default=47601)
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--name", default="python-client")
    parser.add_argument("--priority", choices=["high", "normal", "low"],
                        help="launch: the run's priority (default normal); move: its new one")
    parser.add_argument("--places", type=int, default=0, help="move: places (negative: up)")
    parser.add_argument("--follow", action="store_true")
    parser.add_argument("--slurm", help="launch on a Slurm node: the job's SlurmOptions as JSON, "
                        "e.g. '{\"nodes\": 2, \"tasksPerNode\": 1, \"partition\": \"gpu\"}'")
    parser.add_argument("--trials", type=int, default=0, help="extend-sweep: how many more")
    parser.add_argument("--trial", type=int, default=0, help="rerun-trial: which")
    args = parser.parse_args()
    if args.pb2:
        sys.path.insert(0, args.pb2)
    import ringside_pb2 as pb  # noqa: E402 (after --pb2)

    if args.command == "public-key":
        print(client_keys(args.keys)[0].decode())
        return 0
    if not args.insecure and not args.agent_key:
        parser.error("--agent-key is required unless --insecure")
    client = Client(pb, args)
    try:
        if args.command == "info":
            client.info()
            return 0
        if args.command == "launch":
            spec = pathlib.Path(args.argument).read_text() if args.argument else "{}"
            run_id = client.launch(spec, args.ranks, args.name, args.priority or "normal",
                                   args.slurm)
            return 0 if not args.follow or client.follow(run_id) == "COMPLETED" else 1
        if args.command == "follow":
            return 0 if client.follow(args.argument) == "COMPLETED" else 1
        if args.command == "move":
            client.move(args.argument, args.places, args.priority)
            return 0
        if args.command == "cancel":
            client.cancel(args.argument)
            return 0
        if args.command == "sweep":
            sweep_id = client.launch_sweep(pathlib.Path(args.argument).read_text())
            if not args.follow:
                return 0
            return 0 if client.follow_sweep(sweep_id) == "SWEEP_COMPLETED" else 1
        if args.command == "sweeps":
            client.sweeps()
            return 0
        if args.command == "follow-sweep":
            return 0 if client.follow_sweep(args.argument) == "SWEEP_COMPLETED" else 1
        actions = {"pause-sweep": "PAUSE_SWEEP", "resume-sweep": "RESUME_SWEEP",
                   "stop-sweep": "STOP_SWEEP", "extend-sweep": "EXTEND_SWEEP",
                   "rerun-trial": "RERUN_TRIAL"}
        if args.command in actions:
            client.control_sweep(args.argument, actions[args.command], args.trials, args.trial)
            return 0
    except (RuntimeError, TimeoutError, OSError, ValueError, json_format.ParseError) as error:
        print(f"ringside_client.py: {error}", file=sys.stderr)
        return 1
    return 2


if __name__ == "__main__":
    sys.exit(main())
