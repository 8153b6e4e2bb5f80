// The metric vocabulary shared by trainer, agent and GUI. docs/metrics.md lists every name with its
// unit and meaning; keep the two in step.
#pragma once

#include <string_view>

#include <string>

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
// The owner agent's straggler verdict (docs/metrics.md, "The straggler"), global samples it
// journals itself at each step where every rank's timings are in: the rank (-1: none), the stage
// (1 data, 2 compute; 0 none), the rank's time in that stage and the median over ranks (ms), and
// the median time the other ranks waited (ms).
inline constexpr const char* kStragglerRank = "straggler/rank";
inline constexpr const char* kStragglerStage = "straggler/stage";
inline constexpr const char* kStragglerStageMs = "straggler/stage_ms";
inline constexpr const char* kStragglerMedianMs = "straggler/median_ms";
inline constexpr const char* kStragglerOthersWaitMs = "straggler/others_wait_ms";
// True for the samples the owner agent writes itself (the straggler verdict), as opposed to what
// the ranks sent.
inline bool isAgentVerdict(std::string_view name) { return name.starts_with("straggler/"); }
inline constexpr const char* kCommBytes = "comm/bytes";       // bytes all-reduced per step
inline constexpr const char* kCommAlgbw = "comm/algbw_GBps";  // GB/s (1e9 bytes/s)
inline constexpr const char* kCommBusbw = "comm/busbw_GBps";  // GB/s (1e9 bytes/s)
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
