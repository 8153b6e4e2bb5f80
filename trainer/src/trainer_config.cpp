#include "ringside/trainer/trainer_config.h"

#include <CLI/CLI.hpp>
#include <google/protobuf/descriptor.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <vector>

namespace ringside::trainer {

namespace {

using Config = v1::TrainerConfig;

std::string defaultText(const std::string& value) { return value; }
std::string defaultText(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}
std::string defaultText(int32_t value) { return std::to_string(value); }
std::string defaultText(uint64_t value) { return std::to_string(value); }

// Registers `name` for one TrainerConfig field: a value given on the command line is stored with
// `set` in `flags` (so that only the flags given override the --config file); --help shows
// `defaultValue`, the field's default.
template <typename T, typename Set>
CLI::Option* addSpecOption(CLI::App& app, const std::shared_ptr<Config>& flags,
                           const std::string& name, Set set, const T& defaultValue,
                           const std::string& help, const std::string& group) {
  return app
      .add_option_function<T>(
          name, [flags, set](const T& value) { set(*flags, value); }, help)
      ->default_str(defaultText(defaultValue))
      ->group(group);
}

// The text of a --config file, at most kMaxTrainerConfigJsonBytes. Errors: NotFound when it
// cannot be read, InvalidArgument when it is larger.
Result<std::string> readRunSpecFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Status::notFound("cannot read run spec " + path + ": " + std::strerror(errno));
  }
  std::string text(kMaxTrainerConfigJsonBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) {
    return Status::notFound("cannot read run spec " + path + ": " + std::strerror(errno));
  }
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > kMaxTrainerConfigJsonBytes) {
    return Status::invalidArgument("run spec " + path + " is larger than " +
                                   std::to_string(kMaxTrainerConfigJsonBytes) +
                                   " bytes (1 MiB), the limit of a run spec");
  }
  return text;
}

// Every floating-point key `spec` sets (from the file or a flag) must be a finite number. Checked
// before the defaults are filled in, because those read a negative weight_decay, -inf included,
// as "the optimizer's default". Errors: InvalidArgument naming the key, its flag and the value.
Status checkFiniteNumbers(const Config& spec) {
  using google::protobuf::FieldDescriptor;
  const google::protobuf::Descriptor* descriptor = spec.GetDescriptor();
  const google::protobuf::Reflection* reflection = spec.GetReflection();
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const FieldDescriptor* field = descriptor->field(i);
    const bool isDouble = field->cpp_type() == FieldDescriptor::CPPTYPE_DOUBLE;
    if (field->is_repeated() ||
        (!isDouble && field->cpp_type() != FieldDescriptor::CPPTYPE_FLOAT) ||
        !reflection->HasField(spec, field)) {
      continue;
    }
    const double value = isDouble ? reflection->GetDouble(spec, field)
                                  : static_cast<double>(reflection->GetFloat(spec, field));
    if (std::isfinite(value)) continue;
    std::string flag = "--" + field->name();
    std::replace(flag.begin(), flag.end(), '_', '-');
    return Status::invalidArgument(field->name() + " (" + flag + ") is " + defaultText(value) +
                                   ": use a finite number");
  }
  return Status::ok();
}

}  // namespace

