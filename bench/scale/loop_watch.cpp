#include "loop_watch.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>

#include "ringside/trainer/run_queue.h"

namespace ringside::bench {

namespace {

constexpr double kOver = 16.0;          // ms: the target
constexpr double kKeptStallMs = 4.0;    // stalls kept for classification
constexpr auto kSamplePeriod = std::chrono::microseconds(500);

}  // namespace

ThreadCounters ThreadCounters::now() {
  ThreadCounters c;
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  c.cpuMs = static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
  c.runQueueMs = trainer::threadRunQueueDelayMs().value_or(0.0);
  rusage usage{};
  getrusage(RUSAGE_THREAD, &usage);
  c.sleeps = usage.ru_nvcsw;
  c.faults = usage.ru_majflt;
  return c;
}

namespace {

LoopStall stallBetween(const ThreadCounters& a, const ThreadCounters& b, LoopStall::Clock::time_point from,
                       LoopStall::Clock::time_point to) {
  LoopStall stall;
  stall.lateMs = std::chrono::duration<double, std::milli>(to - from).count() - 1.0;
  stall.cpuMs = b.cpuMs - a.cpuMs;
  stall.runQueueMs = b.runQueueMs - a.runQueueMs;
  stall.sleeps = b.sleeps - a.sleeps;
  stall.faults = b.faults - a.faults;
  stall.from = from;
  stall.to = to;
  return stall;
}

std::string syscallName(int state) {
  switch (state) {
    case -1: return "running";
    case -2: return "outside a system call";
    case -3: return "unreadable";
    case SYS_futex: return "futex";
    case SYS_ppoll: return "ppoll";
    case SYS_poll: return "poll";
    case SYS_epoll_wait: return "epoll_wait";
    case SYS_read: return "read";
    case SYS_write: return "write";
    default: return "syscall " + std::to_string(state);
  }
}

// The event loop's own wait (Qt's dispatchers: glib's poll, or ppoll), or running.
bool inLoopWaitOrRunning(int state) {
  return state == -1 || state == SYS_poll || state == SYS_ppoll;
}

}  // namespace

double LoopStall::restMs() const { return std::max(0.0, lateMs - cpuMs - runQueueMs); }

double LoopStall::ownMs() const { return cpuMs + (blockedElsewhere ? restMs() : 0.0); }

LoopWatch::LoopWatch() : threadId_(static_cast<pid_t>(::syscall(SYS_gettid))) {
  timer_.setTimerType(Qt::PreciseTimer);
  timer_.setInterval(1);
  QObject::connect(&timer_, &QTimer::timeout, [this] { tick(); });
  timer_.start();
}

LoopWatch::~LoopWatch() { stop(); }

void LoopWatch::start() {
  if (running_) return;
  stalls_.clear();
  longest_ = {};
  over16_ = 0;
  samples_.clear();
  controlLongest_ = {};
  controlOver16_ = 0;
  measuring_ = true;
  last_ = {};
  running_ = true;
  sampler_ = std::thread([this, tid = threadId_] { sample(tid); });
  control_ = std::thread([this] { control(); });
}

double LoopWatch::watcherCpuSeconds() {
  if (!running_) return watcherCpuDone_;
  double seconds = watcherCpuDone_;
  for (std::thread* thread : {&sampler_, &control_}) {
    clockid_t clock{};
    timespec ts{};
    if (pthread_getcpuclockid(thread->native_handle(), &clock) == 0 &&
        clock_gettime(clock, &ts) == 0) {
      seconds += static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
    }
  }
  return seconds;
}

void LoopWatch::stop() {
  measuring_ = false;
  if (!running_) return;
  watcherCpuDone_ = watcherCpuSeconds();  // while both threads still run
  running_ = false;
  sampler_.join();
  control_.join();
  for (LoopStall& stall : stalls_) classify(stall);
}

void LoopWatch::tick() {
  const auto now = Clock::now();
  const ThreadCounters counters = ThreadCounters::now();
  if (measuring_ && last_ != Clock::time_point{}) {
    const LoopStall stall = stallBetween(lastCounters_, counters, last_, now);
    if (stall.lateMs > longest_.lateMs) longest_ = stall;
    if (stall.lateMs > kOver) ++over16_;
    if (stall.lateMs > kKeptStallMs) stalls_.push_back(stall);
  }
  last_ = now;
  lastCounters_ = counters;
}

void LoopWatch::sample(pid_t tid) {
  // Opened once and read with pread: open, read and close 2,000 times a second cost the process
  // about a tenth of a core on a virtual machine whose system calls are slow.
  const std::string path = "/proc/self/task/" + std::to_string(tid) + "/syscall";
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  while (running_) {
    int state = -3;
    char text[64];
    const ssize_t read = fd >= 0 ? ::pread(fd, text, sizeof text - 1, 0) : -1;
    if (read > 0) {
      text[read] = '\0';
      if (std::strncmp(text, "running", 7) == 0) {
        state = -1;
      } else {
        state = std::atoi(text);
        if (state < 0) state = -2;
      }
    }
    samples_.push_back({Clock::now(), state});
    std::this_thread::sleep_for(kSamplePeriod);
  }
  if (fd >= 0) ::close(fd);
}

void LoopWatch::control() {
  ThreadCounters last = ThreadCounters::now();
  auto lastAt = Clock::now();
  while (running_) {
    const timespec oneMs{0, 1'000'000};
    clock_nanosleep(CLOCK_MONOTONIC, 0, &oneMs, nullptr);
    const auto now = Clock::now();
    const ThreadCounters counters = ThreadCounters::now();
    const LoopStall stall = stallBetween(last, counters, lastAt, now);
    if (stall.lateMs > controlLongest_.lateMs) controlLongest_ = stall;
    if (stall.lateMs > kOver) ++controlOver16_;
    last = counters;  // as tick() does: one reading a gap
    lastAt = now;
  }
}

std::pair<size_t, size_t> LoopWatch::samplesIn(const LoopStall& stall) const {
  // samples_ is in time order (one thread appends them).
  const auto first = std::lower_bound(
      samples_.begin(), samples_.end(), stall.from,
      [](const ThreadSample& sample, Clock::time_point at) { return sample.at < at; });
  const auto last = std::upper_bound(
      first, samples_.end(), stall.to,
      [](Clock::time_point at, const ThreadSample& sample) { return at < sample.at; });
  return {static_cast<size_t>(first - samples_.begin()),
          static_cast<size_t>(last - samples_.begin())};
}

void LoopWatch::classify(LoopStall& stall) const {
  const auto [first, last] = samplesIn(stall);
  bool elsewhere = false;
  for (size_t i = first; i < last; ++i) {
    if (!inLoopWaitOrRunning(samples_[i].state)) elsewhere = true;
  }
  stall.blockedElsewhere = elsewhere || (first == last && stall.sleeps > 1);
}

std::string LoopWatch::seenIn(const LoopStall& stall) const {
  std::map<std::string, int> counts;
  const auto [first, last] = samplesIn(stall);
  for (size_t i = first; i < last; ++i) ++counts[syscallName(samples_[i].state)];
  std::string text;
  for (const auto& [state, count] : counts) {
    text += (text.empty() ? "" : ", ") + state + " " + std::to_string(count);
  }
  return text.empty() ? "no sample" : text;
}

LoopWatchSummary LoopWatch::summary() const {
  LoopWatchSummary s;
  s.longest = longest_;
  for (const LoopStall& stall : stalls_) {
    if (stall.from == longest_.from) s.longest = stall;  // classified
    if (stall.ownMs() > s.longestOwn.ownMs()) s.longestOwn = stall;
    if (stall.ownMs() > kOver) ++s.ownOver16;
  }
  s.over16 = over16_;
  s.seenInLongest = seenIn(s.longest);
  s.seenInLongestOwn = seenIn(s.longestOwn);
  s.control = controlLongest_;
  s.controlOver16 = controlOver16_;
  return s;
}

}  // namespace ringside::bench
