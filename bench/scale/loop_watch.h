// LoopWatch: how long a Qt thread's event loop could not run, and why (bench/scale's
// "the GUI thread never blocked over 16 ms"). A 1 ms precise QTimer on the watched thread: a gap
// between two of its ticks over 1 ms is the loop's lateness (a stall). Each stall is split by the
// kernel's own counters for that thread:
//  - on a CPU: CLOCK_THREAD_CPUTIME_ID, the thread's own work (event handlers);
//  - waiting for a CPU: the run-queue delay of /proc/thread-self/schedstat (the kernel's
//    Documentation/scheduler/sched-stats.rst), other processes had the cores;
//  - the rest: asleep (the event loop's own wait in poll for the timer, or blocked on a lock or
//    I/O), or, where the thread never slept, time the kernel charged to no task (the
//    hypervisor's steal, interrupt handling).
// A sampler thread reads the watched thread's /proc/self/task/TID/syscall every 0.5 ms (proc(5):
// "running", or the system call it sleeps in), which tells the event loop's wait (poll) from a
// lock (futex) or I/O. The thread's own part of a stall (LoopStall::ownMs) is its CPU time, plus
// the rest when it may have blocked outside the event loop's wait. As a control, a thread of the
// same process that only sleeps 1 ms at a time (clock_nanosleep) is measured the same way: what
// it sees is the machine's, not the GUI's.
//
// Thread-safety: construct, start, stop and read on the watched thread (it must run a Qt event
// loop); the sampler and control threads are internal.
#pragma once

#include <sys/types.h>

#include <QTimer>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace ringside::bench {

// One stall, ms (lateMs past the 1 ms interval; cpuMs on a CPU, runQueueMs waiting for one, in
// it), with the thread's voluntary context switches (sleeps) and major page faults in it.
struct LoopStall {
  using Clock = std::chrono::steady_clock;
  double lateMs = 0, cpuMs = 0, runQueueMs = 0;
  long sleeps = 0, faults = 0;
  // The sampler saw the thread asleep in something other than the event loop's poll (a lock,
  // I/O), or the thread slept more than once and the sampler saw nothing to tell why.
  bool blockedElsewhere = false;
  Clock::time_point from{}, to{};

  // Neither on a CPU nor in the run queue, ms.
  double restMs() const;
  // The lateness the thread caused itself, ms: its work, and the rest where it may have blocked
  // outside the event loop's wait. Not counted: the run-queue wait, a late wake-up from the
  // event loop's own wait, time lost while it never slept.
  double ownMs() const;
};

// A thread's counters at one moment: CPU time and run-queue delay so far (ms), voluntary context
// switches and major page faults so far.
struct ThreadCounters {
  double cpuMs = 0, runQueueMs = 0;
  long sleeps = 0, faults = 0;
  // The calling thread's.
  static ThreadCounters now();
};

struct LoopWatchSummary {
  LoopStall longest;     // by lateMs
  LoopStall longestOwn;  // by ownMs
  int64_t over16 = 0, ownOver16 = 0;  // stalls over 16 ms, raw and own
  std::string seenInLongest, seenInLongestOwn;  // the sampler's states, e.g. "poll 3, running 2"
  LoopStall control;                            // the control thread's longest, by lateMs
  int64_t controlOver16 = 0;
};

class LoopWatch {
 public:
  LoopWatch();
  ~LoopWatch();
  LoopWatch(const LoopWatch&) = delete;
  LoopWatch& operator=(const LoopWatch&) = delete;

  // Starts (or stops) measuring: the stalls, the sampler and the control thread.
  void start();
  void stop();
  // What was measured between start() and stop(); call after stop().
  LoopWatchSummary summary() const;
  // CPU seconds its own sampler and control threads have used, over every start() so far: the
  // measurement's cost, which the bench leaves out of the GUI side's CPU. Call on the thread that
  // calls start() and stop().
  double watcherCpuSeconds();

 private:
  using Clock = LoopStall::Clock;
  struct ThreadSample {
    Clock::time_point at;
    int state;  // the system call number; -1 running, -2 outside a system call, -3 unreadable
  };
  void tick();
  void sample(pid_t tid);
  void control();
  std::string seenIn(const LoopStall& stall) const;
  // The [first, last) indices of samples_ taken within `stall`.
  std::pair<size_t, size_t> samplesIn(const LoopStall& stall) const;
  void classify(LoopStall& stall) const;

  QTimer timer_;
  const pid_t threadId_;
  bool measuring_ = false;
  Clock::time_point last_{};
  ThreadCounters lastCounters_;
  std::vector<LoopStall> stalls_;  // over 4 ms (none shorter can be over 16 ms of its own)
  LoopStall longest_;
  int64_t over16_ = 0;
  std::atomic<bool> running_{false};
  std::thread sampler_, control_;
  std::vector<ThreadSample> samples_;  // written by sampler_; read after it joined
  LoopStall controlLongest_;           // written by control_; read after it joined
  int64_t controlOver16_ = 0;
  double watcherCpuDone_ = 0;  // the sampler's and control's CPU seconds of earlier start()s
};

}  // namespace ringside::bench
