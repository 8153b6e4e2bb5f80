#include "ringside/common/run_spec.h"

#include <google/protobuf/util/json_util.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <string>

#include "ringside/common/json_limits.h"

namespace ringside {

namespace {

// "global_batch (--global-batch)": the key and the ringside-trainer flag of the same name.
std::string named(std::string_view key) {
  std::string flag = "--";
  for (char c : key) flag += c == '_' ? '-' : c;
  return std::string(key) + " (" + flag + ")";
}

std::string numberText(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.10g", value);
  return text;
}

Status outOfRange(std::string_view key, const std::string& value, const std::string& allowed) {
  return Status::invalidArgument(named(key) + " is " + value + ": use " + allowed);
}

Status checkInt(std::string_view key, int64_t value, int64_t min, int64_t max) {
  if (value >= min && value <= max) return Status::ok();
  return outOfRange(key, std::to_string(value),
                    max == INT32_MAX ? std::to_string(min) + " or more"
                                     : std::to_string(min) + " to " + std::to_string(max));
}

// `value` in [min, max], or in (min, max] when `minExclusive`; never NaN or infinite.
Status checkDouble(std::string_view key, double value, double min, double max,
                   bool minExclusive = false) {
  const bool above = minExclusive ? value > min : value >= min;
  if (std::isfinite(value) && above && value <= max) return Status::ok();
  std::string allowed =
      minExclusive ? "a number above " + numberText(min) : "a number from " + numberText(min);
  if (std::isfinite(max)) allowed += (minExclusive ? " up to " : " to ") + numberText(max);
  return outOfRange(key, numberText(value), allowed);
}

Status checkName(std::string_view key, const std::string& value,
                 std::initializer_list<const char*> names) {
  std::string allowed;
  for (const char* name : names) {
    if (value == name) return Status::ok();
    allowed += (allowed.empty() ? "" : ", ") + std::string(name);
  }
  return outOfRange(key, "\"" + value + "\"", "one of " + allowed);
}

v1::TrainerConfig makeDefaults() {
  v1::TrainerConfig c;
  c.set_data("/usr/share/datasets/fashion-mnist");
  c.set_train_samples(0);
  c.set_test_samples(0);
  c.add_hidden(256);
  c.add_hidden(128);
  c.set_model("mlp");
  c.add_channels(32);
  c.add_channels(64);
  c.set_dropout(0.25);
  c.set_conv_algorithm("auto");
  c.set_epochs(3);
  c.set_global_batch(128);
  c.set_max_steps(0);
  c.set_micro_batch(0);
  c.set_optimizer("sgd");
  c.set_lr(0.1);
  c.set_momentum(0.9);
  c.set_nesterov(true);
  c.set_weight_decay(defaultWeightDecay(c.optimizer()));
  c.set_beta1(0.9);
  c.set_beta2(0.999);
  c.set_eps(1e-8);
  c.set_lr_schedule("cosine");
  c.set_warmup_steps(0);
  c.set_lr_step_epochs(1.0);
  c.set_lr_gamma(0.1);
  c.set_lr_min(0.0);
  c.set_backend("auto");
  c.set_bucket_mb(0.05);  // docs/trainer.md, "Buckets and overlap": why not DDP's 25
  c.set_threads(1);
  c.set_seed(42);
  c.set_eval_batch(1000);
  c.set_log_every(1);
  c.set_metrics_out("");
  c.set_quiet(false);
  c.set_collective_timeout_s(900);
  c.set_inject_compute_delay("");
  c.set_inject_data_delay("");
  c.set_checkpoint_dir("checkpoints");
  c.set_checkpoint_every(0);
  c.set_keep_checkpoints(3);
  c.set_resume("");
  return c;
}

}  // namespace

const v1::TrainerConfig& defaultTrainerConfig() {
  static const v1::TrainerConfig kDefaults = makeDefaults();
  return kDefaults;
}

double defaultWeightDecay(std::string_view optimizer) { return optimizer == "adamw" ? 0.01 : 0.0; }

int32_t defaultEpochs(std::string_view model) { return model == "cnn" ? 5 : 3; }

void overlayTrainerConfig(const v1::TrainerConfig& over, v1::TrainerConfig* base) {
  // MergeFrom copies the fields `over` has (proto3 optional) but appends repeated ones.
  if (over.hidden_size() > 0) base->clear_hidden();
  if (over.channels_size() > 0) base->clear_channels();
  base->MergeFrom(over);
}

v1::TrainerConfig withTrainerDefaults(const v1::TrainerConfig& config) {
  v1::TrainerConfig resolved = defaultTrainerConfig();
  resolved.clear_weight_decay();
  overlayTrainerConfig(config, &resolved);
  if (!config.has_epochs()) resolved.set_epochs(defaultEpochs(resolved.model()));
  if (!resolved.has_weight_decay() || resolved.weight_decay() < 0.0) {
    resolved.set_weight_decay(defaultWeightDecay(resolved.optimizer()));
  }
  return resolved;
}

Status validateTrainerConfig(const v1::TrainerConfig& config) {
  const v1::TrainerConfig c = withTrainerDefaults(config);
  constexpr double kInf = INFINITY;
  constexpr int64_t kIntMax = INT32_MAX;
  if (c.data().empty()) return outOfRange("data", "empty", "the dataset directory");
  if (c.hidden_size() > kMaxHiddenLayers) {
    return outOfRange("hidden", std::to_string(c.hidden_size()) + " layers",
                      "1 to " + std::to_string(kMaxHiddenLayers) + " layers");
  }
  for (int width : c.hidden()) {
    RINGSIDE_RETURN_IF_ERROR(checkInt("hidden", width, 1, kMaxHiddenWidth));
  }
  if (c.channels_size() > kMaxConvStages) {
    return outOfRange("channels", std::to_string(c.channels_size()) + " stages",
                      "1 to " + std::to_string(kMaxConvStages) + " stages");
  }
  for (int channels : c.channels()) {
    RINGSIDE_RETURN_IF_ERROR(checkInt("channels", channels, 1, kMaxConvChannels));
  }
  if (!(c.dropout() >= 0.0 && c.dropout() < 1.0)) {
    return outOfRange("dropout", numberText(c.dropout()), "a probability from 0 to below 1");
  }
  for (const Status& status : {
           checkName("model", c.model(), {"mlp", "cnn"}),
           checkName("conv_algorithm", c.conv_algorithm(), {"auto", "direct"}),
           checkInt("train_samples", c.train_samples(), 0, kIntMax),
           checkInt("test_samples", c.test_samples(), 0, kIntMax),
           checkInt("epochs", c.epochs(), 1, 1'000'000),
           checkInt("global_batch", c.global_batch(), 1, kIntMax),
           checkInt("max_steps", c.max_steps(), 0, kIntMax),
           checkInt("micro_batch", c.micro_batch(), 0, kIntMax),
           checkName("optimizer", c.optimizer(), {"sgd", "adamw"}),
           checkDouble("lr", c.lr(), 0.0, kInf, /*minExclusive=*/true),
           checkDouble("momentum", c.momentum(), 0.0, 1.0),
           checkDouble("weight_decay", c.weight_decay(), 0.0, kInf),
           checkDouble("beta1", c.beta1(), 0.0, 1.0),
           checkDouble("beta2", c.beta2(), 0.0, 1.0),
           checkDouble("eps", c.eps(), 0.0, kInf, /*minExclusive=*/true),
           checkName("lr_schedule", c.lr_schedule(), {"constant", "step", "cosine"}),
           checkInt("warmup_steps", c.warmup_steps(), 0, kIntMax),
           checkDouble("lr_step_epochs", c.lr_step_epochs(), 0.0, kInf, /*minExclusive=*/true),
           checkDouble("lr_gamma", c.lr_gamma(), 0.0, 1.0),
           checkDouble("lr_min", c.lr_min(), 0.0, kInf),
           checkName("backend", c.backend(), {"auto", "mpi", "nccl"}),
           checkDouble("bucket_mb", c.bucket_mb(), 0.0, 65536.0, /*minExclusive=*/true),
           checkInt("threads", c.threads(), 1, 1024),
           checkInt("eval_batch", c.eval_batch(), 1, kIntMax),
           checkInt("log_every", c.log_every(), 1, kIntMax),
           checkInt("checkpoint_every", c.checkpoint_every(), 0, kIntMax),
           checkInt("keep_checkpoints", c.keep_checkpoints(), 0, kIntMax),
       }) {
    RINGSIDE_RETURN_IF_ERROR(status);
  }
  if (!c.inject_compute_delay().empty() && !parseInjectedDelay(c.inject_compute_delay())) {
    return outOfRange("inject_compute_delay", "\"" + c.inject_compute_delay() + "\"",
                      "\"RANK:MS\" with RANK >= 0 and MS from 0 to 60000, e.g. \"1:20\", or \"\"");
  }
  if (!c.inject_data_delay().empty() && !parseInjectedDelay(c.inject_data_delay())) {
    return outOfRange("inject_data_delay", "\"" + c.inject_data_delay() + "\"",
                      "\"RANK:MS\" with RANK >= 0 and MS from 0 to 60000, e.g. \"1:20\", or \"\"");
  }
  if (c.collective_timeout_s() != 0 && (c.collective_timeout_s() < kMinCollectiveTimeoutSeconds ||
                                        c.collective_timeout_s() > kMaxTimeoutSeconds)) {
    return outOfRange("collective_timeout_s", std::to_string(c.collective_timeout_s()),
                      "0 (wait forever) or " + std::to_string(kMinCollectiveTimeoutSeconds) +
                          " to " + std::to_string(kMaxTimeoutSeconds) + " seconds");
  }
  if (c.checkpoint_dir().empty()) {
    return outOfRange("checkpoint_dir", "empty", "a directory name, e.g. checkpoints");
  }
  if (c.lr_min() > c.lr()) {
    return Status::invalidArgument(named("lr_min") + " " + numberText(c.lr_min()) + " is above " +
                                   named("lr") + " " + numberText(c.lr()) +
                                   ": the cosine schedule ends at lr_min, so use at most lr");
  }
  if (c.optimizer() == "adamw" && (c.beta1() >= 1.0 || c.beta2() >= 1.0)) {
    return Status::invalidArgument("AdamW needs " + named("beta1") + " and " + named("beta2") +
                                   " below 1");
  }
  return Status::ok();
}

Result<v1::TrainerConfig> trainerConfigFromJson(std::string_view json, std::string_view source) {
  if (json.size() > kMaxTrainerConfigJsonBytes) {
    return Status::invalidArgument(
        std::string(source) + " is " + std::to_string(json.size()) + " bytes, over the " +
        std::to_string(kMaxTrainerConfigJsonBytes) + "-byte (1 MiB) limit of a run spec");
  }
  // Protobuf reads nested lists into a repeated field without a bound (a 100,000-level
  // "hidden" parsed as no layers at all); refuse such text before it builds anything.
  RINGSIDE_RETURN_IF_ERROR(checkJsonDepth(json, kMaxJsonDepth, source));
  v1::TrainerConfig config;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;  // a misspelt key is an error, never ignored
  const auto status = google::protobuf::util::JsonStringToMessage(
      google::protobuf::StringPiece(json.data(), json.size()), &config, options);
  if (!status.ok()) {
    return Status::invalidArgument(
        std::string(source) +
        " is not a valid run spec (a JSON object of the keys in docs/run-spec.md, e.g. "
        "{\"epochs\": 3}): " +
        std::string(status.message()));
  }
  return config;
}

std::string trainerConfigToJson(const v1::TrainerConfig& config, bool multiline) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;  // "global_batch", as --config files spell it
  options.add_whitespace = multiline;
  std::string json;
  // Printing a message built through the generated API cannot fail.
  (void)google::protobuf::util::MessageToJsonString(config, &json, options);
  return json;
}

