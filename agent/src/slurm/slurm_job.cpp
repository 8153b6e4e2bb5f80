#include "ringside/agent/slurm/slurm_job.h"

#include <algorithm>

#include "ringside/agent/launch_command.h"
#include "ringside/common/protocol_limits.h"

namespace ringside::agent::slurm {

namespace {


Status checkName(const std::string& value, const char* field) {
  if (value.empty()) return Status::ok();
  const bool safe =
      value.size() <= kMaxSlurmNameBytes &&
      std::all_of(value.begin(), value.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '_' || c == '.' || c == '-';
      });
  if (safe) return Status::ok();
  return Status::invalidArgument(std::string("slurm.") + field + " '" + value.substr(0, 80) +
                                 "' is not a Slurm name: use 1 to 64 letters, digits, '_', '.' "
                                 "and '-' (as sinfo and sacctmgr print them)");
}

}  // namespace

Result<Allocation> checkSlurmOptions(const v1::SlurmOptions& options, uint32_t ranksPerNode) {
  RINGSIDE_RETURN_IF_ERROR(checkName(options.partition(), "partition"));
  RINGSIDE_RETURN_IF_ERROR(checkName(options.account(), "account"));
  RINGSIDE_RETURN_IF_ERROR(checkName(options.qos(), "qos"));
  Allocation allocation;
  allocation.options = options;
  const uint64_t nodes = options.nodes() == 0 ? 1 : options.nodes();
  const uint64_t tasks = options.tasks_per_node() != 0 ? options.tasks_per_node()
                         : ranksPerNode != 0           ? ranksPerNode
                                                       : 1;
  if (nodes * tasks > kMaxWorldSize) {
    return Status::invalidArgument("slurm.nodes x tasks per node is " +
                                   std::to_string(nodes * tasks) + " ranks, more than the " +
                                   std::to_string(kMaxWorldSize) + " a run may have");
  }
  allocation.options.set_nodes(static_cast<uint32_t>(nodes));
  allocation.options.set_tasks_per_node(static_cast<uint32_t>(tasks));
  allocation.worldSize = static_cast<uint32_t>(nodes * tasks);
  if (options.time_limit_min() > kMaxTimeLimitMinutes) {
    return Status::invalidArgument("slurm.time_limit_min " + std::to_string(options.time_limit_min()) +
                                   " is over a year: give minutes, at most 525600 (0: the "
                                   "partition's default)");
  }
  if (options.gpus_per_node() > kMaxGpusPerNode) {
    return Status::invalidArgument("slurm.gpus_per_node " + std::to_string(options.gpus_per_node()) +
                                   " is more than a node has (at most 64)");
  }
  const std::string& request = options.gpu_request();
  if (!request.empty()) {
    const bool safe =
        request.size() <= 128 && request.starts_with("--") &&
        request.find("{n}") != std::string::npos &&
        std::all_of(request.begin(), request.end(), [](char c) {
          return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '_' || c == '.' || c == '-' || c == ':' || c == '=' || c == '{' || c == '}' ||
                 c == ',';
        });
    if (!safe) {
      return Status::invalidArgument(
          "slurm.gpu_request '" + request.substr(0, 80) +
          "' is not a GPU request template: one sbatch option with {n} for the GPUs per node, "
          "such as --gpus-per-node={n} or --gres=gpu:{n} (letters, digits and _ . - : = , only)");
    }
  }
  return allocation;
}

std::string jobName(const std::string& runId) { return "ringside-" + runId; }

