// A sweep's search space: checks, grid, random and model-based draws (search_space.h).
#include "ringside/agent/sweep/search_space.h"

#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>

#ifdef RINGSIDE_HAVE_DLIB
#include <dlib/global_optimization.h>
#endif

namespace ringside::agent {
namespace {

using google::protobuf::Value;

Value numberValue(double number) {
  Value value;
  value.set_number_value(number);
  return value;
}

bool isInteger(double x) { return std::isfinite(x) && std::floor(x) == x; }

std::string numberText(double x) {
  if (isInteger(x) && std::fabs(x) < 9.007199254740992e15) {
    return std::to_string(static_cast<int64_t>(x));
  }
  char buffer[64];
  auto [end, error] = std::to_chars(buffer, buffer + sizeof buffer, x);
  if (error != std::errc()) return "null";
  return std::string(buffer, end);
}

std::string jsonString(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
          out += escaped;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

bool isNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-' || c == '.';
}

// A list entry a trial can take: a finite number, a string, a boolean, or a list of finite numbers.
bool isUsableValue(const Value& value) {
  switch (value.kind_case()) {
    case Value::kNumberValue: return std::isfinite(value.number_value());
    case Value::kStringValue:
    case Value::kBoolValue: return true;
    case Value::kListValue: {
      if (value.list_value().values_size() == 0) return false;
      for (const Value& entry : value.list_value().values()) {
        if (entry.kind_case() != Value::kNumberValue || !std::isfinite(entry.number_value())) {
          return false;
        }
      }
      return true;
    }
    default: return false;
  }
}

const v1::ParameterRange* rangeOf(const v1::SweepParameter& parameter) {
  switch (parameter.domain_case()) {
    case v1::SweepParameter::kUniform: return &parameter.uniform();
    case v1::SweepParameter::kLogUniform: return &parameter.log_uniform();
    case v1::SweepParameter::kIntUniform: return &parameter.int_uniform();
    default: return nullptr;
  }
}

Status checkParameter(const v1::SweepParameter& parameter) {
  const std::string label = "parameter '" + parameter.name() + "'";
  if (parameter.domain_case() == v1::SweepParameter::kValues) {
    const int count = parameter.values().values_size();
    if (count == 0 || count > kMaxParameterValues) {
      return Status::invalidArgument(label + " lists " + std::to_string(count) +
                                     " values: give 1 to " + std::to_string(kMaxParameterValues));
    }
    for (int i = 0; i < count; ++i) {
      if (!isUsableValue(parameter.values().values(i))) {
        return Status::invalidArgument(
            label + ": value " + std::to_string(i + 1) +
            " is not a finite number, a string, a boolean or a list of finite numbers");
      }
    }
    return Status::ok();
  }
  const v1::ParameterRange* range = rangeOf(parameter);
  if (range == nullptr) {
    return Status::invalidArgument(label +
                                   " has no domain: give values, uniform, log_uniform or "
                                   "int_uniform");
  }
  if (!std::isfinite(range->min()) || !std::isfinite(range->max()) ||
      !(range->min() < range->max())) {
    return Status::invalidArgument(label + ": the range needs finite min < max (it has min " +
                                   numberText(range->min()) + ", max " +
                                   numberText(range->max()) + ")");
  }
  if (parameter.has_log_uniform() && range->min() <= 0) {
    return Status::invalidArgument(label + ": log_uniform needs min > 0 (it has " +
                                   numberText(range->min()) + ")");
  }
  if (parameter.has_int_uniform() && (!isInteger(range->min()) || !isInteger(range->max()))) {
    return Status::invalidArgument(label + ": int_uniform needs integer min and max");
  }
  if (range->grid_points() == 1 || range->grid_points() > kMaxParameterValues) {
    return Status::invalidArgument(label + ": grid_points " +
                                   std::to_string(range->grid_points()) + " is out of range: 2 to " +
                                   std::to_string(kMaxParameterValues) + ", or 0");
  }
  return Status::ok();
}

// SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators", 2014).
uint64_t splitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// A uniform draw in [0, 1) for (seed, trial, parameter).
double unitDraw(uint64_t seed, uint32_t trial, size_t parameter) {
  const uint64_t bits =
      splitMix64(splitMix64(splitMix64(seed) ^ trial) ^ (static_cast<uint64_t>(parameter) << 32));
  return static_cast<double>(bits >> 11) * 0x1.0p-53;
}

}  // namespace

Status validateSearchSpace(const v1::SweepSpec& spec) {
  const int count = spec.parameters_size();
  if (count == 0 || count > kMaxSweepParameters) {
    return Status::invalidArgument("the sweep has " + std::to_string(count) +
                                   " parameters: give 1 to " +
                                   std::to_string(kMaxSweepParameters));
  }
  std::set<std::string> names;
  for (const v1::SweepParameter& parameter : spec.parameters()) {
    const std::string& name = parameter.name();
    if (name.empty() || name.size() > kMaxParameterNameBytes ||
        !std::all_of(name.begin(), name.end(), isNameChar)) {
      return Status::invalidArgument(
          "parameter name '" + name.substr(0, kMaxParameterNameBytes) +
          "' is not 1 to 64 characters of letters, digits, '_', '-' and '.'");
    }
    if (!names.insert(name).second) {
      return Status::invalidArgument("parameter '" + name + "' is named twice");
    }
    RINGSIDE_RETURN_IF_ERROR(checkParameter(parameter));
  }
  if (spec.max_trials() > kMaxSweepTrials) {
    return Status::invalidArgument("max_trials " + std::to_string(spec.max_trials()) +
                                   " is over the limit of " + std::to_string(kMaxSweepTrials));
  }
  if (!std::isfinite(spec.max_wall_seconds()) || spec.max_wall_seconds() < 0) {
    return Status::invalidArgument("max_wall_seconds must be 0 (no limit) or a finite number of "
                                   "seconds above 0");
  }
  switch (spec.method()) {
    case v1::GRID: {
      uint64_t combinations = 1;
      for (const v1::SweepParameter& parameter : spec.parameters()) {
        const size_t points = gridValues(parameter).size();
        if (points == 0) {
          return Status::invalidArgument(
              "parameter '" + parameter.name() +
              "' cannot be part of a grid: give its range grid_points, or list its values");
        }
        combinations *= points;
        if (combinations > kMaxSweepTrials) {
          return Status::invalidArgument(
              "the grid has more than " + std::to_string(kMaxSweepTrials) +
              " combinations: fewer values or grid_points, or use the random method");
        }
      }
      return Status::ok();
    }
    case v1::RANDOM:
    case v1::MODEL_BASED:
      if (spec.max_trials() == 0 && spec.max_wall_seconds() <= 0) {
        return Status::invalidArgument(
            "a " + std::string(spec.method() == v1::RANDOM ? "random" : "model-based") +
            " sweep needs a budget: max_trials (1 to " + std::to_string(kMaxSweepTrials) +
            ") or max_wall_seconds");
      }
      if (spec.method() == v1::MODEL_BASED && !haveModelBasedSearch()) {
        return Status::invalidArgument(
            "this agent was built without dlib, which the model-based method uses: install "
            "libdlib-dev (scripts/install-deps) and rebuild, or use the random method");
      }
      return Status::ok();
    default:
      return Status::invalidArgument("the sweep names no method: GRID, RANDOM or MODEL_BASED");
  }
}

uint32_t trialBudget(const v1::SweepSpec& spec) {
  if (spec.method() == v1::GRID) {
    uint64_t combinations = 1;
    for (const v1::SweepParameter& parameter : spec.parameters()) {
      combinations *= gridValues(parameter).size();
    }
    const uint32_t grid = static_cast<uint32_t>(std::min<uint64_t>(combinations, kMaxSweepTrials));
    return spec.max_trials() > 0 ? std::min(spec.max_trials(), grid) : grid;
  }
  return spec.max_trials() > 0 ? spec.max_trials() : kMaxSweepTrials;
}

std::vector<Value> gridValues(const v1::SweepParameter& parameter) {
  std::vector<Value> out;
  if (parameter.has_values()) {
    out.assign(parameter.values().values().begin(), parameter.values().values().end());
    return out;
  }
  const v1::ParameterRange* range = rangeOf(parameter);
  if (range == nullptr) return out;
  const double lo = range->min(), hi = range->max();
  const uint32_t points = range->grid_points();
  if (parameter.has_int_uniform()) {
    std::vector<double> integers;
    if (points == 0) {
      if (hi - lo + 1 > kMaxParameterValues) return out;
      for (double x = lo; x <= hi; x += 1) integers.push_back(x);
    } else {
      for (uint32_t i = 0; i < points; ++i) {
        const double x = std::round(lo + (hi - lo) * i / (points - 1));
        if (integers.empty() || integers.back() != x) integers.push_back(x);
      }
    }
    for (double x : integers) out.push_back(numberValue(x));
    return out;
  }
  if (points < 2) return out;
  for (uint32_t i = 0; i < points; ++i) {
    const double t = static_cast<double>(i) / (points - 1);
    double x = parameter.has_log_uniform()
                   ? std::exp(std::log(lo) + (std::log(hi) - std::log(lo)) * t)
                   : lo + (hi - lo) * t;
    if (i == 0) x = lo;  // the ends exactly, whatever the rounding in between
    if (i == points - 1) x = hi;
    out.push_back(numberValue(x));
  }
  return out;
}

TrialValues gridTrial(const v1::SweepSpec& spec, uint32_t trial) {
  TrialValues values;
  uint64_t rest = trial;
  for (int i = spec.parameters_size() - 1; i >= 0; --i) {
    const std::vector<Value> axis = gridValues(spec.parameters(i));
    if (axis.empty()) continue;
    values[spec.parameters(i).name()] = axis[rest % axis.size()];
    rest /= axis.size();
  }
  return values;
}

TrialValues randomTrial(const v1::SweepSpec& spec, uint32_t trial) {
  TrialValues values;
  for (int i = 0; i < spec.parameters_size(); ++i) {
    const v1::SweepParameter& parameter = spec.parameters(i);
    const double u = unitDraw(spec.seed(), trial, static_cast<size_t>(i));
    if (parameter.has_values()) {
      const int n = parameter.values().values_size();
      values[parameter.name()] = parameter.values().values(std::min(n - 1, static_cast<int>(u * n)));
      continue;
    }
    const v1::ParameterRange* range = rangeOf(parameter);
    if (range == nullptr) continue;
    const double lo = range->min(), hi = range->max();
    double x = 0;
    if (parameter.has_int_uniform()) {
      x = std::min(hi, lo + std::floor(u * (hi - lo + 1)));
    } else if (parameter.has_log_uniform()) {
      x = std::exp(std::log(lo) + u * (std::log(hi) - std::log(lo)));
    } else {
      x = lo + u * (hi - lo);
    }
    values[parameter.name()] = numberValue(x);
  }
  return values;
}

bool haveModelBasedSearch() {
#ifdef RINGSIDE_HAVE_DLIB
  return true;
#else
  return false;
#endif
}

#ifdef RINGSIDE_HAVE_DLIB
namespace {

// The search coordinate of a parameter value, and back: a log_uniform value in its logarithm, a
// list value as its index.
double coordinateOf(const v1::SweepParameter& parameter, const Value& value) {
  if (parameter.has_values()) {
    const auto& list = parameter.values().values();
    for (int i = 0; i < list.size(); ++i) {
      if (list[i].SerializeAsString() == value.SerializeAsString()) return i;
    }
    return 0;
  }
  const double x = value.number_value();
  return parameter.has_log_uniform() ? std::log(x) : x;
}

Value valueOf(const v1::SweepParameter& parameter, double coordinate) {
  if (parameter.has_values()) {
    const int n = parameter.values().values_size();
    const int index = std::clamp(static_cast<int>(std::lround(coordinate)), 0, n - 1);
    return parameter.values().values(index);
  }
  const v1::ParameterRange& range = *rangeOf(parameter);
  double x = parameter.has_log_uniform() ? std::exp(coordinate) : coordinate;
  if (parameter.has_int_uniform()) x = std::round(x);
  return numberValue(std::clamp(x, range.min(), range.max()));
}

}  // namespace
#endif

#ifdef RINGSIDE_HAVE_DLIB
namespace {

class DlibSearch : public ModelBasedSearch {
 public:
  DlibSearch(const v1::SweepSpec& spec, const std::vector<FinishedTrial>& finished)
      : spec_(spec), search_(makeSearch(spec, finished)) {
    search_.set_seed(static_cast<time_t>(splitMix64(spec.seed()) >> 2));
  }