Result<v1::TrainerConfig> trainerConfigOf(const v1::TrainerJob& job) {
  // Specs written before TrainerJob.config existed carry the run spec as JSON text: read it.
  // (The field is deprecated in the .proto, so its accessor warns everywhere else.)
  if (job.has_config()) return job.config();
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  const std::string& legacy = job.config_json();
#pragma GCC diagnostic pop
  if (legacy.empty()) return v1::TrainerConfig();
  return trainerConfigFromJson(legacy, "config_json");
}

uint32_t hangTimeoutSeconds(const v1::RunSpec& spec) {
  return spec.has_hang_timeout_s() ? spec.hang_timeout_s() : kDefaultHangTimeoutSeconds;
}

uint32_t phaseTimeoutSeconds(const v1::RunSpec& spec) {
  return spec.has_phase_timeout_s() ? spec.phase_timeout_s() : kDefaultPhaseTimeoutSeconds;
}

Status validateHangTimeout(const v1::RunSpec& spec) {
  if (const uint32_t phase = phaseTimeoutSeconds(spec);
      phase > static_cast<uint32_t>(kMaxTimeoutSeconds)) {
    return Status::invalidArgument(
        "the phase timeout (phase_timeout_s) is " + std::to_string(phase) +
        " s: use 0 (no bound on set-up and checkpoint writes) or at most " +
        std::to_string(kMaxTimeoutSeconds) + " s (a week)");
  }
  const uint32_t hang = hangTimeoutSeconds(spec);
  if (hang > static_cast<uint32_t>(kMaxTimeoutSeconds)) {
    return Status::invalidArgument("the hang timeout (hang_timeout_s) is " + std::to_string(hang) +
                                   " s: use 0 (never) or at most " +
                                   std::to_string(kMaxTimeoutSeconds) + " s (a week)");
  }
  if (hang == 0 || !spec.has_trainer()) return Status::ok();
  auto config = trainerConfigOf(spec.trainer());
  if (!config.isOk()) return Status::ok();
  const int collective = withTrainerDefaults(*config).collective_timeout_s();
  if (collective != 0 && hang >= static_cast<uint32_t>(collective)) {
    return Status::invalidArgument(
        "the hang timeout (" + std::to_string(hang) +
        " s) must be shorter than the trainer's collective timeout (collective_timeout_s, " +
        std::to_string(collective) +
        " s), or the trainer aborts a hung run before the agent can say which rank hung: lower "
        "the hang timeout or raise the collective timeout");
  }
  return Status::ok();
}

std::optional<InjectedDelay> parseInjectedDelay(std::string_view text) {
  const size_t colon = text.find(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == text.size())
    return std::nullopt;
  InjectedDelay delay;
  const auto digits = [](std::string_view part, double* value) {
    if (part.empty() || part.size() > 12) return false;
    for (char ch : part) {
      if ((ch < '0' || ch > '9') && ch != '.') return false;
    }
    *value = std::strtod(std::string(part).c_str(), nullptr);
    return true;
  };
  double rank = 0;
  if (!digits(text.substr(0, colon), &rank) || rank != std::floor(rank) || rank > INT32_MAX) {
    return std::nullopt;
  }
  if (!digits(text.substr(colon + 1), &delay.milliseconds) || delay.milliseconds > 60000.0) {
    return std::nullopt;
  }
  delay.rank = static_cast<int>(rank);
  return delay;
}

}  // namespace ringside
