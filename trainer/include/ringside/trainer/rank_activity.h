// RankActivity: what this rank is doing right now (its phase, its step, the collective it is
// blocked in), written by the training thread at every phase change and read by two threads
// that keep running while the training thread is blocked:
//   - the heartbeat, sent by ZmqMetricSink's sender thread about once a second
//     (RankHeartbeat in common/proto/ringside.proto), from which the owner agent judges whether
//     the run stalled and which rank it waits for (docs/metrics.md, "Hangs");
//   - the collective watchdog (Communicator::watchCollectives), which ends the run when one
//     collective has waited past TrainerConfig.collective_timeout_s.
//
// Thread-safety: the setters are called by the training thread only (the one thread that uses the
// communicator and the backend); snapshot() from any thread. Every field is a relaxed atomic: a
// snapshot may mix two consecutive updates, which a once-a-second report tolerates. The cost of a
// setter is a few atomic stores, nothing next to a training step.
#pragma once

#include <atomic>
#include <cstdint>

#include "ringside/proto/ringside.pb.h"

namespace ringside::trainer {

// The kinds of collective a rank waits in (RankActivity::beginWait's `what`). One table, so that
// a kind crosses between ranks as its index (the collective watchdog's answers).
inline constexpr const char* kWaitAllreduce = "all-reduce";
inline constexpr const char* kWaitBroadcast = "broadcast";
inline constexpr const char* kWaitGather = "gather";
inline constexpr const char* kWaitNcclSetup = "NCCL communicator set-up";
inline constexpr const char* kWaitGpuStep = "GPU work (NCCL all-reduce)";
inline constexpr const char* kWaitKinds[] = {kWaitAllreduce, kWaitBroadcast, kWaitGather,
                                             kWaitNcclSetup, kWaitGpuStep};
// The index of `what` in kWaitKinds, -1 for null or another string.
int waitKindIndex(const char* what);

class RankActivity {
 public:
  RankActivity();

  // The training loop's phase (SETUP at construction). Resets the phase's clock when it changes.
  void setPhase(v1::RankPhase phase);
  v1::RankPhase phase() const { return phase_.load(std::memory_order_relaxed); }
  // The gradient bucket an ALLREDUCE phase waits for; -1: none.
  void setBucket(int bucket) { bucket_.store(bucket, std::memory_order_relaxed); }
  // A training step completed: `step` steps in all, the last one took stepMs. Counts as work.
  void stepCompleted(int64_t step, double stepMs);
  // Another unit of work completed outside training steps (an evaluation batch, a checkpoint).
  void workDone() { workDone_.fetch_add(1, std::memory_order_relaxed); }

  // The communicator's collectives. beginCollective() numbers every collective this rank starts
  // (blocking or not), in the order all ranks must call them (MPI's rule), so two ranks with the
  // same number are in the same collective. beginWait() marks the training thread blocked until
  // endWait(); `what` is a string literal ("all-reduce", "broadcast", ...) and `collective` the
  // number of the collective waited for.
  uint64_t beginCollective() { return collectives_.fetch_add(1, std::memory_order_relaxed) + 1; }
  void beginWait(const char* what, uint64_t collective);
  void endWait();

  struct Snapshot {
    v1::RankPhase phase = v1::SETUP;
    double phaseSeconds = 0.0;
    int64_t step = 0;  // steps completed
    int bucket = -1;
    uint64_t workDone = 0;
    double lastStepMs = 0.0;
    // While blocked in a collective: its kind (a string literal, null when not waiting), its
    // number (beginCollective) and the seconds waited so far.
    const char* waitingIn = nullptr;
    uint64_t waitingCollective = 0;
    double waitingSeconds = 0.0;
  };
  Snapshot snapshot() const;

  // "the all-reduce of bucket 2 of step 1752", "the broadcast of step 0 (set-up)": the
  // collective a snapshot waits in, for messages; "" when it does not wait.
  static std::string describeWait(const Snapshot& snapshot);

 private:
  static int64_t nowNs();

  std::atomic<v1::RankPhase> phase_{v1::SETUP};
  std::atomic<int64_t> phaseStartNs_;
  std::atomic<int64_t> step_{0};
  std::atomic<int> bucket_{-1};
  std::atomic<uint64_t> workDone_{0};
  std::atomic<double> lastStepMs_{0.0};
  std::atomic<uint64_t> collectives_{0};
  std::atomic<const char*> waitingIn_{nullptr};
  std::atomic<uint64_t> waitingCollective_{0};
  std::atomic<int64_t> waitStartNs_{0};
};

// Sets a phase for the life of the scope and restores the previous one after it. Null activity:
// does nothing.
class ScopedPhase {
 public:
  ScopedPhase(RankActivity* activity, v1::RankPhase phase)
      : activity_(activity), previous_(activity != nullptr ? activity->phase() : v1::SETUP) {
    if (activity_ != nullptr) activity_->setPhase(phase);
  }
  ~ScopedPhase() {
    if (activity_ != nullptr) activity_->setPhase(previous_);
  }
  ScopedPhase(const ScopedPhase&) = delete;
  ScopedPhase& operator=(const ScopedPhase&) = delete;

 private:
  RankActivity* activity_;
  v1::RankPhase previous_;
};

// Marks the training thread blocked in a collective for the life of the scope. Null activity:
// does nothing.
class ScopedWait {
 public:
  ScopedWait(RankActivity* activity, const char* what, uint64_t collective) : activity_(activity) {
    if (activity_ != nullptr) activity_->beginWait(what, collective);
  }
  ~ScopedWait() {
    if (activity_ != nullptr) activity_->endWait();
  }
  ScopedWait(const ScopedWait&) = delete;
  ScopedWait& operator=(const ScopedWait&) = delete;

 private:
  RankActivity* activity_;
};

}  // namespace ringside::trainer
