#include "ringside/trainer/trainer_config.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <sstream>

namespace ringside::trainer {

namespace {

// CLI11's configuration reader for JSON run specs: flattens a JSON object into CLI11's items.
class JsonRunSpecConfig final : public CLI::Config {
 public:
  explicit JsonRunSpecConfig(const CLI::App& app) : app_(app) {}

  std::string to_config(const CLI::App* app, bool defaultAlso, bool, std::string) const override {
    nlohmann::json spec = nlohmann::json::object();
    for (const CLI::Option* option : app->get_options()) {
      if (option->get_lnames().empty() || option->get_configurable() == false) continue;
      const std::string name = option->get_lnames().front();
      if (name == "help" || name == "config") continue;
      std::vector<std::string> values = option->results();
      if (values.empty() && defaultAlso && !option->get_default_str().empty()) {
        values = {option->get_default_str()};
      }
      if (values.empty()) continue;
      std::string key = name;
      std::replace(key.begin(), key.end(), '-', '_');
      spec[key] = values.size() == 1 ? nlohmann::json(values.front()) : nlohmann::json(values);
    }
    return spec.dump(2) + "\n";
  }

  std::vector<CLI::ConfigItem> from_config(std::istream& input) const override {
    nlohmann::json spec;
    try {
      spec = nlohmann::json::parse(input, nullptr, true, /*ignore_comments=*/true);
    } catch (const nlohmann::json::parse_error& error) {
      throw CLI::ConfigError(std::string("run spec is not valid JSON: ") + error.what());
    }
    if (!spec.is_object()) {
      throw CLI::ConfigError("run spec must be a JSON object of option names to values");
    }
    std::vector<CLI::ConfigItem> items;
    for (const auto& [key, value] : spec.items()) {
      CLI::ConfigItem item;
      item.name = key;
      std::replace(item.name.begin(), item.name.end(), '_', '-');
      if (item.name == "config" || app_.get_option_no_throw("--" + item.name) == nullptr) {
        throw CLI::ConfigError("run spec has unknown key '" + key +
                               "': keys are the long option names of ringside-trainer --help");
      }
      auto toText = [&](const nlohmann::json& v) -> std::string {
        if (v.is_string()) return v.get<std::string>();
        if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
        if (v.is_number()) return v.dump();
        throw CLI::ConfigError("run spec key '" + key + "' has a value of type " + v.type_name() +
                               "; use a number, string, boolean or an array of them");
      };
      if (value.is_array()) {
        for (const auto& element : value) item.inputs.push_back(toText(element));
      } else {
        item.inputs.push_back(toText(value));
      }
      items.push_back(std::move(item));
    }
    return items;
  }