void addTrainerOptions(CLI::App& app, v1::TrainerConfig& config) {
  auto flags = std::make_shared<Config>();  // the run-spec fields given on the command line
  auto configFile = std::make_shared<std::string>();
  auto configJson = std::make_shared<std::string>();
  const Config& d = defaultTrainerConfig();

  const std::string data = "Data";
  addSpecOption(
      app, flags, "--data", [](Config& c, const std::string& v) { c.set_data(v); }, d.data(),
      "Directory with MNIST-format IDX files (.gz or raw)", data);
  addSpecOption(
      app, flags, "--train-samples", [](Config& c, int32_t v) { c.set_train_samples(v); },
      d.train_samples(), "Use only the first N training samples (0 = all)", data);
  addSpecOption(
      app, flags, "--test-samples", [](Config& c, int32_t v) { c.set_test_samples(v); },
      d.test_samples(), "Use only the first N test samples (0 = all)", data);

  std::string hiddenDefault;
  for (int width : d.hidden()) {
    hiddenDefault += (hiddenDefault.empty() ? "" : ",") + defaultText(width);
  }
  app.add_option_function<std::vector<int32_t>>(
         "--hidden",
         [flags](const std::vector<int32_t>& widths) {
           flags->clear_hidden();
           for (int32_t width : widths) flags->add_hidden(width);
         },
         "Hidden layer widths, e.g. --hidden 512,256 (input and output sizes come from the "
         "dataset)")
      ->delimiter(',')
      ->default_str(hiddenDefault)
      ->group("Model");
  addSpecOption(
      app, flags, "--model", [](Config& c, const std::string& v) { c.set_model(v); }, d.model(),
      "mlp (Linear layers of --hidden) or cnn (conv 3x3 + ReLU + max-pool 2 per --channels entry, "
      "dropout, Linear 128, Linear; docs/trainer.md)",
      "Model");
  std::string channelsDefault;
  for (int channels : d.channels()) {
    if (!channelsDefault.empty()) channelsDefault += ',';
    channelsDefault += defaultText(channels);
  }
  app.add_option_function<std::vector<int32_t>>(
         "--channels",
         [flags](const std::vector<int32_t>& channels) {
           flags->clear_channels();
           for (int32_t c : channels) flags->add_channels(c);
         },
         "cnn: output channels of each conv stage, e.g. --channels 32,64")
      ->delimiter(',')
      ->default_str(channelsDefault)
      ->group("Model");
  addSpecOption(
      app, flags, "--dropout", [](Config& c, double v) { c.set_dropout(v); }, d.dropout(),
      "cnn: dropout probability before the hidden Linear layer (0 to below 1)", "Model");
  addSpecOption(
      app, flags, "--conv-algorithm",
      [](Config& c, const std::string& v) { c.set_conv_algorithm(v); }, d.conv_algorithm(),
      "cnn: auto (Winograd for conv layers with channels in multiples of 16 where the CPU has "
      "AVX-512, else direct; docs/trainer.md) or direct (every layer, as PyTorch on a CPU)",
      "Model");

  const std::string schedule = "Schedule";
  addSpecOption(
      app, flags, "--epochs", [](Config& c, int32_t v) { c.set_epochs(v); }, d.epochs(),
      "Passes over the training set (1 to 1000000)", schedule)
      ->default_str(defaultText(defaultEpochs("mlp")) +
                    ", cnn: " + defaultText(defaultEpochs("cnn")));
  addSpecOption(
      app, flags, "--global-batch", [](Config& c, int32_t v) { c.set_global_batch(v); },
      d.global_batch(),
      "Samples per step over all ranks; local batch = global batch / world size; the last "
      "partial batch of an epoch is dropped",
      schedule);
  addSpecOption(
      app, flags, "--max-steps", [](Config& c, int32_t v) { c.set_max_steps(v); }, d.max_steps(),
      "Stop after N global steps (0 = run all epochs)", schedule);
  addSpecOption(
      app, flags, "--micro-batch", [](Config& c, int32_t v) { c.set_micro_batch(v); },
      d.micro_batch(),
      "Gradient accumulation: samples per forward/backward pass; the local batch is computed in "
      "local batch / N passes summed before the all-reduce (0 = one pass; mpi backend only)",
      schedule);

  const std::string opt = "Optimizer";
  addSpecOption(
      app, flags, "--optimizer", [](Config& c, const std::string& v) { c.set_optimizer(v); },
      d.optimizer(), "sgd or adamw", opt);
  addSpecOption(
      app, flags, "--lr", [](Config& c, double v) { c.set_lr(v); }, d.lr(), "Peak learning rate",
      opt);
  addSpecOption(
      app, flags, "--momentum", [](Config& c, double v) { c.set_momentum(v); }, d.momentum(),
      "SGD momentum (0 = none, up to 1)", opt);
  app.add_flag_function(
         "--nesterov,!--no-nesterov", [flags](int64_t count) { flags->set_nesterov(count > 0); },
         "SGD with Nesterov momentum, on by default (no effect with --momentum 0); "
         "--no-nesterov for classical momentum")
      ->group(opt);
  addSpecOption(
      app, flags, "--weight-decay", [](Config& c, double v) { c.set_weight_decay(v); }, -1.0,
      "Weight decay: L2 for sgd, decoupled for adamw (negative = the optimizer's default: 0 for "
      "sgd, 0.01 for adamw, as in PyTorch)",
      opt);
  addSpecOption(
      app, flags, "--beta1", [](Config& c, double v) { c.set_beta1(v); }, d.beta1(),
      "AdamW first-moment decay (0 to below 1)", opt);
  addSpecOption(
      app, flags, "--beta2", [](Config& c, double v) { c.set_beta2(v); }, d.beta2(),
      "AdamW second-moment decay (0 to below 1)", opt);
  addSpecOption(
      app, flags, "--eps", [](Config& c, double v) { c.set_eps(v); }, d.eps(),
      "AdamW denominator epsilon", opt);
  addSpecOption(
      app, flags, "--lr-schedule", [](Config& c, const std::string& v) { c.set_lr_schedule(v); },
      d.lr_schedule(), "constant, step or cosine", opt);
  addSpecOption(
      app, flags, "--warmup-steps", [](Config& c, int32_t v) { c.set_warmup_steps(v); },
      d.warmup_steps(), "Linear warm-up steps before the schedule", opt);
  addSpecOption(
      app, flags, "--lr-step-epochs", [](Config& c, double v) { c.set_lr_step_epochs(v); },
      d.lr_step_epochs(), "step schedule: decay every N epochs", opt);
  addSpecOption(
      app, flags, "--lr-gamma", [](Config& c, double v) { c.set_lr_gamma(v); }, d.lr_gamma(),
      "step schedule: decay factor (0 to 1)", opt);
  addSpecOption(
      app, flags, "--lr-min", [](Config& c, double v) { c.set_lr_min(v); }, d.lr_min(),
      "cosine schedule: final learning rate (0 to --lr)", opt);

  const std::string exec = "Execution";
  addSpecOption(
      app, flags, "--backend", [](Config& c, const std::string& v) { c.set_backend(v); },
      d.backend(), "auto (nccl where a GPU is visible, else mpi), mpi (CPU) or nccl (GPU)", exec);
  addSpecOption(
      app, flags, "--bucket-mb", [](Config& c, double v) { c.set_bucket_mb(v); }, d.bucket_mb(),
      "Gradient bucket cap in MiB (PyTorch DDP's bucket_cap_mb; up to 65536)", exec);
  addSpecOption(
      app, flags, "--threads", [](Config& c, int32_t v) { c.set_threads(v); }, d.threads(),
      "mpi backend: BLAS threads per rank (1 to 1024)", exec);
  addSpecOption(
      app, flags, "--seed", [](Config& c, uint64_t v) { c.set_seed(v); }, d.seed(),
      "Seed for the initial parameters and the data order (0 to 18446744073709551615)", exec)
      // CLI11 reads "-1" into an unsigned integer as 2^64 - 1; a seed is never negative.
      ->check([](const std::string& text) -> std::string {
        const size_t first = text.find_first_not_of(" \t");
        if (first != std::string::npos && text[first] == '-') {
          return "a seed is a whole number from 0 to 18446744073709551615, not " + text;
        }
        return "";
      });
  addSpecOption(
      app, flags, "--eval-batch", [](Config& c, int32_t v) { c.set_eval_batch(v); }, d.eval_batch(),
      "Samples per evaluation batch", exec);
  addSpecOption(
      app, flags, "--collective-timeout-s",
      [](Config& c, int32_t v) { c.set_collective_timeout_s(v); }, d.collective_timeout_s(),
      "Seconds a rank waits in one collective before all ranks abort, naming the rank that did "
      "not arrive (0: forever; else 10 to 604800)",
      exec);
  addSpecOption(
      app, flags, "--inject-compute-delay",
      [](Config& c, const std::string& v) { c.set_inject_compute_delay(v); },
      d.inject_compute_delay(),
      "Testing: RANK:MS makes that rank spend MS more milliseconds in every step's compute (a "
      "straggler)",
      exec);
  addSpecOption(
      app, flags, "--inject-data-delay",
      [](Config& c, const std::string& v) { c.set_inject_data_delay(v); }, d.inject_data_delay(),
      "Testing: RANK:MS makes that rank spend MS more milliseconds loading every step's batch (a "
      "straggler in the data stage)",
      exec);

  const std::string out = "Output";
  addSpecOption(
      app, flags, "--log-every", [](Config& c, int32_t v) { c.set_log_every(v); }, d.log_every(),
      "Write metrics every N steps", out);
  addSpecOption(
      app, flags, "--metrics-out", [](Config& c, const std::string& v) { c.set_metrics_out(v); },
      d.metrics_out(), "Also write the JSON Lines metrics to FILE", out);
  app.add_flag_function(
         "--quiet", [flags](int64_t count) { flags->set_quiet(count > 0); },
         "No human-readable progress on stderr")
      ->group(out);

  const std::string ckpt = "Checkpoints";
  addSpecOption(
      app, flags, "--checkpoint-dir",
      [](Config& c, const std::string& v) { c.set_checkpoint_dir(v); }, d.checkpoint_dir(),
      "Directory for checkpoints (written at the end, on SIGTERM and every --checkpoint-every "
      "steps)",
      ckpt);
  addSpecOption(
      app, flags, "--checkpoint-every", [](Config& c, int32_t v) { c.set_checkpoint_every(v); },
      d.checkpoint_every(), "Checkpoint every N steps (0 = only at the end and on SIGTERM)", ckpt);
  addSpecOption(
      app, flags, "--keep-checkpoints", [](Config& c, int32_t v) { c.set_keep_checkpoints(v); },
      d.keep_checkpoints(), "Keep the N newest checkpoints (0 = keep all)", ckpt);
  addSpecOption(
      app, flags, "--resume", [](Config& c, const std::string& v) { c.set_resume(v); }, d.resume(),
      "Continue from a checkpoint file, or the newest one in a directory", ckpt);

  auto* file = app.add_option(
      "--config", *configFile,
      "JSON run-spec file (keys as in docs/run-spec.md, e.g. {\"global_batch\": 256}); "
      "flags given on the command line override its keys");
  // The agent passes the run spec this way, so every rank on every node of a multi-node run has
  // it (a file would exist on the owning node only).
  app.add_option("--config-json", *configJson,
                 "The run spec as JSON text (as --config, without a file)")
      ->excludes(file);

  // After every flag is read: defaults < the file < the flags, then the bounds.
  app.final_callback([&config, flags, configFile, configJson] {
    Config spec;
    if (!configJson->empty()) {
      if (configJson->size() > kMaxTrainerConfigJsonBytes) {
        throw CLI::ValidationError("--config-json is larger than " +
                                   std::to_string(kMaxTrainerConfigJsonBytes) +
                                   " bytes (1 MiB), the limit of a run spec");
      }
      auto parsed = trainerConfigFromJson(*configJson, "--config-json");
      if (!parsed.isOk()) throw CLI::ConfigError(parsed.status().message());
      spec = std::move(parsed).value();
    } else if (!configFile->empty()) {
      auto text = readRunSpecFile(*configFile);
      if (!text.isOk()) throw CLI::FileError(text.status().message());
      auto parsed = trainerConfigFromJson(*text, *configFile);
      if (!parsed.isOk()) throw CLI::ConfigError(parsed.status().message());
      spec = std::move(parsed).value();
    }
    overlayTrainerConfig(*flags, &spec);
    const Status finite = checkFiniteNumbers(spec);
    if (!finite.isOk()) throw CLI::ValidationError(finite.message());
    config = withTrainerDefaults(spec);
    const Status valid = validateTrainerConfig(config);
    if (!valid.isOk()) throw CLI::ValidationError(valid.message());
  });
}

