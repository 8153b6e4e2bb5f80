#include "ringside/trainer/run_queue.h"

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <sstream>

namespace ringside::trainer {

std::optional<double> parseSchedstatRunQueueMs(const std::string& text) {
  std::istringstream in(text);
  long long onCpuNs = -1, runQueueNs = -1, slices = -1;
  if (!(in >> onCpuNs >> runQueueNs >> slices) || onCpuNs < 0 || runQueueNs < 0 || slices < 0) {
    return std::nullopt;
  }
  return static_cast<double>(runQueueNs) / 1e6;
}

namespace {

// Bumped in a forked child: the forking thread's open file is its parent's thread's, so the
// child opens its own.
std::atomic<unsigned> gForkGeneration{0};

// The calling thread's /proc/thread-self/schedstat, opened once and read again with pread (one
// system call a reading instead of open, read and close: the trainer reads it every logged step).
// "thread-self" names the thread that opens it, so the descriptor stays that thread's; closed when
// the thread exits.
class SchedstatFile {
 public:
  ~SchedstatFile() { closeFile(); }

  int fd() {
    const unsigned generation = gForkGeneration.load(std::memory_order_relaxed);
    if (fd_ >= 0 && generation == generation_) return fd_;
    closeFile();
    static std::once_flag atFork;
    std::call_once(atFork, [] {
      ::pthread_atfork(nullptr, nullptr,
                       [] { gForkGeneration.fetch_add(1, std::memory_order_relaxed); });
    });
    fd_ = ::open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
    generation_ = generation;
    return fd_;
  }

 private:
  void closeFile() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  int fd_ = -1;
  unsigned generation_ = 0;
};

}  // namespace

std::optional<double> threadRunQueueDelayMs() {
  thread_local SchedstatFile file;
  const int fd = file.fd();
  if (fd < 0) return std::nullopt;
  char text[128];
  const ssize_t read = ::pread(fd, text, sizeof text - 1, 0);
  if (read <= 0) return std::nullopt;
  return parseSchedstatRunQueueMs(std::string(text, static_cast<size_t>(read)));
}

}  // namespace ringside::trainer