 private:
  const CLI::App& app_;
};

}  // namespace

void addTrainerOptions(CLI::App& app, TrainerConfig& c) {
  app.config_formatter(std::make_shared<JsonRunSpecConfig>(app));
  app.set_config("--config", "", "JSON run-spec file; flags given on the command line override it");
  app.option_defaults()->always_capture_default();

  auto* data = "Data";
  app.add_option("--data", c.dataDir, "Directory with MNIST-format IDX files (.gz or raw)")
      ->group(data);
  app.add_option("--train-samples", c.trainSamples,
                 "Use only the first N training samples (0 = all)")
      ->check(CLI::NonNegativeNumber)
      ->group(data);
  app.add_option("--test-samples", c.testSamples, "Use only the first N test samples (0 = all)")
      ->check(CLI::NonNegativeNumber)
      ->group(data);

  auto* model = "Model";
  app.add_option("--hidden", c.hidden,
                 "Hidden layer widths, e.g. --hidden 512,256 (input and output sizes come from "
                 "the dataset)")
      ->delimiter(',')
      ->check(CLI::PositiveNumber)
      ->group(model);

  auto* schedule = "Schedule";
  app.add_option("--epochs", c.epochs, "Passes over the training set")
      ->check(CLI::Range(1, 1000000))
      ->group(schedule);
  app.add_option("--global-batch", c.globalBatch,
                 "Samples per step over all ranks; local batch = global batch / world size; the "
                 "last partial batch of an epoch is dropped")
      ->check(CLI::PositiveNumber)
      ->group(schedule);
  app.add_option("--max-steps", c.maxSteps, "Stop after N global steps (0 = run all epochs)")
      ->check(CLI::NonNegativeNumber)
      ->group(schedule);

  auto* opt = "Optimizer";
  app.add_option("--optimizer", c.optimizer, "sgd or adamw")
      ->check(CLI::IsMember({"sgd", "adamw"}))
      ->group(opt);
  app.add_option("--lr", c.lr, "Peak learning rate")->check(CLI::PositiveNumber)->group(opt);
  app.add_option("--momentum", c.momentum, "SGD momentum (0 = none)")
      ->check(CLI::Range(0.0, 1.0))
      ->group(opt);
  app.add_flag("--nesterov,!--no-nesterov", c.nesterov,
               "SGD with Nesterov momentum, on by default (no effect with --momentum 0); "
               "--no-nesterov for classical momentum")
      ->group(opt);
  app.add_option("--weight-decay", c.weightDecay,
                 "Weight decay: L2 for sgd, decoupled for adamw (negative = the optimizer's "
                 "default: 0 for sgd, 0.01 for adamw, as in PyTorch)")
      ->group(opt);
  app.add_option("--beta1", c.beta1, "AdamW first-moment decay")
      ->check(CLI::Range(0.0, 1.0))
      ->group(opt);
  app.add_option("--beta2", c.beta2, "AdamW second-moment decay")
      ->check(CLI::Range(0.0, 1.0))
      ->group(opt);
  app.add_option("--eps", c.epsilon, "AdamW denominator epsilon")
      ->check(CLI::PositiveNumber)
      ->group(opt);
  app.add_option("--lr-schedule", c.lrSchedule, "constant, step or cosine")
      ->check(CLI::IsMember({"constant", "step", "cosine"}))
      ->group(opt);
  app.add_option("--warmup-steps", c.warmupSteps, "Linear warm-up steps before the schedule")
      ->check(CLI::NonNegativeNumber)
      ->group(opt);
  app.add_option("--lr-step-epochs", c.lrStepEpochs, "step schedule: decay every N epochs")
      ->check(CLI::PositiveNumber)
      ->group(opt);
  app.add_option("--lr-gamma", c.lrGamma, "step schedule: decay factor")
      ->check(CLI::Range(0.0, 1.0))
      ->group(opt);
  app.add_option("--lr-min", c.lrMin, "cosine schedule: final learning rate")
      ->check(CLI::NonNegativeNumber)
      ->group(opt);

  auto* exec = "Execution";
  app.add_option("--backend", c.backend,
                 "auto (nccl where a GPU is visible, else mpi), mpi (CPU) or nccl (GPU)")
      ->check(CLI::IsMember({"auto", "mpi", "nccl"}))
      ->group(exec);
  app.add_option("--bucket-mb", c.bucketMb,
                 "Gradient bucket cap in MiB (PyTorch DDP's bucket_cap_mb)")
      ->check(CLI::PositiveNumber)
      ->group(exec);
  app.add_option("--threads", c.threads, "mpi backend: BLAS threads per rank")
      ->check(CLI::Range(1, 1024))
      ->group(exec);
  app.add_option("--seed", c.seed, "Seed for the initial parameters and the data order")
      ->group(exec);
  app.add_option("--eval-batch", c.evalBatch, "Samples per evaluation batch")
      ->check(CLI::PositiveNumber)
      ->group(exec);

  auto* out = "Output";
  app.add_option("--log-every", c.logEvery, "Write metrics every N steps")
      ->check(CLI::PositiveNumber)
      ->group(out);
  app.add_option("--metrics-out", c.metricsOut, "Also write the JSON Lines metrics to FILE")
      ->group(out);
  app.add_flag("--quiet", c.quiet, "No human-readable progress on stderr")->group(out);

  auto* ckpt = "Checkpoints";
  app.add_option("--checkpoint-dir", c.checkpointDir,
                 "Directory for checkpoints (written at the end, on SIGTERM and every "
                 "--checkpoint-every steps)")
      ->group(ckpt);
  app.add_option("--checkpoint-every", c.checkpointEvery,
                 "Checkpoint every N steps (0 = only at the end and on SIGTERM)")
      ->check(CLI::NonNegativeNumber)
      ->group(ckpt);
  app.add_option("--keep-checkpoints", c.keepCheckpoints,
                 "Keep the N newest checkpoints (0 = keep all)")
      ->check(CLI::NonNegativeNumber)
      ->group(ckpt);
  app.add_option("--resume", c.resume,
                 "Continue from a checkpoint file, or the newest one in a directory")
      ->group(ckpt);
}

Status validateTrainerConfig(const TrainerConfig& c) {
  if (c.lrMin > c.lr) {
    return Status::invalidArgument("--lr-min " + std::to_string(c.lrMin) + " is above --lr " +
                                   std::to_string(c.lr));
  }
  if (c.optimizer == "adamw" && (c.beta1 >= 1.0 || c.beta2 >= 1.0)) {
    return Status::invalidArgument("AdamW needs --beta1 and --beta2 below 1");
  }
  if (c.hidden.empty()) {
    return Status::invalidArgument(
        "--hidden needs at least one layer width, e.g. --hidden 256,128");
  }
  for (auto kind :
       {parseOptimizerKind(c.optimizer).status(), parseLrScheduleKind(c.lrSchedule).status(),
        parseBackendKind(c.backend).status()}) {
    RINGSIDE_RETURN_IF_ERROR(kind);
  }
  return Status::ok();
}

OptimizerConfig optimizerConfigOf(const TrainerConfig& c) {
  OptimizerConfig config;
  auto kind = parseOptimizerKind(c.optimizer);
  config.kind = kind.isOk() ? *kind : OptimizerKind::kSgd;
  config.momentum = c.momentum;
  config.nesterov = c.nesterov;
  config.weightDecay =
      c.weightDecay >= 0.0 ? c.weightDecay : (config.kind == OptimizerKind::kAdamW ? 0.01 : 0.0);
  config.beta1 = c.beta1;
  config.beta2 = c.beta2;
  config.epsilon = c.epsilon;
  return config;
}

LrScheduleConfig lrScheduleOf(const TrainerConfig& c) {
  LrScheduleConfig schedule;
  auto kind = parseLrScheduleKind(c.lrSchedule);
  schedule.kind = kind.isOk() ? *kind : LrScheduleKind::kConstant;
  schedule.baseLr = c.lr;
  schedule.warmupSteps = c.warmupSteps;
  schedule.stepEpochs = c.lrStepEpochs;
  schedule.gamma = c.lrGamma;
  schedule.minLr = c.lrMin;
  return schedule;
}

nlohmann::json toJson(const TrainerConfig& c) {
  return {{"data", c.dataDir},
          {"train_samples", c.trainSamples},
          {"test_samples", c.testSamples},
          {"hidden", c.hidden},
          {"epochs", c.epochs},
          {"global_batch", c.globalBatch},
          {"max_steps", c.maxSteps},
          {"optimizer", c.optimizer},
          {"lr", c.lr},
          {"momentum", c.momentum},
          {"nesterov", c.nesterov},
          {"weight_decay", optimizerConfigOf(c).weightDecay},
          {"beta1", c.beta1},
          {"beta2", c.beta2},
          {"eps", c.epsilon},
          {"lr_schedule", c.lrSchedule},
          {"warmup_steps", c.warmupSteps},
          {"lr_step_epochs", c.lrStepEpochs},
          {"lr_gamma", c.lrGamma},
          {"lr_min", c.lrMin},
          {"backend", c.backend},
          {"bucket_mb", c.bucketMb},
          {"threads", c.threads},
          {"seed", c.seed},
          {"eval_batch", c.evalBatch},
          {"log_every", c.logEvery},
          {"checkpoint_dir", c.checkpointDir},
          {"checkpoint_every", c.checkpointEvery},
          {"keep_checkpoints", c.keepCheckpoints},
          {"resume", c.resume}};
}

}  // namespace ringside::trainer
