// A sweep's search space (SweepSpec.parameters and .method, docs/sweeps.md): checking it, and
// drawing each trial's parameter values: grid (every combination), random (independent draws,
// reproducible from the seed) and model-based (dlib's global_function_search).
//
// Thread-safety: free functions without shared state.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ringside/common/status.h"
#include "ringside/proto/ringside.pb.h"

namespace ringside::agent {

// Bounds of a sweep spec: trials (SweepSpec.max_trials, and a grid's combinations), parameters,
// the values of one list or grid range, and a parameter name's length.
inline constexpr uint32_t kMaxSweepTrials = 1000;
inline constexpr int kMaxSweepParameters = 32;
inline constexpr int kMaxParameterValues = 1000;
inline constexpr size_t kMaxParameterNameBytes = 64;

// A trial's parameter values by parameter name: numbers, strings, booleans, or lists of numbers.
using TrialValues = std::map<std::string, google::protobuf::Value>;

// OK when the parameters, the method and the trial budget are usable: 1 to kMaxSweepParameters
// parameters with distinct names (kMaxParameterNameBytes of letters, digits, '_', '-', '.'), each
// with a domain: a list of 1 to kMaxParameterValues numbers, strings, booleans or lists of
// numbers; a range with finite min < max (log_uniform: min > 0; int_uniform: integer ends); a
// method; for grid, every parameter enumerable (a list, a range with grid_points, an int range of
// at most kMaxParameterValues integers) and at most kMaxSweepTrials combinations; for the others,
// max_trials (1 to kMaxSweepTrials) or max_wall_seconds. Errors: InvalidArgument naming the
// parameter or field and what to change.
Status validateSearchSpace(const v1::SweepSpec& spec);

// How many trials the sweep may draw in all: a grid's combinations (max_trials when lower and not
// 0); the others' max_trials, or kMaxSweepTrials with a wall-time budget only. Assumes
// validateSearchSpace passed.
uint32_t trialBudget(const v1::SweepSpec& spec);

// The values a grid parameter takes, in order: a list's values; a range's grid_points, evenly
// spaced from min to max (log_uniform: evenly in the logarithm; int_uniform: rounded, repeats
// dropped, or every integer without grid_points). Empty for a range that cannot be enumerated.
std::vector<google::protobuf::Value> gridValues(const v1::SweepParameter& parameter);

// Grid trial `trial` (0 <= trial < the number of combinations): the parameters' grid values in
// mixed radix, the last parameter changing fastest.
TrialValues gridTrial(const v1::SweepSpec& spec, uint32_t trial);

// Random trial `trial`: each parameter drawn independently from its domain with a generator
// seeded from (spec.seed, trial, parameter index) by SplitMix64 (Steele et al., OOPSLA 2014), so a
// trial's values do not depend on how many were drawn before it, nor on the C++ library.
TrialValues randomTrial(const v1::SweepSpec& spec, uint32_t trial);

// A finished trial as the model-based method learns from it: its values and its best value of
// the sweep's metric.
struct FinishedTrial {
  TrialValues values;
  double value = 0.0;
};

// Whether this agent can run model-based sweeps (it was built with dlib).
bool haveModelBasedSearch();

// The model-based method's state for one sweep: dlib's global_function_search (MaxLIPO+TR; King,
// "A Global Optimization Algorithm Worth Using", dlib.net 2017) over the parameters (a
// log_uniform one in its logarithm, a list as the index of its value; a metric to minimize is
// negated, as dlib maximizes), seeded with spec.seed. It alternates between a global (LIPO) and a
// local (trust region) step from one request to the next, so one object follows a sweep from
// trial to trial; built again after an agent's restart from the trials that ended. The same
// seed, finished trials and order of calls give the same trials.
// Thread-safety: one thread at a time.
class ModelBasedSearch {
 public:
  // Errors: FailedPrecondition when this agent was built without dlib.
  static Result<std::unique_ptr<ModelBasedSearch>> create(
      const v1::SweepSpec& spec, const std::vector<FinishedTrial>& finished);
  virtual ~ModelBasedSearch() = default;
  // The values of trial `trial` (a new request, outstanding until finished()).
  virtual TrialValues next(uint32_t trial) = 0;
  // Trial `trial` ended with `value`: the search learns it. A trial without an outstanding
  // request here (drawn before a restart) is ignored.
  virtual void finished(uint32_t trial, double value) = 0;
};

// The trial's values for grid and random sweeps (a model-based sweep draws with
// ModelBasedSearch; here it gets randomTrial, e.g. to check its values against the base run).
TrialValues drawTrial(const v1::SweepSpec& spec, uint32_t trial);

// A value as JSON text ("0.01", "128", "\"adamw\"", "true", "[256,128]"): integral numbers
// without a fraction, others in the shortest form that reads back exactly.
std::string valueJson(const google::protobuf::Value& value);
// A value as a program argument: a number as valueJson, a string as it is, a list's numbers
// joined by ',' ("256,128"), a boolean "true" or "false".
std::string valueArgument(const google::protobuf::Value& value);
// The values as a JSON object {"lr":0.01,"width":128} (names in order), and as name -> JSON text
// (SweepTrialRef.params).
std::string valuesJsonObject(const TrialValues& values);
std::map<std::string, std::string> valuesJsonMap(const TrialValues& values);
// Reads SweepTrialRef.params back (JSON text of each value). Errors: InvalidArgument naming the
// entry that is not a JSON value.
Result<TrialValues> valuesFromJsonMap(const google::protobuf::Map<std::string, std::string>& params);

}  // namespace ringside::agent
