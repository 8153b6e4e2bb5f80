#include "ringside/trainer/trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <optional>
#include <thread>

#include "ringside/common/metric_names.h"
#include "ringside/common/run_spec.h"
#include "ringside/trainer/bucketing.h"
#include "ringside/trainer/checkpoint.h"
#include "ringside/trainer/comm_timing.h"
#include "ringside/trainer/run_queue.h"
#include "ringside/trainer/sampler.h"

namespace ringside::trainer {

namespace {

using Clock = std::chrono::steady_clock;

double unixTime() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Per-rank values gathered at each log step, in this order.
enum RankField {
  kLoss,
  kStepMs,
  kComputeMs,
  kAllreduceMs,
  kExposedMs,
  kDataMs,  // loading and copying the batch
  kWaitMs,  // blocked in collectives: exposed all-reduce, then the stop agreement after the step
  kRunQueueMs,  // the training thread's run-queue delay (run_queue.h); NaN where unknown
  kRankFields
};

// One rank's own record: its means of `values` (kRankFields of them) over the log interval.
// time/runqueue_ms (when known) comes before the data, compute and wait times: the straggler
// detector judges a step when a rank's last of those three arrives (straggler_detector.h).
MetricRecord rankRecord(int64_t step, int64_t epoch, double wallTime, int rank,
                        const double* values) {
  MetricRecord record{step, epoch, wallTime, rank, {{metric::kTrainLoss, values[kLoss]}}};
  if (std::isfinite(values[kRunQueueMs])) {
    record.values.emplace_back(metric::kRunQueueMs, values[kRunQueueMs]);
  }
  record.values.insert(record.values.end(), {{metric::kStepMs, values[kStepMs]},
                                             {metric::kComputeMs, values[kComputeMs]},
                                             {metric::kAllreduceMs, values[kAllreduceMs]},
                                             {metric::kExposedCommMs, values[kExposedMs]},
                                             {metric::kDataMs, values[kDataMs]},
                                             {metric::kWaitMs, values[kWaitMs]}});
  return record;
}

// Appends a global record's communication values: comm/bytes, time/allreduce_ms, algbw and busbw
// of the step, then per bucket its bytes, own duration, algbw and busbw (docs/metrics.md,
// "Communication"). bucketMs[b] is the bucket's figure over the ranks (minOverRanks); with no
// buckets (one rank) the step's all-reduce time is 0 and the bandwidths are absent.
void appendCommMetrics(const std::vector<uint64_t>& bucketBytes,
                       const std::vector<double>& bucketMs, int worldSize,
                       std::vector<std::pair<std::string, double>>* values) {
  uint64_t bytes = 0;
  double allreduceMs = 0.0;
  for (size_t b = 0; b < bucketBytes.size(); ++b) {
    bytes += bucketBytes[b];
    allreduceMs += bucketMs[b];
  }
  values->emplace_back(metric::kAllreduceMs, allreduceMs);
  values->emplace_back(metric::kCommBytes, static_cast<double>(bytes));
  auto addBandwidths = [&](const std::string& algbwName, const std::string& busbwName,
                           double byteCount, double ms) {
    if (auto algbw = algbwGBps(byteCount, ms)) values->emplace_back(algbwName, *algbw);
    if (auto busbw = allreduceBusbwGBps(byteCount, ms, worldSize)) {
      values->emplace_back(busbwName, *busbw);
    }
  };
  addBandwidths(metric::kCommAlgbw, metric::kCommBusbw, static_cast<double>(bytes), allreduceMs);
  for (size_t b = 0; b < bucketBytes.size(); ++b) {
    const int bucket = static_cast<int>(b);
    values->emplace_back(metric::bucketMetric(bucket, metric::kBucketBytes),
                         static_cast<double>(bucketBytes[b]));
    values->emplace_back(metric::bucketMetric(bucket, metric::kBucketAllreduceMs), bucketMs[b]);
    addBandwidths(metric::bucketMetric(bucket, metric::kBucketAlgbw),
                  metric::bucketMetric(bucket, metric::kBucketBusbw),
                  static_cast<double>(bucketBytes[b]), bucketMs[b]);
  }
}

double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

}  // namespace

Trainer::Trainer(const v1::TrainerConfig& spec, Communicator& comm, Backend& backend,
                 const DatasetSplits& data, MetricSink* sink, MetricSink* agentSink,
                 const std::atomic<bool>& stopRequested, RankActivity* activity)
    : spec_(spec),
      comm_(comm),
      backend_(backend),
      data_(data),
      sink_(sink),
      agentSink_(agentSink),
      stopRequested_(stopRequested),
      activity_(activity) {
  auto model = modelLayoutOf(spec_, data.train);
  if (model.isOk()) model_ = std::move(model).value();
  numParams_ = model_.numParams();
}

void Trainer::writeGlobal(const MetricRecord& record) {
  if (comm_.rank() != 0) return;
  if (sink_ != nullptr) sink_->writeMetrics(record);
  if (agentSink_ != nullptr) agentSink_->writeMetrics(record);
}

void Trainer::progress(const std::string& line) const {
  if (comm_.rank() != 0 || spec_.quiet()) return;
  std::fprintf(stderr, "%s\n", line.c_str());
}

Result<Trainer::Resumed> Trainer::initializeOrResume(int64_t stepsPerEpoch) {
  RINGSIDE_RETURN_IF_ERROR(backend_.initialize());
  if (spec_.resume().empty()) return Resumed{};

  // Rank 0 reads and checks the checkpoint, then broadcasts it: other nodes need not see the file.
  TrainingCheckpoint ckpt;
  Status readStatus;
  std::string path;
  if (comm_.rank() == 0) {
    auto resolved = resolveCheckpointPath(spec_.resume());
    if (resolved.isOk()) {
      path = *resolved;
      // The header first: what it holds is checked before the parameters are read (a checkpoint
      // of another model may be many GB).
      auto loaded = readCheckpointHeader(path);
      if (loaded.isOk()) {
        ckpt = std::move(loaded->checkpoint);
        const OptimizerConfig opt = optimizerConfigOf(spec_);
        const std::string held = describeModelShape(ckpt.model, ckpt.layerSizes);
        if (ckpt.model != model_.kind()) {
          readStatus = Status::invalidArgument(path + " holds " + held + ", but this run trains " +
                                               model_.describe() + ": resume it with --model " +
                                               modelKindName(ckpt.model) +
                                               ", or start this run without --resume");
        } else if (ckpt.layerSizes != model_.shapeVector()) {
          readStatus = Status::invalidArgument(
              path + " holds " + held + ", this run has " + model_.describe() +
              (model_.isCnn() ? ": resume with the same --channels and dataset"
                              : ": resume with the same --hidden and dataset"));
        } else if (ckpt.optimizer != opt.kind) {
          readStatus = Status::invalidArgument(path + " was written with --optimizer " +
                                               optimizerName(ckpt.optimizer) +
                                               ": resume with the same optimizer");
        } else if (ckpt.globalBatch != spec_.global_batch() ||
                   ckpt.trainSamples != data_.train.count || ckpt.seed != spec_.seed()) {
          readStatus = Status::invalidArgument(
              path + " was written with --global-batch " + std::to_string(ckpt.globalBatch) +
              ", --seed " + std::to_string(ckpt.seed) + " and " +
              std::to_string(ckpt.trainSamples) +
              " training samples: resume with the same values, or the data order would change");
        } else if (ckpt.step > spec_.epochs() * stepsPerEpoch) {
          readStatus = Status::invalidArgument(
              path + " is at step " + std::to_string(ckpt.step) + ", past the end of this run (" +
              std::to_string(spec_.epochs() * stepsPerEpoch) + " steps): raise --epochs");
        }
        if (readStatus.isOk()) {
          auto full = readCheckpoint(path);
          if (full.isOk()) {
            ckpt = std::move(full).value();
          } else {
            readStatus = full.status();
          }
        }
      } else {
        readStatus = loaded.status();
      }
    } else {
      readStatus = resolved.status();
    }
  }
  int64_t header[3] = {readStatus.isOk() ? 0 : 1, ckpt.step, ckpt.optimizerState.stepCount};
  RINGSIDE_RETURN_IF_ERROR(comm_.broadcast(header, sizeof header, 0));
  if (header[0] != 0) {
    if (comm_.rank() == 0) return readStatus;
    return Status::aborted("rank 0 could not load the checkpoint");
  }
  const size_t numParams = numParams_;
  std::vector<float> params = comm_.rank() == 0 ? ckpt.params : std::vector<float>(numParams);
  OptimizerState state = comm_.rank() == 0
                             ? ckpt.optimizerState
                             : makeOptimizerState(optimizerConfigOf(spec_), numParams);
  state.stepCount = header[2];
  RINGSIDE_RETURN_IF_ERROR(comm_.broadcast(params.data(), params.size() * sizeof(float), 0));
  for (auto& buffer : state.buffers) {
    RINGSIDE_RETURN_IF_ERROR(comm_.broadcast(buffer.data(), buffer.size() * sizeof(float), 0));
  }
  RINGSIDE_RETURN_IF_ERROR(backend_.loadState(params, state));
  if (comm_.rank() == 0) {
    progress("resumed from " + path + " at step " + std::to_string(header[1]));
  }
  return Resumed{header[1]};
}

int evaluationBatch(int evalBatch, int64_t testCount, int worldSize) {
  const int64_t world = std::max(worldSize, 1);
  const int64_t largestShard = (testCount + world - 1) / world;
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(evalBatch, largestShard)));
}

