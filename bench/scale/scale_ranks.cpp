#include "scale_ranks.h"

#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <utility>

#include "ringside/common/metric_names.h"

namespace ringside::bench {

namespace {

double unixNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// The step's shares of its step time (trainer.cpp's stages of a synchronous step).
constexpr double kDataShare = 0.05, kComputeShare = 0.6, kAllreduceShare = 0.2, kExposedShare = 0.1;
// The straggler's extra compute, as a share of the step time.
constexpr double kStragglerShare = 0.5;
// The per-rank, per-step jitter of compute: 0 to 15/64 ms.
double jitterMs(int rank, int64_t step) {
  return static_cast<double>((rank * 131 + step * 71) % 16) / 64.0;
}

}  // namespace

ScaleRanks::ScaleRanks(ScaleRanksOptions options)
    : options_(std::move(options)), outcomes_(options_.ranks) {
  for (const ScalePhase& phase : options_.phases) {
    Clock::duration at = due_.empty() ? Clock::duration{} : due_.back();
    const auto interval = std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double, std::milli>(phase.stepMs));
    for (int64_t s = 0; s < phase.steps; ++s) {
      at += interval;
      due_.push_back(at);
    }
    steps_ += phase.steps;
    phaseEnd_.push_back(steps_);
    stallOffset_ = at;
  }
  for (ScaleRankOutcome& out : outcomes_) out.lateSteps.assign(options_.phases.size(), 0);
}

void ScaleRanks::launch() {
  char ownName[16] = {};
  ::pthread_getname_np(::pthread_self(), ownName, sizeof ownName);
  ::pthread_setname_np(::pthread_self(), "pb-sink");  // the sinks' sender threads inherit it
  for (int rank = 0; rank < options_.ranks; ++rank) {
    outcomes_[rank].wallTimes.resize(static_cast<size_t>(steps_));
    if (rank == 0) outcomes_[rank].globalWallTimes.resize(static_cast<size_t>(steps_));
    activities_.push_back(std::make_unique<trainer::RankActivity>());
    trainer::ZmqMetricSinkOptions sinkOptions = options_.sink;
    sinkOptions.activity = activities_.back().get();
    auto sink =
        trainer::ZmqMetricSink::create(options_.endpoint, options_.runId, rank, sinkOptions);
    if (!sink.isOk()) {
      outcomes_[rank].error = sink.status().toString();
      continue;
    }
    threads_.emplace_back(
        [this, rank, s = std::move(sink).value()]() mutable { runRank(rank, std::move(s)); });
  }
  ::pthread_setname_np(::pthread_self(), ownName);
}

ScaleRanks::~ScaleRanks() {
  start(Clock::now());
  join();
}

void ScaleRanks::start(Clock::time_point t0) {
  if (go_.try_wait()) return;
  t0_ = t0;
  go_.count_down();
}

