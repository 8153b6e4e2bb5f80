#include "ringside/agent/straggler_detector.h"

#include <algorithm>
#include <cmath>

#include "ringside/common/metric_names.h"

namespace ringside::agent {

namespace {

// The median of `values` without the element at `skip` (0 for fewer than two values).
double medianWithout(const std::vector<double>& values, size_t skip) {
  std::vector<double> others;
  others.reserve(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    if (i != skip) others.push_back(values[i]);
  }
  if (others.empty()) return 0.0;
  const size_t mid = others.size() / 2;
  std::nth_element(others.begin(), others.begin() + static_cast<std::ptrdiff_t>(mid), others.end());
  const double upper = others[mid];
  if (others.size() % 2 == 1) return upper;
  const double lower =
      *std::max_element(others.begin(), others.begin() + static_cast<std::ptrdiff_t>(mid));
  return (lower + upper) / 2.0;
}

// For each element of `values`, the median of the others (medianWithout for every index, in
// O(n log n) rather than O(n^2)); 0 for each when there are fewer than two values.
std::vector<double> mediansWithoutEach(const std::vector<double>& values) {
  const size_t n = values.size();
  std::vector<double> result(n, 0.0);
  if (n < 2) return result;
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  const size_t k = (n - 1) / 2;  // the median's index among the n - 1 others
  for (size_t i = 0; i < n; ++i) {
    // Equal values are interchangeable: removing any one of them leaves the same others.
    const size_t p = static_cast<size_t>(std::lower_bound(sorted.begin(), sorted.end(), values[i]) -
                                         sorted.begin());
    const auto other = [&](size_t j) { return j < p ? sorted[j] : sorted[j + 1]; };
    result[i] = (n - 1) % 2 == 1 ? other(k) : (other(k - 1) + other(k)) / 2.0;
  }
  return result;
}

double median(std::vector<double> values) {
  return medianWithout(values, values.size());  // skips nothing
}

// Index of the largest value (the lowest index among equals).
size_t argMax(const std::vector<double>& values) {
  return static_cast<size_t>(std::max_element(values.begin(), values.end()) - values.begin());
}

}  // namespace

StragglerDetector::StragglerDetector(int worldSize, StragglerRule rule)
    : worldSize_(std::max(worldSize, 1)), rule_(rule) {
  const StragglerRule defaults;
  if (!(rule_.sliceSeconds > 0)) rule_.sliceSeconds = defaults.sliceSeconds;
  rule_.slices = std::max(rule_.slices, 1);
  if (!(rule_.enterCostShare > 0)) rule_.enterCostShare = defaults.enterCostShare;
  rule_.exitCostShare = std::clamp(rule_.exitCostShare, 0.0, rule_.enterCostShare);
  rule_.enterAgreement = std::clamp(rule_.enterAgreement, 0.0, 1.0);
  rule_.exitAgreement = std::clamp(rule_.exitAgreement, 0.0, rule_.enterAgreement);
  rule_.maxPendingSteps = std::max<size_t>(rule_.maxPendingSteps, 1);
}

std::optional<StragglerVerdict> StragglerDetector::onSample(int rank, int64_t step,
                                                            const std::string& name, double value,
                                                            double wallTime) {
  if (rank < 0 || rank >= worldSize_ || worldSize_ < 2) return std::nullopt;
  if (lastStep_ && step <= *lastStep_) return std::nullopt;
  // Most samples are other names: one prefix test rules them out before four comparisons.
  if (!name.starts_with("time/")) return std::nullopt;
  const bool runQueue = name == metric::kRunQueueMs;
  int bit = 0;
  if (name == metric::kDataMs) bit = 1;
  if (name == metric::kComputeMs) bit = 2;
  if (name == metric::kWaitMs) bit = 4;
  if ((bit == 0 && !runQueue) || !std::isfinite(value)) return std::nullopt;
  value = std::max(value, 0.0);
  Record& record = pending_[step];
  if (record.ranks.empty()) record.ranks.resize(static_cast<size_t>(worldSize_));
  Timings& t = record.ranks[static_cast<size_t>(rank)];
  if (runQueue) {  // kept with the step's record; never completes it
    t.runQueue = value;
    t.hasRunQueue = true;
    while (pending_.size() > rule_.maxPendingSteps) pending_.erase(pending_.begin());
    return std::nullopt;
  }
  if (std::isfinite(wallTime)) record.wallTime = std::max(record.wallTime, wallTime);
  (bit == 1 ? t.data : bit == 2 ? t.compute : t.wait) = value;
  t.have |= bit;
  for (const Timings& r : record.ranks) {
    if (r.have != 7) {
      // A rank that stopped reporting leaves its steps incomplete: keep a bounded number.
      while (pending_.size() > rule_.maxPendingSteps) pending_.erase(pending_.begin());
      return std::nullopt;
    }
  }
  const Record complete = std::move(record);
  // Records of earlier steps that never completed (a rank's batch lost) are dropped.
  pending_.erase(pending_.begin(), pending_.upper_bound(step));
  // Each record holds the means over the steps since the previous one: it weighs that many.
  const int64_t steps = lastStep_ ? std::clamp<int64_t>(step - *lastStep_, 1, 1'000'000) : 1;
  const bool first = !lastStep_.has_value();
  lastStep_ = step;
  // Ranks on other nodes have other clocks: the window's clock never goes back. A record without
  // a time (a sender that sets none) moves it on by its steps' time.
  double wall = std::max(complete.wallTime, lastWallTime_);
  if (!(complete.wallTime > 0)) {
    std::vector<double> cycles;
    for (const Timings& t : complete.ranks) cycles.push_back(t.data + t.compute + t.wait);
    wall = lastWallTime_ + static_cast<double>(steps) * median(cycles) / 1000.0;
  }
  lastWallTime_ = wall;
  if (filling_.steps == 0 && slices_.empty()) filling_.start = wall;
  addRecord(Record{complete.ranks, wall}, steps);
  const bool sliceDone = wall - filling_.start >= rule_.sliceSeconds;
  if (sliceDone) {
    finishSlice(filling_);
    slices_.push_back(std::move(filling_));
    if (slices_.size() > static_cast<size_t>(rule_.slices)) slices_.pop_front();
    filling_ = Slice{};
    filling_.start = wall;
  }
  if (!sliceDone && !first) return std::nullopt;
  verdict_ = judge(step, wall);
  return verdict_;
}

void StragglerDetector::addRecord(const Record& record, int64_t steps) {
  const size_t n = record.ranks.size();
  const double weight = static_cast<double>(steps);
  if (filling_.ranks.empty()) filling_.ranks.resize(n);
  std::vector<double> cycles(n), runQueue(n);
  size_t last = 0;  // the rank that waited least: the one the group waited for
  bool everyRunQueue = true;
  for (size_t r = 0; r < n; ++r) {
    const Timings& t = record.ranks[r];
    cycles[r] = t.data + t.compute + t.wait;
    runQueue[r] = t.runQueue;
    everyRunQueue = everyRunQueue && t.hasRunQueue;
    if (t.wait < record.ranks[last].wait) last = r;
    RankSums& sums = filling_.ranks[r];
    sums.data += weight * t.data;
    sums.compute += weight * t.compute;
    sums.wait += weight * t.wait;
    sums.runQueue += weight * t.runQueue;
  }
  // Without `last`, the step would have ended when the next-to-last rank arrived: the group
  // waited the next-smallest wait minus its wait for it. The frontier of the other ranks' stage
  // boundaries (each on its own clock, from the step's start) says in which stage it fell behind.
  double nextWait = INFINITY, otherData = 0.0, otherArrival = 0.0;
  for (size_t r = 0; r < n; ++r) {
    if (r == last) continue;
    const Timings& t = record.ranks[r];
    nextWait = std::min(nextWait, t.wait);
    otherData = std::max(otherData, t.data);
    otherArrival = std::max(otherArrival, t.data + t.compute);
  }
  const Timings& late = record.ranks[last];
  const double charged = std::isfinite(nextWait) ? std::max(nextWait - late.wait, 0.0) : 0.0;
  // Each rank's run-queue delay beyond the median other rank's: time another process took from
  // it (where every rank reports it).
  std::vector<double> waits(n);
  for (size_t r = 0; r < n; ++r) waits[r] = record.ranks[r].wait;
  const std::vector<double> othersWait = mediansWithoutEach(waits);
  std::vector<double> runQueueExcess(n, 0.0);
  if (everyRunQueue) {
    const std::vector<double> othersRunQueue = mediansWithoutEach(runQueue);
    for (size_t r = 0; r < n; ++r) {
      runQueueExcess[r] = std::max(runQueue[r] - othersRunQueue[r], 0.0);
    }
  }
  // Each rank's lateness: how much less it waited than the median other rank (negative when it
  // waited more), for finishSlice.
  for (size_t r = 0; r < n; ++r) filling_.lateness.push_back(othersWait[r] - waits[r]);
  if (charged > 0.0) {
    // What another process took from the late rank explains its lateness first: that part is
    // the CPU's; the rest is split by the frontier.
    const double inCpu = std::min(runQueueExcess[last], charged);
    const double inData = std::clamp(late.data - otherData, 0.0, charged);
    const double inCompute =
        std::clamp(late.data + late.compute - otherArrival - inData, 0.0, charged - inData);
    const double rest = (charged - inCpu) / charged;
    RankSums& sums = filling_.ranks[last];
    sums.chargedCpu += weight * inCpu;
    sums.chargedData += weight * rest * inData;
    sums.chargedCompute += weight * rest * inCompute;
  }
  // Each rank's lead at the frontier after compute: its data + compute beyond the latest other
  // rank's (negative when it arrived first), for finishSlice's steady lead.
  std::vector<double> arrivals(n);
  for (size_t r = 0; r < n; ++r) arrivals[r] = record.ranks[r].data + record.ranks[r].compute;
  const size_t latest = argMax(arrivals);
  double runnerUp = -INFINITY;
  for (size_t r = 0; r < n; ++r) {
    if (r != latest) runnerUp = std::max(runnerUp, arrivals[r]);
  }
  for (size_t r = 0; r < n; ++r) {
    const double others = r == latest ? runnerUp : arrivals[latest];
    filling_.leads.push_back(std::isfinite(others) ? arrivals[r] - others : 0.0);
  }
  // Time another process took from a rank that its late arrival does not explain (a rank slowed
  // inside the all-reduce, where it is not last): charged as the most it can have cost the group,
  // which is no more than the others waited in that step.
  for (size_t r = 0; r < n && everyRunQueue; ++r) {
    const double explained = r == last ? charged : 0.0;
    const double beyond = std::clamp(runQueueExcess[r] - explained, 0.0,
                                     std::max(othersWait[r] - explained, 0.0));
    filling_.ranks[r].chargedCpu += weight * beyond;
    filling_.ranks[r].cpuBeyondLateness += weight * beyond;
  }
  filling_.weights.push_back(weight);
  filling_.groupMs += weight * median(cycles);
  filling_.steps += weight;
  filling_.end = record.wallTime;
}

void StragglerDetector::finishSlice(Slice& slice) {
  // What the group lost to a rank over the slice: the sum of its lateness, centred on its steady
  // lateness where that is duty. In every step rank 0 writes the run's records, so it waits less
  // at the all-reduce by that much: a steady lateness that its data and compute do not explain
  // (its median lead at the frontier is not as large). That offset is taken off every step's
  // lateness. What is left sums bursts of lateness and the noise every rank has, which cancels in
  // a signed sum (a rank's late steps against its early ones) instead of piling up on the rank
  // that the duty makes late in most steps. A steady straggler's lateness is explained by its
  // lead (its data or compute is behind the others' in every step) and all of it counts; a
  // bursty one's bursts lift its sum above its median. The slice's sum is counted from 0 up.
  const size_t records = slice.weights.size();
  const size_t n = slice.ranks.size();
  for (size_t r = 0; r < n; ++r) {
    std::vector<double> lateness(records), leads(records);
    for (size_t k = 0; k < records; ++k) {  // every record holds n of each
      lateness[k] = slice.lateness[k * n + r];
      leads[k] = slice.leads[k * n + r];
    }
    const double steady = median(lateness);
    const double explained = std::clamp(median(leads), 0.0, std::max(steady, 0.0));
    const double offset = steady - explained;
    double sum = 0.0;
    for (size_t k = 0; k < records; ++k) sum += slice.weights[k] * (lateness[k] - offset);
    slice.ranks[r].lateness = std::max(sum, 0.0);
  }
  slice.weights = {};
  slice.lateness = {};
  slice.leads = {};
}

double StragglerDetector::sliceCost(const Slice& slice, int rank) const {
  if (!(slice.groupMs > 0) || rank < 0 || static_cast<size_t>(rank) >= slice.ranks.size()) {
    return 0.0;
  }
  std::vector<double> charged(slice.ranks.size());
  for (size_t r = 0; r < slice.ranks.size(); ++r)
    charged[r] = slice.ranks[r].charged(rule_.countLateness);
  const size_t me = static_cast<size_t>(rank);
  return (charged[me] - medianWithout(charged, me)) / slice.groupMs;
}

int StragglerDetector::agreeingSlices(const std::vector<const Slice*>& window, int rank) const {
  int agreeing = 0;
  const auto agrees = [&](const Slice& slice) {
    if (rank >= 0) return sliceCost(slice, rank) >= rule_.sliceCostShare;
    // No rank reaches the slice threshold: the one with the most charged time has the largest
    // cost (removing the largest value leaves the smallest median of the others).
    std::vector<double> charged(slice.ranks.size());
    for (size_t r = 0; r < slice.ranks.size(); ++r)
      charged[r] = slice.ranks[r].charged(rule_.countLateness);
    return charged.empty() ||
           sliceCost(slice, static_cast<int>(argMax(charged))) < rule_.sliceCostShare;
  };
  for (const Slice* slice : window) agreeing += agrees(*slice) ? 1 : 0;
  return agreeing;
}

StragglerVerdict StragglerDetector::judge(int64_t step, double wallTime) {
  StragglerVerdict verdict;
  verdict.step = step;
  verdict.wallTime = wallTime;
  // The window: the complete slices; before the first is complete, the one filling.
  std::vector<const Slice*> window;
  for (const Slice& slice : slices_) window.push_back(&slice);
  Slice first;  // the run's first record alone, before any slice is complete
  if (window.empty()) {
    first = filling_;
    finishSlice(first);
    window.push_back(&first);
  }
  const size_t n = static_cast<size_t>(worldSize_);
  RankSums zero;
  std::vector<RankSums> sums(n, zero);
  double groupMs = 0.0, steps = 0.0;
  for (const Slice* slice : window) {
    groupMs += slice->groupMs;
    steps += slice->steps;
    for (size_t r = 0; r < slice->ranks.size() && r < n; ++r) {
      const RankSums& s = slice->ranks[r];
      sums[r].data += s.data;
      sums[r].compute += s.compute;
      sums[r].wait += s.wait;
      sums[r].chargedData += s.chargedData;
      sums[r].chargedCompute += s.chargedCompute;
      sums[r].chargedCpu += s.chargedCpu;
      sums[r].runQueue += s.runQueue;
      sums[r].lateness += s.lateness;
      sums[r].cpuBeyondLateness += s.cpuBeyondLateness;
    }
  }
  verdict.windowSeconds = window.back()->end - window.front()->start;
  std::vector<double> charged(n);
  for (size_t r = 0; r < n; ++r) charged[r] = sums[r].charged(rule_.countLateness);
  const auto cost = [&](int rank) {
    const size_t me = static_cast<size_t>(rank);
    return groupMs > 0 ? (charged[me] - medianWithout(charged, me)) / groupMs : 0.0;
  };
  const auto agreement = [&](int rank) {
    return static_cast<double>(agreeingSlices(window, rank)) / rule_.slices;
  };
  const int leading = static_cast<int>(argMax(charged));
  verdict.leadingRank = leading;
  verdict.leadingCostShare = cost(leading);

  // Hysteresis: the named rank stays while it meets the lower bar; a rank is named only when it
  // meets the higher one.
  int named = -1;
  const int held = verdict_.rank;
  if (held >= 0 && cost(held) >= rule_.exitCostShare && agreement(held) >= rule_.exitAgreement) {
    named = held;
  } else if (verdict.leadingCostShare >= rule_.enterCostShare &&
             agreement(leading) >= rule_.enterAgreement) {
    named = leading;
  }
  if (named < 0) {
    verdict.confidence = agreement(-1);
    return verdict;
  }
  const RankSums& mine = sums[static_cast<size_t>(named)];
  // The stage that explains most of the charged time (compute among equals); a named stage
  // changes only when another explains clearly more (1.5 x), so that close stages do not
  // alternate.
  const auto chargedIn = [&](StragglerVerdict::Stage s) {
    return s == StragglerVerdict::kData  ? mine.chargedData
           : s == StragglerVerdict::kCpu ? mine.chargedCpu
                                         : mine.chargedCompute;
  };
  StragglerVerdict::Stage stage = StragglerVerdict::kCompute;
  for (StragglerVerdict::Stage s : {StragglerVerdict::kData, StragglerVerdict::kCpu}) {
    if (chargedIn(s) > chargedIn(stage)) stage = s;
  }
  if (named == held && verdict_.stage != StragglerVerdict::kNone && stage != verdict_.stage &&
      chargedIn(stage) < 1.5 * chargedIn(verdict_.stage)) {
    stage = verdict_.stage;
  }
  verdict.rank = named;
  verdict.stage = stage;
  verdict.costShare = cost(named);
  verdict.confidence = agreement(named);
  if (steps > 0) {
    std::vector<double> stageMeans(n), waitMeans(n);
    for (size_t r = 0; r < n; ++r) {
      stageMeans[r] = (stage == StragglerVerdict::kData  ? sums[r].data
                       : stage == StragglerVerdict::kCpu ? sums[r].runQueue
                                                         : sums[r].compute) /
                      steps;
      waitMeans[r] = sums[r].wait / steps;
    }
    const size_t me = static_cast<size_t>(named);
    verdict.stageMs = stageMeans[me];
    verdict.medianMs = medianWithout(stageMeans, me);
    verdict.othersWaitMs = medianWithout(waitMeans, me);
  }
  return verdict;
}

std::vector<v1::MetricSample> StragglerDetector::toSamples(const StragglerVerdict& verdict,
                                                           int64_t epoch, double wallTime) {
  std::vector<v1::MetricSample> samples;
  const auto add = [&](const char* name, double value) {
    v1::MetricSample sample;
    sample.set_step(verdict.step);
    sample.set_epoch(epoch);
    sample.set_wall_time(wallTime);
    sample.set_rank(-1);
    sample.set_name(name);
    sample.set_value(value);
    samples.push_back(std::move(sample));
  };
  add(metric::kStragglerRank, verdict.rank);
  add(metric::kStragglerStage, verdict.stage);
  add(metric::kStragglerStageMs, verdict.stageMs);
  add(metric::kStragglerMedianMs, verdict.medianMs);
  add(metric::kStragglerOthersWaitMs, verdict.othersWaitMs);
  add(metric::kStragglerCostShare, verdict.costShare);
  add(metric::kStragglerConfidence, verdict.confidence);
  return samples;
}

}  // namespace ringside::agent
