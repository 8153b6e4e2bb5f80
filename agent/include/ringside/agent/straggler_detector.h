// StragglerDetector: the owner agent's verdict on which rank the others wait for, from the
// per-rank timings every rank of a ringside-trainer run reports (docs/metrics.md, "The
// straggler", states the rule and its reasoning). In synchronous data parallelism every rank
// leaves the all-reduce together, so step times are equal; a slow rank shows more data or
// compute time and less waiting, and the ranks that wait for it show the waiting.
//
// Thread-safety: not thread-safe; the agent uses it from its main loop.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ringside/proto/ringside.pb.h"

namespace ringside::agent {

struct StragglerVerdict {
  int64_t step = 0;  // the last step of the timings judged
  int rank = -1;     // -1: no straggler
  enum Stage { kNone = 0, kData = 1, kCompute = 2 };
  Stage stage = kNone;
  double stageMs = 0.0;       // the rank's time in `stage` (mean over the window)
  double medianMs = 0.0;      // the median over the other ranks, same stage
  double othersWaitMs = 0.0;  // the median wait of the other ranks
};

struct StragglerRule {
  size_t window = 5;  // records of every rank the means are taken over
  // A rank is the straggler when its stage time exceeds the others' median by at least
  // max(minExcessMs, minExcessFraction x that median) and the others wait for it: their median
  // wait is at least waitShare x that excess above its own wait.
  double minExcessMs = 0.2;
  double minExcessFraction = 0.05;
  double waitShare = 0.5;
};

class StragglerDetector {
 public:
  explicit StragglerDetector(int worldSize, StragglerRule rule = {});

  // One per-rank sample (time/data_ms, time/compute_ms, time/wait_ms; other names are ignored).
  // Returns a verdict when every rank's three timings at `step` are in.
  std::optional<StragglerVerdict> onSample(int rank, int64_t step, const std::string& name,
                                           double value);

  // The verdict over the window of complete records (exposed for tests).
  StragglerVerdict judge(int64_t step) const;

  // The verdict as global samples at its step (metric_names.h kStraggler*), for the journal.
  static std::vector<v1::MetricSample> toSamples(const StragglerVerdict& verdict, int64_t epoch,
                                                 double wallTime);

 private:
  struct Timings {
    double data = 0.0, compute = 0.0, wait = 0.0;
    int have = 0;  // bit mask of the three
  };
  int worldSize_;
  StragglerRule rule_;
  std::map<int64_t, std::vector<Timings>> pending_;  // step -> per rank, until complete
  std::deque<std::vector<Timings>> window_;          // complete records, oldest first
};

}  // namespace ringside::agent