void ScaleRanks::join() {
  for (std::thread& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
}

int ScaleRanks::phaseOf(int64_t step) const {
  const auto it = std::lower_bound(phaseEnd_.begin(), phaseEnd_.end(), step);
  return static_cast<int>(
      std::min<ptrdiff_t>(it - phaseEnd_.begin(), static_cast<ptrdiff_t>(phaseEnd_.size()) - 1));
}

double ScaleRanks::computeMs(int rank, int64_t step) const {
  double ms = kComputeShare * stepMsOf(step) + jitterMs(rank, step);
  if (rank == options_.stragglerRank && step >= options_.stragglerFromStep) {
    ms += kStragglerShare * stepMsOf(step);
  }
  return ms;
}

double ScaleRanks::valueOf(int rank, int field, int64_t step) const {
  const double stepMs = stepMsOf(step);
  // The slowest rank's compute: the jitter's maximum, or the straggler's.
  double slowest = kComputeShare * stepMs + 15.0 / 64.0;
  if (options_.stragglerRank >= 0 && step >= options_.stragglerFromStep) {
    slowest = std::max(slowest, computeMs(options_.stragglerRank, step));
  }
  const double stepTime = (kDataShare + kExposedShare) * stepMs + slowest;
  if (rank < 0) {
    switch (field) {  // kGlobalRecord's order
      case 0:
        return bench::valueOf(-1, 0, step);  // train/loss
      case 1:
        return 0.1;  // train/lr
      case 2:
        return 256.0 * options_.ranks / (stepTime / 1000.0);  // samples/s
      case 3:
        return stepTime;  // time/step_ms
      case 4:
        return kComputeShare * stepMs;  // time/compute_ms
      case 5:
        return kAllreduceShare * stepMs;  // time/allreduce_ms
      case 6:
        return kExposedShare * stepMs;  // time/exposed_comm_ms
      case 7:
        return 4.0 * 1024 * 1024;  // comm/bytes
      case 8:
        return 4.0 * 1024 * 1024 / (kAllreduceShare * stepMs) / 1e6;  // algbw GB/s
      default:
        return 4.0 * 1024 * 1024 / (kAllreduceShare * stepMs) / 1e6 * 2.0 * (options_.ranks - 1) /
               options_.ranks;  // busbw
    }
  }
  switch (field) {  // kRankRecord's order
    case 0:
      return bench::valueOf(rank, 0, step);  // train/loss: encodes rank and step
    case 1:
      return stepTime;  // time/step_ms
    case 2:
      return computeMs(rank, step);  // time/compute_ms
    case 3:
      return kAllreduceShare * stepMs;  // time/allreduce_ms
    case 4:
      return kExposedShare * stepMs;  // time/exposed_comm_ms
    case 5:
      return kDataShare * stepMs;  // time/data_ms
    default:
      return slowest - computeMs(rank, step);  // time/wait_ms
  }
}

uint64_t ScaleRanks::expectedSamples() const {
  return static_cast<uint64_t>(steps_) *
             (outcomes_.size() * kRankRecord.size() + kGlobalRecord.size()) +
         2;
}

void ScaleRanks::runRank(int rank, std::unique_ptr<trainer::ZmqMetricSink> sink) {
  ScaleRankOutcome& out = outcomes_[rank];
  trainer::RankActivity& activity = *activities_[rank];
  ::pthread_setname_np(::pthread_self(), "pb-rank");
  go_.wait();
  activity.setPhase(v1::COMPUTE);
  trainer::MetricRecord record;
  record.values.reserve(kGlobalRecord.size());
  for (int64_t step = 1; step <= steps_; ++step) {
    const auto due = t0_ + due_[static_cast<size_t>(step - 1)];
    const auto now = Clock::now();
    if (now < due) {
      std::this_thread::sleep_until(due);
    } else if (now - due > std::chrono::duration<double, std::milli>(stepMsOf(step))) {
      ++out.lateSteps[phaseOf(step)];
    }
    activity.stepCompleted(step, valueOf(rank, 1, step));
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
      record.rank = std::nullopt;
      record.wallTime = out.globalWallTimes[step - 1] = unixNow();
      record.values.clear();
      for (size_t f = 0; f < kGlobalRecord.size(); ++f) {
        record.values.emplace_back(kGlobalRecord[f], valueOf(-1, static_cast<int>(f), step));
      }
      sink->writeMetrics(record);
    }
  }
  sink->flush();
  out.stats = sink->stats();
  if (options_.stallRank < 0) return;
  if (rank == options_.stallRank) {
    // Stalls: nothing more from it, heartbeats included.
    sink.reset();
    return;
  }
  // The others start the next step and wait in its all-reduce; their heartbeats say so.
  std::this_thread::sleep_until(t0_ + stallOffset_);
  activity.setPhase(v1::ALLREDUCE);
  activity.setBucket(0);
  activity.beginWait(trainer::kWaitAllreduce, activity.beginCollective());
  std::this_thread::sleep_until(t0_ + stallOffset_ +
                                std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(options_.stallHoldSeconds)));
  activity.endWait();
}

namespace {

struct FileCloser {
  void operator()(std::FILE* file) const { std::fclose(file); }
};

template <typename T>
bool put(std::FILE* file, const T& value) {
  return std::fwrite(&value, sizeof value, 1, file) == 1;
}
template <typename T>
bool get(std::FILE* file, T* value) {
  return std::fread(value, sizeof *value, 1, file) == 1;
}
bool putDoubles(std::FILE* file, const std::vector<double>& values) {
  return put(file, static_cast<uint64_t>(values.size())) &&
         std::fwrite(values.data(), sizeof(double), values.size(), file) == values.size();
}
bool getDoubles(std::FILE* file, std::vector<double>* values) {
  uint64_t size = 0;
  if (!get(file, &size) || size > (uint64_t{1} << 32)) return false;
  values->resize(size);
  return std::fread(values->data(), sizeof(double), size, file) == size;
}

}  // namespace

Status ScaleRanks::save(const std::string& path) const {
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "wb"));
  bool ok = file != nullptr;
  for (const ScaleRankOutcome& out : outcomes_) {
    if (!ok) break;
    ok = putDoubles(file.get(), out.wallTimes) && putDoubles(file.get(), out.globalWallTimes) &&
         put(file.get(), out.startWallTime) && put(file.get(), out.stats);
    for (int64_t late : out.lateSteps) ok = ok && put(file.get(), late);
    ok = ok && put(file.get(), static_cast<uint64_t>(out.error.size())) &&
         std::fwrite(out.error.data(), 1, out.error.size(), file.get()) == out.error.size();
  }
  return ok ? Status::ok() : Status::ioError("cannot write the ranks' outcomes to " + path);
}

Status ScaleRanks::load(const std::string& path) {
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "rb"));
  bool ok = file != nullptr;
  for (ScaleRankOutcome& out : outcomes_) {
    if (!ok) break;
    ok = getDoubles(file.get(), &out.wallTimes) && getDoubles(file.get(), &out.globalWallTimes) &&
         get(file.get(), &out.startWallTime) && get(file.get(), &out.stats);
    for (int64_t& late : out.lateSteps) ok = ok && get(file.get(), &late);
    uint64_t size = 0;
    ok = ok && get(file.get(), &size) && size < 65536;
    if (ok) {
      out.error.resize(size);
      ok = std::fread(out.error.data(), 1, size, file.get()) == size;
    }
    ok = ok && out.wallTimes.size() == static_cast<size_t>(steps_);
  }
  return ok ? Status::ok() : Status::ioError("cannot read the ranks' outcomes from " + path);
}

}  // namespace ringside::bench
