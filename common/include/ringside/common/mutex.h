// Mutex, RecursiveMutex, MutexLock and CondVar: std::mutex, std::recursive_mutex and
// std::condition_variable with clang thread-safety annotations (thread_annotations.h), so the
// compiler checks GUARDED_BY and REQUIRES (libstdc++'s own types carry no annotations). After
// leveldb's port::Mutex / port::CondVar.
// Thread-safety: these are the synchronization primitives; every method may be called from any
// thread as the standard types allow.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "ringside/common/thread_annotations.h"

namespace ringside {

class CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void lock() ACQUIRE() { mutex_.lock(); }
  void unlock() RELEASE() { mutex_.unlock(); }

 private:
  friend class CondVar;
  std::mutex mutex_;
};

// A mutex the holding thread may lock again (each lock needs its unlock). The analysis sees one
// capability; a nested lock through a callback (invisible to it) is what this type is for.
class CAPABILITY("mutex") RecursiveMutex {
 public:
  RecursiveMutex() = default;
  RecursiveMutex(const RecursiveMutex&) = delete;
  RecursiveMutex& operator=(const RecursiveMutex&) = delete;

  void lock() ACQUIRE() { mutex_.lock(); }
  void unlock() RELEASE() { mutex_.unlock(); }

 private:
  std::recursive_mutex mutex_;
};

// Holds `mutex` from construction to destruction (std::lock_guard with annotations).
template <typename M>
class SCOPED_CAPABILITY BasicMutexLock {
 public:
  explicit BasicMutexLock(M& mutex) ACQUIRE(mutex) : mutex_(mutex) { mutex_.lock(); }
  ~BasicMutexLock() RELEASE() { mutex_.unlock(); }
  BasicMutexLock(const BasicMutexLock&) = delete;
  BasicMutexLock& operator=(const BasicMutexLock&) = delete;

 private:
  M& mutex_;
};
using MutexLock = BasicMutexLock<Mutex>;
using RecursiveMutexLock = BasicMutexLock<RecursiveMutex>;

// A condition variable bound to one Mutex. wait() and waitFor() must be called with that mutex
// held; they release it while blocked and hold it again when they return. Spurious wake-ups
// happen: callers wait in a loop on their condition.
class CondVar {
 public:
  explicit CondVar(Mutex* mutex) : mutex_(mutex) {}
  CondVar(const CondVar&) = delete;
  CondVar& operator=(const CondVar&) = delete;

  void wait() REQUIRES(mutex_) {
    std::unique_lock<std::mutex> lock(mutex_->mutex_, std::adopt_lock);
    cv_.wait(lock);
    lock.release();
  }
  // Returns false when `timeout` passed without a notification.
  template <typename Rep, typename Period>
  bool waitFor(std::chrono::duration<Rep, Period> timeout) REQUIRES(mutex_) {
    std::unique_lock<std::mutex> lock(mutex_->mutex_, std::adopt_lock);
    const bool notified = cv_.wait_for(lock, timeout) == std::cv_status::no_timeout;
    lock.release();
    return notified;
  }
  // Returns false when `deadline` passed without a notification.
  template <typename Clock, typename Duration>
  bool waitUntil(std::chrono::time_point<Clock, Duration> deadline) REQUIRES(mutex_) {
    std::unique_lock<std::mutex> lock(mutex_->mutex_, std::adopt_lock);
    const bool notified = cv_.wait_until(lock, deadline) == std::cv_status::no_timeout;
    lock.release();
    return notified;
  }
  void notifyOne() { cv_.notify_one(); }
  void notifyAll() { cv_.notify_all(); }

 private:
  Mutex* const mutex_;
  std::condition_variable cv_;
};

}  // namespace ringside