  TrialValues next(uint32_t trial) override {
    dlib::function_evaluation_request request = search_.get_next_x();
    TrialValues values;
    for (int i = 0; i < spec_.parameters_size(); ++i) {
      values[spec_.parameters(i).name()] = valueOf(spec_.parameters(i), request.x()(i));
    }
    outstanding_.emplace(trial, std::move(request));
    return values;
  }

  void finished(uint32_t trial, double value) override {
    auto it = outstanding_.find(trial);
    if (it == outstanding_.end()) return;
    it->second.set(spec_.goal() == v1::MINIMIZE ? -value : value);
    outstanding_.erase(it);
  }

 private:
  static dlib::global_function_search makeSearch(const v1::SweepSpec& spec,
                                                 const std::vector<FinishedTrial>& finished) {
    const int dims = spec.parameters_size();
    dlib::matrix<double, 0, 1> lower(dims), upper(dims);
    std::vector<bool> integer(static_cast<size_t>(dims));
    for (int i = 0; i < dims; ++i) {
      const v1::SweepParameter& parameter = spec.parameters(i);
      if (parameter.has_values()) {
        lower(i) = 0;
        upper(i) = std::max(1, parameter.values().values_size() - 1);  // dlib needs lower < upper
        integer[static_cast<size_t>(i)] = true;
        continue;
      }
      const v1::ParameterRange& range = *rangeOf(parameter);
      lower(i) = parameter.has_log_uniform() ? std::log(range.min()) : range.min();
      upper(i) = parameter.has_log_uniform() ? std::log(range.max()) : range.max();
      integer[static_cast<size_t>(i)] = parameter.has_int_uniform();
    }
    std::vector<dlib::function_evaluation> evaluations;
    for (const FinishedTrial& done : finished) {
      dlib::matrix<double, 0, 1> x(dims);
      for (int i = 0; i < dims; ++i) {
        auto it = done.values.find(spec.parameters(i).name());
        x(i) = it == done.values.end() ? lower(i) : coordinateOf(spec.parameters(i), it->second);
      }
      evaluations.emplace_back(x, spec.goal() == v1::MINIMIZE ? -done.value : done.value);
    }
    return dlib::global_function_search({dlib::function_spec(lower, upper, integer)},
                                        {evaluations}, 0.001);
  }

