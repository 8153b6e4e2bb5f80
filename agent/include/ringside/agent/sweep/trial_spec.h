// A trial's run spec: the sweep's base run with the trial's parameter values put in
// (docs/sweeps.md, "Parameters").
//
// Thread-safety: free functions without shared state.
#pragma once

#include <string>

#include "ringside/agent/sweep/search_space.h"
#include "ringside/common/status.h"
#include "ringside/proto/ringside.pb.h"

namespace ringside::agent {

// The environment variable that carries a trial's values to its ranks: a JSON object
// ({"lr":0.01,"width":128}), read by ringside.params() in Python. Set by the agent (RINGSIDE_*
// names are the agent's: a run spec's env cannot set it).
inline constexpr const char* kTrialParamsEnv = "RINGSIDE_PARAMS";

// The run spec of attempt `attempt` of trial `trial` of sweep `sweepId`: `spec.base` with
//  - for a trainer job, each value in the TrainerConfig field of the parameter's name (a number
//    in a numeric field, integral for an integer one; a string in a string field; a boolean in a
//    bool field; a number or a list of numbers in `hidden` or `channels`);
//  - for a Python script's args and a custom command's argv, every "{name}" replaced by
//    valueArgument() of the value ("{{" and "}}" stay literal braces);
//  - the name "<sweep name> #<trial>", the tag "sweep:<sweep id>", and sweep_trial (the sweep, the
//    trial, the attempt and the values as JSON text).
// Errors: InvalidArgument naming the parameter: a trainer job with no field of that name, or a
// value of the wrong type for it (e.g. 0.5 for the integer `global_batch`).
Result<v1::RunSpec> trialRunSpec(const v1::SweepSpec& spec, const std::string& sweepId,
                                 uint32_t trial, uint32_t attempt, const TrialValues& values);

}  // namespace ringside::agent
