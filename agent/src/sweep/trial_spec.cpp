// A trial's run spec from the sweep's base run and the trial's values (trial_spec.h).
#include "ringside/agent/sweep/trial_spec.h"

#include <cmath>
#include <limits>

#include "ringside/common/run_spec.h"

namespace ringside::agent {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Value;

Status wrongType(const std::string& name, const char* wanted, const Value& value) {
  return Status::invalidArgument("parameter '" + name + "' gives the trainer's " + name + " " +
                                 valueJson(value) + ", but it takes " + wanted);
}

bool integral(const Value& value, double lo, double hi, int64_t* out) {
  if (value.kind_case() != Value::kNumberValue) return false;
  const double x = value.number_value();
  if (!std::isfinite(x) || std::floor(x) != x || x < lo || x > hi) return false;
  *out = static_cast<int64_t>(x);
  return true;
}

// One TrainerConfig field from a value, by reflection over the field's type.
Status setTrainerField(v1::TrainerConfig* config, const std::string& name, const Value& value) {
  const FieldDescriptor* field = v1::TrainerConfig::descriptor()->FindFieldByName(name);
  if (field == nullptr) {
    return Status::invalidArgument("parameter '" + name +
                                   "' is no trainer run-spec field (docs/run-spec.md lists them, "
                                   "e.g. lr, momentum, global_batch, hidden)");
  }
  const auto* reflection = config->GetReflection();
  int64_t integer = 0;
  if (field->is_repeated()) {
    if (field->cpp_type() != FieldDescriptor::CPPTYPE_INT32) {
      return Status::invalidArgument("parameter '" + name + "': the field cannot be swept");
    }
    reflection->ClearField(config, field);
    if (integral(value, 1, std::numeric_limits<int32_t>::max(), &integer)) {
      reflection->AddInt32(config, field, static_cast<int32_t>(integer));
      return Status::ok();
    }
    if (value.kind_case() != Value::kListValue) {
      return wrongType(name, "a positive integer or a list of them", value);
    }
    for (const Value& entry : value.list_value().values()) {
      if (!integral(entry, 1, std::numeric_limits<int32_t>::max(), &integer)) {
        return wrongType(name, "a positive integer or a list of them", value);
      }
      reflection->AddInt32(config, field, static_cast<int32_t>(integer));
    }
    return Status::ok();
  }
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_DOUBLE:
    case FieldDescriptor::CPPTYPE_FLOAT:
      if (value.kind_case() != Value::kNumberValue) return wrongType(name, "a number", value);
      if (field->cpp_type() == FieldDescriptor::CPPTYPE_DOUBLE) {
        reflection->SetDouble(config, field, value.number_value());
      } else {
        reflection->SetFloat(config, field, static_cast<float>(value.number_value()));
      }
      return Status::ok();
    case FieldDescriptor::CPPTYPE_INT32:
      if (!integral(value, std::numeric_limits<int32_t>::min(),
                    std::numeric_limits<int32_t>::max(), &integer)) {
        return wrongType(name, "an integer", value);
      }
      reflection->SetInt32(config, field, static_cast<int32_t>(integer));
      return Status::ok();
    case FieldDescriptor::CPPTYPE_INT64:
      if (!integral(value, -9.007199254740992e15, 9.007199254740992e15, &integer)) {
        return wrongType(name, "an integer", value);
      }
      reflection->SetInt64(config, field, integer);
      return Status::ok();
    case FieldDescriptor::CPPTYPE_UINT64:
      if (!integral(value, 0, 9.007199254740992e15, &integer)) {
        return wrongType(name, "a non-negative integer", value);
      }
      reflection->SetUInt64(config, field, static_cast<uint64_t>(integer));
      return Status::ok();
    case FieldDescriptor::CPPTYPE_BOOL:
      if (value.kind_case() != Value::kBoolValue) return wrongType(name, "true or false", value);
      reflection->SetBool(config, field, value.bool_value());
      return Status::ok();
    case FieldDescriptor::CPPTYPE_STRING:
      if (value.kind_case() != Value::kStringValue) return wrongType(name, "a string", value);
      reflection->SetString(config, field, value.string_value());
      return Status::ok();
    default:
      return Status::invalidArgument("parameter '" + name + "': the field cannot be swept");
  }
}

// `text` with every {name} of `values` replaced; "{{" and "}}" are literal braces; any other
// brace is kept as it is.
std::string substitute(const std::string& text, const TrialValues& values) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text.compare(i, 2, "{{") == 0 || text.compare(i, 2, "}}") == 0) {
      out += text[i];
      ++i;
      continue;
    }
    if (text[i] == '{') {
      const size_t close = text.find('}', i + 1);
      if (close != std::string::npos) {
        auto it = values.find(text.substr(i + 1, close - i - 1));
        if (it != values.end()) {
          out += valueArgument(it->second);
          i = close;
          continue;
        }
      }
    }
    out += text[i];
  }
  return out;
}

}  // namespace

Result<v1::RunSpec> trialRunSpec(const v1::SweepSpec& spec, const std::string& sweepId,
                                 uint32_t trial, uint32_t attempt, const TrialValues& values) {
  v1::RunSpec run = spec.base();
  const std::string sweepName = !spec.name().empty() ? spec.name() : spec.base().name();
  run.set_name((sweepName.empty() ? sweepId : sweepName) + " #" + std::to_string(trial));
  run.add_tags("sweep:" + sweepId);
  if (run.has_trainer()) {
    auto config = trainerConfigOf(run.trainer());
    if (!config.isOk()) return config.status();
    v1::TrainerConfig typed = *config;
    for (const auto& [name, value] : values) {
      RINGSIDE_RETURN_IF_ERROR(setTrainerField(&typed, name, value));
    }
    // The typed config wins over a deprecated config_json (RunManager::launch drops that).
    *run.mutable_trainer()->mutable_config() = typed;
  } else if (run.has_python()) {
    for (std::string& arg : *run.mutable_python()->mutable_args()) arg = substitute(arg, values);
  } else if (run.has_command()) {
    for (std::string& arg : *run.mutable_command()->mutable_argv()) arg = substitute(arg, values);
  }
  v1::SweepTrialRef* ref = run.mutable_sweep_trial();
  ref->set_sweep_id(sweepId);
  ref->set_trial(trial);
  ref->set_attempt(attempt);
  for (const auto& [name, text] : valuesJsonMap(values)) (*ref->mutable_params())[name] = text;
  return run;
}

}  // namespace ringside::agent
