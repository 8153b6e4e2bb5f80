// Runs one of Slurm's commands (sbatch, squeue, sinfo, sacct, scancel, scontrol) as the agent's
// user and collects what it prints.
//
// Thread-safety: free functions; safe from any thread (fork, exec and waitpid of its own child).
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "ringside/common/status.h"

namespace ringside::agent::slurm {

struct CommandOutput {
  int exitCode = -1;  // -1: killed by a signal
  std::string out;    // stdout, at most kMaxCommandOutputBytes (the rest is dropped)
  std::string err;    // stderr, likewise
};

inline constexpr size_t kMaxCommandOutputBytes = 16u << 20;

// Runs argv[0] (looked up in PATH) with argv, the agent's environment plus `env` ("NAME=value"
// entries, later ones win) and stdin from /dev/null, and waits for it at most `timeout`.
// Errors: NotFound when the program is not there ("sbatch not found on PATH: ..."),
// DeadlineExceeded-like Aborted when it ran past `timeout` (it is killed), Internal when it
// cannot be started. A program that runs and exits non-zero is not an error: see exitCode.
Result<CommandOutput> runCommand(const std::vector<std::string>& argv,
                                 const std::vector<std::string>& env,
                                 std::chrono::milliseconds timeout);

// The last non-empty line of `text` (a command's error), at most 300 bytes; "" when none.
std::string lastLine(const std::string& text);

}  // namespace ringside::agent::slurm
