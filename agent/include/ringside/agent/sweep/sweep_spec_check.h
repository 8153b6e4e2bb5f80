// Checking a sweep spec before the agent starts it (docs/sweeps.md, "A sweep spec").
//
// Thread-safety: a free function without shared state.
#pragma once

#include <cstdint>

#include "ringside/common/status.h"
#include "ringside/proto/ringside.pb.h"

namespace ringside::agent {

// Most retries of a failed trial (SweepSpec.max_retries).
inline constexpr uint32_t kMaxTrialRetries = 10;

// OK when the agent can run `spec`: its search space (validateSearchSpace, search_space.h); a
// metric of 1 to 256 bytes and a goal; a base run with a job, without a host list; at most
// kMaxTrialRetries retries and kMaxSweepTrials concurrent trials; a name of at most 256 bytes; an
// early-stopping rule with usable numbers (ASHA: eta 2 to 100, a grace period and a maximum
// resource above 0, at least one rung; median: a grace period above 0); and the values of its first
// trials (up to 64) put into the base run (trialRunSpec: a trainer field of each parameter's name
// and type). Errors: InvalidArgument naming the field and what to change.
Status validateSweepSpec(const v1::SweepSpec& spec);

}  // namespace ringside::agent
