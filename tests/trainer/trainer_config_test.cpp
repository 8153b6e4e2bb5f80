// Options and JSON run specs: defaults, file values, flag overrides, the written spec read back,
// and every kind of bad input.
#include <CLI/CLI.hpp>
#include <google/protobuf/descriptor.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <fstream>

#include "ringside/trainer/trainer_config.h"
#include "test_util.h"

namespace ringside::trainer {
namespace {

// Parses `args` (without the program name); returns the CLI11 error text, or "" on success.
std::string parse(v1::TrainerConfig& config, std::vector<std::string> args) {
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

std::vector<int> hiddenOf(const v1::TrainerConfig& spec) {
  return {spec.hidden().begin(), spec.hidden().end()};
}

TEST(TrainerConfigTest, DefaultsMatchTheDocumentedConfiguration) {
  v1::TrainerConfig config;
  ASSERT_EQ(parse(config, {}), "");
  EXPECT_EQ(hiddenOf(config), (std::vector<int>{256, 128}));
  EXPECT_EQ(config.global_batch(), 128);
  EXPECT_EQ(config.backend(), "auto");
  EXPECT_DOUBLE_EQ(config.bucket_mb(), 0.05);
  EXPECT_EQ(config.data(), "/usr/share/datasets/fashion-mnist");
  EXPECT_EQ(optimizerConfigOf(config).weightDecay, 0.0);
  config.clear_weight_decay();  // absent: the optimizer's default
  config.set_optimizer("adamw");
  EXPECT_EQ(optimizerConfigOf(config).weightDecay, 0.01);
}

TEST(TrainerConfigTest, RunSpecFileWithFlagOverrides) {
  TempDir dir;
  const std::string spec = dir.path() + "/spec.json";
  std::ofstream(spec) << R"({"global_batch": 256, "hidden": [64, 32], "optimizer": "adamw",
                            "lr-schedule": "step", "nesterov": false, "epochs": 7})";
  v1::TrainerConfig config;
  ASSERT_EQ(parse(config, {"--config", spec, "--epochs", "2"}), "");
  EXPECT_EQ(config.global_batch(), 256);
  EXPECT_EQ(hiddenOf(config), (std::vector<int>{64, 32}));
  EXPECT_EQ(config.optimizer(), "adamw");
  EXPECT_EQ(config.lr_schedule(), "step");
  EXPECT_FALSE(config.nesterov());
  EXPECT_EQ(config.epochs(), 2) << "the command line overrides the file";
  EXPECT_DOUBLE_EQ(config.weight_decay(), 0.01) << "adamw's default weight decay";
  EXPECT_TRUE(validateTrainerConfig(config).isOk());