std::string jobScript(const JobScriptInput& input) {
  const v1::SlurmOptions& o = input.allocation.options;
  std::string s = "#!/bin/bash\n";
  s += "# Written by ringside-agent for run " + input.runId +
       " and submitted with `sbatch --parsable` (docs/slurm.md).\n";
  auto option = [&](const std::string& text) { s += "#SBATCH " + text + "\n"; };
  option("--job-name=" + jobName(input.runId));
  option("--nodes=" + std::to_string(o.nodes()));
  option("--ntasks-per-node=" + std::to_string(o.tasks_per_node()));
  if (!o.partition().empty()) option("--partition=" + o.partition());
  if (o.time_limit_min() > 0) option("--time=" + std::to_string(o.time_limit_min()));
  if (!o.account().empty()) option("--account=" + o.account());
  if (!o.qos().empty()) option("--qos=" + o.qos());
  if (o.gpus_per_node() > 0) {
    std::string request = o.gpu_request().empty() ? kDefaultGpuRequest : o.gpu_request();
    const std::string n = std::to_string(o.gpus_per_node());
    for (size_t at; (at = request.find("{n}")) != std::string::npos;) request.replace(at, 3, n);
    option(request);
  }
  if (o.cpus_per_task() > 0) option("--cpus-per-task=" + std::to_string(o.cpus_per_task()));
  option(o.requeue() ? "--requeue" : "--no-requeue");
  // 90 s before the time limit the ranks get SIGUSR1: the trainer checkpoints and stops.
  if (input.checkpointOnSignal) option("--signal=USR1@90");
  option("--output=" + input.runDir + "/slurm-batch.log");
  option("--chdir=" + input.workDir);
  s += "\n";
  s += "dir=" + shellQuote(input.runDir) + "\n";
  // A signal to the batch shell (scancel without --signal, the time limit) must not end it
  // before the step: it waits for srun, which passes the signal on to the ranks.
  s += "trap 'echo \"ringside: the batch script got a signal; waiting for the ranks\" >&2' TERM "
       "USR1 INT\n";
  s += "first=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\n";
  s += "MASTER_ADDR=$(scontrol show node \"$first\" 2>/dev/null | "
       "sed -n 's/.*NodeAddr=\\([^ ]*\\).*/\\1/p' | head -n 1)\n";
  s += "export MASTER_ADDR=\"${MASTER_ADDR:-$first}\"\n";
  s += "export MASTER_PORT=$((20000 + SLURM_JOB_ID % 20000))\n";
  // srun --label prefixes each line with its task (" 3: "): the agent reads mpirun's tag.
  s += "tag() { sed -u -E \"s/^ *([0-9]+): /[${SLURM_JOB_ID},\\1]<$1>:/\"; }\n";
  s += "srun --label --kill-on-bad-exit=1";
  if (input.mpi) s += " --mpi=pmix";
  s += std::string(" /bin/sh -c 'export RANK=$SLURM_PROCID LOCAL_RANK=$SLURM_LOCALID "
                   "WORLD_SIZE=$SLURM_NTASKS LOCAL_WORLD_SIZE=${SLURM_NTASKS_PER_NODE%%(*}; ") +
       "if [ \"${" + kRankPathEnv + "+set}\" = set ]; then export PATH=\"$" + kRankPathEnv +
       "\"; fi; exec \"$@\"' ringside-rank";
  for (const std::string& word : input.rankArgv) {
    s += ' ';
    s += shellQuote(word);
  }
  s += " < /dev/null > >(tag stdout >> \"$dir/stdout.log\") 2> >(tag stderr >> \"$dir/stderr.log\") &\n";
  s += "step=$!\n";
  s += "wait $step; status=$?\n";
  s += "while kill -0 $step 2>/dev/null; do wait $step; status=$?; done\n";
  s += "wait  # the taggers, so that every line is in the logs before the status\n";
  s += "echo $status > \"$dir/exit_status.tmp\" && mv \"$dir/exit_status.tmp\" \"$dir/exit_status\"\n";
  s += "exit $status\n";
  return s;
}

std::string slurmEndReason(const std::string& state, uint32_t timeLimitMinutes) {
  if (state == "TIMEOUT") {
    return "Slurm ended the job at its time limit" +
           (timeLimitMinutes > 0 ? " (" + std::to_string(timeLimitMinutes) + " min)"
                                 : std::string(" (the partition's)")) +
           ": give it more time (slurm.time_limit_min) or checkpoint and resume";
  }
  if (state == "NODE_FAIL") return "a node of the job failed (Slurm state NODE_FAIL)";
  if (state == "OUT_OF_MEMORY") return "a rank ran out of memory (Slurm state OUT_OF_MEMORY)";
  if (state == "PREEMPTED") return "Slurm preempted the job for another (state PREEMPTED)";
  if (state == "BOOT_FAIL") return "a node of the job failed to boot (Slurm state BOOT_FAIL)";
  if (state == "DEADLINE") return "the job missed its deadline (Slurm state DEADLINE)";
  if (state == "CANCELLED") return "the job was cancelled in Slurm (scancel)";
  return "";
}

}  // namespace ringside::agent::slurm