Status Trainer::evaluate(int64_t step, int64_t epoch, TrainingOutcome* outcome, bool* stopped) {
  // The test set is sharded into contiguous slices, one per rank, and the sums reduced.
  const ScopedPhase phase(activity_, v1::EVALUATION);
  const ImageDataset& test = data_.test;
  const int world = comm_.worldSize();
  const int64_t begin = test.count * comm_.rank() / world;
  const int64_t end = test.count * (comm_.rank() + 1) / world;
  const int batch = evaluationBatch(spec_.eval_batch(), test.count, world);
  std::vector<int64_t> indices;
  std::vector<float> x(size_t(batch) * test.featureDim);
  std::vector<int32_t> labels(batch);
  EvalSums sums;
  for (int64_t first = begin; first < end && !sums.stopped; first += batch) {
    // Evaluation is local until the reduction below, so each rank may stop at its own point.
    if (stopRequested_.load(std::memory_order_relaxed)) {
      sums.stopped = true;
      break;
    }
    const int count = static_cast<int>(std::min<int64_t>(batch, end - first));
    indices.resize(count);
    for (int i = 0; i < count; ++i) indices[i] = first + i;
    gatherBatch(test, data_.normalization, indices, x.data(), labels.data());
    RINGSIDE_RETURN_IF_ERROR(backend_.evaluate(x.data(), labels.data(), count, &sums));
    if (activity_ != nullptr) activity_->workDone();
  }
  double totals[4] = {sums.lossSum, static_cast<double>(sums.correct),
                      static_cast<double>(sums.count), sums.stopped ? 1.0 : 0.0};
  RINGSIDE_RETURN_IF_ERROR(comm_.allreduceSum(totals, 4).withContext("reducing test metrics"));
  *stopped = totals[3] > 0.0;
  if (*stopped) return Status::ok();
  outcome->testLoss = totals[0] / totals[2];
  outcome->testAccuracy = totals[1] / totals[2];
  writeGlobal(MetricRecord{
      step,
      epoch,
      unixTime(),
      std::nullopt,
      {{metric::kTestLoss, outcome->testLoss}, {metric::kTestAccuracy, outcome->testAccuracy}}});
  char line[160];
  std::snprintf(line, sizeof line, "epoch %lld  step %lld  test loss %.4f  test accuracy %.2f%%",
                static_cast<long long>(epoch + 1), static_cast<long long>(step), outcome->testLoss,
                100.0 * outcome->testAccuracy);
  progress(line);
  return Status::ok();
}

