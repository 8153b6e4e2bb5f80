// Options and JSON run specs: defaults, file values, flag overrides and every kind of bad input.
#include <gtest/gtest.h>

#include <fstream>

#include "ringside/trainer/trainer_config.h"
#include "test_util.h"

namespace ringside::trainer {
namespace {

// Parses `args` (without the program name); returns the CLI11 error text, or "" on success.
std::string parse(TrainerConfig& config, std::vector<std::string> args) {
  CLI::App app;
  addTrainerOptions(app, config);
  std::vector<const char*> argv = {"ringside-trainer"};
  for (const auto& a : args) argv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    return e.what();
  }
  return "";
}

TEST(TrainerConfigTest, DefaultsMatchTheDocumentedConfiguration) {
  TrainerConfig config;
  ASSERT_EQ(parse(config, {}), "");
  EXPECT_EQ(config.hidden, (std::vector<int>{256, 128}));
  EXPECT_EQ(config.globalBatch, 128);
  EXPECT_EQ(config.backend, "auto");
  EXPECT_DOUBLE_EQ(config.bucketMb, 25.0);
  EXPECT_EQ(optimizerConfigOf(config).weightDecay, 0.0);
  config.optimizer = "adamw";
  EXPECT_EQ(optimizerConfigOf(config).weightDecay, 0.01);
}

TEST(TrainerConfigTest, RunSpecFileWithFlagOverrides) {
  TempDir dir;
  const std::string spec = dir.path() + "/spec.json";
  std::ofstream(spec) << R"({"global_batch": 256, "hidden": [64, 32], "optimizer": "adamw",
                            "lr-schedule": "step", "nesterov": false, "epochs": 7})";
  TrainerConfig config;
  ASSERT_EQ(parse(config, {"--config", spec, "--epochs", "2"}), "");
  EXPECT_EQ(config.globalBatch, 256);
  EXPECT_EQ(config.hidden, (std::vector<int>{64, 32}));
  EXPECT_EQ(config.optimizer, "adamw");
  EXPECT_EQ(config.lrSchedule, "step");
  EXPECT_FALSE(config.nesterov);
  EXPECT_EQ(config.epochs, 2) << "the command line overrides the file";
  EXPECT_TRUE(validateTrainerConfig(config).isOk());
}

TEST(TrainerConfigTest, HiddenAcceptsCommaList) {
  TrainerConfig config;
  ASSERT_EQ(parse(config, {"--hidden", "512,256,64"}), "");
  EXPECT_EQ(config.hidden, (std::vector<int>{512, 256, 64}));
}

TEST(TrainerConfigTest, BadValuesNameTheOption) {
  TrainerConfig config;
  EXPECT_NE(parse(config, {"--epochs", "0"}).find("--epochs"), std::string::npos);
  EXPECT_NE(parse(config, {"--optimizer", "adam"}).find("adam"), std::string::npos);
  EXPECT_NE(parse(config, {"--global-batch", "-5"}).find("--global-batch"), std::string::npos);
  EXPECT_NE(parse(config, {"--lr", "fast"}).find("--lr"), std::string::npos);
  EXPECT_NE(parse(config, {"--bogus"}).find("--bogus"), std::string::npos);
}

TEST(TrainerConfigTest, BadRunSpecFilesAreNamed) {
  TempDir dir;
  const std::string spec = dir.path() + "/spec.json";
  TrainerConfig config;
  std::ofstream(spec) << R"({"global_batch": 256,})";
  EXPECT_NE(parse(config, {"--config", spec}).find("not valid JSON"), std::string::npos);
  std::ofstream(spec) << R"({"learning_rate": 0.1})";
  EXPECT_NE(parse(config, {"--config", spec}).find("unknown key 'learning_rate'"),
            std::string::npos);
  std::ofstream(spec) << R"({"hidden": {"a": 1}})";
  EXPECT_NE(parse(config, {"--config", spec}).find("'hidden'"), std::string::npos);
  std::ofstream(spec) << R"([1, 2])";
  EXPECT_NE(parse(config, {"--config", spec}).find("JSON object"), std::string::npos);
  EXPECT_NE(parse(config, {"--config", dir.path() + "/missing.json"}), "");
}

TEST(TrainerConfigTest, CombinationsAreValidated) {
  TrainerConfig config;
  config.lrMin = 1.0;
  auto status = validateTrainerConfig(config);
  ASSERT_FALSE(status.isOk());
  EXPECT_NE(status.message().find("--lr-min"), std::string::npos);
}

}  // namespace
}  // namespace ringside::trainer
