// The typed run spec (TrainerConfig): defaults, JSON with protobuf's mapping (round trip, unknown
// keys, '-' keys, size and depth bounds), the deprecated config_json still read, and validation.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "ringside/common/json_limits.h"
#include "ringside/common/run_spec.h"

namespace ringside {
namespace {

TEST(RunSpecTest, DefaultsSetEveryField) {
  const v1::TrainerConfig& defaults = defaultTrainerConfig();
  const auto* descriptor = v1::TrainerConfig::descriptor();
  const auto* reflection = v1::TrainerConfig::GetReflection();
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const auto* field = descriptor->field(i);
    if (field->is_repeated()) {
      EXPECT_GT(reflection->FieldSize(defaults, field), 0) << field->name();
    } else {
      EXPECT_TRUE(reflection->HasField(defaults, field)) << field->name() << " has no default";
    }
  }
  EXPECT_TRUE(validateTrainerConfig(defaults).isOk());
  EXPECT_EQ(defaults.data(), "/usr/share/datasets/fashion-mnist");
  EXPECT_EQ(defaults.epochs(), 3);
  EXPECT_EQ(defaults.global_batch(), 128);
  EXPECT_EQ(defaults.optimizer(), "sgd");
  EXPECT_DOUBLE_EQ(defaults.lr(), 0.1);
}

TEST(RunSpecTest, AbsentFieldsTakeTheirDefaults) {
  v1::TrainerConfig config;
  config.set_optimizer("adamw");
  config.set_epochs(7);
  const v1::TrainerConfig resolved = withTrainerDefaults(config);
  EXPECT_EQ(resolved.epochs(), 7);
  EXPECT_EQ(resolved.global_batch(), 128);
  EXPECT_EQ(resolved.hidden_size(), 2);
  EXPECT_DOUBLE_EQ(resolved.weight_decay(), 0.01) << "AdamW's default weight decay";
  config.set_weight_decay(-1.0);
  EXPECT_DOUBLE_EQ(withTrainerDefaults(config).weight_decay(), 0.01) << "negative: the default";
  config.set_weight_decay(0.0);
  EXPECT_DOUBLE_EQ(withTrainerDefaults(config).weight_decay(), 0.0) << "0 is a value";

  v1::TrainerConfig over;
  over.add_hidden(8);
  over.set_epochs(2);
  overlayTrainerConfig(over, &config);
  EXPECT_EQ(config.hidden_size(), 1) << "hidden is replaced, not appended";
  EXPECT_EQ(config.epochs(), 2);
  EXPECT_EQ(config.optimizer(), "adamw") << "fields `over` lacks stay";
}

// The CNN's default schedule is longer: 3 epochs leave it below its published baseline's 0.916
// test accuracy (bench/README.md, cnn_vs_pytorch). A set epochs always wins.
TEST(RunSpecTest, TheCnnTrainsFiveEpochsByDefault) {
  v1::TrainerConfig config;
  EXPECT_EQ(withTrainerDefaults(config).epochs(), 3);
  config.set_model("cnn");
  EXPECT_EQ(withTrainerDefaults(config).epochs(), 5);
  config.set_epochs(3);
  EXPECT_EQ(withTrainerDefaults(config).epochs(), 3);
  config.set_model("mlp");
  config.clear_epochs();
  EXPECT_EQ(withTrainerDefaults(config).epochs(), 3);
  // A CNN set by a command-line flag over a --config file without epochs.
  v1::TrainerConfig file;
  v1::TrainerConfig flags;
  flags.set_model("cnn");
  overlayTrainerConfig(flags, &file);
  EXPECT_EQ(withTrainerDefaults(file).epochs(), 5);
}

// A micro-batch is a number of samples, 0 for one pass (the local batch it must divide is known
// only at start: trainer_process_test).
TEST(RunSpecTest, MicroBatchIsNotNegative) {
  v1::TrainerConfig config;
  EXPECT_EQ(withTrainerDefaults(config).micro_batch(), 0);
  config.set_micro_batch(-1);
  const Status status = validateTrainerConfig(config);
  EXPECT_FALSE(status.isOk());
  EXPECT_NE(status.message().find("micro_batch (--micro-batch) is -1"), std::string::npos)
      << status.message();
  config.set_micro_batch(32);
  EXPECT_TRUE(validateTrainerConfig(config).isOk());
}

// The convolution algorithm is auto unless set, and only auto or direct.
TEST(RunSpecTest, ConvAlgorithmIsAutoOrDirect) {
  v1::TrainerConfig config;
  EXPECT_EQ(withTrainerDefaults(config).conv_algorithm(), "auto");
  config.set_conv_algorithm("direct");
  EXPECT_TRUE(validateTrainerConfig(config).isOk());
  EXPECT_EQ(withTrainerDefaults(config).conv_algorithm(), "direct");
  config.set_conv_algorithm("winograd");
  const Status status = validateTrainerConfig(config);
  EXPECT_FALSE(status.isOk());
  EXPECT_NE(status.message().find("conv_algorithm (--conv-algorithm) is \"winograd\""),
            std::string::npos)
      << status.message();
  EXPECT_NE(status.message().find("auto, direct"), std::string::npos) << status.message();
}

TEST(RunSpecTest, JsonRoundTripWithProtobufsMapping) {
  v1::TrainerConfig config;
  config.set_global_batch(256);
  config.add_hidden(512);
  config.add_hidden(64);
  config.set_lr(0.003);
  config.set_nesterov(false);
  config.set_max_steps(0);                   // set to 0: present, not absent
  config.set_seed(18446744073709551557ull);  // above 2^53
  config.set_lr_schedule("step");
  const std::string json = trainerConfigToJson(config);
  EXPECT_NE(json.find("\"global_batch\":256"), std::string::npos) << json;
  EXPECT_NE(json.find("\"lr_schedule\":\"step\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"max_steps\":0"), std::string::npos) << json;
  EXPECT_NE(json.find("\"seed\":\"18446744073709551557\""), std::string::npos) << json;
  EXPECT_EQ(json.find("epochs"), std::string::npos) << "absent fields are not written: " << json;
  auto back = trainerConfigFromJson(json);
  ASSERT_TRUE(back.isOk()) << back.status().toString();
  EXPECT_EQ(back->SerializeAsString(), config.SerializeAsString());
  EXPECT_FALSE(back->has_epochs());
  EXPECT_TRUE(back->has_max_steps());

  auto multiline = trainerConfigFromJson(trainerConfigToJson(config, /*multiline=*/true));
  ASSERT_TRUE(multiline.isOk());
  EXPECT_EQ(multiline->SerializeAsString(), config.SerializeAsString());
}

TEST(RunSpecTest, KeysWithDashesAndNumbersAsStringsAreRead) {
  auto config = trainerConfigFromJson(
      R"({"global-batch": 64, "lr_schedule": "cosine", "seed": 7, "epochs": null})");
  ASSERT_TRUE(config.isOk()) << config.status().toString();
  EXPECT_EQ(config->global_batch(), 64);
  EXPECT_EQ(config->lr_schedule(), "cosine");
  EXPECT_EQ(config->seed(), 7u);
  EXPECT_FALSE(config->has_epochs()) << "null means absent";
  auto seed = trainerConfigFromJson(R"({"seed": "42"})");
  ASSERT_TRUE(seed.isOk());
  EXPECT_EQ(seed->seed(), 42u);
}

TEST(RunSpecTest, UnknownKeysAndBadValuesAreRejectedNamingThem) {
  auto unknown = trainerConfigFromJson(R"({"epochs": 2, "learning_rate": 0.1})", "spec.json");
  ASSERT_FALSE(unknown.isOk());
  EXPECT_EQ(unknown.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(unknown.status().message().find("learning_rate"), std::string::npos)
      << unknown.status().message();
  EXPECT_NE(unknown.status().message().find("spec.json"), std::string::npos);

  for (const char* bad :
       {R"({"epochs": "three"})", R"({"global_batch": 1.5})", R"({"hidden": {"a": 1}})",
        R"({"epochs": 3)", "[1, 2]", "", R"({"seed": -1})", R"({"global_batch": 3000000000})"}) {
    auto parsed = trainerConfigFromJson(bad);
    EXPECT_FALSE(parsed.isOk()) << bad;
    if (!parsed.isOk()) {
      EXPECT_NE(parsed.status().message().find("not a valid run spec"), std::string::npos)
          << parsed.status().message();
    }
  }
}

TEST(RunSpecTest, SizeAndDepthAreBounded) {
  const std::string big = R"({"data": ")" + std::string(kMaxTrainerConfigJsonBytes, 'x') + R"("})";
  auto tooBig = trainerConfigFromJson(big, "big.json");
  ASSERT_FALSE(tooBig.isOk());
  EXPECT_NE(tooBig.status().message().find("1 MiB"), std::string::npos);
  EXPECT_NE(tooBig.status().message().find("big.json"), std::string::npos);
  // Deep nesting within the size bound is refused before protobuf reads it (kMaxJsonDepth).
  std::string deepObject = R"({"data": )";
  std::string deepList = R"({"hidden": )";
  for (int i = 0; i < 100'000; ++i) {
    deepObject += R"({"a": )";
    deepList += "[";
  }
  deepObject += "1";
  for (int i = 0; i < 100'000; ++i) {
    deepObject += "}";
    deepList += "]";
  }
  deepObject += "}";
  deepList += "}";
  ASSERT_LE(deepObject.size(), kMaxTrainerConfigJsonBytes);
  EXPECT_FALSE(trainerConfigFromJson(deepObject).isOk());
  EXPECT_FALSE(trainerConfigFromJson(deepList).isOk());
}

// Regression: a config_json nested 100,000 levels deep crashed the agent, and protobuf
// alone reads 100,000 nested lists in "hidden" as no layers at all (the run would silently take
// the default widths). Now both are InvalidArgument naming config_json and the bound.
TEST(RunSpecLimits, DeeplyNestedConfigJsonIsRefusedNotACrash) {
  std::string deepList = R"({"hidden": )";
  std::string deepObject = R"({"data": )";
  for (int i = 0; i < 100'000; ++i) {
    deepList += "[";
    deepObject += R"({"a": )";
  }
  deepList += std::string(100'000, ']') + "}";
  deepObject += "1" + std::string(100'000, '}') + "}";
  for (const std::string& json : {deepList, deepObject}) {
    v1::TrainerJob job;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    job.set_config_json(json);
#pragma GCC diagnostic pop
    auto config = trainerConfigOf(job);
    ASSERT_FALSE(config.isOk());
    EXPECT_EQ(config.status().code(), Status::Code::kInvalidArgument);
    EXPECT_NE(config.status().message().find("config_json nests objects and arrays more than " +
                                             std::to_string(kMaxJsonDepth) + " levels"),
              std::string::npos)
        << config.status().message();
  }
  // A spec nested as deep as a run spec can be is read as before.
  auto shallow = trainerConfigFromJson(R"({"hidden": [64, 32], "epochs": 2})");
  ASSERT_TRUE(shallow.isOk()) << shallow.status().toString();
  EXPECT_EQ(shallow->hidden_size(), 2);
}

// Specs journaled or stored before TrainerJob.config existed carry config_json: still read.
TEST(RunSpecTest, DeprecatedConfigJsonIsStillRead) {
  v1::TrainerJob job;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  // As the GUI wrote it before: seed as a string, every key snake_case.
  job.set_config_json(
      R"({"data":"/data/mnist","epochs":2,"global_batch":96,"hidden":[64],"seed":"18446744073709551557"})");
#pragma GCC diagnostic pop
  auto config = trainerConfigOf(job);
  ASSERT_TRUE(config.isOk()) << config.status().toString();
  EXPECT_EQ(config->data(), "/data/mnist");
  EXPECT_EQ(config->epochs(), 2);
  EXPECT_EQ(config->global_batch(), 96);
  EXPECT_EQ(config->hidden_size(), 1);
  EXPECT_EQ(config->seed(), 18446744073709551557ull);
  EXPECT_FALSE(config->has_lr());

  // The typed config wins when both are there; neither: the defaults.
  job.mutable_config()->set_epochs(5);
  EXPECT_EQ(trainerConfigOf(job)->epochs(), 5);
  EXPECT_FALSE(trainerConfigOf(v1::TrainerJob())->has_epochs());

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  v1::TrainerJob broken;
  broken.set_config_json("[1, 2]");
#pragma GCC diagnostic pop
  auto bad = trainerConfigOf(broken);
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(bad.status().message().find("config_json"), std::string::npos);
}

TEST(RunSpecTest, ValidationNamesTheKeyTheFlagAndTheRange) {
  const auto messageOf = [](auto set) {
    v1::TrainerConfig config;
    set(config);
    const Status status = validateTrainerConfig(config);
    EXPECT_EQ(status.code(), Status::Code::kInvalidArgument);
    return status.message();
  };
  EXPECT_EQ(messageOf([](auto& c) { c.set_epochs(0); }),
            "epochs (--epochs) is 0: use 1 to 1000000");
  EXPECT_NE(messageOf([](auto& c) { c.set_optimizer("adam"); }).find("sgd, adamw"),
            std::string::npos);
  EXPECT_NE(messageOf([](auto& c) { c.set_lr(std::nan("")); }).find("lr (--lr)"),
            std::string::npos);
  EXPECT_NE(messageOf([](auto& c) { c.set_global_batch(-5); }).find("--global-batch"),
            std::string::npos);
  EXPECT_NE(messageOf([](auto& c) { c.add_hidden(0); }).find("hidden"), std::string::npos);
  EXPECT_NE(messageOf([](auto& c) {
              for (int i = 0; i <= kMaxHiddenLayers; ++i) c.add_hidden(8);
            }).find("layers"),
            std::string::npos);
  EXPECT_NE(messageOf([](auto& c) { c.set_backend("cuda"); }).find("auto, mpi, nccl"),
            std::string::npos);
  EXPECT_NE(messageOf([](auto& c) { c.set_lr_min(1.0); }).find("--lr-min"), std::string::npos);
  EXPECT_NE(messageOf([](auto& c) {
              c.set_optimizer("adamw");
              c.set_beta2(1.0);
            }).find("beta2"),
            std::string::npos);
  EXPECT_NE(messageOf([](auto& c) { c.set_data(""); }).find("data (--data)"), std::string::npos);
}

TEST(RunSpecTest, CollectiveAndHangTimeoutsAreBoundedAndOrdered) {
  EXPECT_EQ(defaultTrainerConfig().collective_timeout_s(), 900);
  v1::TrainerConfig config;
  config.set_collective_timeout_s(5);
  EXPECT_EQ(validateTrainerConfig(config).message(),
            "collective_timeout_s (--collective-timeout-s) is 5: use 0 (wait forever) or 10 to "
            "604800 seconds");
  config.set_collective_timeout_s(0);
  EXPECT_TRUE(validateTrainerConfig(config).isOk());

  v1::RunSpec spec;
  EXPECT_EQ(hangTimeoutSeconds(spec), 600u);
  spec.mutable_trainer();
  EXPECT_TRUE(validateHangTimeout(spec).isOk());  // 600 s < the default 900 s
  spec.set_hang_timeout_s(0);
  EXPECT_EQ(hangTimeoutSeconds(spec), 0u);
  EXPECT_TRUE(validateHangTimeout(spec).isOk());
  spec.set_hang_timeout_s(900);
  const Status tooLong = validateHangTimeout(spec);
  EXPECT_EQ(tooLong.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(tooLong.message().find("collective_timeout_s, 900 s"), std::string::npos)
      << tooLong.message();
  spec.mutable_trainer()->mutable_config()->set_collective_timeout_s(0);  // the trainer never
  EXPECT_TRUE(validateHangTimeout(spec).isOk());
  spec.set_hang_timeout_s(kMaxTimeoutSeconds + 1);
  EXPECT_NE(validateHangTimeout(spec).message().find("at most 604800"), std::string::npos);
  v1::RunSpec command;
  command.mutable_command()->add_argv("python3");
  command.set_hang_timeout_s(3600);  // no trainer deadline to be shorter than
  EXPECT_TRUE(validateHangTimeout(command).isOk());
}

// Set-up and checkpoint writes are bounded by RunSpec.phase_timeout_s.
TEST(RunSpecTest, PhaseTimeoutDefaultsToTenMinutesAndIsBoundedByAWeek) {
  v1::RunSpec spec;
  spec.mutable_trainer();
  EXPECT_EQ(phaseTimeoutSeconds(spec), 600u);
  spec.set_phase_timeout_s(0);
  EXPECT_EQ(phaseTimeoutSeconds(spec), 0u);  // no bound
  EXPECT_TRUE(validateHangTimeout(spec).isOk());
  spec.set_phase_timeout_s(kMaxTimeoutSeconds);
  EXPECT_TRUE(validateHangTimeout(spec).isOk());
  spec.set_phase_timeout_s(kMaxTimeoutSeconds + 1);
  const Status tooLong = validateHangTimeout(spec);
  EXPECT_EQ(tooLong.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(tooLong.message(),
            "the phase timeout (phase_timeout_s) is 604801 s: use 0 (no bound on set-up and "
            "checkpoint writes) or at most 604800 s (a week)");
}

}  // namespace
}  // namespace ringside