Result<std::string> Trainer::checkpoint(int64_t step, int64_t stepsPerEpoch) {
  const ScopedPhase phase(activity_, v1::CHECKPOINT);
  Status status;
  std::string path;
  if (comm_.rank() == 0) {
    TrainingCheckpoint ckpt;
    ckpt.model = model_.kind();
    ckpt.layerSizes = model_.shapeVector();
    ckpt.optimizer = optimizerConfigOf(spec_).kind;
    ckpt.step = step;
    ckpt.epoch = step / stepsPerEpoch;
    ckpt.stepInEpoch = step % stepsPerEpoch;
    ckpt.seed = spec_.seed();
    ckpt.globalBatch = spec_.global_batch();
    ckpt.trainSamples = data_.train.count;
    ckpt.worldSize = comm_.worldSize();
    status = backend_.saveState(&ckpt.params, &ckpt.optimizerState);
    if (status.isOk()) {
      path = std::filesystem::absolute(checkpointFileName(spec_.checkpoint_dir(), step)).string();
      status = writeCheckpoint(path, ckpt);
      if (status.isOk()) pruneCheckpoints(spec_.checkpoint_dir(), spec_.keep_checkpoints());
    }
  }
  // Every rank learns whether rank 0's write worked, so all stop together if it did not.
  int64_t failed = status.isOk() ? 0 : 1;
  RINGSIDE_RETURN_IF_ERROR(comm_.allreduceMax(&failed, 1));
  if (failed != 0) {
    if (comm_.rank() == 0) return status.withContext("writing checkpoint");
    return Status::aborted("rank 0 could not write the checkpoint");
  }
  if (activity_ != nullptr) activity_->workDone();
  return path;
}

