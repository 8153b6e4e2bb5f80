// Bounds on what an agent reports to a client (replies and events of common/proto/ringside.proto)
// beyond the run spec's own (run_spec_limits.h) and the frame size (protocol.h): text a client
// shows, lists whose length a client's work follows, and counts a client sizes views by. An
// agent keeps to them; a client enforces them where the message arrives (the GUI's
// gui/core/agent_bounds.h): over a bound, text is clipped with an ellipsis, an entry or a list is
// refused, and the client says so naming the node. docs/protocol.md#limits lists them.
//
// Thread-safety: constants only.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ringside {

// A run id (RunInfo.run_id and every message that names a run): 1 to 128 bytes without control
// characters. The agent's ids ("r20250101-120000-a1b2") are 21 bytes.
inline constexpr size_t kMaxRunIdBytes = 128;

// RunInfo.reason: 4 KiB, a paragraph, as StallVerdict.summary (kMaxStallSummaryBytes in
// run_limits.h, which also bounds the verdict's rank states), since a run ended by its hang
// timeout has the summary as its reason. Longer text is clipped to it with an ellipsis ("…").
inline constexpr size_t kMaxRunReasonBytes = 4096;

// ErrorReply.message and each PreflightReply.problems sentence: 4 KiB, clipped like a reason.
inline constexpr size_t kMaxErrorMessageBytes = 4096;
// PreflightReply.problems: at most 64 sentences.
inline constexpr size_t kMaxPreflightProblems = 64;

// A short text about a node or one of its parts: NodeInfo's node_id, os, cpu_model,
// agent_version, slot_kind and each label; GpuInfo's name, uuid and driver and CUDA versions;
// NodeTelemetry.node_id; PreflightReply.agent_version; a StallVerdict's node names and each
// RankStallState's node, waiting_in and process_state: 256 bytes, clipped with an ellipsis.
inline constexpr size_t kMaxNodeTextBytes = 256;
// A host name (NodeInfo.hostname, PreflightReply.hostname, HostSlots.host): 253 bytes (RFC 1123
// as DNS limits it). A longer one is refused, not clipped: a cut host name names another host.
inline constexpr size_t kMaxHostNameBytes = 253;
// NodeInfo.labels: at most 64.
inline constexpr size_t kMaxNodeLabels = 64;
// RankStallState.detail, one sentence about a rank: 1 KiB, clipped with an ellipsis.
inline constexpr size_t kMaxRankDetailBytes = 1024;

// GPUs of one node: NodeInfo.gpus, NodeTelemetry.gpus and gpus_in_use, HostSlots.gpus,
// PreflightReply.free_gpus and reserved_gpus hold at most 64 entries, each an NVML index below 64.
// NVML numbers a node's GPUs 0..count-1; the largest nodes sold have 16.
inline constexpr size_t kMaxGpusPerNode = 64;

// Slots and cores of one node (NodeInfo.cpu_cores and the *_slots_* counts, NodeTelemetry's
// slots_used counts, PreflightReply's free slots): at most 65,536 each.
inline constexpr uint32_t kMaxSlotsPerNode = 65536;

// Ranks of one run (RunInfo.world_size, the sum of RunInfo.placement's and RunSpec.hosts' ranks,
// RunSpec.ranks_per_node, a StallVerdict's ranks): 65,536. The agent refuses larger runs at
// launch (agent/launch_command.h has the same bound); a metric sample's rank is -1 (a global
// value) or 0..kMaxWorldSize-1.
inline constexpr uint32_t kMaxWorldSize = 65536;

// A metric name (MetricSample.name): 1 to 256 bytes without control characters, as the agent's
// parser of metrics records (agent/log_tailer.h) takes them.
inline constexpr size_t kMaxMetricNameBytes = 256;
// Distinct metric names of one run: 10,000 (a run with per-bucket metrics of 64 buckets on 512
// ranks has a few hundred). The agent refuses samples under further names, counted and reported.
inline constexpr size_t kMaxMetricNamesPerRun = 10000;

// LogLine.text: 64 KiB, as the agent journals lines (agent/log_tailer.h cuts longer ones and
// marks them); LogLine.stream: "stdout" or "stderr", 16 bytes at most.
inline constexpr size_t kMaxLogLineBytes = 64 * 1024;
inline constexpr size_t kMaxLogStreamBytes = 16;

// Entries of one FetchRunDataReply (samples, log lines and states together): 50,000, the most a
// FetchRunDataRequest.max_entries may ask for. A larger page is refused as a whole (it is fetched
// again later), since cutting it would skip the entries after the cut.
inline constexpr size_t kMaxFetchPageEntries = 50000;
// Readings of one FetchTelemetryReply: 10,000, the most a FetchTelemetryRequest.max_entries may
// ask for (an agent asked for more gives this many); 1,000 when it asks for 0. A larger page is
// refused as a whole, like a catch-up page. The page also ends before kMaxReplyPageBytes.
inline constexpr size_t kMaxTelemetryPageEntries = 10000;
inline constexpr size_t kDefaultTelemetryPageEntries = 1000;
// Lines of one TailLogReply: 10,000 per stream, so 20,000.
inline constexpr size_t kMaxTailLogLines = 20000;

// ListRunsReply.next_page_token and PreflightReply.reservation_id: 1 KiB and 128 bytes; a longer
// one is refused (the token is dropped, which ends the listing; the hold is not used).
inline constexpr size_t kMaxPageTokenBytes = 1024;
inline constexpr size_t kMaxReservationIdBytes = 128;

// NodeInfo.slurm_partitions of a Slurm node: at most 256 partitions of at most 1,024 nodes each;
// their texts (names, states, gres, time limits) at most kMaxNodeTextBytes. RunInfo.slurm_job:
// its texts likewise, its nodes at most kMaxWorldSize host names.
inline constexpr size_t kMaxSlurmPartitions = 256;
inline constexpr size_t kMaxSlurmPartitionNodes = 1024;

}  // namespace ringside
