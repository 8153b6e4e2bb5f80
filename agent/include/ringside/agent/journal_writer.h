// The journal's single writer thread (DESIGN.md decision 6): takes appends through a bounded
// queue, journals the appends queued meanwhile in one transaction (group commit), and completes
// each with the seqs it got once that transaction is committed, so that only durable data is
// published.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ringside/agent/journal.h"
#include "ringside/common/status.h"

namespace ringside::agent {

struct JournalWriterOptions {
  // Appends waiting in the queue at most; submit waits (up to its timeout) while it is full.
  std::size_t maxQueued = 1024;
  // Appends committed together at most (one transaction).
  std::size_t maxPerCommit = 256;
};

// Thread-safety: submit* may be called from any thread. Completions run on the writer thread, in
// submission order, after the commit; they must be quick (hand the data to a publisher) and must
// not call submit* with a timeout (the queue they wait on is drained by their own thread).
// The destructor journals what is queued, completes it, and joins the thread.
class JournalWriter {
 public:
  template <typename T>
  using Completion = std::function<void(Result<T>)>;

  // `journal` must outlive the writer. Starts the thread.
  explicit JournalWriter(Journal& journal, const JournalWriterOptions& options = {});
  ~JournalWriter();
  JournalWriter(const JournalWriter&) = delete;
  JournalWriter& operator=(const JournalWriter&) = delete;

  // Queue one append (Journal::appendRankMetrics and friends). `done` gets the append's result
  // once its transaction is committed, or the error (the append's own, or the commit's).
  // Errors (and `done` is not called): kAborted when the writer is stopping; kAborted when the
  // queue stayed full for `wait` (back-pressure: the caller keeps the data and retries).
  Status submitRankMetrics(v1::RankMetrics batch, Completion<RankAppendResult> done,
                           std::chrono::milliseconds wait = std::chrono::milliseconds(1000));
  Status submitMetricSamples(std::string runId, std::vector<v1::MetricSample> samples,
                             Completion<std::vector<v1::MetricSample>> done,
                             std::chrono::milliseconds wait = std::chrono::milliseconds(1000));
  Status submitLogLines(std::string runId, std::vector<v1::LogLine> lines,
                        Completion<std::vector<v1::LogLine>> done,
                        std::chrono::milliseconds wait = std::chrono::milliseconds(1000));
  Status submitStateEvent(v1::RunInfo info, Completion<v1::RunStateEvent> done,
                          std::chrono::milliseconds wait = std::chrono::milliseconds(1000));

  // Blocks until everything submitted before the call is committed and completed.
  void flush();

  // Transactions committed so far (for tests and the benchmark).
  uint64_t commits() const;

 private:
  // One queued append: `apply` journals it (inside the group's transaction) and keeps its result;
  // `complete` hands that result, or the commit's error, to the caller's completion.
  struct Job {
    std::function<void(Journal&)> apply;
    std::function<void(const Status& commit)> complete;
  };
  template <typename T, typename Apply>
  Status submit(Apply apply, Completion<T> done, std::chrono::milliseconds wait);
  Status enqueue(Job job, std::chrono::milliseconds wait);
  void run();

  Journal& journal_;
  const JournalWriterOptions options_;
  mutable std::mutex mutex_;
  std::condition_variable queueChanged_;  // a job arrived, a slot freed, or a group completed
  std::deque<Job> queue_;                 // guarded by mutex_
  bool stopping_ = false;                 // guarded by mutex_
  uint64_t submitted_ = 0;                // guarded by mutex_
  uint64_t completed_ = 0;                // guarded by mutex_
  uint64_t commits_ = 0;                  // guarded by mutex_
  std::thread thread_;
};

}  // namespace ringside::agent
