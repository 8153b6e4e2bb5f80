// What the simulated ranks of telemetry_bench send: a deterministic stream of per-rank metric
// points, so that the receiving side can check every field of every sample (as nccl-tests' -c).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "ringside/proto/ringside.pb.h"
#include "telemetry_bench.h"

namespace ringside::bench {

// The per-rank record the trainer sends at every log step (docs/metrics.md).
extern const std::array<const char*, 5> kMetricNames;

struct Point {
  int64_t step = 0;
  int64_t epoch = 0;
  double wallTime = 0;
  const char* name = "";
  double value = 0;
};

// The `index`-th point (from 0) that `rank` sends: one record of kMetricNames per step.
Point pointOf(int rank, uint64_t index);

// How many of options.samples `rank` sends (the remainder goes to the first ranks).
uint64_t samplesOfRank(const Options& options, int rank);

// Every message of one rank, encoded up front: the encoding is the rank's cost, not the agent's.
// RankMetrics envelopes of options.batchPoints points, batch_seq from 1.
std::vector<std::string> encodeRankMessages(const Options& options, const std::string& runId,
                                            int rank);

// Checks journaled/published samples against what the ranks sent. Samples of one rank arrive in
// the order that rank sent them (one PUSH socket per rank, one agent thread).
class StreamChecker {
 public:
  explicit StreamChecker(int ranks) : nextIndex_(ranks, 0) {}

  // Counts `sample`; an error when its seq does not increase, its rank is out of range, or a
  // field differs from the point its rank sent next.
  void check(const v1::MetricSample& sample);

  uint64_t samples() const { return samples_; }
  uint64_t errors() const { return errors_; }
  const std::string& firstError() const { return firstError_; }

 private:
  void fail(const std::string& what) {
    if (errors_++ == 0) firstError_ = what;
  }

  std::vector<uint64_t> nextIndex_;
  uint64_t samples_ = 0;
  uint64_t lastSeq_ = 0;
  uint64_t errors_ = 0;
  std::string firstError_;
};

}  // namespace ringside::bench
