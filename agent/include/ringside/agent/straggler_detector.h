// StragglerDetector: the owner agent's verdict on which rank the others wait for, from the
// per-rank timings every rank of a run reports (time/data_ms, time/compute_ms, time/wait_ms;
// docs/metrics.md, "The straggler", states the rule, its reasoning and its measured accuracy).
//
// In synchronous data parallelism every rank leaves each collective together, so a step ends
// when its last rank arrives: that rank waits least, and the others' extra wait is the time the
// group lost to it (TraceML: the rank that waited least at the sync; HTA: the rank whose
// collectives start last). Each complete record charges that time to the last rank, split by
// stage at the frontier of the ranks' cumulative stage boundaries on their own clocks (after
// StageFrontier, 2026): the part it was already behind by after its data loading goes to data,
// the rest of what it was behind after compute goes to compute, and what neither explains (its
// own logging, or the stop agreement of the step before) to no stage; these charges name the
// stage. How much the group lost to a rank is its signed lateness (the median other rank's wait
// minus its own) summed over every step, less its duty: its steady lateness that its data and
// compute do not explain (rank 0's logging makes it late in most steps). Sums run over a window
// in time, so a burst that costs one step several milliseconds counts by its milliseconds, not
// as one step in five; the window is cut in slices whose agreement is the verdict's confidence;
// and a verdict needs more evidence to be given than to be kept (hysteresis), so it does not
// flicker from step to step.
//
// Where the ranks report their run-queue delay (time/runqueue_ms: their training thread was ready
// but waited for a CPU, run_queue.h), a rank's excess of it over the median other rank is time
// another process took from it. When that time did not make it arrive last (over TCP a rank
// slowed inside the all-reduce slows every rank's all-reduce, and none arrives late), the part the
// late-arrival charge did not already give it is charged to it in a stage of its own, "CPU".
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
  // kCpu: its training thread waited for a CPU that another process had (time/runqueue_ms).
  enum Stage { kNone = 0, kData = 1, kCompute = 2, kCpu = 3 };
  int64_t step = 0;       // the last step of the timings judged
  double wallTime = 0.0;  // Unix time of that record, s (the latest of its ranks' clocks)
  int rank = -1;          // -1: no straggler
  Stage stage = kNone;
  // Over the window, per step: the rank's mean time in `stage` (ms; for kCpu its run-queue
  // delay), the median over the other ranks of theirs (ms), and the median over the other ranks
  // of their mean wait (ms); 0 for none.
  double stageMs = 0.0;
  double medianMs = 0.0;
  double othersWaitMs = 0.0;
  // The share (0-1) of the group's step time (data + compute + wait, median over ranks) over the
  // window that the group spent waiting for `rank` (its lateness above its duty, and its
  // run-queue delay beyond that) beyond what it spent waiting for a typical other rank: how much
  // faster the window's steps would have been without this straggler. 0 for none.
  double costShare = 0.0;
  // The share (0-1) of the window's slices (StragglerRule::slices of them, counting slices not
  // yet seen as disagreeing) that agree with the verdict on their own: for a rank, slices where
  // its cost is at least StragglerRule::sliceCostShare; for none, slices where no rank's is. Under
  // the null hypothesis that a slice agrees with probability 1/2, 8 of 10 has p = 0.055
  // (one-sided sign test), 9 of 10 p = 0.011.
  double confidence = 0.0;
  double windowSeconds = 0.0;  // the span of the window judged, s
  // The rank with the largest cost over the window and its cost, whether named or not (for
  // benches and diagnostics; not journaled).
  int leadingRank = -1;
  double leadingCostShare = 0.0;
};

struct StragglerRule {
  // The window: the last `slices` complete slices of records. A slice starts where the one
  // before it ended (at the first record for the first) and is complete with the first record at
  // least sliceSeconds later, so it holds at least one record and the window spans at least
  // slices x sliceSeconds (5 s) or `slices` records, whichever is longer.
  double sliceSeconds = 0.5;
  int slices = 10;
  // A rank is named when its cost over the window is at least enterCostShare and at least
  // enterAgreement of the slices agree; it stays named while its cost is at least exitCostShare
  // and at least exitAgreement of the slices agree (docs/metrics.md gives the measurements these
  // values come from).
  double enterCostShare = 0.06;
  double exitCostShare = 0.03;
  double enterAgreement = 0.8;
  double exitAgreement = 0.5;
  // A slice agrees with a rank when that rank's cost within the slice is at least this.
  double sliceCostShare = 0.015;
  // Whether what the group lost to a rank is its signed lateness above its duty (finishSlice in
  // straggler_detector.cpp), which counts time lost outside data and compute too; false: only
  // the time charged to its data, compute and CPU stages (the rule before; for benches).
  bool countLateness = true;
  // Step records kept while waiting for every rank's timings of a step; older ones are dropped.
  size_t maxPendingSteps = 1024;
};

