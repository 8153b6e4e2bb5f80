// Real CPU contention for the straggler process tests (tests/agent/straggler_process_test.cpp,
// tests/gui/straggler_verdict_process_test.cpp): the ranks of a run found by their environment and
// pinned to CPUs of their own, and busy loops pinned to one rank's CPU, so that the scheduler
// takes time slices from that rank as another job's process would (docs/metrics.md, "The
// straggler"). Linux only; header-only, standard library and POSIX.
//
// Thread-safety: BusyLoops is used from one thread; its loops run on threads of their own.
#pragma once

#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace ringside::contention {

// Unix time now, s (the clock the ranks stamp their records with).
inline double unixNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// The CPUs this process may run on, ascending.
inline std::vector<int> allowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

// The numeric entries of a /proc directory.
inline std::vector<pid_t> numericEntries(const std::string& path) {
  std::vector<pid_t> ids;
  DIR* dir = opendir(path.c_str());
  if (dir == nullptr) return ids;
  while (const dirent* entry = readdir(dir)) {
    char* end = nullptr;
    const long id = std::strtol(entry->d_name, &end, 10);
    if (end != entry->d_name && *end == '\0') ids.push_back(static_cast<pid_t>(id));
  }
  closedir(dir);
  return ids;
}

// Pins every thread of `pid` to `cpu` (taskset -a -p -c CPU PID); false when one cannot be.
inline bool pinProcess(pid_t pid, int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  const std::vector<pid_t> threads = numericEntries("/proc/" + std::to_string(pid) + "/task");
  if (threads.empty()) return false;
  for (pid_t thread : threads) {
    if (sched_setaffinity(thread, sizeof(set), &set) != 0) return false;
  }
  return true;
}

// Whether every thread of `pid` may run on `cpu` only.
inline bool pinnedTo(pid_t pid, int cpu) {
  const std::vector<pid_t> threads = numericEntries("/proc/" + std::to_string(pid) + "/task");
  if (threads.empty()) return false;
  for (pid_t thread : threads) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(thread, sizeof(set), &set) != 0) return false;
    if (CPU_COUNT(&set) != 1 || !CPU_ISSET(cpu, &set)) return false;
  }
  return true;
}

// Pins `pid` to `cpu` again and says whether every thread now stays there: a rank pinned before
// its MPI_Init finished has its main thread's affinity reset by Open MPI (--bind-to none), and the
// threads it starts later inherit that, so the scheduler moves the rank off a busy CPU and it is
// never slowed (the straggler process tests pinned once and so failed at random).
inline bool repinAndCheck(pid_t pid, int cpu) { return pinProcess(pid, cpu) && pinnedTo(pid, cpu); }

// The PIDs of a run's ranks by rank, from each process's environment (RINGSIDE_RUN_ID, set by
// the agent, and OMPI_COMM_WORLD_RANK); -1 for a rank not found.
inline std::vector<pid_t> rankPids(const std::string& runId, int worldSize) {
  std::vector<pid_t> pids(static_cast<size_t>(worldSize), -1);
  const std::string runVariable = "RINGSIDE_RUN_ID=" + runId;
  const std::string rankPrefix = "OMPI_COMM_WORLD_RANK=";
  for (pid_t pid : numericEntries("/proc")) {
    std::ifstream file("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
    if (!file) continue;
    const std::string environ((std::istreambuf_iterator<char>(file)),
                              std::istreambuf_iterator<char>());
    std::vector<std::string> variables;
    size_t begin = 0;
    for (size_t end; (end = environ.find('\0', begin)) != std::string::npos; begin = end + 1) {
      variables.push_back(environ.substr(begin, end - begin));
    }
    bool ofRun = false;
    int rank = -1;
    for (const std::string& variable : variables) {
      ofRun |= variable == runVariable;
      if (variable.rfind(rankPrefix, 0) == 0)
        rank = std::atoi(variable.c_str() + rankPrefix.size());
    }
    if (ofRun && rank >= 0 && rank < worldSize) pids[static_cast<size_t>(rank)] = pid;
  }
  return pids;
}

// `count` threads that spin on `cpu` from construction until stop() or destruction: each takes
// an equal share of that CPU from whatever else runs there.
class BusyLoops {
 public:
  BusyLoops(int cpu, int count) : stop_(std::make_shared<std::atomic<bool>>(false)) {
    for (int i = 0; i < count; ++i) {
      threads_.emplace_back([cpu, stop = stop_] {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
        volatile unsigned long spins = 0;
        while (!stop->load(std::memory_order_relaxed)) spins = spins + 1;
      });
    }
    startedAt_ = unixNow();
  }
  BusyLoops(const BusyLoops&) = delete;
  BusyLoops& operator=(const BusyLoops&) = delete;
  ~BusyLoops() { stop(); }

  void stop() {
    if (threads_.empty()) return;
    stop_->store(true);
    for (std::thread& thread : threads_) thread.join();
    threads_.clear();
    stoppedAt_ = unixNow();
  }
  double startedAt() const { return startedAt_; }  // Unix s
  double stoppedAt() const { return stoppedAt_; }  // Unix s; 0 while running

 private:
  std::shared_ptr<std::atomic<bool>> stop_;
  std::vector<std::thread> threads_;
  double startedAt_ = 0.0, stoppedAt_ = 0.0;
};

}  // namespace ringside::contention
