// SlurmTracker: what Slurm says of the agent's jobs and of the cluster, asked on a thread of its
// own so that a slow slurmctld never holds up the agent's loop: every kSqueuePeriod one
// `squeue --noheader --me --states=all --format=<slurm_output.h's>` for all of the user's jobs
// (pending, running, and those that ended within Slurm's MinJobAge, 300 s by default, with their
// final state), and every kSinfoPeriod one `sinfo --noheader --Node` for the partitions.
// docs/slurm.md says what the agent asks Slurm and how often.
//
// Thread-safety: all public methods may be called from any thread; the snapshot is copied out
// under the tracker's mutex.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "ringside/agent/slurm/slurm_output.h"
#include "ringside/common/mutex.h"
#include "ringside/proto/ringside.pb.h"

namespace ringside::agent::slurm {

class SlurmTracker {
 public:
  static constexpr std::chrono::milliseconds kSqueuePeriod{3000};
  static constexpr std::chrono::seconds kSinfoPeriod{30};
  static constexpr std::chrono::seconds kCommandTimeout{30};

  // The jobs as the latest successful squeue listed them.
  struct Jobs {
    uint64_t generation = 0;  // counts successful squeue calls; 0: none yet
    std::map<std::string, QueuedJob> byId;
    std::string error;  // the last failed call's error ("" after a success)
  };

  // `env`: extra environment of every Slurm command (SLURM_CONF=... for a test cluster).
  explicit SlurmTracker(std::vector<std::string> env = {});
  ~SlurmTracker();  // stops the thread
  SlurmTracker(const SlurmTracker&) = delete;
  SlurmTracker& operator=(const SlurmTracker&) = delete;

  // Starts the thread (its first squeue and sinfo at once).
  void start();
  // The next squeue runs now rather than at its period (after a submit or a cancel).
  void refreshSoon();
  // Waits until a squeue call that started after this call has completed (or `timeout`): the
  // snapshot then holds what was submitted before. False on time-out.
  bool waitForFreshJobs(std::chrono::milliseconds timeout);

  Jobs jobs() const;
  std::vector<v1::SlurmPartition> partitions() const;
  std::string partitionsError() const;
  const std::vector<std::string>& env() const { return env_; }

 private:
  void loop();

  const std::vector<std::string> env_;
  std::thread thread_;
  mutable Mutex mutex_;
  CondVar wake_;
  bool stop_ GUARDED_BY(mutex_) = false;
  bool refresh_ GUARDED_BY(mutex_) = false;
  uint64_t started_ GUARDED_BY(mutex_) = 0;  // squeue calls begun
  uint64_t done_ GUARDED_BY(mutex_) = 0;     // squeue calls ended (ok or not)
  Jobs jobs_ GUARDED_BY(mutex_);
  std::vector<v1::SlurmPartition> partitions_ GUARDED_BY(mutex_);
  std::string partitionsError_ GUARDED_BY(mutex_);
};

}  // namespace ringside::agent::slurm