  // A flag given for a key the file has, and --hidden over the file's list.
  ASSERT_EQ(parse(config, {"--config", spec, "--hidden", "8", "--nesterov"}), "");
  EXPECT_EQ(hiddenOf(config), (std::vector<int>{8}));
  EXPECT_TRUE(config.nesterov());
  EXPECT_EQ(config.epochs(), 7);
}

// How the agent passes the run spec to every rank on every node: as text, not a file.
TEST(TrainerConfigTest, RunSpecAsJsonTextOnTheCommandLine) {
  v1::TrainerConfig config;
  ASSERT_EQ(
      parse(config, {"--config-json", R"({"global-batch": 64, "hidden": [32]})", "--epochs", "3"}),
      "");
  EXPECT_EQ(config.global_batch(), 64);
  EXPECT_EQ(hiddenOf(config), (std::vector<int>{32}));
  EXPECT_EQ(config.epochs(), 3);
  const std::string bad = parse(config, {"--config-json", R"({"global_batch": "many"})"});
  EXPECT_NE(bad.find("global_batch"), std::string::npos) << bad;
  TempDir dir;
  std::ofstream(dir.path() + "/spec.json") << "{}";
  EXPECT_NE(parse(config, {"--config-json", "{}", "--config", dir.path() + "/spec.json"}), "")
      << "one run spec, not two";
}

TEST(TrainerConfigTest, HiddenAcceptsCommaList) {
  v1::TrainerConfig config;
  ASSERT_EQ(parse(config, {"--hidden", "512,256,64"}), "");
  EXPECT_EQ(hiddenOf(config), (std::vector<int>{512, 256, 64}));
}

TEST(TrainerConfigTest, BadValuesNameTheOption) {
  v1::TrainerConfig config;
  EXPECT_NE(parse(config, {"--epochs", "0"}).find("--epochs"), std::string::npos);
  EXPECT_NE(parse(config, {"--optimizer", "adam"}).find("adam"), std::string::npos);
  EXPECT_NE(parse(config, {"--global-batch", "-5"}).find("--global-batch"), std::string::npos);
  EXPECT_NE(parse(config, {"--lr", "fast"}).find("--lr"), std::string::npos);
  EXPECT_NE(parse(config, {"--bogus"}).find("--bogus"), std::string::npos);
  EXPECT_NE(parse(config, {"--lr", "nan"}).find("--lr"), std::string::npos);
  // A negative seed used to wrap to 2^64 - 1 silently.
  const std::string negativeSeed = parse(config, {"--seed", "-1"});
  EXPECT_NE(negativeSeed.find("--seed"), std::string::npos) << negativeSeed;
  EXPECT_NE(negativeSeed.find("not -1"), std::string::npos) << negativeSeed;
  ASSERT_EQ(parse(config, {"--seed", "18446744073709551615"}), "");
  EXPECT_EQ(config.seed(), 18446744073709551615ull);
}

TEST(TrainerConfigTest, BadRunSpecFilesAreNamed) {
  TempDir dir;
  const std::string spec = dir.path() + "/spec.json";
  v1::TrainerConfig config;
  // Protobuf's JSON parser accepts a trailing comma, not a missing brace.
  std::ofstream(spec) << R"({"global_batch": 256)";
  EXPECT_NE(parse(config, {"--config", spec}).find("not a valid run spec"), std::string::npos);
  std::ofstream(spec) << R"({"learning_rate": 0.1})";
  const std::string unknown = parse(config, {"--config", spec});
  EXPECT_NE(unknown.find("learning_rate"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("spec.json"), std::string::npos) << unknown;
  std::ofstream(spec) << R"({"hidden": {"a": 1}})";
  EXPECT_NE(parse(config, {"--config", spec}).find("hidden"), std::string::npos);
  std::ofstream(spec) << R"([1, 2])";
  EXPECT_NE(parse(config, {"--config", spec}).find("JSON object"), std::string::npos);
  EXPECT_NE(parse(config, {"--config", dir.path() + "/missing.json"}).find("missing.json"),
            std::string::npos);
  // Values from the file are range-checked like flags, naming the key and its flag.
  std::ofstream(spec) << R"({"epochs": 0})";
  EXPECT_NE(parse(config, {"--config", spec}).find("epochs (--epochs) is 0"), std::string::npos);
  // Every option is a key, output options too.
  std::ofstream(spec) << R"({"quiet": true, "metrics-out": "m.jsonl"})";
  ASSERT_EQ(parse(config, {"--config", spec}), "");
  EXPECT_TRUE(config.quiet());
  EXPECT_EQ(config.metrics_out(), "m.jsonl");
}

TEST(TrainerConfigTest, RunSpecOverOneMebibyteIsRefused) {
  TempDir dir;
  const std::string spec = dir.path() + "/big.json";
  std::ofstream(spec) << R"({"data": ")" << std::string(kMaxTrainerConfigJsonBytes, 'x') << R"("})";
  v1::TrainerConfig config;
  const std::string error = parse(config, {"--config", spec});
  EXPECT_NE(error.find("big.json"), std::string::npos) << error;
  EXPECT_NE(error.find("1 MiB"), std::string::npos) << error;
}

// What the trainer writes as its run spec ("start" record, the agent's spec.json) reads back as
// the same run spec.
TEST(TrainerConfigTest, WrittenRunSpecReadsBackTheSame) {
  TempDir dir;
  v1::TrainerConfig first;
  ASSERT_EQ(parse(first, {"--optimizer", "adamw", "--hidden", "32,16", "--seed",
                          "18446744073709551557", "--lr", "0.003", "--no-nesterov"}),
            "");
  const std::string spec = dir.path() + "/spec.json";
  std::ofstream(spec) << trainerConfigToJson(first, /*multiline=*/true);
  v1::TrainerConfig second;
  ASSERT_EQ(parse(second, {"--config", spec}), "");
  EXPECT_EQ(second.SerializeAsString(), first.SerializeAsString());
  EXPECT_EQ(second.seed(), 18446744073709551557ull);
}

// The floating-point keys of the run spec, as flags ("--lr"), read from the schema so that a key
// added later is covered too.
std::vector<std::string> floatingPointFlags() {
  std::vector<std::string> flags;
  const google::protobuf::Descriptor* descriptor = v1::TrainerConfig::descriptor();
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const google::protobuf::FieldDescriptor* field = descriptor->field(i);
    if (field->cpp_type() != google::protobuf::FieldDescriptor::CPPTYPE_DOUBLE) continue;
    std::string flag = "--" + field->name();
    std::replace(flag.begin(), flag.end(), '_', '-');
    flags.push_back(flag);
  }
  return flags;
}

// The bug: `--lr nan` was accepted. Every floating-point option refuses nan, inf and -inf, also
// --weight-decay, where a negative value means "the optimizer's default", and also from a file.
TEST(TrainerConfigTest, NonFiniteValuesAreRefusedForEveryFloatingPointOption) {
  const std::vector<std::string> flags = floatingPointFlags();
  ASSERT_GE(flags.size(), 10u);
  for (const std::string& flag : flags) {
    for (const char* value : {"nan", "inf", "-inf", "NaN", "-Infinity"}) {
      v1::TrainerConfig config;
      const std::string error = parse(config, {flag, value});
      EXPECT_NE(error.find(flag), std::string::npos) << flag << " " << value << ": " << error;
    }
  }
  TempDir dir;
  const std::string spec = dir.path() + "/spec.json";
  std::ofstream(spec) << R"({"weight_decay": "-Infinity"})";
  v1::TrainerConfig config;
  const std::string error = parse(config, {"--config", spec});
  EXPECT_NE(error.find("weight_decay (--weight-decay) is -inf: use a finite number"),
            std::string::npos)
      << error;
}

// The bug: range messages printed a number such as 1e300 with all its 301 digits. Every
// floating-point option given a huge value is refused or accepted, and a refusal shows the
// number in short form.
TEST(TrainerConfigTest, RangeMessagesShowHugeNumbersInShortFormNotThreeHundredDigits) {
  for (const std::string& flag : floatingPointFlags()) {
    for (const char* value : {"1e300", "-1e300", "1e-300"}) {
      v1::TrainerConfig config;
      const std::string error = parse(config, {flag, value});
      size_t longestDigits = 0, digits = 0;
      for (char c : error) {
        digits = std::isdigit(static_cast<unsigned char>(c)) ? digits + 1 : 0;
        longestDigits = std::max(longestDigits, digits);
      }
      EXPECT_LE(longestDigits, 17u) << flag << " " << value << ": " << error;
    }
  }
  v1::TrainerConfig config;
  const std::string gamma = parse(config, {"--lr-gamma", "1e300"});
  EXPECT_NE(gamma.find("lr_gamma (--lr-gamma) is 1e+300"), std::string::npos) << gamma;
}

TEST(TrainerConfigTest, CombinationsAreValidated) {
  v1::TrainerConfig config;
  config.set_lr_min(1.0);
  auto status = validateTrainerConfig(config);
  ASSERT_FALSE(status.isOk());
  EXPECT_NE(status.message().find("--lr-min"), std::string::npos);
}

}  // namespace
}  // namespace ringside::trainer

