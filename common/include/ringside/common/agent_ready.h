// The agent's ready file (AgentReady in common/proto/ringside.proto): written by
// `ringside-agent --ready-file PATH` once it serves, read by the programs that start an agent
// (the GUI's local agent, tests, benchmarks). The one definition of the readiness contract;
// nobody parses the agent's human-readable log for it.
// Thread-safety: free functions without shared state.
#pragma once

#include <string>

#include "ringside/common/status.h"
#include "ringside/proto/ringside.pb.h"

namespace ringside {

// A ready file is a few hundred bytes; anything over this is refused as not one.
inline constexpr size_t kMaxAgentReadyBytes = 64 * 1024;

// Writes `ready` to `path` as JSON (protobuf's JSON mapping, proto field names), atomically and
// readable by the owner only. Errors: IOError naming the file.
Status writeAgentReady(const std::string& path, const v1::AgentReady& ready);

// Reads the ready file at `path`. Errors: NotFound while the agent has not written it yet;
// Corruption when it is not a JSON AgentReady (unknown keys refused) or lacks an endpoint;
// IOError.
Result<v1::AgentReady> readAgentReady(const std::string& path);

}  // namespace ringside
