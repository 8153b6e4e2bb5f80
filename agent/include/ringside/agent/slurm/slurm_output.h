// Slurm's command output as the agent reads it: squeue, sinfo, sacct and sbatch, each asked for
// a fixed `--format` (the text format, not `--json`, whose shape changes between Slurm versions;
// docs/slurm.md lists the commands). Pure functions on text, so that they are unit-tested on
// output recorded from Slurm 22.05 (docs/slurm-test-cluster.md).
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ringside/common/protocol_limits.h"
#include "ringside/common/status.h"
#include "ringside/proto/ringside.pb.h"

namespace ringside::agent::slurm {

// The `--format` the agent gives squeue: job id, name, state, reason, expected start, node list,
// partition, separated by '|' (none of them holds one).
inline constexpr const char* kSqueueFormat = "%i|%j|%T|%r|%S|%N|%P";

// One job of squeue's output.
struct QueuedJob {
  std::string jobId;
  std::string name;
  std::string state;   // PENDING, RUNNING, COMPLETING, CONFIGURING, COMPLETED, TIMEOUT ...
  std::string reason;  // "None" while running
  double expectedStart = 0;  // Unix seconds; 0 when squeue says N/A
  std::string nodeList;      // Slurm's compressed form, "node-[1-2]"; empty while PENDING
  std::string partition;
};

// The jobs of `squeue --noheader --format=kSqueueFormat` output; lines that do not have the seven
// fields are skipped.
std::vector<QueuedJob> parseSqueue(std::string_view text);

// A Slurm time stamp ("2026-11-29T18:10:36", the local time of the machine running the command)
// as Unix seconds; nullopt for "N/A", "Unknown", "None" and anything else.
std::optional<double> parseSlurmTime(std::string_view text);

// The `--format` of sinfo, one line per node and partition (`sinfo --noheader --Node`):
// partition ("debug*" for the default one), availability, time limit, node, state, CPUs,
// memory (MiB), generic resources.
inline constexpr const char* kSinfoFormat = "%P|%a|%l|%N|%T|%c|%m|%G";

// The partitions of `sinfo --noheader --Node --format=kSinfoFormat` output, in their first
// appearance's order, with their nodes; at most kMaxPartitions partitions and kMaxPartitionNodes
// nodes each (more are left out).
inline constexpr size_t kMaxPartitions = kMaxSlurmPartitions;
inline constexpr size_t kMaxPartitionNodes = kMaxSlurmPartitionNodes;
std::vector<v1::SlurmPartition> parseSinfo(std::string_view text);

// The GPUs of a generic-resources text: "gpu:2" is 2, "gpu:a100:4(S:0-1)" 4, "gpu:2,license:1"
// 2, "(null)" 0.
uint32_t gpusOfGres(std::string_view gres);

// A job's end as sacct reports it (`sacct --noheader --parsable2 --format=JobID,State,ExitCode`,
// with `-c` from the completion log when there is no accounting database).
struct JobEnd {
  std::string state;  // COMPLETED, FAILED, CANCELLED, TIMEOUT, NODE_FAIL, OUT_OF_MEMORY ...
  int exitCode = 0;   // the batch script's exit status ("3:0" is 3)
  int signal = 0;     // the signal that ended it ("0:9" is 9)
};

// The end of job `jobId` in sacct's output: its own line (not a step's, "123.batch"), whose
// state is a final one; nullopt when there is none (still running, or not known to sacct).
std::optional<JobEnd> parseSacct(std::string_view text, std::string_view jobId);

// The job id `sbatch --parsable` printed ("1234", or "1234;cluster"): InvalidArgument quoting
// the text when it is not one.
Result<std::string> parseSbatchJobId(std::string_view text);

// True for Slurm job states after which the job does not run again (squeue's %T and sacct's
// State, "CANCELLED by 0" read as CANCELLED).
bool isFinalJobState(std::string_view state);

}  // namespace ringside::agent::slurm
