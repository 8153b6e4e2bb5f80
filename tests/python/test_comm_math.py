"""ringside._comm_math: the hook's arithmetic on known timings (nccl-tests' algbw and busbw, bucket
durations, step decomposition, interval records); and ringside._run_queue's reading of the
kernel's run-queue delay."""

import os
import threading
import time
import unittest

from ringside import _comm_math as cm
from ringside import _run_queue


def bucket(index, nbytes, ready, done):
    return cm.BucketStamps(index, nbytes, ready, done)


class BandwidthTest(unittest.TestCase):
    def test_nccl_tests_definitions(self):
        # 1e9 bytes in 1000 ms is 1 GB/s; busbw at 8 ranks is 2*7/8 of it.
        self.assertAlmostEqual(cm.algbw_gbps(1e9, 1000.0), 1.0)
        self.assertAlmostEqual(cm.busbw_gbps(1e9, 1000.0, 8), 1.75)
        self.assertAlmostEqual(cm.busbw_gbps(4e6, 2.0, 2), 2.0)  # 2 GB/s x 2(1)/2
        self.assertAlmostEqual(cm.allreduce_bus_factor(4), 1.5)
        self.assertEqual(cm.allreduce_bus_factor(1), 0.0)

    def test_absent_not_zero(self):
        self.assertIsNone(cm.algbw_gbps(1e6, 0.0))
        self.assertIsNone(cm.algbw_gbps(1e6, -1.0))
        self.assertIsNone(cm.algbw_gbps(1e6, float("nan")))
        self.assertIsNone(cm.algbw_gbps(0, 1.0))
        self.assertIsNone(cm.busbw_gbps(1e6, 1.0, 1))


class StepTimingTest(unittest.TestCase):
    # A step on one rank: forward at 0, bucket 0 ready at 6 (done at 9), bucket 1 ready at 8
    # (done at 13), backward ends at 10, DDP's wait ends at 13.5, the optimizer at 15.
    stamps = cm.StepStamps(step=4, data_ms=2.0, backward_end_ms=10.0, comm_end_ms=13.5,
                           end_ms=15.0, buckets=(bucket(0, 4_000_000, 6.0, 9.0),
                                                 bucket(1, 1_000_000, 8.0, 13.0)))

    def test_gloo_buckets_are_counted_from_their_own_start(self):
        timing = cm.step_timing(self.stamps, serial=False)
        self.assertEqual(timing.bucket_ms, (3.0, 5.0))
        self.assertEqual(timing.allreduce_ms, 8.0)
        self.assertEqual(timing.step_ms, 15.0)
        self.assertEqual(timing.exposed_comm_ms, 3.5)
        self.assertEqual(timing.compute_ms, 11.5)
        self.assertEqual(timing.wait_ms, 3.5)
        self.assertEqual(timing.data_ms, 2.0)
        self.assertEqual(timing.bucket_bytes, (4_000_000, 1_000_000))
        self.assertEqual(timing.step, 4)

    def test_nccl_buckets_queue_behind_the_previous_one(self):
        # Bucket 1 is ready at 8 but its stream is busy with bucket 0 until 9.
        timing = cm.step_timing(self.stamps, serial=True)
        self.assertEqual(timing.bucket_ms, (3.0, 4.0))
        self.assertEqual(timing.allreduce_ms, 7.0)

    def test_clock_going_backwards_gives_zero_not_negative(self):
        stamps = cm.StepStamps(1, -1.0, 5.0, 4.0, 6.0, (bucket(0, 8, 3.0, 2.0),))
        timing = cm.step_timing(stamps, serial=False)
        self.assertEqual((timing.bucket_ms, timing.exposed_comm_ms, timing.data_ms),
                         ((0.0,), 0.0, 0.0))

    def test_unknown_data_time(self):
        stamps = cm.StepStamps(1, None, 5.0, 6.0, 6.0)
        self.assertIsNone(cm.step_timing(stamps, serial=False).data_ms)


