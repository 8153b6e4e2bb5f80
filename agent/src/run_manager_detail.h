// Shared by run_manager.cpp (states, stops, polling, adoption) and run_manager_launch.cpp (the
// checks of a job, pre-flights and launches): the files of a run directory (run_manager.h) and
// the clocks and /proc reading both use. Private to the agent's sources.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

#include "ringside/proto/ringside.pb.h"

namespace ringside::agent::run_manager_detail {

// Files in a run directory.
inline constexpr const char* kExitStatusFile = "exit_status";
inline constexpr const char* kStdoutFile = "stdout.log";
inline constexpr const char* kStderrFile = "stderr.log";
// A multi-node run's rank keypair (secret key, mode 0600), so that an agent that restarts keeps
// accepting the metrics of the run's ranks.
inline constexpr const char* kRunKeyFile = "rank.key_secret";
// Written just before a queued run's shim is started: a restarted agent that finds it on a run
// journaled as QUEUED knows the run may have started, and never starts it again (docs/queue.md).
inline constexpr const char* kDispatchedFile = "dispatched";

// Seconds since the epoch (system clock), as RunInfo's times are.
double wallSeconds();
// Seconds of the steady clock, for deadlines and the age of a rank scan.
double steadySeconds();

// What a look at a process in /proc found.
enum class ProcessLook {
  kFound,    // *startTicks and *state are set
  kGone,     // no such process: /proc/<pid> does not exist, or kill(pid, 0) says ESRCH
  kUnknown,  // it could not be read (EMFILE, ENFILE, ENOMEM: the agent is out of descriptors or
             // memory, or /proc is not there): never a verdict on the process; ask again later
};

// Field 22 (starttime, clock ticks since boot) and the state letter of /proc/<pid>/stat.
ProcessLook procStat(pid_t pid, int64_t* startTicks, char* state);

// A sweep trial's values are the run's parameters (RunInfo.params), as a script's would be.
void copyTrialParams(v1::RunInfo& info);

// A small file's whole text, or nullopt with errno set when it cannot be opened or read (an
// absent file and a descriptor shortage are told apart by errno: ENOENT, EMFILE ...).
std::optional<std::string> readSmallFile(const std::string& path);

}  // namespace ringside::agent::run_manager_detail

namespace ringside::agent {
// The agent's log (agent.cpp): "ringside-agent <level>: <text>" on stderr.
void logLine(const char* level, const std::string& text);
}  // namespace ringside::agent