namespace ringside::trainer {
namespace {

TEST(TrainerConfigTest, CnnKeysParseAndBuildTheModel) {
  v1::TrainerConfig config;
  ASSERT_EQ(parse(config, {}), "");
  EXPECT_EQ(config.model(), "mlp") << "the default model stays the MLP";
  EXPECT_EQ(std::vector<int>(config.channels().begin(), config.channels().end()),
            (std::vector<int>{32, 64}));
  EXPECT_DOUBLE_EQ(config.dropout(), 0.25);

  ASSERT_EQ(parse(config, {"--model", "cnn", "--channels", "16,32,48", "--dropout", "0.5"}), "");
  EXPECT_EQ(config.model(), "cnn");
  EXPECT_EQ(config.channels_size(), 3);
  ImageDataset train;
  train.featureDim = 784;
  train.rows = 28;
  train.cols = 28;
  train.numClasses = 10;
  auto model = modelLayoutOf(config, train);
  ASSERT_TRUE(model.isOk()) << model.status().toString();
  EXPECT_TRUE(model->isCnn());
  EXPECT_EQ(model->shapeVector(), (std::vector<int>{1, 28, 28, 16, 32, 48, 128, 10}));
  EXPECT_DOUBLE_EQ(model->cnn().shape().dropout, 0.5);

  // Five stages cannot pool 28x28: refused when the layout is built, naming the limit.
  ASSERT_EQ(parse(config, {"--model", "cnn", "--channels", "8,8,8,8,8"}), "");
  auto deep = modelLayoutOf(config, train);
  ASSERT_FALSE(deep.isOk());
  EXPECT_NE(deep.status().message().find("--channels"), std::string::npos);

  EXPECT_NE(parse(config, {"--model", "rnn"}).find("model (--model)"), std::string::npos);
  EXPECT_NE(parse(config, {"--dropout", "1"}).find("dropout (--dropout)"), std::string::npos);
  EXPECT_NE(parse(config, {"--channels", "0"}).find("channels (--channels)"), std::string::npos);

  ASSERT_EQ(parse(config, {}), "");
  EXPECT_EQ(config.conv_algorithm(), "auto");
  ASSERT_EQ(parse(config, {"--model", "cnn", "--conv-algorithm", "direct"}), "");
  EXPECT_EQ(config.conv_algorithm(), "direct");
  EXPECT_NE(parse(config, {"--conv-algorithm", "fft"}).find("conv_algorithm (--conv-algorithm)"),
            std::string::npos);
}

}  // namespace
}  // namespace ringside::trainer
