// The agent's control socket: each request on it (docs/protocol.md) and its reply. Agent::Impl in
// agent_impl.h.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>
#include <zmq.hpp>
#include <zmq_addon.hpp>

#include "agent_impl.h"
#include "ringside/agent/reply_pages.h"
#include "ringside/common/protocol.h"

namespace ringside::agent {

namespace fs = std::filesystem;

v1::NodeInfo Agent::Impl::nodeInfo() {
  v1::NodeInfo info = node;
  const uint32_t cpuUsed = runs->usedCpuSlots();
  const auto gpuUsed = static_cast<uint32_t>(runs->gpusInUse().size());
  info.set_cpu_slots_used(cpuUsed);
  info.set_gpu_slots_used(gpuUsed);
  info.set_slots_used(node.slot_kind() == "gpu" ? gpuUsed : cpuUsed);  // version 1's count
  info.set_draining(draining);
  info.set_engine(config.engine);
  if (slurm) {
    for (v1::SlurmPartition& partition : slurm->partitions()) {
      *info.add_slurm_partitions() = std::move(partition);
    }
  }
  return info;
}

uint32_t Agent::Impl::freeCpuSlots() const {
  return node.cpu_slots_total() -
         std::min(node.cpu_slots_total(), runs->usedCpuSlots(/*fresh=*/true));
}

v1::Envelope Agent::Impl::handle(const v1::Envelope& request) {
  const uint64_t id = request.request_id();
  v1::Envelope reply = protocol::newEnvelope(id);
  auto fail = [&](const Status& status) {
    return protocol::makeErrorReply(id, protocol::errorCodeFor(status.code()), status.message());
  };
  if (request.protocol_version() < protocol::kMinControlProtocolVersion) {
    return protocol::makeErrorReply(
        id, v1::ErrorReply::UNSUPPORTED_VERSION,
        "this agent (Ringside " + std::string(kAgentVersion) + ") speaks protocol version " +
            std::to_string(protocol::kProtocolVersion) + " and serves clients of version " +
            std::to_string(protocol::kMinControlProtocolVersion) +
            " or later; this client speaks " + std::to_string(request.protocol_version()) +
            " (it would count a GPU node's slots as its GPUs only): install the same Ringside "
            "version on the GUI's machine as on the nodes");
  }
  switch (request.body_case()) {
    case v1::Envelope::kHello:
      *reply.mutable_hello_reply()->mutable_node() = nodeInfo();
      reply.mutable_hello_reply()->set_protocol_version(protocol::kProtocolVersion);
      return reply;
    case v1::Envelope::kListRuns: {
      auto page = listRunsPage(*journal, !request.list_runs().include_ended(),
                               request.list_runs().page_token(), protocol::kMaxReplyPageBytes);
      if (!page.isOk()) return fail(page.status());
      *reply.mutable_list_runs_reply() = std::move(page).value();  // set even with no runs
      return reply;
    }
    case v1::Envelope::kLaunchRun: {
      if (draining) {
        return fail(Status::failedPrecondition("node " + node.hostname() +
                                               " is draining: undrain it or choose another node"));
      }
      // Only the agent's sweep controller marks a run as a sweep's trial.
      v1::RunSpec spec = request.launch_run().spec();
      spec.clear_sweep_trial();
      auto run = runs->launch(spec, freeCpuSlots());
      if (!run.isOk()) return fail(run.status());
      auto stored = journal->findRun(run->run_id());
      *reply.mutable_launch_run_reply()->mutable_run() = stored.isOk() ? stored->info : *run;
      return reply;
    }
    case v1::Envelope::kPreflight: {
      const double reserve = request.preflight().reserve_seconds();
      if (Status valid = validateReserveSeconds(reserve); !valid.isOk()) return fail(valid);
      auto* out = reply.mutable_preflight_reply();
      out->set_hostname(node.hostname());
      out->set_agent_version(kAgentVersion);
      out->set_slot_kind(node.slot_kind());
      if (draining) {
        out->add_problems("node " + node.hostname() +
                          " is draining: undrain it or choose another node");
      }
      const uint32_t free = freeCpuSlots();
      for (const std::string& problem :
           runs->preflight(request.preflight().spec(), request.preflight().ranks(), free)) {
        out->add_problems(problem);
      }
      const std::vector<uint32_t> freeGpus = runs->freeGpus();
      out->set_free_cpu_slots(free);
      // Version 1's count: of the node's one slot kind.
      out->set_free_slots(node.slot_kind() == "gpu" ? static_cast<uint32_t>(freeGpus.size())
                                                    : free);
      for (uint32_t gpu : freeGpus) out->add_free_gpus(gpu);
      if (out->problems().empty() && reserve > 0) {
        const Reservation held =
            runs->reserve(request.preflight().spec(), request.preflight().ranks(), reserve);
        out->set_reservation_id(held.id);
        for (uint32_t gpu : held.gpus) out->add_reserved_gpus(gpu);
      }
      return reply;
    }
    case v1::Envelope::kReorderQueuedRun: {
      const auto& reorder = request.reorder_queued_run();
      const v1::RunPriority priority = reorder.priority();
      auto run = runs->reorderQueued(reorder.run_id(), reorder.places(),
                                     reorder.has_priority() ? &priority : nullptr);
      if (!run.isOk()) return fail(run.status());
      *reply.mutable_reorder_queued_run_reply()->mutable_run() = *run;
      return reply;
    }
    case v1::Envelope::kLaunchSweep:
    case v1::Envelope::kListSweeps:
    case v1::Envelope::kControlSweep:
      return handleSweepRequest(request);
    case v1::Envelope::kStopRun: {
      auto run = runs->stop(request.stop_run().run_id(), request.stop_run().grace_seconds());
      if (!run.isOk()) return fail(run.status());
      *reply.mutable_stop_run_reply()->mutable_run() = *run;
      return reply;
    }
    case v1::Envelope::kFetchRunData: {
      const auto& fetch = request.fetch_run_data();
      auto page = journal->fetchSince(fetch.run_id(), fetch.after_seq(), fetch.max_entries());
      if (!page.isOk()) return fail(page.status());
      *reply.mutable_fetch_run_data_reply() = std::move(page).value();
      return reply;
    }
    case v1::Envelope::kFetchTelemetry: {
      if (!telemetryJournal) {
        return fail(
            Status::internal("this node's telemetry journal could not be opened (see "
                             "the agent's log): its past telemetry cannot be fetched"));
      }
      auto page = telemetryJournal->fetch(request.fetch_telemetry());
      if (!page.isOk()) return fail(page.status());
      page->set_node_id(node.node_id());
      *reply.mutable_fetch_telemetry_reply() = std::move(page).value();
      return reply;
    }
    case v1::Envelope::kTailLog: {
      const auto& tail = request.tail_log();
      auto stored = journal->findRun(tail.run_id());
      if (!stored.isOk()) return fail(stored.status());
      *reply.mutable_tail_log_reply() = tailLogReply(
          tail.run_id(), stored->info.run_dir(), tail.max_lines(), protocol::kMaxReplyPageBytes);
      return reply;
    }
    case v1::Envelope::kSetDrain:
      draining = request.set_drain().draining();
      if (draining) {
        std::ofstream(config.stateDir + "/draining") << "1\n";
      } else {
        std::error_code ec;
        fs::remove(config.stateDir + "/draining", ec);
      }
      *reply.mutable_set_drain_reply()->mutable_node() = nodeInfo();
      return reply;
    default:
      return protocol::makeErrorReply(id, v1::ErrorReply::UNKNOWN_MESSAGE,
                                      std::string("the control socket takes requests only, not ") +
                                          protocol::bodyName(request));
  }
}

void Agent::Impl::serveControl() {
  std::vector<zmq::message_t> frames;
  while (true) {
    frames.clear();
    auto received =
        zmq::recv_multipart(control, std::back_inserter(frames), zmq::recv_flags::dontwait);
    if (!received || frames.size() < 2) return;
    // [routing id][envelope]: exactly one frame after the id (docs/protocol.md#framing); any
    // other framing, such as a REQ-style empty delimiter, is answered MALFORMED.
    std::vector<std::string_view> request;
    for (size_t i = 1; i < frames.size(); ++i) {
      request.emplace_back(frames[i].data<char>(), frames[i].size());
    }
    v1::Envelope reply;
    auto decoded = protocol::decodeRequest(request);
    if (!decoded.isOk()) {
      reply = protocol::makeErrorReply(decoded.error());
    } else if (!protocol::isControlRequest(*decoded)) {
      reply = protocol::makeErrorReply(decoded->request_id(), v1::ErrorReply::UNKNOWN_MESSAGE,
                                       std::string("the control socket takes requests only, not ") +
                                           protocol::bodyName(*decoded));
    } else {
      reply = handle(*decoded);
    }
    const std::string bytes = protocol::encodeEnvelope(reply);
    control.send(frames[0], zmq::send_flags::sndmore | zmq::send_flags::dontwait);
    control.send(zmq::buffer(bytes), zmq::send_flags::dontwait);
  }
}

}  // namespace ringside::agent
