// The agent's sweeps (docs/sweeps.md): the SweepController over this node's RunManager and
// journal, and the sweep requests on the control socket. Agent::Impl in agent_impl.h.
#include <algorithm>
#include <string>
#include <vector>

#include "agent_impl.h"
#include "ringside/common/protocol.h"

namespace ringside::agent {

Status Agent::Impl::startSweeps() {
  // The controller's view of the node's runs: RunManager for launches and stops, the journal for
  // what was journaled (states, samples).
  class AgentTrialRunner : public TrialRunner {
   public:
    explicit AgentTrialRunner(Impl& agent) : agent_(agent) {}

    Result<v1::RunInfo> launchTrial(const v1::RunSpec& spec) override {
      if (agent_.draining) {
        return Status::failedPrecondition("node " + agent_.node.hostname() + " is draining");
      }
      return agent_.runs->launch(spec, agent_.freeCpuSlots());
    }
    Status stopTrial(const std::string& runId, double graceSeconds,
                     const std::string& reason) override {
      auto stopped = agent_.runs->stop(runId, graceSeconds, reason);
      return stopped.isOk() ? Status::ok() : stopped.status();
    }
    std::optional<v1::RunInfo> findRun(const std::string& runId) override {
      auto stored = agent_.journal->findRun(runId);
      if (!stored.isOk()) return std::nullopt;
      return stored->info;
    }
    std::vector<v1::RunInfo> runsOfSweep(const std::string& sweepId) override {
      std::vector<v1::RunInfo> out;
      auto all = agent_.journal->loadRuns(/*activeOnly=*/false);
      if (!all.isOk()) return out;
      for (const StoredRun& run : *all) {
        if (run.info.spec().sweep_trial().sweep_id() == sweepId) out.push_back(run.info);
      }
      return out;
    }
    Status forEachSample(const std::string& runId,
                         const std::function<void(const v1::MetricSample&)>& take) override {
      uint64_t after = 0;
      while (true) {
        auto page = agent_.journal->fetchSince(runId, after);
        if (!page.isOk()) return page.status();
        for (const v1::MetricSample& sample : page->samples()) take(sample);
        if (!page->more() || page->last_seq() <= after) return Status::ok();
        after = page->last_seq();
      }
    }
    bool processesEnded(const std::string& runId) override {
      const v1::RunInfo* run = agent_.runs->find(runId);
      return run != nullptr && isEnded(run->state());
    }
    uint32_t slotsFor(const v1::RunSpec& spec) override {
      if (agent_.slurm) {
        // A Slurm node: the CPUs (or GPUs) of the partition the trials go to, per node of a
        // trial's job, so that the trials that fit the partition at once are submitted at once.
        uint64_t total = 0;
        for (const v1::SlurmPartition& partition : agent_.slurm->partitions()) {
          const bool chosen = spec.slurm().partition().empty() ? partition.is_default()
                                                               : partition.name() == spec.slurm().partition();
          if (!chosen) continue;
          for (const v1::SlurmNode& node : partition.nodes()) {
            total += spec.slurm().gpus_per_node() > 0 ? node.gpus() : node.cpus();
          }
        }
        const uint64_t perJobNodes = std::max<uint32_t>(1, spec.slurm().nodes());
        return static_cast<uint32_t>(std::clamp<uint64_t>(total / perJobNodes, 1, 1u << 16));
      }
      return agent_.runs->usesGpus(spec) ? static_cast<uint32_t>(agent_.node.gpus_size())
                                         : agent_.node.cpu_slots_total();
    }

   private:
    Impl& agent_;
  };

  trialRunner = std::make_unique<AgentTrialRunner>(*this);
  SweepControllerOptions options;
  options.sweepsDir = config.stateDir + "/sweeps";
  options.now = wallSeconds;
  options.onChange = [this](const v1::SweepInfo& sweep) {
    v1::Envelope event = protocol::newEnvelope(0);
    *event.mutable_sweep_event()->mutable_sweep() = sweep;
    publish(event);
  };
  options.log = [](const char* level, const std::string& text) { logLine(level, text); };
  sweeps = std::make_unique<SweepController>(std::move(options), *trialRunner);
  return sweeps->load();
}

v1::Envelope Agent::Impl::handleSweepRequest(const v1::Envelope& request) {
  const uint64_t id = request.request_id();
  v1::Envelope reply = protocol::newEnvelope(id);
  auto fail = [&](const Status& status) {
    return protocol::makeErrorReply(id, protocol::errorCodeFor(status.code()), status.message());
  };
  switch (request.body_case()) {
    case v1::Envelope::kLaunchSweep: {
      auto sweep = sweeps->launch(request.launch_sweep().spec(), !draining);
      if (!sweep.isOk()) return fail(sweep.status());
      *reply.mutable_launch_sweep_reply()->mutable_sweep() = std::move(sweep).value();
      return reply;
    }
    case v1::Envelope::kListSweeps: {
      // The newest sweeps that fit one reply, listed oldest first.
      std::vector<v1::SweepInfo> all = sweeps->list(request.list_sweeps().include_ended());
      size_t bytes = 0, first = all.size();
      while (first > 0 && bytes + all[first - 1].ByteSizeLong() + 16 <= protocol::kMaxReplyPageBytes) {
        bytes += all[first - 1].ByteSizeLong() + 16;
        --first;
      }
      auto* out = reply.mutable_list_sweeps_reply();
      for (size_t i = first; i < all.size(); ++i) *out->add_sweeps() = std::move(all[i]);
      return reply;
    }
    case v1::Envelope::kControlSweep: {
      auto sweep = sweeps->control(request.control_sweep());
      if (!sweep.isOk()) return fail(sweep.status());
      *reply.mutable_control_sweep_reply()->mutable_sweep() = std::move(sweep).value();
      return reply;
    }
    default:
      return fail(Status::internal("not a sweep request"));
  }
}

}  // namespace ringside::agent
