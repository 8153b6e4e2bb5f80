"""ringside's agent sink against a fake agent: a PULL socket in the test decodes what a rank
sends (Envelope{rank_metrics, rank_heartbeat, run_params} of common/proto/ringside.proto), over
ipc:// and over CURVE tcp://, with the agent absent at first, restarted, or never there."""

import contextlib
import io
import math
import os
import socket
import tempfile
import time
import unittest

import zmq

from ringside import _activity, _agent_sink, _env, _runtime
from ringside._proto import ringside_pb2 as pb

FAST = _agent_sink.SinkOptions(flush_interval_s=0.02, heartbeat_interval_s=0.05,
                               reconnect_interval_ms=20, flush_timeout_s=5.0, linger_ms=200)


class FakeAgent:
    """A PULL socket bound to an endpoint, decoding every frame as an Envelope."""

    def __init__(self, context, endpoint, server_secret=None):
        self.pull = context.socket(zmq.PULL)
        self.pull.linger = 0
        if server_secret is not None:
            self.pull.curve_server = True
            self.pull.curve_secretkey = server_secret
        self.pull.bind(endpoint)
        self.endpoint = self.pull.getsockopt_string(zmq.LAST_ENDPOINT)
        self.envelopes = []

    def receive(self, until, timeout_s=10.0):
        """Receives until until(self.envelopes) holds; False on timeout."""
        deadline = time.monotonic() + timeout_s
        while not until(self.envelopes):
            left = deadline - time.monotonic()
            if left <= 0 or not self.pull.poll(int(left * 1000)):
                return until(self.envelopes)
            envelope = pb.Envelope()
            envelope.ParseFromString(self.pull.recv())
            self.envelopes.append(envelope)
        return True

    def bodies(self, kind):
        return [getattr(e, kind) for e in self.envelopes if e.WhichOneof("body") == kind]

    def close(self):
        self.pull.close(linger=0)


def points_of(agent):
    return [p for m in agent.bodies("rank_metrics") for p in m.points]


def point(step, name, value, glob=False, epoch=0):
    return _agent_sink.Point(step, epoch, 1700000000.0 + step, glob, name, value)


class AgentSinkTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.endpoint = f"ipc://{self.dir.name}/ranks.sock"
        self.context = zmq.Context()
        self.sinks = []

    def tearDown(self):
        for sink in self.sinks:
            with contextlib.redirect_stderr(io.StringIO()):
                sink.close()
        self.context.destroy(linger=0)
        self.dir.cleanup()

    def sink(self, rank=1, activity=None, options=FAST, endpoint=None, **keys):
        agent = _env.AgentEnv(endpoint or self.endpoint, "run-42", **keys)
        sink = _agent_sink.AgentSink(agent, rank, activity, options)
        self.sinks.append(sink)
        return sink

    def test_batches_carry_the_points_in_order_numbered_from_1(self):
        agent = FakeAgent(self.context, self.endpoint)
        sink = self.sink(rank=3)
        sent = [point(s, "train/loss", 1.0 / s, glob=s % 2 == 0, epoch=s // 10)
                for s in range(1, 3001)]
        for begin in range(0, len(sent), 3):
            self.assertTrue(sink.write_points(sent[begin:begin + 3]))
        self.assertTrue(sink.flush())
        self.assertTrue(agent.receive(lambda e: len(points_of(agent)) == len(sent)))
        batches = agent.bodies("rank_metrics")
        self.assertEqual([b.batch_seq for b in batches], list(range(1, len(batches) + 1)))
        self.assertGreaterEqual(len(batches), 3)  # at most 1,024 points a batch
        self.assertTrue(all(len(b.points) <= 1024 for b in batches))
        for envelope in agent.envelopes:
            self.assertEqual((envelope.protocol_version, envelope.request_id), (2, 0))
        self.assertTrue(all(b.run_id == "run-42" and b.rank == 3 and b.dropped_total == 0
                            for b in batches))
        got = [(p.step, p.epoch, p.wall_time, getattr(p, "global"), p.name, p.value)
               for p in points_of(agent)]
        self.assertEqual(got, [tuple(p) for p in sent])
        agent.close()

    def test_heartbeats_say_what_the_rank_does(self):
        agent = FakeAgent(self.context, self.endpoint)
        activity = _activity.RankActivity()
        activity.step_completed(41, 12.5)
        activity.set_phase(_activity.ALLREDUCE)
        activity.set_bucket(2)
        activity.begin_wait(_activity.WAIT_ALLREDUCE)
        self.sink(rank=1, activity=activity)
        self.assertTrue(agent.receive(lambda e: len(agent.bodies("rank_heartbeat")) >= 3))
        beat = agent.bodies("rank_heartbeat")[-1]
        self.assertEqual((beat.run_id, beat.rank, beat.pid, beat.host),
                         ("run-42", 1, os.getpid(), socket.gethostname()))
        self.assertEqual(beat.phase, pb.ALLREDUCE)
        self.assertEqual((beat.step, beat.bucket, beat.work_done, beat.last_step_ms),
                         (41, 2, 1, 12.5))
        self.assertEqual(beat.waiting_in, "the all-reduce of bucket 2 of step 42")
        self.assertGreater(beat.waiting_seconds, 0.0)
        self.assertAlmostEqual(beat.wall_time, time.time(), delta=60)
        agent.close()

    def test_run_params(self):
        agent = FakeAgent(self.context, self.endpoint)
        sink = self.sink(rank=0)
        sink.send_params({"optimizer.lr": "0.1", "name": '"sgd"'})
        self.assertTrue(agent.receive(lambda e: agent.bodies("run_params")))
        [params] = agent.bodies("run_params")
        self.assertEqual((params.run_id, params.rank), ("run-42", 0))
        self.assertEqual(dict(params.params), {"optimizer.lr": "0.1", "name": '"sgd"'})
        agent.close()

    def test_points_wait_for_an_agent_that_starts_later(self):
        sink = self.sink()
        sink.write_points([point(1, "a/b", 1.0)])
        sink.send_params({"k": "1"})
        self.assertFalse(sink.flush(0.2))  # nobody listens yet
        agent = FakeAgent(self.context, self.endpoint)
        sink.write_points([point(2, "a/b", 2.0)])
        self.assertTrue(agent.receive(lambda e: len(points_of(agent)) == 2
                                      and agent.bodies("run_params")))
        self.assertEqual([p.step for p in points_of(agent)], [1, 2])
        agent.close()

    def test_batches_are_resent_after_the_agent_restarts(self):
        agent = FakeAgent(self.context, self.endpoint)
        sink = self.sink()
        sink.write_points([point(1, "a/b", 1.0)])
        self.assertTrue(agent.receive(lambda e: len(points_of(agent)) == 1))
        agent.close()  # the agent dies
        restarted = FakeAgent(self.context, self.endpoint)
        # Batch 1 comes again to the new agent (the agent skips what it already journaled).
        self.assertTrue(restarted.receive(lambda e: len(points_of(restarted)) == 1))
        sink.write_points([point(2, "a/b", 2.0)])
        self.assertTrue(restarted.receive(lambda e: any(p.step == 2 for p in points_of(restarted))))
        seqs = [b.batch_seq for b in restarted.bodies("rank_metrics")]
        self.assertEqual(seqs, [1, 2])
        # Counted before batch 2 was sent (by the same thread).
        self.assertGreaterEqual(sink.stats.resent_batches, 1)
        restarted.close()

    def test_a_full_queue_drops_whole_records_and_counts_them(self):
        options = _agent_sink.SinkOptions(queue_capacity=10, flush_interval_s=0.02,
                                          reconnect_interval_ms=20, linger_ms=200)
        errors = io.StringIO()
        with contextlib.redirect_stderr(errors):
            sink = self.sink(options=options)
            self.assertTrue(sink.write_points([point(1, f"m/{i}", i) for i in range(8)]))
            self.assertFalse(sink.write_points([point(2, f"m/{i}", i) for i in range(3)]))
            time.sleep(0.2)
            agent = FakeAgent(self.context, self.endpoint)
            self.assertTrue(sink.write_points([point(3, "m/x", 1.0)]))
            self.assertTrue(agent.receive(lambda e: any(p.step == 3 for p in points_of(agent))))
        self.assertEqual(sink.stats.dropped_points, 3)
        self.assertEqual([p.step for p in points_of(agent)], [1] * 8 + [3])
        self.assertEqual(agent.bodies("rank_metrics")[-1].dropped_total, 3)
        self.assertIn("is full (10 points", errors.getvalue())
        agent.close()

    def test_close_without_an_agent_says_how_many_points_were_lost(self):
        options = _agent_sink.SinkOptions(flush_interval_s=0.02, linger_ms=0)
        sink = _agent_sink.AgentSink(_env.AgentEnv(self.endpoint, "run-42"), 5, None, options)
        sink.write_points([point(1, "a/b", 1.0), point(1, "a/c", 2.0)])
        errors = io.StringIO()
        start = time.monotonic()
        with contextlib.redirect_stderr(errors):
            self.assertFalse(sink.flush(0.1))
            sink.close()
            sink.close()  # idempotent
        self.assertLess(time.monotonic() - start, 3.0)
        self.assertIn("rank 5: the agent at", errors.getvalue())
        self.assertIn("did not get 2 metric points: 2 unsent at exit", errors.getvalue())

    def test_curve_over_tcp(self):
        server_public, server_secret = zmq.curve_keypair()
        run_public, run_secret = zmq.curve_keypair()
        agent = FakeAgent(self.context, "tcp://127.0.0.1:*", server_secret=server_secret)
        sink = self.sink(endpoint=agent.endpoint, agent_public_key=server_public.decode(),
                         run_public_key=run_public.decode(), run_secret_key=run_secret.decode())
        sink.write_points([point(1, "train/loss", 0.5, glob=True)])
        self.assertTrue(agent.receive(lambda e: len(points_of(agent)) == 1))
        self.assertTrue(getattr(points_of(agent)[0], "global"))
        agent.close()

    def test_curve_with_the_wrong_server_key_delivers_nothing(self):
        _, server_secret = zmq.curve_keypair()
        wrong_public, _ = zmq.curve_keypair()
        run_public, run_secret = zmq.curve_keypair()
        agent = FakeAgent(self.context, "tcp://127.0.0.1:*", server_secret=server_secret)
        sink = self.sink(endpoint=agent.endpoint, agent_public_key=wrong_public.decode(),
                         run_public_key=run_public.decode(), run_secret_key=run_secret.decode())
        sink.write_points([point(1, "train/loss", 0.5)])
        self.assertFalse(agent.receive(lambda e: len(e) > 0, timeout_s=0.5))
        agent.close()

    def test_bad_endpoint_is_a_value_error(self):
        with self.assertRaisesRegex(ValueError, "RINGSIDE_AGENT_ENDPOINT must be a ZeroMQ"):
            self.sink(endpoint="carrier-pigeon://x")


class RuntimeToAgentTest(unittest.TestCase):
    """ringside.log and ringside.config through the process runtime to the fake agent."""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.context = zmq.Context()
        self.agent = FakeAgent(self.context, f"ipc://{self.dir.name}/ranks.sock")

    def tearDown(self):
        self.agent.close()
        self.context.destroy(linger=0)
        self.dir.cleanup()

    def runtime(self, rank, world):
        return _runtime.Runtime(environ={
            "RINGSIDE_AGENT_ENDPOINT": self.agent.endpoint, "RINGSIDE_RUN_ID": "run-7",
            "OMPI_COMM_WORLD_RANK": str(rank), "OMPI_COMM_WORLD_SIZE": str(world)})

    def test_rank_0_sends_its_values_as_its_own_and_as_the_runs(self):
        rt = self.runtime(0, 2)
        self.assertTrue(rt.to_agent)
        rt.config({"optimizer": {"lr": 0.1}})
        rt.log(5, {"train/loss": 0.5, "train/bad": math.nan}, epoch=1)
        rt.shutdown()
        self.assertTrue(self.agent.receive(lambda e: len(points_of(self.agent)) == 2
                                           and self.agent.bodies("run_params")))
        got = sorted((p.step, p.epoch, getattr(p, "global"), p.name, p.value)
                     for p in points_of(self.agent))
        self.assertEqual(got, [(5, 1, False, "train/loss", 0.5), (5, 1, True, "train/loss", 0.5)])
        self.assertEqual(dict(self.agent.bodies("run_params")[0].params), {"optimizer.lr": "0.1"})
        self.assertEqual(self.agent.bodies("rank_metrics")[0].run_id, "run-7")

    def test_other_ranks_send_their_own_values_only_and_no_params(self):
        rt = self.runtime(1, 2)
        rt.config({"lr": 0.1})
        rt.log(5, {"train/loss": 0.25})
        rt.shutdown()
        self.assertTrue(self.agent.receive(lambda e: len(points_of(self.agent)) == 1))
        [p] = points_of(self.agent)
        self.assertFalse(getattr(p, "global"))
        self.assertEqual(self.agent.bodies("rank_metrics")[0].rank, 1)
        self.assertEqual(self.agent.bodies("run_params"), [])

    def test_heartbeat_during_set_up_and_finishing(self):
        rt = self.runtime(0, 1)
        rt.start()
        self.assertTrue(self.agent.receive(lambda e: self.agent.bodies("rank_heartbeat")))
        self.assertEqual(self.agent.bodies("rank_heartbeat")[0].phase, pb.SETUP)
        rt.shutdown()
        self.assertEqual(rt.activity.phase, _activity.FINISHING)


if __name__ == "__main__":
    unittest.main()
