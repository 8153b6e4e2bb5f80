// The metric vocabulary shared by trainer, agent and GUI. docs/metrics.md lists every name with its
// unit and meaning; keep the two in step.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace ringside::metric {

inline constexpr const char* kTrainLoss = "train/loss";                  // mean cross-entropy, nats
inline constexpr const char* kTrainLr = "train/lr";                      // learning rate
inline constexpr const char* kTrainSamplesPerS = "train/samples_per_s";  // global samples/s
inline constexpr const char* kTestLoss = "test/loss";                    // mean cross-entropy, nats
inline constexpr const char* kTestAccuracy = "test/accuracy";            // fraction in [0, 1]
inline constexpr const char* kStepMs = "time/step_ms";                   // ms per step
inline constexpr const char* kComputeMs = "time/compute_ms";             // ms per step
inline constexpr const char* kAllreduceMs = "time/allreduce_ms";         // ms per step
inline constexpr const char* kExposedCommMs = "time/exposed_comm_ms";    // ms per step
inline constexpr const char* kDataMs = "time/data_ms";  // ms per step: loading the batch
// ms per step: blocked in collectives (exposed all-reduce and the stop agreement after the step)
inline constexpr const char* kWaitMs = "time/wait_ms";
// ms per step: the rank's training thread was ready to run but waited for a CPU (Linux's run-queue
// delay, /proc/thread-self/schedstat); another process on the rank's CPU shows here
inline constexpr const char* kRunQueueMs = "time/runqueue_ms";
// The owner agent's straggler verdict (docs/metrics.md, "The straggler"), global samples it
// journals itself about twice a second (at each slice of its window): the rank (-1: none), the
// stage (1 data, 2 compute, 3 CPU: its thread waited for a CPU; 0
// none), the rank's time in that stage and the median over the other
// ranks (ms per step, means over the window), and the median time the other ranks waited (ms).
inline constexpr const char* kStragglerRank = "straggler/rank";
inline constexpr const char* kStragglerStage = "straggler/stage";
inline constexpr const char* kStragglerStageMs = "straggler/stage_ms";
inline constexpr const char* kStragglerMedianMs = "straggler/median_ms";
inline constexpr const char* kStragglerOthersWaitMs = "straggler/others_wait_ms";
// The verdict's cost: the share (fraction 0-1) of the group's step time over the verdict's window
// spent waiting for the named rank beyond a typical rank (0 for none); and its confidence: the
// share (fraction 0-1) of the window's slices that agree with the verdict.
inline constexpr const char* kStragglerCostShare = "straggler/cost_share";
inline constexpr const char* kStragglerConfidence = "straggler/confidence";
// True for the samples the owner agent writes itself (the straggler verdict), as opposed to what
// the ranks sent.
inline bool isAgentVerdict(std::string_view name) { return name.starts_with("straggler/"); }
inline constexpr const char* kCommBytes = "comm/bytes";  // bytes all-reduced per step
// comm/bytes / time/allreduce_ms (the sum of the buckets' own durations), GB/s (1e9 bytes/s)
inline constexpr const char* kCommAlgbw = "comm/algbw_GBps";
// algbw × 2(n-1)/n, n = world size (nccl-tests doc/PERFORMANCE.md), GB/s (1e9 bytes/s)
inline constexpr const char* kCommBusbw = "comm/busbw_GBps";
// Per gradient bucket b (bucketing.h: 0 is the first whose all-reduce starts), in global records
// only: bucketMetric(1, kBucketAllreduceMs) == "comm/bucket1/allreduce_ms". A run has at most one
// bucket per parameter layer (65 for the deepest MLP run_spec.h allows), so a record holds at
// most 4 × 65 of these names, within the 1,024 per record the agent accepts (log_tailer.h).
inline constexpr const char* kBucketBytes = "bytes";               // bytes of the bucket
inline constexpr const char* kBucketAllreduceMs = "allreduce_ms";  // ms: its own all-reduce
inline constexpr const char* kBucketAlgbw = "algbw_GBps";          // GB/s: bytes / allreduce_ms
inline constexpr const char* kBucketBusbw = "busbw_GBps";          // GB/s: algbw × 2(n-1)/n
inline constexpr std::string_view kBucketPrefix = "comm/bucket";
inline std::string bucketMetric(int bucket, const char* field) {
  return std::string(kBucketPrefix) + std::to_string(bucket) + "/" + field;
}
// A per-bucket name taken apart: "comm/bucket12/busbw_GBps" -> {12, "busbw_GBps"}; nullopt for
// any other name (no digits, a leading zero in a number above 0, more than 6 digits, or no
// field). The field is not checked against the four above.
struct BucketMetricName {
  int bucket = 0;
  std::string_view field;  // a view into the name passed in
};
inline std::optional<BucketMetricName> parseBucketMetric(std::string_view name) {
  if (!name.starts_with(kBucketPrefix)) return std::nullopt;
  name.remove_prefix(kBucketPrefix.size());
  size_t digits = 0;
  int bucket = 0;
  while (digits < name.size() && name[digits] >= '0' && name[digits] <= '9') {
    bucket = bucket * 10 + (name[digits] - '0');
    if (++digits > 6) return std::nullopt;
  }
  if (digits == 0 || (digits > 1 && name[0] == '0')) return std::nullopt;
  if (digits + 1 >= name.size() || name[digits] != '/') return std::nullopt;
  return BucketMetricName{bucket, name.substr(digits + 1)};
}
// Facts of a run, global samples sent once when it starts, at its first step (0, or the step it
// resumed from): the same values as the "start" record's total_steps and steps_per_epoch. The GUI
// computes progress and ETA from them.
inline constexpr const char* kRunTotalSteps = "run/total_steps";         // global steps in all
inline constexpr const char* kRunStepsPerEpoch = "run/steps_per_epoch";  // global steps an epoch
inline constexpr const char* kNodeCpuPct = "node/cpu_pct";
inline constexpr const char* kNodeMemUsedMiB = "node/mem_used_MiB";
inline constexpr const char* kNodeNetRxMBps = "node/net_rx_MBps";
inline constexpr const char* kNodeNetTxMBps = "node/net_tx_MBps";

// Per-GPU names: gpuMetric(0, "util_pct") == "gpu0/util_pct".
inline std::string gpuMetric(int gpuIndex, const char* field) {
  return "gpu" + std::to_string(gpuIndex) + "/" + field;
}

}  // namespace ringside::metric