class StragglerDetector {
 public:
  // worldSize: ranks of the run (a verdict needs at least 2). The rule's values must be positive
  // with exit <= enter; out-of-range values are clamped to the defaults' meaning (slices >= 1).
  explicit StragglerDetector(int worldSize, StragglerRule rule = {});

  // One per-rank sample (time/data_ms, time/compute_ms, time/wait_ms and, optional,
  // time/runqueue_ms: ms per step, the mean over the steps since that rank's previous record;
  // other names are ignored). A rank's time/runqueue_ms counts only when it comes before the
  // last of its three others of the step (the trainer and the Python package send it first), and
  // only in records where every rank sent it. wallTime: the sample's
  // Unix time, s. Returns a verdict when this sample completes a record (every rank's three
  // timings at `step`) and that record is the run's first complete one or ends a slice: at most
  // one verdict per sliceSeconds of the run, each to be journaled. Samples of a rank outside
  // [0, worldSize) or of a step older than the last complete record are ignored.
  std::optional<StragglerVerdict> onSample(int rank, int64_t step, const std::string& name,
                                           double value, double wallTime);

  // The verdict last returned (rank -1 before the first).
  const StragglerVerdict& current() const { return verdict_; }

  // The verdict as global samples at its step (metric_names.h kStraggler*), for the journal.
  static std::vector<v1::MetricSample> toSamples(const StragglerVerdict& verdict, int64_t epoch,
                                                 double wallTime);

 private:
  struct Timings {
    double data = 0.0, compute = 0.0, wait = 0.0, runQueue = 0.0;
    int have = 0;  // bit mask of the three
    bool hasRunQueue = false;
  };
  struct Record {
    std::vector<Timings> ranks;
    double wallTime = 0.0;
  };
  // Sums over the records of one slice, per rank, each weighted by the steps a record covers
  // (ms): stage times and run-queue delay; the group's waiting charged to the rank by stage at the
  // frontier where it was the late rank (chargedCpu also holds cpuBeyondLateness: its excess
  // run-queue delay that its lateness did not already explain); and its lateness (finishSlice).
  struct RankSums {
    double data = 0.0, compute = 0.0, wait = 0.0, runQueue = 0.0;
    double chargedData = 0.0, chargedCompute = 0.0, chargedCpu = 0.0;
    double lateness = 0.0, cpuBeyondLateness = 0.0;
    // What the group lost to the rank (ms): with `withLateness`, its lateness and the run-queue
    // delay beyond it; otherwise the time charged to its data, compute and CPU stages.
    double charged(bool withLateness) const {
      return withLateness ? lateness + cpuBeyondLateness
                          : chargedData + chargedCompute + chargedCpu;
    }
  };
  struct Slice {
    double start = 0.0, end = 0.0;  // where it starts (the slice before ends), its last record, s
    double groupMs = 0.0;           // the group's step time: sum of median data+compute+wait
    double steps = 0.0;             // steps its records cover
    std::vector<RankSums> ranks;
    // Per record until the slice is complete: the steps the record covers, and per rank (record-major: [k * ranks + r]) its lateness (the
    // median other rank's wait minus its own, ms, signed) and its lead (its data + compute beyond
    // the latest other rank's, ms, signed).
    std::vector<double> weights, lateness, leads;
  };
  // Sets each rank's lateness from the slice's records and frees them.
  static void finishSlice(Slice& slice);

  void addRecord(const Record& record, int64_t steps);
  StragglerVerdict judge(int64_t step, double wallTime);
  // Cost share of `rank` within `slice` (its charged time beyond the median other rank's).
  double sliceCost(const Slice& slice, int rank) const;
  // Slices of `window` that agree with `rank` (-1: slices where no rank reaches sliceCostShare).
  int agreeingSlices(const std::vector<const Slice*>& window, int rank) const;

  int worldSize_;
  StragglerRule rule_;
  std::map<int64_t, Record> pending_;  // step -> per rank, until complete
  std::optional<int64_t> lastStep_;    // of the last complete record
  double lastWallTime_ = 0.0;
  std::deque<Slice> slices_;  // the window's complete slices, oldest first
  Slice filling_;             // the slice records are added to; no records yet when steps == 0
  StragglerVerdict verdict_;
};

}  // namespace ringside::agent
