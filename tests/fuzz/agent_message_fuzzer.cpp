// libFuzzer target for what the GUI takes from an agent: any frame, decoded as the GUI's
// connection decodes it (protocol::decodeEnvelope) and bounded as a reply and as an event
// (gui/core/agent_bounds.h, boundAgentMessage), must come out within the protocol's limits
// (docs/protocol.md#limits) without a crash, a leak or undefined behaviour: a second bounding
// finds nothing more to do, the text, list and count fields the GUI shows or sizes work by are
// within their bounds, and the body is one the GUI reads (a reply, an ErrorReply or an event).
#include <google/protobuf/stubs/logging.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "ringside/common/protocol.h"
#include "ringside/common/protocol_limits.h"
#include "ringside/common/run_limits.h"
#include "ringside/common/run_spec_limits.h"
#include "ringside/gui/agent_bounds.h"

namespace {

using namespace ringside;
using namespace ringside::gui;

void check(bool condition) {
  if (!condition) std::abort();
}

void checkGpuIndices(const google::protobuf::RepeatedField<uint32_t>& gpus) {
  check(static_cast<size_t>(gpus.size()) <= kMaxGpusPerNode);
  for (uint32_t gpu : gpus) check(gpu < kMaxGpusPerNode);
}

void checkHosts(const google::protobuf::RepeatedPtrField<v1::HostSlots>& hosts) {
  check(static_cast<size_t>(hosts.size()) <= kMaxRunHosts);
  uint64_t ranks = 0;
  for (const v1::HostSlots& host : hosts) {
    ranks += host.ranks();
    check(host.host().size() <= kMaxHostNameBytes);
    checkGpuIndices(host.gpus());
  }
  check(ranks <= kMaxWorldSize);
}

void checkRun(const v1::RunInfo& run) {
  check(isValidRunId(run.run_id()));
  check(run.reason().size() <= kMaxRunReasonBytes);
  check(run.spec().name().size() <= kMaxRunNameBytes);
  check(static_cast<size_t>(run.spec().tags_size()) <= kMaxRunTags);
  check(validateRunSpecLimits(run.spec()).isOk());
  checkHosts(run.spec().hosts());
  check(run.world_size() <= kMaxWorldSize);
  checkHosts(run.placement());
  check(run.stall().summary().size() <= kMaxStallSummaryBytes);
  check(static_cast<size_t>(run.stall().ranks_size()) <= kMaxStallVerdictRanks);
  check(validateRunParams(run.params()).isOk());
  check(run.slurm_job().job_id().size() <= kMaxNodeTextBytes &&
        run.slurm_job().state().size() <= kMaxNodeTextBytes &&
        run.slurm_job().reason().size() <= kMaxNodeTextBytes &&
        run.slurm_job().partition().size() <= kMaxNodeTextBytes);
  check(static_cast<size_t>(run.slurm_job().nodes_size()) <= kMaxWorldSize);
  for (const std::string& host : run.slurm_job().nodes()) check(host.size() <= kMaxHostNameBytes);
}

void checkSweep(const v1::SweepInfo& sweep) {
  check(sweep.sweep_id().size() <= kMaxRunIdBytes);
  check(sweep.reason().size() <= kMaxRunReasonBytes);
  check(sweep.spec().name().size() <= kMaxRunNameBytes);
  check(sweep.spec().metric().size() <= kMaxRunNameBytes);
  if (sweep.spec().has_base()) check(validateRunSpecLimits(sweep.spec().base()).isOk());
  check(sweep.spec().parameters_size() <= 64);
  for (const v1::SweepParameter& parameter : sweep.spec().parameters()) {
    check(parameter.name().size() <= kMaxRunNameBytes);
    check(parameter.values().values_size() <= 1000);
  }
  check(sweep.trials_size() <= gui::kMaxSweepTrialsShown);
  for (const v1::SweepTrial& trial : sweep.trials()) {
    check(trial.reason().size() <= kMaxRunReasonBytes);
    check(trial.run_id().empty() || isValidRunId(trial.run_id()));
    check(trial.earlier_run_ids_size() <= 1000 && trial.rungs_size() <= 64);
    check(validateRunParams(trial.params()).isOk());
  }
  check(sweep.best_trial() < sweep.trials_size());
}

void checkNode(const v1::NodeInfo& node) {
  check(node.engine().size() <= kMaxNodeTextBytes);
  check(static_cast<size_t>(node.slurm_partitions_size()) <= kMaxSlurmPartitions);
  for (const v1::SlurmPartition& partition : node.slurm_partitions()) {
    check(partition.name().size() <= kMaxNodeTextBytes &&
          partition.availability().size() <= kMaxNodeTextBytes &&
          partition.time_limit().size() <= kMaxNodeTextBytes);
    check(static_cast<size_t>(partition.nodes_size()) <= kMaxSlurmPartitionNodes);
    for (const v1::SlurmNode& slurmNode : partition.nodes()) {
      check(slurmNode.name().size() <= kMaxNodeTextBytes &&
            slurmNode.state().size() <= kMaxNodeTextBytes &&
            slurmNode.gres().size() <= kMaxNodeTextBytes);
    }
  }
  check(node.hostname().size() <= kMaxHostNameBytes);
  check(node.cpu_model().size() <= kMaxNodeTextBytes && node.os().size() <= kMaxNodeTextBytes);
  check(static_cast<size_t>(node.gpus_size()) <= kMaxGpusPerNode);
  for (const v1::GpuInfo& gpu : node.gpus()) {
    check(gpu.index() < kMaxGpusPerNode && gpu.name().size() <= kMaxNodeTextBytes);
  }
  check(static_cast<size_t>(node.labels_size()) <= kMaxNodeLabels);
  check(node.cpu_slots_total() <= kMaxSlotsPerNode && node.gpu_slots_total() <= kMaxSlotsPerNode);
}

void checkSamples(const google::protobuf::RepeatedPtrField<v1::MetricSample>& samples) {
  for (const v1::MetricSample& sample : samples) check(isValidSample(sample));
}

void checkLines(const google::protobuf::RepeatedPtrField<v1::LogLine>& lines) {
  for (const v1::LogLine& line : lines) {
    check(line.text().size() <= kMaxLogLineBytes && line.stream().size() <= kMaxLogStreamBytes);
  }
}

void checkTelemetry(const v1::NodeTelemetry& telemetry) {
  check(telemetry.node_id().size() <= kMaxNodeTextBytes);
  check(static_cast<size_t>(telemetry.gpus_size()) <= kMaxGpusPerNode);
  for (const v1::GpuTelemetry& gpu : telemetry.gpus()) check(gpu.index() < kMaxGpusPerNode);
  checkGpuIndices(telemetry.gpus_in_use());
}

void checkBounded(const v1::Envelope& envelope, AgentChannel channel) {
  switch (envelope.body_case()) {
    case v1::Envelope::kError:
      check(channel == AgentChannel::kReply);
      check(envelope.error().message().size() <= kMaxErrorMessageBytes);
      return;
    case v1::Envelope::kHelloReply:
      checkNode(envelope.hello_reply().node());
      return;
    case v1::Envelope::kSetDrainReply:
      checkNode(envelope.set_drain_reply().node());
      return;
    case v1::Envelope::kListRunsReply:
      for (const v1::RunInfo& run : envelope.list_runs_reply().runs()) checkRun(run);
      check(envelope.list_runs_reply().next_page_token().size() <= kMaxPageTokenBytes);
      return;
    case v1::Envelope::kLaunchRunReply:
      checkRun(envelope.launch_run_reply().run());
      return;
    case v1::Envelope::kStopRunReply:
      checkRun(envelope.stop_run_reply().run());
      return;
    case v1::Envelope::kPreflightReply: {
      const v1::PreflightReply& reply = envelope.preflight_reply();
      check(reply.hostname().size() <= kMaxHostNameBytes);
      checkGpuIndices(reply.free_gpus());
      checkGpuIndices(reply.reserved_gpus());
      check(static_cast<size_t>(reply.problems_size()) <= kMaxPreflightProblems);
      for (const std::string& problem : reply.problems()) {
        check(problem.size() <= kMaxErrorMessageBytes);
      }
      return;
    }
    case v1::Envelope::kFetchRunDataReply: {
      const v1::FetchRunDataReply& page = envelope.fetch_run_data_reply();
      check(isValidRunId(page.run_id()));
      check(static_cast<size_t>(page.samples_size() + page.log_lines_size() + page.states_size()) <=
            kMaxFetchPageEntries);
      checkSamples(page.samples());
      checkLines(page.log_lines());
      for (const v1::RunStateEvent& state : page.states()) checkRun(state.run());
      if (page.has_run()) checkRun(page.run());
      return;
    }
    case v1::Envelope::kTailLogReply:
      check(static_cast<size_t>(envelope.tail_log_reply().lines_size()) <= kMaxTailLogLines);
      checkLines(envelope.tail_log_reply().lines());
      return;
    case v1::Envelope::kFetchTelemetryReply: {
      check(channel == AgentChannel::kReply);
      const v1::FetchTelemetryReply& page = envelope.fetch_telemetry_reply();
      check(static_cast<size_t>(page.entries_size()) <= kMaxTelemetryPageEntries);
      check(page.node_id().size() <= kMaxNodeTextBytes);
      for (const v1::NodeTelemetry& telemetry : page.entries()) checkTelemetry(telemetry);
      return;
    }
    case v1::Envelope::kNodeTelemetry:
      check(channel == AgentChannel::kEvent);
      checkTelemetry(envelope.node_telemetry());
      return;
    case v1::Envelope::kRunState:
      check(channel == AgentChannel::kEvent);
      checkRun(envelope.run_state().run());
      return;
    case v1::Envelope::kMetricBatch:
      check(channel == AgentChannel::kEvent && isValidRunId(envelope.metric_batch().run_id()));
      checkSamples(envelope.metric_batch().samples());
      return;
    case v1::Envelope::kLogBatch:
      check(channel == AgentChannel::kEvent && isValidRunId(envelope.log_batch().run_id()));
      checkLines(envelope.log_batch().lines());
      return;
    case v1::Envelope::kLaunchSweepReply:
      checkSweep(envelope.launch_sweep_reply().sweep());
      return;
    case v1::Envelope::kControlSweepReply:
      checkSweep(envelope.control_sweep_reply().sweep());
      return;
    case v1::Envelope::kListSweepsReply:
      check(envelope.list_sweeps_reply().sweeps_size() <= 1000);
      for (const v1::SweepInfo& sweep : envelope.list_sweeps_reply().sweeps()) checkSweep(sweep);
      return;
    case v1::Envelope::kSweepEvent:
      checkSweep(envelope.sweep_event().sweep());
      return;
    case v1::Envelope::BODY_NOT_SET:
      check(channel == AgentChannel::kEvent);  // an ignored event
      return;
    default:
      std::abort();  // a body the GUI does not read got through
  }
}

void boundAndCheck(v1::Envelope envelope, AgentChannel channel) {
  BoundsReport report;
  boundAgentMessage(envelope, channel, report);
  check(report.findings().size() <= BoundsReport::kMaxKept);
  check(report.empty() || !report.summary().empty());
  checkBounded(envelope, channel);
  BoundsReport again;
  boundAgentMessage(envelope, channel, again);
  check(again.empty());  // nothing left over a bound
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  // protobuf logs every string field with invalid UTF-8; that noise slows the fuzzer down.
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  protocol::DecodeResult decoded = protocol::decodeEnvelope(data, size);
  if (!decoded.isOk()) return 0;  // refused before bounding (protocol_fuzzer covers this)
  boundAndCheck(decoded.value(), AgentChannel::kReply);
  boundAndCheck(std::move(decoded).value(), AgentChannel::kEvent);
  return 0;
}
