// Bounds on a RunSpec's fields: each over-long field is refused naming it.
#include "ringside/common/run_spec_limits.h"

#include <gtest/gtest.h>

namespace ringside {
namespace {

void expectRefused(const v1::RunSpec& spec, const std::string& naming) {
  const Status status = validateRunSpecLimits(spec);
  EXPECT_EQ(status.code(), Status::Code::kInvalidArgument) << naming;
  EXPECT_NE(status.message().find(naming), std::string::npos) << status.message();
}

TEST(RunSpecLimitsTest, AnOrdinarySpecPasses) {
  v1::RunSpec spec;
  spec.set_name("resnet sweep 3");
  spec.add_tags("baseline");
  spec.mutable_command()->add_argv("python3");
  spec.mutable_command()->add_argv("train.py");
  (*spec.mutable_env())["OMP_NUM_THREADS"] = "1";
  EXPECT_TRUE(validateRunSpecLimits(spec).isOk());
}

TEST(RunSpecLimitsTest, EachOverLongFieldIsRefusedNamingIt) {
  v1::RunSpec name;
  name.set_name(std::string(kMaxRunNameBytes + 1, 'n'));
  expectRefused(name, "the run's name is 257 bytes; at most 256");

  v1::RunSpec tags;
  for (size_t i = 0; i <= kMaxRunTags; ++i) tags.add_tags("t");
  expectRefused(tags, "tag list");
  v1::RunSpec tag;
  tag.add_tags(std::string(kMaxRunTagBytes + 1, 't'));
  expectRefused(tag, "a tag is");

  v1::RunSpec word;
  word.mutable_command()->add_argv(std::string(kMaxArgBytes + 1, 'w'));
  expectRefused(word, "a word of the command");
  v1::RunSpec words;
  for (size_t i = 0; i <= kMaxArgvWords; ++i) words.mutable_command()->add_argv("w");
  expectRefused(words, "4097 words");
  v1::RunSpec line;
  for (int i = 0; i < 9; ++i) line.mutable_command()->add_argv(std::string(kMaxArgBytes, 'w'));
  expectRefused(line, "the command line is");
  v1::RunSpec option;
  option.add_mpirun_args(std::string(kMaxArgBytes + 1, '-'));
  expectRefused(option, "an mpirun option");

  v1::RunSpec dir;
  dir.mutable_command()->add_argv("true");
  dir.mutable_command()->set_working_dir(std::string(kMaxPathBytes + 1, 'd'));
  expectRefused(dir, "the working directory");
  v1::RunSpec trainer;
  trainer.mutable_trainer()->set_trainer_path(std::string(kMaxPathBytes + 1, 'p'));
  expectRefused(trainer, "trainer_path");

  v1::RunSpec envCount;
  for (size_t i = 0; i <= kMaxEnvEntries; ++i)
    (*envCount.mutable_env())["V" + std::to_string(i)] = "";
  expectRefused(envCount, "1025 variables");
  v1::RunSpec envBytes;
  (*envBytes.mutable_env())["BIG"] = std::string(kMaxEnvBytes, 'v');
  expectRefused(envBytes, "the run's environment is");

  v1::RunSpec hosts;
  for (size_t i = 0; i <= kMaxRunHosts; ++i) hosts.add_hosts()->set_host("h");
  expectRefused(hosts, "host list");
}

TEST(RunSpecLimitsTest, TheWholeSpecIsBoundedToo) {
  v1::RunSpec spec;
  // Every field within its own bound, the sum over 2 MiB: a trainer config near its own bound
  // plus the command line's and the environment's.
  spec.mutable_trainer()->mutable_config()->set_data(std::string(1900 * 1024, 'd'));
  (*spec.mutable_env())["A"] = std::string(200 * 1024, 'a');
  expectRefused(spec, "the run spec is");
}

}  // namespace
}  // namespace ringside