OptimizerConfig optimizerConfigOf(const v1::TrainerConfig& spec) {
  const v1::TrainerConfig c = withTrainerDefaults(spec);
  OptimizerConfig config;
  auto kind = parseOptimizerKind(c.optimizer());
  config.kind = kind.isOk() ? *kind : OptimizerKind::kSgd;
  config.momentum = c.momentum();
  config.nesterov = c.nesterov();
  config.weightDecay = c.weight_decay();
  config.beta1 = c.beta1();
  config.beta2 = c.beta2();
  config.epsilon = c.eps();
  return config;
}

Result<ModelLayout> modelLayoutOf(const v1::TrainerConfig& spec, const ImageDataset& train) {
  const v1::TrainerConfig c = withTrainerDefaults(spec);
  auto kind = parseModelKind(c.model());
  if (!kind.isOk()) return kind.status();
  if (*kind == ModelKind::kMlp) {
    std::vector<int> sizes = {train.featureDim};
    sizes.insert(sizes.end(), c.hidden().begin(), c.hidden().end());
    sizes.push_back(train.numClasses);
    auto layout = MlpLayout::create(sizes);
    if (!layout.isOk()) return layout.status();
    return ModelLayout::mlp(std::move(layout).value());
  }
  CnnShape shape;
  shape.channels = 1;
  shape.height = train.rows;
  shape.width = train.cols;
  shape.convChannels.assign(c.channels().begin(), c.channels().end());
  shape.numClasses = train.numClasses;
  shape.dropout = c.dropout();
  auto layout = CnnLayout::create(shape);
  if (!layout.isOk()) return layout.status();
  return ModelLayout::cnn(std::move(layout).value());
}

LrScheduleConfig lrScheduleOf(const v1::TrainerConfig& spec) {
  const v1::TrainerConfig c = withTrainerDefaults(spec);
  LrScheduleConfig schedule;
  auto kind = parseLrScheduleKind(c.lr_schedule());
  schedule.kind = kind.isOk() ? *kind : LrScheduleKind::kConstant;
  schedule.baseLr = c.lr();
  schedule.warmupSteps = c.warmup_steps();
  schedule.stepEpochs = c.lr_step_epochs();
  schedule.gamma = c.lr_gamma();
  schedule.minLr = c.lr_min();
  return schedule;
}

}  // namespace ringside::trainer
