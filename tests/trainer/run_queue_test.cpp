// threadRunQueueDelayMs (run_queue.h): the calling thread's run-queue delay from the kernel, and
// the parsing of a schedstat line.
#include "ringside/trainer/run_queue.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

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

// Runs `body` on the calling thread pinned to CPU 0 beside a thread that spins on CPU 0: each
// runs about half the time and waits in the run queue the other half. Returns false (nothing run)
// when the affinity cannot be set.
template <typename Body>
bool sharingCpuZeroWithABusyThread(Body body) {
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(0, &one);
  cpu_set_t saved;
  if (sched_getaffinity(0, sizeof saved, &saved) != 0 ||
      sched_setaffinity(0, sizeof one, &one) != 0) {
    return false;
  }
  std::atomic<bool> stop{false};
  std::thread busy([&] {
    sched_setaffinity(0, sizeof one, &one);
    volatile uint64_t sink = 0;
    while (!stop.load(std::memory_order_relaxed)) sink = sink + 1;
  });
  body();
  stop = true;
  busy.join();
  return sched_setaffinity(0, sizeof saved, &saved) == 0;
}

TEST(RunQueueTest, AThreadSharingItsCpuWithABusyThreadWaitsInTheRunQueue) {
  const auto before = threadRunQueueDelayMs();
  if (!before) GTEST_SKIP() << "this kernel has no /proc/thread-self/schedstat";
  double start = 0, shared = 0;
  ASSERT_TRUE(sharingCpuZeroWithABusyThread([&] {
    start = *threadRunQueueDelayMs();
    spin(std::chrono::milliseconds(400));
    shared = *threadRunQueueDelayMs() - start;
  }));
  // About 200 ms of the 400; at least 50 even on a loaded machine.
  EXPECT_GE(shared, 50.0);
  EXPECT_LE(shared, 400.0 + 50.0);
  // The total never goes back.
  EXPECT_GE(*threadRunQueueDelayMs(), start + shared);
}

// The file is kept open between readings: each thread, and a forked child, must still read its
// own thread's figure, not the thread's that read first.
TEST(RunQueueTest, EachThreadAndAForkedChildReadTheirOwnDelay) {
  if (!threadRunQueueDelayMs()) GTEST_SKIP() << "this kernel has no /proc/thread-self/schedstat";
  // This thread waits at least 100 ms for a CPU (at most 5 s of trying).
  ASSERT_TRUE(sharingCpuZeroWithABusyThread([] {
    const double start = *threadRunQueueDelayMs();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (*threadRunQueueDelayMs() - start < 100.0 &&
           std::chrono::steady_clock::now() < deadline) {
      spin(std::chrono::milliseconds(20));
    }
  }));
  const double mine = *threadRunQueueDelayMs();
  ASSERT_GE(mine, 100.0) << "could not make this thread wait 100 ms for a CPU in 5 s";
  // A new thread has waited for a CPU only since it started.
  double other = -1;
  std::thread([&other] {
    spin(std::chrono::milliseconds(1));
    other = threadRunQueueDelayMs().value_or(-1);
  }).join();
  EXPECT_GE(other, 0.0);
  EXPECT_LT(other, mine - 50.0);
  // A forked child (this thread's copy, with the file this thread opened): its own, new figure.
  int pipeFds[2];
  ASSERT_EQ(::pipe(pipeFds), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const double inChild = threadRunQueueDelayMs().value_or(-1);
    const ssize_t wrote = ::write(pipeFds[1], &inChild, sizeof inChild);
    ::_exit(wrote == sizeof inChild ? 0 : 1);
  }
  double inChild = -1;
  ASSERT_EQ(::read(pipeFds[0], &inChild, sizeof inChild), static_cast<ssize_t>(sizeof inChild));
  int status = 0;
  ::waitpid(child, &status, 0);
  ::close(pipeFds[0]);
  ::close(pipeFds[1]);
  EXPECT_GE(inChild, 0.0);
  EXPECT_LT(inChild, mine - 50.0);
  // And this thread still reads its own, never less than before.
  EXPECT_GE(*threadRunQueueDelayMs(), mine);
}

}  // namespace
}  // namespace ringside::trainer
