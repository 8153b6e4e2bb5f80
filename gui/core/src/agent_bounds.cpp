#include "ringside/gui/agent_bounds.h"

#include <algorithm>
#include <cstdint>
#include <tuple>
#include <utility>

#include "ringside/common/protocol.h"
#include "ringside/common/protocol_limits.h"
#include "ringside/common/run_limits.h"
#include "ringside/common/run_spec_limits.h"
#include "ringside/common/utf8.h"

namespace ringside::gui {

namespace {

constexpr std::string_view kEllipsis = "\xE2\x80\xA6";  // U+2026

std::string bytes(size_t size) { return std::to_string(size) + " bytes"; }

bool hasControlCharacter(std::string_view text) {
  return std::any_of(text.begin(), text.end(),
                     [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
}

// "run r1", or "a run" when the id is not printable as it is.
std::string runLabel(const std::string& runId) {
  return isValidRunId(runId) ? "run " + runId : std::string("a run");
}

// Clips `text` to maxBytes and notes it as "<what> is N bytes, over the limit of M: clipped".
void clipField(std::string& text, size_t maxBytes, const std::string& what, BoundsReport& report) {
  const size_t size = text.size();
  if (clipText(text, maxBytes)) {
    report.add(what + " is " + bytes(size) + ", over the limit of " + std::to_string(maxBytes) +
               ": clipped");
  }
}

// Clips every text of `texts` to maxBytes; one finding for all.
template <typename Texts>
void clipEach(Texts& texts, size_t maxBytes, const std::string& what, BoundsReport& report) {
  size_t clipped = 0;
  size_t largest = 0;
  for (std::string& text : texts) {
    const size_t size = text.size();
    if (clipText(text, maxBytes)) {
      ++clipped;
      largest = std::max(largest, size);
    }
  }
  if (clipped > 0) {
    report.add(std::to_string(clipped) + " of " + what + " over " + std::to_string(maxBytes) +
               " bytes (the longest " + bytes(largest) + "): clipped");
  }
}

// Keeps the first `maxEntries` of a repeated field; notes the cut.
template <typename Repeated>
void truncateList(Repeated& list, size_t maxEntries, const std::string& what,
                  BoundsReport& report) {
  const size_t size = static_cast<size_t>(list.size());
  if (size <= maxEntries) return;
  list.Truncate(static_cast<int>(maxEntries));
  report.add(what + ": " + std::to_string(size) + " entries, over the limit of " +
             std::to_string(maxEntries) + ": the first " + std::to_string(maxEntries) + " kept");
}
template <typename Message>
void truncateList(google::protobuf::RepeatedPtrField<Message>& list, size_t maxEntries,
                  const std::string& what, BoundsReport& report) {
  const size_t size = static_cast<size_t>(list.size());
  if (size <= maxEntries) return;
  list.DeleteSubrange(static_cast<int>(maxEntries), static_cast<int>(size - maxEntries));
  report.add(what + ": " + std::to_string(size) + " entries, over the limit of " +
             std::to_string(maxEntries) + ": the first " + std::to_string(maxEntries) + " kept");
}

// Removes the entries `drop` selects; returns how many.
template <typename Repeated, typename Drop>
size_t removeIf(Repeated& list, Drop drop) {
  const auto end = std::remove_if(list.begin(), list.end(), drop);
  const size_t removed = static_cast<size_t>(list.end() - end);
  list.erase(end, list.end());
  return removed;
}

// NVML indices of one node: entries at or past kMaxGpusPerNode dropped, at most kMaxGpusPerNode.
void boundGpuIndices(google::protobuf::RepeatedField<uint32_t>& gpus, const std::string& what,
                     BoundsReport& report) {
  truncateList(gpus, kMaxGpusPerNode, what, report);
  const size_t removed = removeIf(gpus, [](uint32_t index) { return index >= kMaxGpusPerNode; });
  if (removed > 0) {
    report.add(std::to_string(removed) + " GPU indices of " + what + " are " +
               std::to_string(kMaxGpusPerNode) + " or more, past the per-node limit: dropped");
  }
}

// The problem with a list of hosts and their ranks (RunSpec.hosts, RunInfo.placement), or "".
std::string hostListProblem(const google::protobuf::RepeatedPtrField<v1::HostSlots>& hosts) {
  if (static_cast<size_t>(hosts.size()) > kMaxRunHosts) {
    return std::to_string(hosts.size()) + " hosts, over the limit of " +
           std::to_string(kMaxRunHosts);
  }
  uint64_t ranks = 0;
  for (const v1::HostSlots& host : hosts) {
    ranks += host.ranks();
    if (host.host().size() > kMaxHostNameBytes) {
      return "a host name of " + bytes(host.host().size()) + ", over the limit of " +
             std::to_string(kMaxHostNameBytes);
    }
    if (static_cast<size_t>(host.gpus_size()) > kMaxGpusPerNode ||
        std::any_of(host.gpus().begin(), host.gpus().end(),
                    [](uint32_t gpu) { return gpu >= kMaxGpusPerNode; })) {
      return "host " + host.host() + " with " + std::to_string(host.gpus_size()) +
             " GPUs or GPU indices past the per-node limit of " + std::to_string(kMaxGpusPerNode);
    }
    if (host.network_interface().size() > kMaxNodeTextBytes ||
        host.reservation_id().size() > kMaxReservationIdBytes) {
      return "host " + host.host() + " with a network interface or hold id over its limit";
    }
  }
  if (ranks > kMaxWorldSize) {
    return std::to_string(ranks) + " ranks in all, over the world-size limit of " +
           std::to_string(kMaxWorldSize);
  }
  return {};
}

void boundStall(v1::StallVerdict& stall, const std::string& run, BoundsReport& report) {
  clipField(*stall.mutable_summary(), kMaxStallSummaryBytes, "the stall summary of " + run, report);
  truncateList(*stall.mutable_stuck_ranks(), kMaxWorldSize, "the stuck ranks of " + run, report);
  truncateList(*stall.mutable_stuck_nodes(), kMaxRunHosts, "the stuck nodes of " + run, report);
  clipEach(*stall.mutable_stuck_nodes(), kMaxNodeTextBytes, "the stuck nodes of " + run, report);
  truncateList(*stall.mutable_ranks(), kMaxStallVerdictRanks, "the rank states of " + run, report);
  size_t clipped = 0;
  for (v1::RankStallState& rank : *stall.mutable_ranks()) {
    clipped += clipText(*rank.mutable_node(), kMaxNodeTextBytes) ? 1 : 0;
    clipped += clipText(*rank.mutable_waiting_in(), kMaxNodeTextBytes) ? 1 : 0;
    clipped += clipText(*rank.mutable_process_state(), kMaxNodeTextBytes) ? 1 : 0;
    clipped += clipText(*rank.mutable_detail(), kMaxRankDetailBytes) ? 1 : 0;
  }
  if (clipped > 0) {
    report.add(std::to_string(clipped) + " texts in the rank states of " + run +
               " over their limits: clipped");
  }
}

void boundGpuInfo(v1::GpuInfo& gpu, size_t& clipped) {
  for (std::string* text : {gpu.mutable_name(), gpu.mutable_uuid(), gpu.mutable_driver_version(),
                            gpu.mutable_cuda_version()}) {
    clipped += clipText(*text, kMaxNodeTextBytes) ? 1 : 0;
  }
}

void boundPreflight(v1::PreflightReply& reply, BoundsReport& report) {
  if (reply.hostname().size() > kMaxHostNameBytes) {
    report.add("the pre-flight's host name is " + bytes(reply.hostname().size()) +
               ", over the limit of " + std::to_string(kMaxHostNameBytes) + ": refused");
    reply.clear_hostname();
  }
  clipField(*reply.mutable_agent_version(), kMaxNodeTextBytes, "the pre-flight's agent version",
            report);
  clipField(*reply.mutable_slot_kind(), kMaxNodeTextBytes, "the pre-flight's slot kind", report);
  if (reply.free_slots() > kMaxSlotsPerNode) {
    report.add("the pre-flight's free slots are " + std::to_string(reply.free_slots()) +
               ", over the limit of " + std::to_string(kMaxSlotsPerNode));
    reply.set_free_slots(kMaxSlotsPerNode);
  }
  if (reply.free_cpu_slots() > kMaxSlotsPerNode) {
    report.add("the pre-flight's free CPU slots are " + std::to_string(reply.free_cpu_slots()) +
               ", over the limit of " + std::to_string(kMaxSlotsPerNode));
    reply.set_free_cpu_slots(kMaxSlotsPerNode);
  }
  boundGpuIndices(*reply.mutable_free_gpus(), "the pre-flight's free GPUs", report);
  boundGpuIndices(*reply.mutable_reserved_gpus(), "the pre-flight's held GPUs", report);
  truncateList(*reply.mutable_problems(), kMaxPreflightProblems, "the pre-flight's problem list",
               report);
  clipEach(*reply.mutable_problems(), kMaxErrorMessageBytes, "the pre-flight's problems", report);
  if (reply.reservation_id().size() > kMaxReservationIdBytes) {
    report.add("the pre-flight's hold id is " + bytes(reply.reservation_id().size()) +
               ", over the limit of " + std::to_string(kMaxReservationIdBytes) + ": refused");
    reply.clear_reservation_id();
  }
}

void boundMetricSamples(google::protobuf::RepeatedPtrField<v1::MetricSample>& samples,
                        const std::string& run, BoundsReport& report) {
  const size_t removed =
      removeIf(samples, [](const v1::MetricSample& sample) { return !isValidSample(sample); });
  if (removed > 0) {
    report.add(std::to_string(removed) + " metric samples of " + run +
               " with a name that is empty, over " + std::to_string(kMaxMetricNameBytes) +
               " bytes or has control characters, or a rank outside -1.." +
               std::to_string(kMaxWorldSize - 1) + ": dropped");
  }
}

void boundLogLines(google::protobuf::RepeatedPtrField<v1::LogLine>& lines, const std::string& run,
                   BoundsReport& report) {
  size_t clipped = 0;
  size_t largest = 0;
  for (v1::LogLine& line : lines) {
    const size_t size = line.text().size();
    if (clipText(*line.mutable_text(), kMaxLogLineBytes)) {
      ++clipped;
      largest = std::max(largest, size);
    }
    clipText(*line.mutable_stream(), kMaxLogStreamBytes);
  }
  if (clipped > 0) {
    report.add(std::to_string(clipped) + " log lines of " + run + " over " +
               std::to_string(kMaxLogLineBytes) + " bytes (the longest " + bytes(largest) +
               "): clipped");
  }
}

// States of a run: those that name no valid run are dropped, the others bounded.
void boundStates(google::protobuf::RepeatedPtrField<v1::RunStateEvent>& states,
                 const std::string& run, BoundsReport& report) {
  const size_t removed = removeIf(
      states, [](const v1::RunStateEvent& state) { return !isValidRunId(state.run().run_id()); });
  if (removed > 0) {
    report.add(std::to_string(removed) + " state events of " + run +
               " that name no valid run id: dropped");
  }
  for (v1::RunStateEvent& state : states) boundRunInfo(*state.mutable_run(), report);
}

// Replaces the body of a reply the GUI cannot use with an ErrorReply saying why.
void refuseReply(v1::Envelope& envelope, v1::ErrorReply::Code code, const std::string& why,
                 BoundsReport& report) {
  report.add(why);
  v1::ErrorReply* error = envelope.mutable_error();
  error->set_code(code);
  error->set_message("the GUI refused the agent's reply: " + why);
  clipText(*error->mutable_message(), kMaxErrorMessageBytes);
}

void boundFetchPage(v1::Envelope& envelope, BoundsReport& report) {
  v1::FetchRunDataReply& page = *envelope.mutable_fetch_run_data_reply();
  if (!isValidRunId(page.run_id())) {
    refuseReply(envelope, v1::ErrorReply::MALFORMED,
                "a catch-up page names no valid run id (1 to " + std::to_string(kMaxRunIdBytes) +
                    " bytes, no control characters)",
                report);
    return;
  }
  const std::string run = runLabel(page.run_id());
  const size_t entries = static_cast<size_t>(page.samples_size()) +
                         static_cast<size_t>(page.log_lines_size()) +
                         static_cast<size_t>(page.states_size());
  if (entries > kMaxFetchPageEntries) {
    refuseReply(envelope, v1::ErrorReply::TOO_LARGE,
                "a catch-up page of " + run + " holds " + std::to_string(entries) +
                    " entries, over the limit of " + std::to_string(kMaxFetchPageEntries),
                report);
    return;
  }
  boundMetricSamples(*page.mutable_samples(), run, report);
  boundLogLines(*page.mutable_log_lines(), run, report);
  boundStates(*page.mutable_states(), run, report);
  if (page.has_run()) {
    if (isValidRunId(page.run().run_id())) {
      boundRunInfo(*page.mutable_run(), report);
    } else {
      report.add("the run record of a catch-up page of " + run + " names no valid run id: dropped");
      page.clear_run();
    }
  }
}

// A page of the node's telemetry journal: refused as a whole past its entry bound (fetched
// again later), each reading bounded as a live one.
void boundTelemetryPage(v1::Envelope& envelope, BoundsReport& report) {
  v1::FetchTelemetryReply& page = *envelope.mutable_fetch_telemetry_reply();
  const size_t entries = static_cast<size_t>(page.entries_size());
  if (entries > kMaxTelemetryPageEntries) {
    refuseReply(envelope, v1::ErrorReply::TOO_LARGE,
                "a telemetry page holds " + std::to_string(entries) +
                    " readings, over the limit of " + std::to_string(kMaxTelemetryPageEntries),
                report);
    return;
  }
  clipField(*page.mutable_node_id(), kMaxNodeTextBytes, "the telemetry page's node id", report);
  for (v1::NodeTelemetry& reading : *page.mutable_entries()) boundTelemetry(reading, report);
}

void boundRunList(v1::ListRunsReply& list, BoundsReport& report) {
  const size_t removed = removeIf(
      *list.mutable_runs(), [](const v1::RunInfo& run) { return !isValidRunId(run.run_id()); });
  if (removed > 0) {
    report.add(std::to_string(removed) + " runs of the run list name no valid run id (1 to " +
               std::to_string(kMaxRunIdBytes) + " bytes, no control characters): dropped");
  }
  for (v1::RunInfo& run : *list.mutable_runs()) boundRunInfo(run, report);
  if (list.next_page_token().size() > kMaxPageTokenBytes) {
    report.add("the run list's page token is " + bytes(list.next_page_token().size()) +
               ", over the limit of " + std::to_string(kMaxPageTokenBytes) +
               ": refused, so the list ends here");
    list.clear_next_page_token();
  }
}

// A reply that carries one run (launch, stop): it must name a valid run.
void boundRunReply(v1::Envelope& envelope, v1::RunInfo& run, BoundsReport& report) {
  if (!isValidRunId(run.run_id())) {
    refuseReply(envelope, v1::ErrorReply::MALFORMED,
                "the reply names no valid run id (1 to " + std::to_string(kMaxRunIdBytes) +
                    " bytes, no control characters)",
                report);
    return;
  }
  boundRunInfo(run, report);
}

void boundReply(v1::Envelope& envelope, BoundsReport& report) {
  switch (envelope.body_case()) {
    case v1::Envelope::kError:
      clipField(*envelope.mutable_error()->mutable_message(), kMaxErrorMessageBytes,
                "an error message", report);
      return;
    case v1::Envelope::kHelloReply:
      boundNodeInfo(*envelope.mutable_hello_reply()->mutable_node(), report);
      return;
    case v1::Envelope::kSetDrainReply:
      boundNodeInfo(*envelope.mutable_set_drain_reply()->mutable_node(), report);
      return;
    case v1::Envelope::kListRunsReply:
      boundRunList(*envelope.mutable_list_runs_reply(), report);
      return;
    case v1::Envelope::kLaunchRunReply:
      boundRunReply(envelope, *envelope.mutable_launch_run_reply()->mutable_run(), report);
      return;
    case v1::Envelope::kStopRunReply:
      boundRunReply(envelope, *envelope.mutable_stop_run_reply()->mutable_run(), report);
      return;
    case v1::Envelope::kReorderQueuedRunReply:
      boundRunReply(envelope, *envelope.mutable_reorder_queued_run_reply()->mutable_run(),
                    report);
      return;
    case v1::Envelope::kLaunchSweepReply:
      boundSweep(*envelope.mutable_launch_sweep_reply()->mutable_sweep(), report);
      return;
    case v1::Envelope::kControlSweepReply:
      boundSweep(*envelope.mutable_control_sweep_reply()->mutable_sweep(), report);
      return;
    case v1::Envelope::kListSweepsReply: {
      auto& sweeps = *envelope.mutable_list_sweeps_reply()->mutable_sweeps();
      if (sweeps.size() > 1000) {
        report.add("the sweep list holds " + std::to_string(sweeps.size()) +
                   " sweeps, over the limit of 1000: the newest kept");
        sweeps.DeleteSubrange(0, sweeps.size() - 1000);
      }
      for (v1::SweepInfo& sweep : sweeps) boundSweep(sweep, report);
      return;
    }
    case v1::Envelope::kPreflightReply:
      boundPreflight(*envelope.mutable_preflight_reply(), report);
      return;
    case v1::Envelope::kFetchRunDataReply:
      boundFetchPage(envelope, report);
      return;
    case v1::Envelope::kFetchTelemetryReply:
      boundTelemetryPage(envelope, report);
      return;
    case v1::Envelope::kTailLogReply: {
      v1::TailLogReply& tail = *envelope.mutable_tail_log_reply();
      if (!isValidRunId(tail.run_id())) {
        refuseReply(envelope, v1::ErrorReply::MALFORMED, "a log tail names no valid run id",
                    report);
        return;
      }
      const size_t size = static_cast<size_t>(tail.lines_size());
      if (size > kMaxTailLogLines) {  // a tail: keep the last lines
        tail.mutable_lines()->DeleteSubrange(0, static_cast<int>(size - kMaxTailLogLines));
        report.add("a log tail of " + std::to_string(size) + " lines, over the limit of " +
                   std::to_string(kMaxTailLogLines) + ": the last " +
                   std::to_string(kMaxTailLogLines) + " kept");
      }
      boundLogLines(*tail.mutable_lines(), runLabel(tail.run_id()), report);
      return;
    }
    default:
      refuseReply(envelope, v1::ErrorReply::UNKNOWN_MESSAGE,
                  std::string("the agent answered with a ") +
                      (protocol::bodyName(envelope) ? protocol::bodyName(envelope) : "message") +
                      ", which is no reply the GUI reads",
                  report);
      return;
  }
}

void boundEvent(v1::Envelope& envelope, BoundsReport& report) {
  switch (envelope.body_case()) {
    case v1::Envelope::kNodeTelemetry:
      boundTelemetry(*envelope.mutable_node_telemetry(), report);
      return;
    case v1::Envelope::kSweepEvent:
      boundSweep(*envelope.mutable_sweep_event()->mutable_sweep(), report);
      return;
    case v1::Envelope::kRunState: {
      v1::RunInfo& run = *envelope.mutable_run_state()->mutable_run();
      if (!isValidRunId(run.run_id())) {
        report.add("a run state event names no valid run id: ignored");
        envelope.clear_body();
        return;
      }
      boundRunInfo(run, report);
      return;
    }
    case v1::Envelope::kMetricBatch: {
      v1::MetricBatch& batch = *envelope.mutable_metric_batch();
      if (!isValidRunId(batch.run_id())) {
        report.add("a metric batch of " + std::to_string(batch.samples_size()) +
                   " samples names no valid run id: ignored");
        envelope.clear_body();
        return;
      }
      boundMetricSamples(*batch.mutable_samples(), runLabel(batch.run_id()), report);
      return;
    }
    case v1::Envelope::kLogBatch: {
      v1::LogBatch& batch = *envelope.mutable_log_batch();
      if (!isValidRunId(batch.run_id())) {
        report.add("a log batch of " + std::to_string(batch.lines_size()) +
                   " lines names no valid run id: ignored");
        envelope.clear_body();
        return;
      }
      boundLogLines(*batch.mutable_lines(), runLabel(batch.run_id()), report);
      return;
    }
    default:
      envelope.clear_body();  // not an event the GUI reads
      return;
  }
}

}  // namespace

void BoundsReport::add(std::string finding) {
  ++count_;
  if (findings_.size() < kMaxKept) findings_.push_back(std::move(finding));
}

std::string BoundsReport::summary() const {
  std::string text;
  for (const std::string& finding : findings_) {
    if (!text.empty()) text += "; ";
    text += finding;
  }
  if (count_ > findings_.size())
    text += " (and " + std::to_string(count_ - findings_.size()) + " more)";
  return text;
}

bool clipText(std::string& text, size_t maxBytes) {
  if (text.size() <= maxBytes) return false;
  const size_t room = maxBytes > kEllipsis.size() ? maxBytes - kEllipsis.size() : 0;
  text.resize(utf8PrefixLength(text, room));
  text.append(kEllipsis);
  return true;
}

bool isValidRunId(std::string_view runId) {
  return !runId.empty() && runId.size() <= kMaxRunIdBytes && !hasControlCharacter(runId);
}

bool isValidSample(const v1::MetricSample& sample) {
  const std::string& name = sample.name();
  return !name.empty() && name.size() <= kMaxMetricNameBytes && !hasControlCharacter(name) &&
         sample.rank() >= -1 && sample.rank() < static_cast<int64_t>(kMaxWorldSize);
}

void boundNodeInfo(v1::NodeInfo& node, BoundsReport& report) {
  clipField(*node.mutable_node_id(), kMaxNodeTextBytes, "the node id", report);
  clipField(*node.mutable_os(), kMaxNodeTextBytes, "the node's OS name", report);
  clipField(*node.mutable_cpu_model(), kMaxNodeTextBytes, "the node's CPU model", report);
  clipField(*node.mutable_agent_version(), kMaxNodeTextBytes, "the agent version", report);
  clipField(*node.mutable_slot_kind(), kMaxNodeTextBytes, "the node's slot kind", report);
  if (node.hostname().size() > kMaxHostNameBytes) {
    report.add("the node's host name is " + bytes(node.hostname().size()) + ", over the limit of " +
               std::to_string(kMaxHostNameBytes) + ": refused");
    node.clear_hostname();
  }
  for (auto [value, set, name] :
       {std::tuple{node.cpu_cores(), &v1::NodeInfo::set_cpu_cores, "cpu_cores"},
        std::tuple{node.slots_total(), &v1::NodeInfo::set_slots_total, "slots_total"},
        std::tuple{node.slots_used(), &v1::NodeInfo::set_slots_used, "slots_used"},
        std::tuple{node.cpu_slots_total(), &v1::NodeInfo::set_cpu_slots_total, "cpu_slots_total"},
        std::tuple{node.cpu_slots_used(), &v1::NodeInfo::set_cpu_slots_used, "cpu_slots_used"},
        std::tuple{node.gpu_slots_total(), &v1::NodeInfo::set_gpu_slots_total, "gpu_slots_total"},
        std::tuple{node.gpu_slots_used(), &v1::NodeInfo::set_gpu_slots_used, "gpu_slots_used"}}) {
    if (value <= kMaxSlotsPerNode) continue;
    (node.*set)(kMaxSlotsPerNode);
    report.add(std::string("the node's ") + name + " is " + std::to_string(value) +
               ", over the limit of " + std::to_string(kMaxSlotsPerNode) + ": taken as " +
               std::to_string(kMaxSlotsPerNode));
  }
  truncateList(*node.mutable_labels(), kMaxNodeLabels, "the node's label list", report);
  clipEach(*node.mutable_labels(), kMaxNodeTextBytes, "the node's labels", report);
  truncateList(*node.mutable_gpus(), kMaxGpusPerNode, "the node's GPU list", report);
  const size_t removed = removeIf(
      *node.mutable_gpus(), [](const v1::GpuInfo& gpu) { return gpu.index() >= kMaxGpusPerNode; });
  if (removed > 0) {
    report.add(std::to_string(removed) + " GPUs of the node have an index of " +
               std::to_string(kMaxGpusPerNode) + " or more, past the per-node limit: dropped");
  }
  clipField(*node.mutable_engine(), kMaxNodeTextBytes, "the node's engine", report);
  truncateList(*node.mutable_slurm_partitions(), kMaxSlurmPartitions,
               "the node's Slurm partition list", report);
  for (v1::SlurmPartition& partition : *node.mutable_slurm_partitions()) {
    for (std::string* text : {partition.mutable_name(), partition.mutable_availability(),
                              partition.mutable_time_limit()}) {
      clipField(*text, kMaxNodeTextBytes, "a Slurm partition's text", report);
    }
    truncateList(*partition.mutable_nodes(), kMaxSlurmPartitionNodes,
                 "the node list of Slurm partition " + partition.name(), report);
    for (v1::SlurmNode& slurmNode : *partition.mutable_nodes()) {
      for (std::string* text :
           {slurmNode.mutable_name(), slurmNode.mutable_state(), slurmNode.mutable_gres()}) {
        clipField(*text, kMaxNodeTextBytes, "a Slurm node's text", report);
      }
    }
  }
  size_t clipped = 0;
  for (v1::GpuInfo& gpu : *node.mutable_gpus()) boundGpuInfo(gpu, clipped);
  if (clipped > 0) {
    report.add(std::to_string(clipped) + " texts of the node's GPUs over " +
               std::to_string(kMaxNodeTextBytes) + " bytes: clipped");
  }
}

void boundTelemetry(v1::NodeTelemetry& telemetry, BoundsReport& report) {
  clipField(*telemetry.mutable_node_id(), kMaxNodeTextBytes, "the telemetry's node id", report);
  truncateList(*telemetry.mutable_gpus(), kMaxGpusPerNode, "the telemetry's GPU list", report);
  const size_t removed = removeIf(*telemetry.mutable_gpus(), [](const v1::GpuTelemetry& gpu) {
    return gpu.index() >= kMaxGpusPerNode;
  });
  if (removed > 0) {
    report.add(std::to_string(removed) + " GPU readings of the telemetry have an index of " +
               std::to_string(kMaxGpusPerNode) + " or more, past the per-node limit: dropped");
  }
  boundGpuIndices(*telemetry.mutable_gpus_in_use(), "the telemetry's GPUs in use", report);
  for (auto [value, set, name] :
       {std::tuple{telemetry.slots_used(), &v1::NodeTelemetry::set_slots_used, "slots_used"},
        std::tuple{telemetry.cpu_slots_used(), &v1::NodeTelemetry::set_cpu_slots_used,
                   "cpu_slots_used"},
        std::tuple{telemetry.gpu_slots_used(), &v1::NodeTelemetry::set_gpu_slots_used,
                   "gpu_slots_used"}}) {
    if (value <= kMaxSlotsPerNode) continue;
    (telemetry.*set)(kMaxSlotsPerNode);
    report.add(std::string("the telemetry's ") + name + " is " + std::to_string(value) +
               ", over the limit of " + std::to_string(kMaxSlotsPerNode) + ": taken as " +
               std::to_string(kMaxSlotsPerNode));
  }
}

void boundRunSpec(v1::RunSpec& spec, const std::string& runId, BoundsReport& report) {
  const std::string run = runLabel(runId);
  clipField(*spec.mutable_name(), kMaxRunNameBytes, "the name of " + run, report);
  truncateList(*spec.mutable_tags(), kMaxRunTags, "the tag list of " + run, report);
  clipEach(*spec.mutable_tags(), kMaxRunTagBytes, "the tags of " + run, report);
  std::string problem = hostListProblem(spec.hosts());
  if (!problem.empty()) problem = "its host list has " + problem;
  if (problem.empty() && spec.ranks_per_node() > kMaxWorldSize) {
    problem = "its ranks per node are " + std::to_string(spec.ranks_per_node()) +
              ", over the world-size limit of " + std::to_string(kMaxWorldSize);
  }
  if (problem.empty()) {
    const Status limits = validateRunSpecLimits(spec);
    if (!limits.isOk()) problem = limits.message();
  }
  if (problem.empty()) return;
  report.add("the run spec of " + run + " was refused (" + problem +
             "); only its name and tags were kept");
  v1::RunSpec kept;
  kept.set_name(spec.name());
  *kept.mutable_tags() = spec.tags();
  spec.Swap(&kept);
}

void boundRunInfo(v1::RunInfo& run, BoundsReport& report) {
  const std::string label = runLabel(run.run_id());
  clipField(*run.mutable_reason(), kMaxRunReasonBytes, "the reason of " + label, report);
  clipField(*run.mutable_waiting_reason(), kMaxRunReasonBytes, "the waiting reason of " + label,
            report);
  if (run.has_spec()) boundRunSpec(*run.mutable_spec(), run.run_id(), report);
  if (run.world_size() > kMaxWorldSize) {
    report.add("the world size of " + label + " is " + std::to_string(run.world_size()) +
               ", over the limit of " + std::to_string(kMaxWorldSize) + ": taken as unknown");
    run.set_world_size(0);
  }
  if (const std::string problem = hostListProblem(run.placement()); !problem.empty()) {
    report.add("the placement of " + label + " was refused: it has " + problem);
    run.clear_placement();
  }
  if (run.run_dir().size() > kMaxPathBytes) {
    report.add("the run directory of " + label + " is " + bytes(run.run_dir().size()) +
               ", over the limit of " + std::to_string(kMaxPathBytes) + ": refused");
    run.clear_run_dir();
  }
  if (run.has_stall()) boundStall(*run.mutable_stall(), label, report);
  if (run.has_slurm_job()) {
    v1::SlurmJob& job = *run.mutable_slurm_job();
    for (std::string* text : {job.mutable_job_id(), job.mutable_state(), job.mutable_reason(),
                              job.mutable_partition()}) {
      clipField(*text, kMaxNodeTextBytes, "the Slurm job of " + label, report);
    }
    truncateList(*job.mutable_nodes(), kMaxWorldSize, "the Slurm nodes of " + label, report);
    const size_t removed = removeIf(*job.mutable_nodes(), [](const std::string& host) {
      return host.size() > kMaxHostNameBytes;
    });
    if (removed > 0) {
      report.add(std::to_string(removed) + " Slurm node names of " + label +
                 " over the host-name limit: dropped");
    }
  }
  if (const Status params = validateRunParams(run.params()); !params.isOk()) {
    report.add("the parameters of " + label + " were refused: " + params.message());
    run.clear_params();
  }
}

void boundSweep(v1::SweepInfo& sweep, BoundsReport& report) {
  clipField(*sweep.mutable_sweep_id(), kMaxRunIdBytes, "a sweep id", report);
  const std::string label = "sweep " + sweep.sweep_id();
  clipField(*sweep.mutable_reason(), kMaxRunReasonBytes, "the reason of " + label, report);
  v1::SweepSpec& spec = *sweep.mutable_spec();
  clipField(*spec.mutable_name(), kMaxRunNameBytes, "the name of " + label, report);
  clipField(*spec.mutable_metric(), kMaxRunNameBytes, "the metric of " + label, report);
  if (spec.has_base()) boundRunSpec(*spec.mutable_base(), sweep.sweep_id(), report);
  if (spec.parameters_size() > 64) {
    report.add("the parameters of " + label + " were refused: " +
               std::to_string(spec.parameters_size()) + ", over the limit of 64");
    spec.clear_parameters();
  }
  for (v1::SweepParameter& parameter : *spec.mutable_parameters()) {
    clipField(*parameter.mutable_name(), kMaxRunNameBytes, "a parameter name of " + label, report);
    if (parameter.has_values() && parameter.values().values_size() > 1000) {
      report.add("the values of a parameter of " + label + " were refused: over 1000");
      parameter.clear_values();
    }
  }
  if (sweep.trials_size() > kMaxSweepTrialsShown) {
    report.add(label + " has " + std::to_string(sweep.trials_size()) + " trials, over the limit of " +
               std::to_string(kMaxSweepTrialsShown) + ": the first ones kept");
    sweep.mutable_trials()->DeleteSubrange(kMaxSweepTrialsShown,
                                           sweep.trials_size() - kMaxSweepTrialsShown);
  }
  for (v1::SweepTrial& trial : *sweep.mutable_trials()) {
    clipField(*trial.mutable_reason(), kMaxRunReasonBytes, "a trial's reason in " + label, report);
    if (!isValidRunId(trial.run_id()) && !trial.run_id().empty()) trial.clear_run_id();
    if (trial.earlier_run_ids_size() > 1000) trial.clear_earlier_run_ids();
    if (trial.rungs_size() > 64) trial.clear_rungs();
    if (const Status params = validateRunParams(trial.params()); !params.isOk()) {
      report.add("the values of a trial in " + label + " were refused: " + params.message());
      trial.clear_params();
    }
  }
  if (sweep.best_trial() >= sweep.trials_size()) sweep.set_best_trial(-1);
}

void boundLogLine(v1::LogLine& line, BoundsReport& report) {
  const size_t size = line.text().size();
  if (clipText(*line.mutable_text(), kMaxLogLineBytes)) {
    report.add("a log line of " + bytes(size) + ", over the limit of " +
               std::to_string(kMaxLogLineBytes) + ": clipped");
  }
  clipText(*line.mutable_stream(), kMaxLogStreamBytes);
}

void boundAgentMessage(v1::Envelope& envelope, AgentChannel channel, BoundsReport& report) {
  if (channel == AgentChannel::kReply) {
    boundReply(envelope, report);
  } else {
    boundEvent(envelope, report);
  }
  // After the bounds, which drop oversized lists: this walk goes through every submessage by
  // reflection (a second for a million placement entries).
  envelope.DiscardUnknownFields();
}

}  // namespace ringside::gui
