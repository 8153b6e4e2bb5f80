#include "ringside/agent/slurm/slurm_tracker.h"

#include "ringside/agent/slurm/slurm_command.h"

namespace ringside::agent::slurm {

SlurmTracker::SlurmTracker(std::vector<std::string> env) : env_(std::move(env)) {}

SlurmTracker::~SlurmTracker() {
  {
    MutexLock lock(mutex_);
    stop_ = true;
  }
  wake_.notifyAll();
  if (thread_.joinable()) thread_.join();
}

void SlurmTracker::start() {
  if (!thread_.joinable()) thread_ = std::thread([this] { loop(); });
}

void SlurmTracker::refreshSoon() {
  {
    MutexLock lock(mutex_);
    refresh_ = true;
  }
  wake_.notifyAll();
}

bool SlurmTracker::waitForFreshJobs(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  MutexLock lock(mutex_);
  const uint64_t needed = started_ + 1;  // a call begun after this one
  refresh_ = true;
  wake_.notifyAll();
  while (done_ < needed && !stop_) {
    if (!wake_.waitUntil(mutex_, deadline) && std::chrono::steady_clock::now() >= deadline) {
      return done_ >= needed;
    }
  }
  return done_ >= needed;
}

SlurmTracker::Jobs SlurmTracker::jobs() const {
  MutexLock lock(mutex_);
  return jobs_;
}

std::vector<v1::SlurmPartition> SlurmTracker::partitions() const {
  MutexLock lock(mutex_);
  return partitions_;
}

std::string SlurmTracker::partitionsError() const {
  MutexLock lock(mutex_);
  return partitionsError_;
}

void SlurmTracker::loop() {
  auto nextSinfo = std::chrono::steady_clock::now();
  for (;;) {
    {
      MutexLock lock(mutex_);
      if (stop_) return;
      refresh_ = false;
      ++started_;
    }
    // squeue of all of this user's jobs, ended ones included.
    auto listed = runCommand({"squeue", "--noheader", "--me", "--states=all",
                              std::string("--format=") + kSqueueFormat},
                             env_, kCommandTimeout);
    {
      MutexLock lock(mutex_);
      if (!listed.isOk()) {
        jobs_.error = listed.status().message();
      } else if (listed->exitCode != 0) {
        jobs_.error = "squeue failed: " + lastLine(listed->err);
      } else {
        jobs_.byId.clear();
        for (QueuedJob& job : parseSqueue(listed->out)) {
          std::string id = job.jobId;
          jobs_.byId.emplace(std::move(id), std::move(job));
        }
        jobs_.error.clear();
        ++jobs_.generation;
      }
      ++done_;
    }
    wake_.notifyAll();
    if (std::chrono::steady_clock::now() >= nextSinfo) {
      auto nodes = runCommand({"sinfo", "--noheader", "--Node", std::string("--format=") + kSinfoFormat},
                              env_, kCommandTimeout);
      MutexLock lock(mutex_);
      if (!nodes.isOk()) {
        partitionsError_ = nodes.status().message();
      } else if (nodes->exitCode != 0) {
        partitionsError_ = "sinfo failed: " + lastLine(nodes->err);
      } else {
        partitions_ = parseSinfo(nodes->out);
        partitionsError_.clear();
      }
      nextSinfo = std::chrono::steady_clock::now() + kSinfoPeriod;
    }
    MutexLock lock(mutex_);
    const auto until = std::chrono::steady_clock::now() + kSqueuePeriod;
    while (!stop_ && !refresh_) {
      if (!wake_.waitUntil(mutex_, until) && std::chrono::steady_clock::now() >= until) break;
    }
  }
}

}  // namespace ringside::agent::slurm
