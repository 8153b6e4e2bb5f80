// The owner agent's journaled straggler verdicts (metric_names.h kStraggler*, seven global
// samples per verdict) read back for the straggler process tests. Header-only; GoogleTest.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "ringside/common/metric_names.h"
#include "ringside/proto/ringside.pb.h"

namespace ringside::agent {

struct JournaledVerdict {
  int64_t step = 0;
  double time = 0.0;  // Unix s (the record's time)
  int rank = -1;
  int stage = 0;  // 1 data, 2 compute
  double stageMs = 0.0, medianMs = 0.0, othersWaitMs = 0.0;
  double cost = 0.0, confidence = 0.0;
};

// The verdicts among `samples` in step order; a verdict without all seven samples fails the test.
inline std::vector<JournaledVerdict> journaledVerdicts(
    const std::vector<v1::MetricSample>& samples) {
  std::map<int64_t, std::map<std::string, v1::MetricSample>> bySteps;
  for (const auto& sample : samples) {
    EXPECT_EQ(sample.rank(), -1);
    bySteps[sample.step()][sample.name()] = sample;
  }
  std::vector<JournaledVerdict> verdicts;
  for (const auto& entry : bySteps) {
    const int64_t step = entry.first;
    const auto& v = entry.second;  // not a structured binding: clang 14 cannot capture one
    EXPECT_EQ(v.size(), 7u) << "step " << step;
    if (v.size() != 7u) continue;
    const auto value = [&v](const char* name) { return v.at(name).value(); };
    verdicts.push_back(JournaledVerdict{
        step, v.at(metric::kStragglerRank).wall_time(),
        static_cast<int>(value(metric::kStragglerRank)),
        static_cast<int>(value(metric::kStragglerStage)), value(metric::kStragglerStageMs),
        value(metric::kStragglerMedianMs), value(metric::kStragglerOthersWaitMs),
        value(metric::kStragglerCostShare), value(metric::kStragglerConfidence)});
  }
  return verdicts;
}

// How much longer `rank` waited for a CPU than `other` in the ranks' records of [from, to) (Unix
// s), as a share of the step time: the difference of their mean time/runqueue_ms over the mean of
// `other`'s data + compute + wait (its step). What the kernel counted (run_queue.h), whatever the
// verdict says; 0 without records.
inline double runQueueExcessShare(const std::vector<v1::MetricSample>& samples, int rank,
                                  int other, double from, double to) {
  double rq[2] = {0.0, 0.0}, step = 0.0;
  int n[2] = {0, 0}, steps = 0;
  for (const auto& s : samples) {
    if (s.wall_time() < from || s.wall_time() >= to) continue;
    const int i = s.rank() == rank ? 0 : s.rank() == other ? 1 : -1;
    if (i < 0) continue;
    if (s.name() == metric::kRunQueueMs) {
      rq[i] += s.value();
      ++n[i];
    } else if (i == 1 && (s.name() == metric::kDataMs || s.name() == metric::kComputeMs ||
                          s.name() == metric::kWaitMs)) {
      step += s.value();
      steps += s.name() == metric::kWaitMs ? 1 : 0;
    }
  }
  if (n[0] == 0 || n[1] == 0 || steps == 0 || step <= 0.0) return 0.0;
  return (rq[0] / n[0] - rq[1] / n[1]) / (step / steps);
}

// The verdicts from `from` to `to` (Unix s) as "+3.5 s: rank 1 (12 %, 0.9)" lines, relative to
// `origin`, for a failure message.
inline std::string describeVerdicts(const std::vector<JournaledVerdict>& verdicts, double origin,
                                    double from, double to) {
  std::string text;
  char line[96];
  for (const JournaledVerdict& v : verdicts) {
    if (v.time < from || v.time > to) continue;
    std::snprintf(line, sizeof line, "%+6.1f s: rank %d (%.0f %%, %.1f)\n", v.time - origin, v.rank,
                  v.cost * 100, v.confidence);
    text += line;
  }
  return text;
}

}  // namespace ringside::agent