  v1::SweepSpec spec_;
  dlib::global_function_search search_;
  std::map<uint32_t, dlib::function_evaluation_request> outstanding_;
};

}  // namespace
#endif

Result<std::unique_ptr<ModelBasedSearch>> ModelBasedSearch::create(
    const v1::SweepSpec& spec, const std::vector<FinishedTrial>& finished) {
#ifdef RINGSIDE_HAVE_DLIB
  return std::unique_ptr<ModelBasedSearch>(std::make_unique<DlibSearch>(spec, finished));
#else
  (void)spec;
  (void)finished;
  return Status::failedPrecondition(
      "this agent was built without dlib, which the model-based method uses");
#endif
}

TrialValues drawTrial(const v1::SweepSpec& spec, uint32_t trial) {
  return spec.method() == v1::GRID ? gridTrial(spec, trial) : randomTrial(spec, trial);
}

std::string valueJson(const Value& value) {
  switch (value.kind_case()) {
    case Value::kNumberValue: return numberText(value.number_value());
    case Value::kStringValue: return jsonString(value.string_value());
    case Value::kBoolValue: return value.bool_value() ? "true" : "false";
    case Value::kListValue: {
      std::string out = "[";
      for (int i = 0; i < value.list_value().values_size(); ++i) {
        if (i > 0) out += ",";
        out += valueJson(value.list_value().values(i));
      }
      return out + "]";
    }
    default: return "null";
  }
}

std::string valueArgument(const Value& value) {
  switch (value.kind_case()) {
    case Value::kStringValue: return value.string_value();
    case Value::kListValue: {
      std::string out;
      for (int i = 0; i < value.list_value().values_size(); ++i) {
        if (i > 0) out += ",";
        out += valueArgument(value.list_value().values(i));
      }
      return out;
    }
    default: return valueJson(value);
  }
}

std::string valuesJsonObject(const TrialValues& values) {
  std::string out = "{";
  for (const auto& [name, value] : values) {
    if (out.size() > 1) out += ",";
    out += jsonString(name) + ":" + valueJson(value);
  }
  return out + "}";
}

std::map<std::string, std::string> valuesJsonMap(const TrialValues& values) {
  std::map<std::string, std::string> out;
  for (const auto& [name, value] : values) out[name] = valueJson(value);
  return out;
}

Result<TrialValues> valuesFromJsonMap(const google::protobuf::Map<std::string, std::string>& params) {
  TrialValues values;
  for (const auto& [name, text] : params) {
    Value value;
    if (!google::protobuf::util::JsonStringToMessage(text, &value).ok()) {
      return Status::invalidArgument("parameter '" + name + "' holds '" + text +
                                     "', which is not a JSON value");
    }
    values[name] = value;
  }
  return values;
}

}  // namespace ringside::agent
