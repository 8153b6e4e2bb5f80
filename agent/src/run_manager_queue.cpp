// RunManager's queue (docs/queue.md, docs/design.md decision 14): the order of QUEUED runs, why
// each waits, and their dispatch when their slots are free. Launching is in
// run_manager_launch.cpp, the rest of RunManager in run_manager.cpp.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "ringside/agent/run_manager.h"
#include "run_manager_detail.h"

namespace ringside::agent {

using run_manager_detail::steadySeconds;

namespace {

// Queue order of the priorities: high first.
int priorityRank(v1::RunPriority priority) {
  switch (priority) {
    case v1::HIGH_PRIORITY:
      return 0;
    case v1::LOW_PRIORITY:
      return 2;
    default:
      return 1;
  }
}

// Fresh slot figures are read at most this often while nothing ended (a fresh scan reads /proc).
constexpr double kDispatchInterval = 0.5;  // seconds
// Runs named in a waiting reason; the rest are counted.
constexpr size_t kNamedHolders = 3;

// Within a priority: the queue order, which starts as the submission time.
double orderKey(const v1::RunInfo& run) {
  return run.queue_order() != 0 ? run.queue_order() : run.created_time();
}

std::string plural(size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace

bool RunManager::queuedAhead(v1::RunPriority priority, bool gpuJob) const {
  for (const auto& [id, run] : runs_) {
    if (run.info.state() == v1::QUEUED && usesGpus(run.info.spec()) == gpuJob &&
        priorityRank(run.info.spec().priority()) <= priorityRank(priority)) {
      return true;
    }
  }
  return false;
}

std::vector<RunManager::Tracked*> RunManager::queueOrder() {
  std::vector<Tracked*> queue;
  if (options_.slurm != nullptr) return queue;  // Slurm's queue is the queue
  for (auto& [id, run] : runs_) {
    if (run.info.state() == v1::QUEUED) queue.push_back(&run);
  }
  std::sort(queue.begin(), queue.end(), [](const Tracked* a, const Tracked* b) {
    return std::make_tuple(priorityRank(a->info.spec().priority()), orderKey(a->info),
                           a->info.run_id()) <
           std::make_tuple(priorityRank(b->info.spec().priority()), orderKey(b->info),
                           b->info.run_id());
  });
  return queue;
}

Result<v1::RunInfo> RunManager::reorderQueued(const std::string& runId, int places,
                                              const v1::RunPriority* priority) {
  auto it = runs_.find(runId);
  if (it == runs_.end()) return Status::notFound("no run " + runId + " owned by this node");
  Tracked& run = it->second;
  if (run.info.state() != v1::QUEUED) {
    return Status::failedPrecondition("run " + runId + " is not queued (it is " +
                                      v1::RunState_Name(run.info.state()) +
                                      "): only a queued run can be moved");
  }
  if (priority != nullptr && *priority != run.info.spec().priority()) {
    run.info.mutable_spec()->set_priority(*priority);
    run.info.set_queue_order(run.info.created_time());
  }
  if (places != 0) {
    // The queued runs of its priority, in order; the run goes between two of them.
    std::vector<Tracked*> same;
    for (Tracked* queued : queueOrder()) {
      if (queued->info.spec().priority() == run.info.spec().priority()) same.push_back(queued);
    }
    const auto from = std::find(same.begin(), same.end(), &run) - same.begin();
    const auto to = std::clamp<std::ptrdiff_t>(from + places, 0,
                                               static_cast<std::ptrdiff_t>(same.size()) - 1);
    if (to != from) {
      // Its new neighbours once it has left its place: before `to` moving up, after it moving
      // down.
      const Tracked* before = to < from ? (to > 0 ? same[to - 1] : nullptr) : same[to];
      const Tracked* after =
          to < from ? same[to] : (to + 1 < std::ssize(same) ? same[to + 1] : nullptr);
      const double low = before != nullptr ? orderKey(before->info) : orderKey(after->info) - 1.0;
      const double high = after != nullptr ? orderKey(after->info) : orderKey(before->info) + 1.0;
      run.info.set_queue_order(low + (high - low) / 2);
    }
  }
  dispatchQueue(/*force=*/true, runId);
  if (run.info.state() == v1::QUEUED && onStateChange_) onStateChange_(run.info, run.ids);
  return run.info;
}

std::string RunManager::slotHolders(bool gpuJob) const {
  auto runName = [](const Tracked& run) {
    const std::string& name = run.info.spec().name();
    return "run " + run.info.run_id() + (name.empty() ? "" : " (" + name + ")");
  };
  std::vector<std::string> holders;
  for (const auto& [id, run] : runs_) {
    const v1::RunState state = run.info.state();
    if (isEnded(state) || state == v1::QUEUED) continue;
    if (gpuJob && !run.gpus.empty()) {
      std::string gpus;
      for (uint32_t gpu : run.gpus) gpus += (gpus.empty() ? "" : ", ") + std::to_string(gpu);
      holders.push_back((run.gpus.size() == 1 ? "GPU " : "GPUs ") + gpus + " held by " +
                        runName(run));
    } else if (!gpuJob && run.gpus.empty() && !usesGpus(run.info.spec())) {
      holders.push_back(plural(localRanks(run.info.spec()), "slot", "slots") + " held by " +
                        runName(run));
    }
  }
  std::string text;
  for (size_t i = 0; i < holders.size() && i < kNamedHolders; ++i) {
    text += (i == 0 ? "; " : ", ") + holders[i];
  }
  if (holders.size() > kNamedHolders) {
    text += " and " + std::to_string(holders.size() - kNamedHolders) + " more";
  }
  if (gpuJob) {
    const std::string foreign = foreignGpuText();
    if (!foreign.empty()) text += "; " + foreign;
  }
  return text + reservations_.refusalNote(gpuJob, steadySeconds());
}

void RunManager::dispatchQueue(bool force, const std::string& quiet) {
  const double now = steadySeconds();
  if (!force && !queueDirty_ && now - lastDispatch_ < kDispatchInterval) return;
  queueDirty_ = false;
  lastDispatch_ = now;
  const std::vector<Tracked*> queue = queueOrder();
  if (queue.empty()) return;
  const uint32_t used = usedCpuSlots(/*fresh=*/true);
  uint32_t freeCpu = options_.cpuSlots - std::min(options_.cpuSlots, used);
  std::vector<uint32_t> freeGpuList = freeGpus();
  // When the waiting runs of each kind should start: the slots held by running runs free up at
  // their ETAs, in that order; each waiting run takes what it needs, in queue order.
  struct Release {
    double at;  // Unix seconds; infinity: unknown
    uint32_t slots;
  };
  struct Estimate {
    bool started = false;  // set up at the first waiting run of the kind
    std::vector<Release> releases;
    size_t next = 0;
    uint32_t free = 0;
    double clock = 0;
    bool unknown = false;
    // The fewest slots left over at the estimated start of any waiting run so far (what it
    // leaves of the free slots once it took its own): a later run that takes no more than this
    // of the slots free now delays none of them (backfill).
    uint32_t minSurplus = std::numeric_limits<uint32_t>::max();
  };
  Estimate estimates[2];
  const double wallNow = run_manager_detail::wallSeconds();
  auto estimateStart = [&](bool gpuJob, uint32_t local, uint32_t freeNow) -> double {
    Estimate& e = estimates[gpuJob];
    if (!e.started) {
      e.started = true;
      e.free = freeNow;
      e.clock = wallNow;
      for (const auto& [id, held] : runs_) {
        const v1::RunState state = held.info.state();
        if (isEnded(state) || state == v1::QUEUED) continue;
        const bool heldGpus = !held.gpus.empty();
        if (gpuJob != heldGpus || (!gpuJob && usesGpus(held.info.spec()))) continue;
        std::optional<double> left;
        if (options_.remainingSeconds) left = options_.remainingSeconds(held.info);
        e.releases.push_back(
            {left && std::isfinite(*left) ? wallNow + std::max(0.0, *left)
                                          : std::numeric_limits<double>::infinity(),
             gpuJob ? static_cast<uint32_t>(held.gpus.size()) : localRanks(held.info.spec())});
      }
      std::sort(e.releases.begin(), e.releases.end(),
                [](const Release& a, const Release& b) { return a.at < b.at; });
    }
    while (!e.unknown && e.free < local) {
      if (e.next == e.releases.size() || !std::isfinite(e.releases[e.next].at)) {
        e.unknown = true;  // what it waits for has no known end: nor has anything behind it
        break;
      }
      e.clock = std::max(e.clock, e.releases[e.next].at);
      e.free += e.releases[e.next++].slots;
    }
    if (e.unknown) return 0;
    e.free -= local;  // for good: its own length is not known
    e.minSurplus = std::min(e.minSurplus, e.free);
    return e.clock;
  };
  // Starts a queued run on slots free now; a run that cannot start ends FAILED with the reason.
  auto startNow = [&](Tracked* run, bool gpuJob, uint32_t local) {
    v1::RunSpec checked = run->info.spec();
    std::vector<std::string> argv;
    Status started = checkJob(&checked, &argv);
    if (started.isOk()) {
      std::vector<uint32_t> own;
      if (gpuJob) {
        own.assign(freeGpuList.begin(), freeGpuList.begin() + local);
        freeGpuList.erase(freeGpuList.begin(), freeGpuList.begin() + local);
      } else {
        freeCpu -= local;
      }
      *run->info.mutable_spec() = checked;
      started = spawn(*run, argv, own, /*journalQueued=*/run->info.run_id() == quiet);
    }
    if (!started.isOk()) {
      run->info.set_queue_position(0);
      run->info.clear_waiting_reason();
      run->info.clear_estimated_start();
      setState(*run, v1::FAILED, "could not start from the queue: " + started.message());
    }
  };

  // The first queued run of each kind that does not fit: later ones of that kind wait for it.
  const Tracked* headCpu = nullptr;
  const Tracked* headGpu = nullptr;
  // Who holds each kind of slot, worked out once for every waiting run (after the starts).
  std::string holders[2];
  bool holdersKnown[2] = {false, false};
  uint32_t position = 0;
  for (Tracked* run : queue) {
    const v1::RunSpec& spec = run->info.spec();
    const bool gpuJob = usesGpus(spec);
    const uint32_t local = localRanks(spec);
    const Tracked*& head = gpuJob ? headGpu : headCpu;
    const bool fits = gpuJob ? freeGpuList.size() >= local
                             : options_.cpuSlots > 0 && freeCpu >= local;
    if (head == nullptr && fits) {
      startNow(run, gpuJob, local);
      continue;
    }
    // Backfill (as Slurm's backfill scheduler, without time limits): a run behind a waiting one
    // of its kind starts on the slots free now when, at the estimated start of every waiting run
    // ahead of it, enough slots are left over for it too, so that none of them starts later for
    // it. Its own length is not known, so it counts as holding its slots for good; a run ahead
    // without an estimate (a run it waits for has no ETA) lets none pass.
    Estimate& e = estimates[gpuJob];
    if (head != nullptr && fits && e.started && !e.unknown && e.minSurplus >= local) {
      e.free -= local;
      e.minSurplus -= local;
      startNow(run, gpuJob, local);
      continue;
    }
    std::string reason;
    if (head != nullptr && fits) {
      reason = "its slots are free, but run " + head->info.run_id() +
               " is ahead of it in the queue and waits for the same kind of slots, and starting "
               "this one now could delay it" +
               (e.unknown ? std::string(" (when the slots it waits for free up is not known)")
                          : std::string()) +
               ": it starts after that run";
    } else {
      if (!holdersKnown[gpuJob]) {
        holders[gpuJob] = slotHolders(gpuJob);
        holdersKnown[gpuJob] = true;
      }
      reason = gpuJob ? "waiting for " + plural(local, "GPU", "GPUs") + ": " +
                            std::to_string(freeGpuList.size()) + " of " +
                            std::to_string(options_.gpuIndices.size()) + " free"
                      : "waiting for " + plural(local, "CPU slot", "CPU slots") + ": " +
                            std::to_string(freeCpu) + " of " + std::to_string(options_.cpuSlots) +
                            " free";
      reason += holders[gpuJob];
      if (head == nullptr) head = run;
    }
    ++position;
    const double estimate =
        estimateStart(gpuJob, local, gpuJob ? static_cast<uint32_t>(freeGpuList.size()) : freeCpu);
    const double reported = run->info.estimated_start();
    const bool estimateMoved =
        (estimate == 0) != (reported == 0) ||
        std::abs(estimate - reported) > std::max(30.0, 0.05 * std::max(0.0, reported - wallNow));
    if (position == run->info.queue_position() && reason == run->info.waiting_reason() &&
        !estimateMoved) {
      continue;
    }
    run->info.set_queue_position(position);
    run->info.set_waiting_reason(reason);
    if (estimateMoved) run->info.set_estimated_start(estimate);
    if (onStateChange_ && run->info.run_id() != quiet) onStateChange_(run->info, run->ids);
  }
}

}  // namespace ringside::agent
