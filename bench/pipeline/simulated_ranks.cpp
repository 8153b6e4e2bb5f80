#include "simulated_ranks.h"

#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <utility>

#include "ringside/common/metric_names.h"
#include "telemetry/noise_meter.h"

namespace ringside::bench {

const std::array<const char*, 7> kRankRecord = {
    metric::kTrainLoss,     metric::kStepMs, metric::kComputeMs, metric::kAllreduceMs,
    metric::kExposedCommMs, metric::kDataMs, metric::kWaitMs};

const std::array<const char*, 10> kGlobalRecord = {
    metric::kTrainLoss, metric::kTrainLr,     metric::kTrainSamplesPerS, metric::kStepMs,
    metric::kComputeMs, metric::kAllreduceMs, metric::kExposedCommMs,    metric::kCommBytes,
    metric::kCommAlgbw, metric::kCommBusbw};

namespace {

double unixNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

ThreadCpu threadCpuSplit() {
  ThreadCpu split;
  std::error_code error;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", error)) {
    const std::string tid = task.path().filename().string();
    std::ifstream commFile(task.path() / "comm");
    std::string name;
    std::getline(commFile, name);
    const double seconds = processCpuSeconds("self/task/" + tid);
    if (name.starts_with("pb-rank") || name.starts_with("pb-sink")) {
      split.ranks += seconds;
    } else if (name.starts_with("ZMQbg")) {
      split.zeromq += seconds;
    } else {
      split.gui += seconds;
    }
  }
  return split;
}

double valueOf(int rank, int field, int64_t step) {
  return static_cast<double>((int64_t{rank + 2} << 40) + (step << 5) + field);
}

SimulatedRanks::SimulatedRanks(const std::string& endpoint, const std::string& runId, int ranks,
                               int64_t steps, double stepMs, const std::string& logPath)
    : steps_(steps), stepMs_(stepMs), ranks_(ranks), outcomes_(ranks) {
  if (!logPath.empty()) {
    log_ = std::fopen(logPath.c_str(), "a");
    if (log_ == nullptr) outcomes_[0].error = "cannot append to " + logPath;
    logLineHashes_.reserve(static_cast<size_t>(steps) * (ranks + 2));
  }
  // Threads inherit their creator's name: the sinks' sender threads get "pb-sink".
  char ownName[16] = {};
  ::pthread_getname_np(::pthread_self(), ownName, sizeof ownName);
  ::pthread_setname_np(::pthread_self(), "pb-sink");
  for (int rank = 0; rank < ranks; ++rank) {
    auto sink = trainer::ZmqMetricSink::create(endpoint, runId, rank);
    if (!sink.isOk()) {
      outcomes_[rank].error = sink.status().toString();
      continue;
    }
    threads_.emplace_back(
        [this, rank, s = std::move(sink).value()]() mutable { runRank(rank, std::move(s)); });
  }
  ::pthread_setname_np(::pthread_self(), ownName);
}

SimulatedRanks::~SimulatedRanks() {
  start(Clock::now());  // no-op when started; lets unstarted threads finish
  join();
  if (log_ != nullptr) std::fclose(log_);
}

void SimulatedRanks::start(Clock::time_point t0) {
  if (go_.try_wait()) return;
  t0_ = t0;
  go_.count_down();
}

void SimulatedRanks::join() {
  if (!release_.try_wait()) release_.count_down();
  for (std::thread& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
  std::sort(logLineHashes_.begin(), logLineHashes_.end());
}

void SimulatedRanks::printStep(int64_t step, double wallTime) {
  if (log_ == nullptr) return;
  auto print = [this](const std::string& text) {
    // What mpirun --tag-output makes of a line rank 0 prints (common/rank_tag.h), flushed per
    // line as the trainer's JsonLinesSink does; the agent stores it as "[rank 0] <text>".
    std::fputs("[1,0]<stderr>:", log_);
    std::fputs(text.c_str(), log_);
    std::fputc('\n', log_);
    std::fflush(log_);
    logLineHashes_.push_back(std::hash<std::string>{}("[rank 0] " + text));
  };
  auto dump = [](const trainer::MetricRecord& record) {
    return trainer::toJson(record).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  };
  const int64_t epoch = (step - 1) / kStepsPerEpoch;
  trainer::MetricRecord record{step, epoch, wallTime, std::nullopt, {}};
  for (size_t f = 0; f < kGlobalRecord.size(); ++f) {
    record.values.emplace_back(kGlobalRecord[f], valueOf(-1, static_cast<int>(f), step));
  }
  print(dump(record));
  for (int rank = 0; rank < ranks_; ++rank) {
    record.rank = rank;
    record.values.clear();
    for (size_t f = 0; f < kRankRecord.size(); ++f) {
      record.values.emplace_back(kRankRecord[f], valueOf(rank, static_cast<int>(f), step));
    }
    print(dump(record));
  }
  // The trainer's progress line (trainer.cpp), same format and length.
  char line[256];
  std::snprintf(line, sizeof line,
                "epoch %lld/%d  step %lld/%lld  loss %.4f  lr %.4g  %.0f samples/s  "
                "step %.2f ms (allreduce %.2f, exposed %.2f)  eta %.0fs",
                static_cast<long long>(epoch + 1), static_cast<int>(steps_ / kStepsPerEpoch + 1),
                static_cast<long long>(step), static_cast<long long>(steps_), 0.3456, 0.1, 123456.0,
                stepMs_, 0.25, 0.05, 10.0);
  print(line);
}

uint64_t SimulatedRanks::expectedSamples() const {
  return static_cast<uint64_t>(steps_) *
             (outcomes_.size() * kRankRecord.size() + kGlobalRecord.size()) +
         2;
}

void SimulatedRanks::runRank(int rank, std::unique_ptr<trainer::ZmqMetricSink> sink) {
  RankOutcome& out = outcomes_[rank];
  out.wallTimes.resize(static_cast<size_t>(steps_));
  if (rank == 0) out.globalWallTimes.resize(static_cast<size_t>(steps_));
  ::pthread_setname_np(::pthread_self(), "pb-rank");
  go_.wait();
  const auto interval = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double, std::milli>(stepMs_));
  trainer::MetricRecord record;
  record.values.reserve(kGlobalRecord.size());
  for (int64_t step = 1; step <= steps_; ++step) {
    const auto due = t0_ + step * interval;
    const auto now = Clock::now();
    if (now < due) {
      std::this_thread::sleep_until(due);
    } else if (now - due > interval) {
      ++out.lateSteps;
    }
    const int64_t epoch = (step - 1) / kStepsPerEpoch;
    if (rank == 0 && step == 1) {
      out.startWallTime = unixNow();
      sink->writeMetrics({1,
                          0,
                          out.startWallTime,
                          std::nullopt,
                          {{metric::kRunTotalSteps, static_cast<double>(steps_)},
                           {metric::kRunStepsPerEpoch, static_cast<double>(kStepsPerEpoch)}}});
    }
    record.step = step;
    record.epoch = epoch;
    record.rank = rank;
    record.wallTime = out.wallTimes[step - 1] = unixNow();
    record.values.clear();
    for (size_t f = 0; f < kRankRecord.size(); ++f) {
      record.values.emplace_back(kRankRecord[f], valueOf(rank, static_cast<int>(f), step));
    }
    sink->writeMetrics(record);
    if (rank == 0) {
      // The trainer's rank 0 writes the global record after the gather, with a new clock reading.
      record.rank = std::nullopt;
      record.wallTime = out.globalWallTimes[step - 1] = unixNow();
      record.values.clear();
      for (size_t f = 0; f < kGlobalRecord.size(); ++f) {
        record.values.emplace_back(kGlobalRecord[f], valueOf(-1, static_cast<int>(f), step));
      }
      sink->writeMetrics(record);
      printStep(step, record.wallTime);
    }
  }
  out.loopSeconds = secondsSince(t0_);
  sink->flush();
  out.stats = sink->stats();
  release_.wait();
  sink.reset();  // reports dropped or unsent points on stderr, as the trainer does at exit
}

}  // namespace ringside::bench
