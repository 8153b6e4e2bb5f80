#include "ringside/trainer/rank_activity.h"

#include <chrono>
#include <iterator>
#include <string>
#include <string_view>

namespace ringside::trainer {

int waitKindIndex(const char* what) {
  if (what == nullptr) return -1;
  for (size_t i = 0; i < std::size(kWaitKinds); ++i) {
    if (std::string_view(kWaitKinds[i]) == what) return static_cast<int>(i);
  }
  return -1;
}

RankActivity::RankActivity() : phaseStartNs_(nowNs()) {}

int64_t RankActivity::nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void RankActivity::setPhase(v1::RankPhase phase) {
  if (phase_.load(std::memory_order_relaxed) == phase) return;
  phaseStartNs_.store(nowNs(), std::memory_order_relaxed);
  phase_.store(phase, std::memory_order_relaxed);
  if (phase != v1::ALLREDUCE) bucket_.store(-1, std::memory_order_relaxed);
}

void RankActivity::stepCompleted(int64_t step, double stepMs) {
  step_.store(step, std::memory_order_relaxed);
  lastStepMs_.store(stepMs, std::memory_order_relaxed);
  workDone_.fetch_add(1, std::memory_order_relaxed);
}

void RankActivity::beginWait(const char* what, uint64_t collective) {
  waitStartNs_.store(nowNs(), std::memory_order_relaxed);
  waitingCollective_.store(collective, std::memory_order_relaxed);
  waitingIn_.store(what, std::memory_order_release);
}

void RankActivity::endWait() { waitingIn_.store(nullptr, std::memory_order_release); }

RankActivity::Snapshot RankActivity::snapshot() const {
  const int64_t now = nowNs();
  Snapshot s;
  s.phase = phase_.load(std::memory_order_relaxed);
  s.phaseSeconds = static_cast<double>(now - phaseStartNs_.load(std::memory_order_relaxed)) * 1e-9;
  s.step = step_.load(std::memory_order_relaxed);
  s.bucket = bucket_.load(std::memory_order_relaxed);
  s.workDone = workDone_.load(std::memory_order_relaxed);
  s.lastStepMs = lastStepMs_.load(std::memory_order_relaxed);
  s.waitingIn = waitingIn_.load(std::memory_order_acquire);
  if (s.waitingIn != nullptr) {
    s.waitingCollective = waitingCollective_.load(std::memory_order_relaxed);
    s.waitingSeconds =
        static_cast<double>(now - waitStartNs_.load(std::memory_order_relaxed)) * 1e-9;
  }
  return s;
}

std::string RankActivity::describeWait(const Snapshot& s) {
  if (s.waitingIn == nullptr) return "";
  std::string text = std::string("the ") + s.waitingIn;
  if (s.phase == v1::ALLREDUCE && s.bucket >= 0) text += " of bucket " + std::to_string(s.bucket);
  switch (s.phase) {
    case v1::SETUP:
      return text + " during set-up";
    case v1::EVALUATION:
      return text + " of the evaluation after step " + std::to_string(s.step);
    case v1::CHECKPOINT:
      return text + " of the checkpoint at step " + std::to_string(s.step);
    case v1::FINISHING:
      return text + " at the end of the run (step " + std::to_string(s.step) + ")";
    case v1::SYNC:
      return text + " after step " + std::to_string(s.step);
    default:
      return text + " of step " + std::to_string(s.step + 1);
  }
}

}  // namespace ringside::trainer
