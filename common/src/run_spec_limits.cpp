#include "ringside/common/run_spec_limits.h"

#include <string>

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

}  // namespace ringside
