#include "ringside/agent/journal_writer.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <utility>

namespace ringside::agent {

JournalWriter::JournalWriter(Journal& journal, const JournalWriterOptions& options)
    : journal_(journal), options_(options), thread_([this] { run(); }) {}

JournalWriter::~JournalWriter() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  queueChanged_.notify_all();
  thread_.join();
}

template <typename T, typename Apply>
Status JournalWriter::submit(Apply apply, Completion<T> done, std::chrono::milliseconds wait) {
  auto result = std::make_shared<std::optional<Result<T>>>();
  Job job;
  job.apply = [apply = std::move(apply), result](Journal& journal) {
    result->emplace(apply(journal));
  };
  job.complete = [done = std::move(done), result](const Status& commit) {
    if (!done) return;
    if (!commit.isOk()) {
      done(commit);
    } else {
      done(std::move(**result));
    }
  };
  return enqueue(std::move(job), wait);
}

Status JournalWriter::submitRankMetrics(v1::RankMetrics batch, Completion<RankAppendResult> done,
                                        std::chrono::milliseconds wait) {
  return submit<RankAppendResult>(
      [batch = std::move(batch)](Journal& journal) { return journal.appendRankMetrics(batch); },
      std::move(done), wait);
}

Status JournalWriter::submitMetricSamples(std::string runId, std::vector<v1::MetricSample> samples,
                                          Completion<std::vector<v1::MetricSample>> done,
                                          std::chrono::milliseconds wait) {
  return submit<std::vector<v1::MetricSample>>(
      [runId = std::move(runId), samples = std::move(samples)](Journal& journal) {
        return journal.appendMetricSamples(runId, samples);
      },
      std::move(done), wait);
}

Status JournalWriter::submitLogLines(std::string runId, std::vector<v1::LogLine> lines,
                                     Completion<std::vector<v1::LogLine>> done,
                                     std::chrono::milliseconds wait) {
  return submit<std::vector<v1::LogLine>>(
      [runId = std::move(runId), lines = std::move(lines)](Journal& journal) {
        return journal.appendLogLines(runId, lines);
      },
      std::move(done), wait);
}

Status JournalWriter::submitStateEvent(v1::RunInfo info, Completion<v1::RunStateEvent> done,
                                       std::chrono::milliseconds wait) {
  return submit<v1::RunStateEvent>(
      [info = std::move(info)](Journal& journal) { return journal.appendStateEvent(info); },
      std::move(done), wait);
}

Status JournalWriter::enqueue(Job job, std::chrono::milliseconds wait) {
  std::unique_lock lock(mutex_);
  const bool hasRoom = queueChanged_.wait_for(
      lock, wait, [this] { return stopping_ || queue_.size() < options_.maxQueued; });
  if (stopping_) return Status::aborted("the journal writer is stopping");
  if (!hasRoom) {
    return Status::aborted("the journal writer's queue stayed full (" +
                           std::to_string(options_.maxQueued) + " appends) for " +
                           std::to_string(wait.count()) + " ms: the disk is too slow");
  }
  queue_.push_back(std::move(job));
  ++submitted_;
  lock.unlock();
  queueChanged_.notify_all();
  return Status::ok();
}

void JournalWriter::flush() {
  std::unique_lock lock(mutex_);
  const uint64_t target = submitted_;
  queueChanged_.wait(lock, [&] { return completed_ >= target; });
}

uint64_t JournalWriter::commits() const {
  std::lock_guard lock(mutex_);
  return commits_;
}

void JournalWriter::run() {
  std::vector<Job> group;
  while (true) {
    {
      std::unique_lock lock(mutex_);
      queueChanged_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping and drained
      const std::size_t count = std::min(queue_.size(), options_.maxPerCommit);
      for (std::size_t i = 0; i < count; ++i) {
        group.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
    }
    queueChanged_.notify_all();  // room in the queue
    const Status committed = journal_.inTransaction([&] {
      for (Job& job : group) job.apply(journal_);
    });
    for (Job& job : group) job.complete(committed);
    {
      std::lock_guard lock(mutex_);
      completed_ += group.size();
      ++commits_;
    }
    group.clear();
    queueChanged_.notify_all();
  }
}

}  // namespace ringside::agent