class IntervalTest(unittest.TestCase):
    def timing(self, step, step_ms, exposed, data, bucket_ms, bucket_bytes=(2_000_000, 500_000)):
        return cm.StepTiming(step=step, step_ms=step_ms, compute_ms=step_ms - exposed,
                             exposed_comm_ms=exposed, allreduce_ms=sum(bucket_ms),
                             data_ms=data, wait_ms=exposed, bucket_bytes=tuple(bucket_bytes),
                             bucket_ms=tuple(bucket_ms))

    def test_means_and_global_values(self):
        steps = [self.timing(1, 10.0, 1.0, 2.0, (2.0, 1.0)),
                 self.timing(2, 14.0, 3.0, 4.0, (4.0, 1.0))]
        values = cm.interval_values(steps, world_size=4, global_batch=256)
        self.assertEqual(values.rank, {
            "time/step_ms": 12.0, "time/compute_ms": 10.0, "time/allreduce_ms": 4.0,
            "time/exposed_comm_ms": 2.0, "time/data_ms": 3.0, "time/wait_ms": 2.0})
        g = values.global_
        self.assertEqual(g["time/step_ms"], 12.0)
        self.assertEqual(g["time/compute_ms"], 10.0)
        self.assertEqual(g["time/exposed_comm_ms"], 2.0)
        self.assertEqual(g["time/allreduce_ms"], 4.0)
        self.assertEqual(g["comm/bytes"], 2_500_000.0)
        # 256 samples x 2 steps in (10 + 2 + 14 + 4) ms.
        self.assertAlmostEqual(g["train/samples_per_s"], 512 / 0.030)
        # Step: 2.5e6 B in 4 ms = 0.625 GB/s; busbw: that x 2(4-1)/4 = 1.5.
        self.assertAlmostEqual(g["comm/algbw_GBps"], 0.625)
        self.assertAlmostEqual(g["comm/busbw_GBps"], 0.9375)
        # Bucket 0: 2e6 B in a mean of 3 ms; bucket 1: 5e5 B in 1 ms.
        self.assertEqual(g["comm/bucket0/bytes"], 2_000_000.0)
        self.assertEqual(g["comm/bucket0/allreduce_ms"], 3.0)
        self.assertAlmostEqual(g["comm/bucket0/algbw_GBps"], 2e6 / 3e-3 / 1e9)
        self.assertAlmostEqual(g["comm/bucket0/busbw_GBps"], 2e6 / 3e-3 / 1e9 * 1.5)
        self.assertAlmostEqual(g["comm/bucket1/algbw_GBps"], 0.5)
        self.assertAlmostEqual(g["comm/bucket1/busbw_GBps"], 0.75)
        self.assertNotIn("time/data_ms", g)
        self.assertNotIn("time/wait_ms", g)

    def test_bucket_figures_use_the_last_layout(self):
        # DDP rebuilds its buckets after the first step: one bucket, then two.
        steps = [self.timing(1, 20.0, 5.0, 1.0, (9.0,), bucket_bytes=(2_500_000,)),
                 self.timing(2, 10.0, 1.0, 1.0, (2.0, 1.0))]
        g = cm.interval_values(steps, world_size=2, global_batch=None).global_
        self.assertEqual(g["comm/bucket0/allreduce_ms"], 2.0)
        self.assertEqual(g["comm/bucket1/allreduce_ms"], 1.0)
        self.assertNotIn("train/samples_per_s", g)

    def test_one_rank_has_no_communication_figures(self):
        steps = [self.timing(1, 10.0, 0.5, 1.0, (2.0, 1.0))]
        g = cm.interval_values(steps, world_size=1, global_batch=64).global_
        self.assertEqual(g["comm/bytes"], 0.0)
        self.assertEqual(g["time/allreduce_ms"], 0.0)
        for name in g:
            self.assertFalse(name.startswith("comm/bucket") or name.endswith("GBps"), name)

    def test_zero_duration_leaves_bandwidth_out(self):
        steps = [self.timing(1, 10.0, 0.0, None, (0.0, 1.0))]
        values = cm.interval_values(steps, world_size=2, global_batch=None)
        self.assertNotIn("comm/bucket0/algbw_GBps", values.global_)
        self.assertIn("comm/bucket1/algbw_GBps", values.global_)
        self.assertNotIn("time/data_ms", values.rank)

    def test_bucket_metric_names(self):
        self.assertEqual(cm.bucket_metric(12, "busbw_GBps"), "comm/bucket12/busbw_GBps")


class RunQueueTest(unittest.TestCase):
    def test_parses_the_second_field_of_a_schedstat_line(self):
        self.assertEqual(_run_queue.parse_schedstat_ms("123456789 2500000 17\n"), 2.5)
        self.assertEqual(_run_queue.parse_schedstat_ms("0 0 0"), 0.0)
        self.assertIsNone(_run_queue.parse_schedstat_ms(""))
        self.assertIsNone(_run_queue.parse_schedstat_ms("12 34"))
        self.assertIsNone(_run_queue.parse_schedstat_ms("12 -34 5"))
        self.assertIsNone(_run_queue.parse_schedstat_ms("twelve 34 5"))

    def test_a_thread_sharing_its_cpu_with_a_busy_process_waits(self):
        me = threading.get_native_id()
        if _run_queue.thread_run_queue_ms(me) is None:
            self.skipTest("this kernel has no schedstat")
        saved = os.sched_getaffinity(0)
        os.sched_setaffinity(0, {0})
        busy = os.fork()
        if busy == 0:  # a busy child on the same CPU (inherits the affinity)
            while True:
                pass
        try:
            start = _run_queue.thread_run_queue_ms(me)
            end = time.monotonic() + 0.4
            while time.monotonic() < end:
                pass
            shared = _run_queue.thread_run_queue_ms(me) - start
        finally:
            os.kill(busy, 9)
            os.waitpid(busy, 0)
            os.sched_setaffinity(0, saved)
        # About 200 ms of the 400; at least 50 even on a loaded machine.
        self.assertGreaterEqual(shared, 50.0)
        self.assertIsNone(_run_queue.thread_run_queue_ms(2 ** 31 - 1))  # no such thread


if __name__ == "__main__":
    unittest.main()
