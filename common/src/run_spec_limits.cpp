#include "ringside/common/run_spec_limits.h"

#include "ringside/common/utf8.h"

#include <algorithm>
#include <string>
#include <utility>

namespace ringside {
namespace {

Status tooLarge(const std::string& what, size_t size, size_t bound, const std::string& unit) {
  return Status::invalidArgument(what + " is " + std::to_string(size) + " " + unit + "; at most " +
                                 std::to_string(bound) + " " + unit + " are accepted");
}

}  // namespace

Status validateRunSpecLimits(const v1::RunSpec& spec) {
  if (spec.name().size() > kMaxRunNameBytes) {
    return tooLarge("the run's name", spec.name().size(), kMaxRunNameBytes, "bytes");
  }
  if (static_cast<size_t>(spec.tags_size()) > kMaxRunTags) {
    return tooLarge("the run's tag list", spec.tags_size(), kMaxRunTags, "tags");
  }
  for (const std::string& tag : spec.tags()) {
    if (tag.size() > kMaxRunTagBytes)
      return tooLarge("a tag", tag.size(), kMaxRunTagBytes, "bytes");
  }
  // A Slurm job's names and GPU request (the Slurm engine checks their characters).
  for (const auto& [text, what] : {std::pair{&spec.slurm().partition(), "the Slurm partition"},
                                   std::pair{&spec.slurm().account(), "the Slurm account"},
                                   std::pair{&spec.slurm().qos(), "the Slurm QOS"}}) {
    if (text->size() > kMaxSlurmNameBytes) {
      return tooLarge(what, text->size(), kMaxSlurmNameBytes, "bytes");
    }
  }
  if (spec.slurm().gpu_request().size() > kMaxSlurmGpuRequestBytes) {
    return tooLarge("the Slurm GPU request", spec.slurm().gpu_request().size(),
                    kMaxSlurmGpuRequestBytes, "bytes");
  }
  size_t words = spec.mpirun_args_size();
  size_t commandBytes = 0;
  for (const std::string& word : spec.mpirun_args()) {
    if (word.size() > kMaxArgBytes) {
      return tooLarge("an mpirun option", word.size(), kMaxArgBytes, "bytes");
    }
    commandBytes += word.size() + 1;
  }
  if (spec.has_command()) {
    words += spec.command().argv_size();
    for (const std::string& word : spec.command().argv()) {
      if (word.size() > kMaxArgBytes) {
        return tooLarge("a word of the command", word.size(), kMaxArgBytes, "bytes");
      }
      commandBytes += word.size() + 1;
    }
    if (spec.command().working_dir().size() > kMaxPathBytes) {
      return tooLarge("the working directory", spec.command().working_dir().size(), kMaxPathBytes,
                      "bytes");
    }
  }
  if (spec.has_python()) {
    const v1::PythonScript& job = spec.python();
    words += 2 + job.args_size();
    for (const std::string& word : job.args()) {
      if (word.size() > kMaxArgBytes) {
        return tooLarge("an argument of the script", word.size(), kMaxArgBytes, "bytes");
      }
      commandBytes += word.size() + 1;
    }
    for (const auto& [what, path] : {std::pair<const char*, const std::string*>{"the script path",
                                                                                &job.script()},
                                     {"the Python interpreter's path", &job.python()},
                                     {"the working directory", &job.working_dir()}}) {
      if (path->size() > kMaxPathBytes) return tooLarge(what, path->size(), kMaxPathBytes, "bytes");
      commandBytes += path->size() + 1;
    }
  }
  if (words > kMaxArgvWords) return tooLarge("the command line", words, kMaxArgvWords, "words");
  if (commandBytes > kMaxCommandLineBytes) {
    return tooLarge("the command line", commandBytes, kMaxCommandLineBytes, "bytes");
  }
  if (spec.has_trainer() && spec.trainer().trainer_path().size() > kMaxPathBytes) {
    return tooLarge("trainer_path", spec.trainer().trainer_path().size(), kMaxPathBytes, "bytes");
  }
  if (static_cast<size_t>(spec.env_size()) > kMaxEnvEntries) {
    return tooLarge("the run's environment", spec.env_size(), kMaxEnvEntries, "variables");
  }
  size_t envBytes = 0;
  for (const auto& [name, value] : spec.env()) envBytes += name.size() + value.size() + 2;
  if (envBytes > kMaxEnvBytes) {
    return tooLarge("the run's environment", envBytes, kMaxEnvBytes, "bytes");
  }
  if (static_cast<size_t>(spec.hosts_size()) > kMaxRunHosts) {
    return tooLarge("the run's host list", spec.hosts_size(), kMaxRunHosts, "hosts");
  }
  const size_t total = spec.ByteSizeLong();
  if (total > kMaxRunSpecBytes) {
    return tooLarge("the run spec", total, kMaxRunSpecBytes, "bytes serialized");
  }
  return Status::ok();
}

Status validateRunParams(const google::protobuf::Map<std::string, std::string>& params) {
  if (params.size() > kMaxRunParams) {
    return tooLarge("the run's parameter list", params.size(), kMaxRunParams, "keys");
  }
  for (const auto& [key, value] : params) {
    if (key.empty()) return Status::invalidArgument("a run parameter has an empty key");
    if (key.size() > kMaxRunParamKeyBytes) {
      return tooLarge("the run parameter key '" + key.substr(0, 64) + "...'", key.size(),
                      kMaxRunParamKeyBytes, "bytes");
    }
    if (std::any_of(key.begin(), key.end(),
                    [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; })) {
      return Status::invalidArgument("the run parameter key '" + toValidUtf8(key) +
                                     "' has a control character: use printable names");
    }
    if (!isValidUtf8(key) || !isValidUtf8(value)) {
      return Status::invalidArgument("the run parameter '" + toValidUtf8(key) +
                                     "' is not valid UTF-8");
    }
    if (value.size() > kMaxRunParamValueBytes) {
      return tooLarge("the value of run parameter '" + key + "'", value.size(),
                      kMaxRunParamValueBytes, "bytes");
    }
  }
  return Status::ok();
}

}  // namespace ringside
