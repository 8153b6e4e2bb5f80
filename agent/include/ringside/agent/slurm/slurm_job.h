// The batch script a run becomes on a Slurm node (docs/slurm.md shows one): the allocation as
// #SBATCH lines from the run's SlurmOptions, then one `srun` step that starts every rank, its
// output tagged per rank in the run's stdout.log and stderr.log as `mpirun --tag-output` tags it
// (common/rank_tag.h), and the step's exit status in the run directory's exit_status file.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ringside/common/run_spec_limits.h"
#include "ringside/common/status.h"
#include "ringside/proto/ringside.pb.h"

namespace ringside::agent::slurm {

// Bounds of SlurmOptions: a partition, account or QOS name is 1 to 64 of [A-Za-z0-9_.-]; the
// time limit at most a year (525,600 min); the GPU request a template of at most 128 characters
// starting with "--" and holding "{n}".
inline constexpr uint32_t kMaxTimeLimitMinutes = 525600;
inline constexpr const char* kDefaultGpuRequest = "--gpus-per-node={n}";

// The allocation a run asks for, its options checked: InvalidArgument naming the field and
// saying what is allowed. `ranksPerNode`: RunSpec.ranks_per_node, taken when tasks_per_node is 0.
struct Allocation {
  v1::SlurmOptions options;  // as given, with nodes and tasks_per_node filled in
  uint32_t worldSize = 0;    // nodes x tasks per node
};
Result<Allocation> checkSlurmOptions(const v1::SlurmOptions& options, uint32_t ranksPerNode);

// What the script starts.
struct JobScriptInput {
  std::string runId;
  std::string runDir;   // absolute; the compute nodes see it at the same path (shared file system)
  std::string workDir;  // the ranks' working directory (the run directory unless the spec says)
  // Each rank's program: the trainer with its --config-json, a custom command, or the Python
  // interpreter with the script and its arguments.
  std::vector<std::string> rankArgv;
  bool mpi = false;       // an MPI program (the trainer): `srun --mpi=pmix`
  bool checkpointOnSignal = false;  // it checkpoints and stops on SIGUSR1: --signal=USR1@90
  Allocation allocation;
};

// The whole script text: `#!/bin/bash`, the #SBATCH lines (job name ringside-<run id>, nodes,
// tasks per node, partition, time, account, QOS, GPUs, CPUs per task, --no-requeue unless asked,
// --signal=USR1@90 for a program that checkpoints on it, the batch log and working directory),
// then the step. The ranks' environment is the submitting agent's export (sbatch --export=ALL)
// plus, per task, RANK, LOCAL_RANK, WORLD_SIZE and LOCAL_WORLD_SIZE from SLURM_PROCID,
// SLURM_LOCALID, SLURM_NTASKS and SLURM_NTASKS_PER_NODE, and MASTER_ADDR (the first node's
// address, `scontrol show node`) and MASTER_PORT (20000 + job id mod 20000) for torch.distributed.
std::string jobScript(const JobScriptInput& input);

// Set (by the agent, through sbatch's environment) to the run's own PATH, which each task
// exports before it starts its rank: the batch script and srun keep the PATH they were given.
inline constexpr const char* kRankPathEnv = "RINGSIDE_RANK_PATH";

// The job name a run's job has: "ringside-<run id>".
std::string jobName(const std::string& runId);

// Why a job that ended in Slurm state `state` (sacct's or squeue's) ended, for the run's reason:
// "Slurm ended the job at its time limit (10 min)", "a node of the job failed (Slurm
// NODE_FAIL)", ...; empty for COMPLETED and FAILED, whose reason comes from the ranks' output.
std::string slurmEndReason(const std::string& state, uint32_t timeLimitMinutes);

}  // namespace ringside::agent::slurm
