// Ids the agent gives what it keeps: runs ("r...") and sweeps ("s...").
//
// Thread-safety: a free function; std::random_device per call.
#pragma once

#include <string>

namespace ringside::agent {

// `prefix`, the UTC time "yyyymmdd-hhmmss", '-' and 4 random hex digits, e.g.
// "r20261129-151454-96b3": sorts by creation time to the second, and two made in the same second
// differ with probability 65535/65536.
std::string newTimestampedId(char prefix);

}  // namespace ringside::agent
