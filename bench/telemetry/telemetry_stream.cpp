#include "telemetry_stream.h"

#include <algorithm>

#include "ringside/common/metric_names.h"
#include "ringside/common/protocol.h"

namespace ringside::bench {

namespace {

constexpr double kFirstWallTime = 1.7e9;  // Unix seconds of step 0

}  // namespace

const std::array<const char*, 5> kMetricNames = {metric::kTrainLoss, metric::kStepMs,
                                                 metric::kComputeMs, metric::kAllreduceMs,
                                                 metric::kExposedCommMs};

Point pointOf(int rank, uint64_t index) {
  const auto step = static_cast<int64_t>(index / kMetricNames.size());
  return {step, step / 10000, kFirstWallTime + static_cast<double>(step) * 1e-3,
          kMetricNames[index % kMetricNames.size()],
          rank * 1e9 + static_cast<double>(index) * 0.25};
}

uint64_t samplesOfRank(const Options& options, int rank) {
  const uint64_t share = options.samples / options.ranks;
  return share + (static_cast<uint64_t>(rank) < options.samples % options.ranks ? 1 : 0);
}

std::vector<std::string> encodeRankMessages(const Options& options, const std::string& runId,
                                            int rank) {
  std::vector<std::string> messages;
  const uint64_t total = samplesOfRank(options, rank);
  uint64_t batchSeq = 0;
  for (uint64_t first = 0; first < total; first += options.batchPoints) {
    v1::Envelope envelope = protocol::newEnvelope(0);
    v1::RankMetrics* batch = envelope.mutable_rank_metrics();
    batch->set_run_id(runId);
    batch->set_rank(rank);
    batch->set_batch_seq(++batchSeq);
    for (uint64_t i = first; i < std::min<uint64_t>(total, first + options.batchPoints); ++i) {
      const Point point = pointOf(rank, i);
      v1::RankMetricPoint* out = batch->add_points();
      out->set_step(point.step);
      out->set_epoch(point.epoch);
      out->set_wall_time(point.wallTime);
      out->set_global(false);
      out->set_name(point.name);
      out->set_value(point.value);
    }
    messages.push_back(protocol::encodeEnvelope(envelope));
  }
  return messages;
}

void StreamChecker::check(const v1::MetricSample& sample) {
  ++samples_;
  if (sample.seq() <= lastSeq_)
    fail("seq " + std::to_string(sample.seq()) + " after " + std::to_string(lastSeq_));
  lastSeq_ = sample.seq();
  if (sample.rank() < 0 || sample.rank() >= static_cast<int>(nextIndex_.size())) {
    fail("seq " + std::to_string(sample.seq()) + " has rank " + std::to_string(sample.rank()));
    return;
  }
  const uint64_t index = nextIndex_[sample.rank()]++;
  const Point want = pointOf(sample.rank(), index);
  if (sample.step() != want.step || sample.epoch() != want.epoch ||
      sample.wall_time() != want.wallTime || sample.name() != want.name ||
      sample.value() != want.value) {
    fail("seq " + std::to_string(sample.seq()) + " is not point " + std::to_string(index) +
         " of rank " + std::to_string(sample.rank()) + " (" + sample.name() + " step " +
         std::to_string(sample.step()) + ")");
  }
}

}  // namespace ringside::bench
