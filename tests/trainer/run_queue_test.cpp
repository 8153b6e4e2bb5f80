// threadRunQueueDelayMs (run_queue.h): the calling thread's run-queue delay from the kernel, and
// the parsing of a schedstat line.
#include "ringside/trainer/run_queue.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace ringside::trainer {
namespace {

TEST(RunQueueTest, ParsesTheSecondFieldOfASchedstatLine) {
  EXPECT_DOUBLE_EQ(*parseSchedstatRunQueueMs("123456789 2500000 17\n"), 2.5);
  EXPECT_DOUBLE_EQ(*parseSchedstatRunQueueMs("0 0 0"), 0.0);
  EXPECT_FALSE(parseSchedstatRunQueueMs(""));
  EXPECT_FALSE(parseSchedstatRunQueueMs("12 34"));        // two fields
  EXPECT_FALSE(parseSchedstatRunQueueMs("12 -34 5"));     // negative
  EXPECT_FALSE(parseSchedstatRunQueueMs("twelve 34 5"));  // not a number
}

// Spins on the calling thread for `duration`.
void spin(std::chrono::milliseconds duration) {
  const auto end = std::chrono::steady_clock::now() + duration;
  volatile uint64_t sink = 0;
  while (std::chrono::steady_clock::now() < end) sink = sink + 1;
}

TEST(RunQueueTest, AThreadSharingItsCpuWithABusyThreadWaitsInTheRunQueue) {
  const auto before = threadRunQueueDelayMs();
  if (!before) GTEST_SKIP() << "this kernel has no /proc/thread-self/schedstat";
  // This thread and a busy one on the same CPU: each runs about half the time and waits in the
  // run queue the other half.
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(0, &one);
  cpu_set_t saved;
  ASSERT_EQ(sched_getaffinity(0, sizeof saved, &saved), 0);
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  const double start = *threadRunQueueDelayMs();
  std::atomic<bool> stop{false};
  std::thread busy([&] {
    sched_setaffinity(0, sizeof one, &one);
    volatile uint64_t sink = 0;
    while (!stop.load(std::memory_order_relaxed)) sink = sink + 1;
  });
  spin(std::chrono::milliseconds(400));
  const double shared = *threadRunQueueDelayMs() - start;
  stop = true;
  busy.join();
  ASSERT_EQ(sched_setaffinity(0, sizeof saved, &saved), 0);
  // About 200 ms of the 400; at least 50 even on a loaded machine.
  EXPECT_GE(shared, 50.0);
  EXPECT_LE(shared, 400.0 + 50.0);
  // The total never goes back.
  EXPECT_GE(*threadRunQueueDelayMs(), start + shared);
}

}  // namespace
}  // namespace ringside::trainer