Result<TrainingOutcome> Trainer::run() {
  const int world = comm_.worldSize();
  auto samplerOr = DistributedSampler::create(data_.train.count, spec_.global_batch(), world,
                                              comm_.rank(), spec_.seed());
  if (!samplerOr.isOk()) return samplerOr.status();
  DistributedSampler sampler = std::move(samplerOr).value();
  const int64_t stepsPerEpoch = sampler.stepsPerEpoch();
  int64_t totalSteps = spec_.epochs() * stepsPerEpoch;
  if (spec_.max_steps() > 0) totalSteps = std::min<int64_t>(totalSteps, spec_.max_steps());

  auto resumed = initializeOrResume(stepsPerEpoch);
  if (!resumed.isOk()) return resumed.status();
  const int64_t firstStep = resumed->step;
  const LrScheduleConfig schedule = lrScheduleOf(spec_);
  const int localBatch = static_cast<int>(sampler.localBatchSize());

  if (comm_.rank() == 0 && sink_ != nullptr) {
    sink_->writeEvent({{"type", "start"},
                       {"time", unixTime()},
                       {"world_size", world},
                       {"backend", backend_.name()},
                       {"backend_description", backend_.description()},
                       {"model", modelKindName(model_.kind())},
                       {"num_params", numParams_},
                       {"train_samples", data_.train.count},
                       {"test_samples", data_.test.count},
                       {"steps_per_epoch", stepsPerEpoch},
                       {"total_steps", totalSteps},
                       {"first_step", firstStep},
                       // The run spec as protobuf's JSON mapping writes it (--config's keys).
                       {"config", nlohmann::json::parse(trainerConfigToJson(spec_))}});
  }
  // The agent learns the same facts as global samples, journaled and relayed like any other: the
  // GUI's progress and ETA come from them.
  if (comm_.rank() == 0 && agentSink_ != nullptr) {
    agentSink_->writeMetrics(MetricRecord{firstStep,
                                          firstStep / stepsPerEpoch,
                                          unixTime(),
                                          std::nullopt,
                                          {{metric::kRunTotalSteps, double(totalSteps)},
                                           {metric::kRunStepsPerEpoch, double(stepsPerEpoch)}}});
  }
  progress("ringside-trainer: " + std::to_string(world) + " rank(s), backend " +
           backend_.description());
  progress("  " + std::to_string(data_.train.count) + " training samples, " +
           std::to_string(stepsPerEpoch) + " steps per epoch of global batch " +
           std::to_string(spec_.global_batch()) + " (local " + std::to_string(localBatch) + "), " +
           std::to_string(totalSteps) + " steps in all");

  std::vector<float> x(size_t(localBatch) * data_.train.featureDim);
  std::vector<int32_t> labels(localBatch);
  TrainingOutcome outcome;
  double interval[kRankFields] = {};
  int64_t intervalSteps = 0;
  double agreeWaitMs = 0.0;  // the stop agreement's wait after the last step
  Clock::time_point intervalStart = Clock::now();
  const Clock::time_point runStart = intervalStart;
  // The training thread's run-queue delay at the interval's start (nullopt: not known here).
  std::optional<double> runQueueStartMs = threadRunQueueDelayMs();
  // The human progress line (stderr) comes at most once a second, at each epoch's end and at the
  // last step, whatever the metric interval: at --log-every 1 a step of 1 ms would otherwise print
  // 1,000 lines a second.
  constexpr double kProgressIntervalSeconds = 1.0;
  std::optional<Clock::time_point> lastProgress;
  // The gradient buckets the backend all-reduces (the same plan it makes; none with one rank):
  // each rank's mean duration per bucket travels to rank 0 after its kRankFields values.
  std::vector<uint64_t> bucketBytes;
  if (world > 1) {
    for (const GradientBucket& bucket : planBuckets(model_, bucketCapBytes(spec_.bucket_mb()))) {
      bucketBytes.push_back(bucket.count * sizeof(float));
    }
  }
  const size_t buckets = bucketBytes.size();
  const size_t rowWidth = kRankFields + buckets;
  std::vector<double> bucketInterval(buckets, 0.0);  // sums of each bucket's duration, ms
  std::vector<double> local(rowWidth);
  std::vector<double> gathered(size_t(world) * rowWidth);
  double trainSeconds = 0.0;  // time in training steps, evaluation and checkpoints excluded
  double exposedMsSum = 0.0;

  // Fault injection (TrainerConfig.inject_compute_delay, inject_data_delay): this rank's extra
  // compute and data time per step.
  double injectedMs = 0.0;
  if (auto delay = parseInjectedDelay(spec_.inject_compute_delay());
      delay && delay->rank == comm_.rank()) {
    injectedMs = delay->milliseconds;
  }
  double injectedDataMs = 0.0;
  if (auto delay = parseInjectedDelay(spec_.inject_data_delay());
      delay && delay->rank == comm_.rank()) {
    injectedDataMs = delay->milliseconds;
  }

  int64_t step = firstStep;
  bool stopped = false;
  bool evaluated = false;
  while (step < totalSteps) {
    const int64_t epoch = step / stepsPerEpoch;
    const int64_t inEpoch = step % stepsPerEpoch;
    sampler.setEpoch(epoch);
    if (activity_ != nullptr) activity_->setPhase(v1::DATA);
    const Clock::time_point dataStart = Clock::now();
    gatherBatch(data_.train, data_.normalization, sampler.localBatch(inEpoch), x.data(),
                labels.data());
    if (injectedDataMs > 0.0) {
      std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(injectedDataMs));
    }
    const double dataMs = msSince(dataStart);
    if (injectedMs > 0.0) {
      if (activity_ != nullptr) activity_->setPhase(v1::COMPUTE);
      std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(injectedMs));
    }
    const double lr = learningRate(schedule, step, stepsPerEpoch, totalSteps);
    double loss = 0.0;
    StepTimings timings;
    // Rank r's local batch is positions [r * localBatch, (r + 1) * localBatch) of the global
    // batch (sampler.h): the dropout masks of those positions are the same at any world size.
    const BatchPosition position{step, int64_t{comm_.rank()} * localBatch};
    RINGSIDE_RETURN_IF_ERROR(
        backend_.trainStep(x.data(), labels.data(), localBatch, position, lr, &loss, &timings)
            .withContext("step " + std::to_string(step + 1)));
    if (timings.stopped) {  // every rank abandoned this step: the run ends before it
      stopped = true;
      break;
    }
    if (timings.buckets.size() != buckets) {
      return Status::internal("step " + std::to_string(step + 1) + ": the " + backend_.name() +
                              " backend timed " + std::to_string(timings.buckets.size()) +
                              " gradient buckets, the trainer planned " + std::to_string(buckets));
    }
    for (size_t b = 0; b < buckets; ++b) bucketInterval[b] += bucketDurationMs(timings.buckets[b]);
    timings.stepMs += injectedMs;
    timings.computeMs += injectedMs;
    ++step;
    if (activity_ != nullptr) {
      activity_->stepCompleted(step, timings.stepMs);
      activity_->setPhase(v1::SYNC);
    }
    interval[kLoss] += loss;
    interval[kStepMs] += timings.stepMs;
    interval[kComputeMs] += timings.computeMs;
    interval[kAllreduceMs] += timings.allreduceMs;
    interval[kExposedMs] += timings.exposedCommMs;
    interval[kDataMs] += dataMs;
    interval[kWaitMs] += timings.exposedCommMs + agreeWaitMs;
    agreeWaitMs = 0.0;
    exposedMsSum += timings.exposedCommMs;
    ++intervalSteps;

    const bool epochEnd = step % stepsPerEpoch == 0;
    if (step % spec_.log_every() == 0 || epochEnd || step == totalSteps) {
      const std::optional<double> runQueueMs = threadRunQueueDelayMs();
      interval[kRunQueueMs] = runQueueMs && runQueueStartMs
                                  ? std::max(*runQueueMs - *runQueueStartMs, 0.0)
                                  : std::numeric_limits<double>::quiet_NaN();
      for (int f = 0; f < kRankFields; ++f) local[f] = interval[f] / intervalSteps;
      for (size_t b = 0; b < buckets; ++b)
        local[kRankFields + b] = bucketInterval[b] / intervalSteps;
      // Each rank sends its own values to the agent itself; rank 0 forwards only global ones.
      if (agentSink_ != nullptr && world > 1) {
        agentSink_->writeMetrics(rankRecord(step, epoch, unixTime(), comm_.rank(), local.data()));
      }
      RINGSIDE_RETURN_IF_ERROR(comm_.gather(local.data(), rowWidth, gathered.data(), 0));
      const Clock::time_point now = Clock::now();
      if (comm_.rank() == 0) {
        double mean[kRankFields] = {};
        for (int r = 0; r < world; ++r) {
          for (int f = 0; f < kRankFields; ++f) mean[f] += gathered[r * rowWidth + f] / world;
        }
        const double seconds = std::chrono::duration<double>(now - intervalStart).count();
        const double samplesPerS =
            static_cast<double>(spec_.global_batch()) * intervalSteps / seconds;
        // Each bucket's duration over the ranks: the smallest rank mean, the one least
        // inflated by waiting for the others to join (comm_timing.h minOverRanks); the step's
        // all-reduce time is their sum, its algbw and busbw follow from it (nccl-tests'
        // definitions, doc/PERFORMANCE.md).
        const std::vector<double> bucketMs =
            minOverRanks(gathered, world, rowWidth, kRankFields, buckets);
        const double wall = unixTime();
        MetricRecord record{step,
                            epoch,
                            wall,
                            std::nullopt,
                            {{metric::kTrainLoss, mean[kLoss]},
                             {metric::kTrainLr, lr},
                             {metric::kTrainSamplesPerS, samplesPerS},
                             {metric::kStepMs, mean[kStepMs]},
                             {metric::kComputeMs, mean[kComputeMs]},
                             {metric::kExposedCommMs, mean[kExposedMs]}}};
        appendCommMetrics(bucketBytes, bucketMs, world, &record.values);
        writeGlobal(record);
        double allreduceMs = 0.0;
        for (double ms : bucketMs) allreduceMs += ms;
        if (sink_ != nullptr && world > 1) {
          for (int r = 0; r < world; ++r) {
            sink_->writeMetrics(rankRecord(step, epoch, wall, r, &gathered[r * rowWidth]));
          }
        }
        const double elapsed = std::chrono::duration<double>(now - runStart).count();
        const double eta = elapsed / (step - firstStep) * (totalSteps - step);
        const bool printProgress =
            !lastProgress || epochEnd || step == totalSteps ||
            std::chrono::duration<double>(now - *lastProgress).count() >= kProgressIntervalSeconds;
        if (printProgress) {
          lastProgress = now;
          char line[256];
          std::snprintf(line, sizeof line,
                        "epoch %lld/%d  step %lld/%lld  loss %.4f  lr %.4g  %.0f samples/s  "
                        "step %.2f ms (allreduce %.2f, exposed %.2f)  eta %.0fs",
                        static_cast<long long>(epoch + 1), spec_.epochs(),
                        static_cast<long long>(step), static_cast<long long>(totalSteps),
                        mean[kLoss], lr, samplesPerS, mean[kStepMs], allreduceMs, mean[kExposedMs],
                        eta);
          progress(line);
        }
      }
      trainSeconds += std::chrono::duration<double>(now - intervalStart).count();
      std::fill(std::begin(interval), std::end(interval), 0.0);
      std::fill(bucketInterval.begin(), bucketInterval.end(), 0.0);
      intervalSteps = 0;
    }
    if (epochEnd) {
      RINGSIDE_RETURN_IF_ERROR(evaluate(step, epoch, &outcome, &stopped));
      if (stopped) break;
      evaluated = true;
    }
    // Evaluation and checkpoints are not training throughput: the next interval starts here.
    if (intervalSteps == 0) {
      intervalStart = Clock::now();
      runQueueStartMs = threadRunQueueDelayMs();
    }

    // Every rank must stop at the same step: agree on the request (docs/design.md decision 5).
    int64_t stop = stopRequested_.load(std::memory_order_relaxed) ? 1 : 0;
    const Clock::time_point agreeStart = Clock::now();
    RINGSIDE_RETURN_IF_ERROR(comm_.allreduceMax(&stop, 1));
    // Waiting for the slowest rank to finish its step shows here: this rank's wait, counted with
    // the next step (this step's record may have gone out already).
    agreeWaitMs = msSince(agreeStart);
    if (stop != 0) {
      stopped = true;
      break;
    }
    if (spec_.checkpoint_every() > 0 && step % spec_.checkpoint_every() == 0 && step < totalSteps) {
      auto path = checkpoint(step, stepsPerEpoch);
      if (!path.isOk()) return path.status();
      outcome.checkpointPath = *path;
    }
  }
  if (activity_ != nullptr) activity_->setPhase(v1::FINISHING);
  if (!stopped && (step % stepsPerEpoch != 0 || !evaluated)) {
    // A run cut short by --max-steps (or resumed at its end) still reports where it ended.
    RINGSIDE_RETURN_IF_ERROR(
        evaluate(step, std::max<int64_t>(step - 1, 0) / stepsPerEpoch, &outcome, &stopped));
  }
  auto path = checkpoint(step, stepsPerEpoch);
  if (!path.isOk()) return path.status();
  outcome.checkpointPath = *path;
  outcome.steps = step;
  outcome.stopped = stopped;
  if (comm_.rank() == 0 && sink_ != nullptr) {
    sink_->writeEvent(
        {{"type", "end"},
         {"time", unixTime()},
         {"status", stopped ? "stopped" : "completed"},
         {"step", step},
         {"train_seconds", trainSeconds},
         {"samples_per_s", trainSeconds > 0.0
                               ? double(step - firstStep) * spec_.global_batch() / trainSeconds
                               : 0.0},
         {"exposed_comm_ms_mean", step > firstStep ? exposedMsSum / (step - firstStep) : 0.0},
         {"test_loss", outcome.testLoss},
         {"test_accuracy", outcome.testAccuracy},
         {"checkpoint", outcome.checkpointPath}});
    sink_->flush();
  }
  // The last samples go out before the process exits (bounded: the sink's flush timeout).
  if (agentSink_ != nullptr) agentSink_->flush();
  progress(std::string(stopped ? "stopped on request" : "done") + " at step " +
           std::to_string(step) + "; checkpoint " + outcome.checkpointPath);
  return outcome;
}

}  // namespace ringside::trainer
