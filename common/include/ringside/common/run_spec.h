// The trainer's run spec, ringside.v1.TrainerConfig (common/proto/ringside.proto): its defaults,
// its bounds and its JSON form, shared by the trainer, the agent and the GUI. docs/run-spec.md
// documents every key.
//
// - Defaults are defined once, in defaultTrainerConfig(): the trainer's command line (--help and
//   the values of absent keys), the GUI's run form and the agent all take them from there.
// - JSON is read and written only with protobuf's JSON mapping (google::protobuf::util): keys are
//   the .proto field names ("global_batch"); the '-' spelling ("global-batch", the fields'
//   json_name) is read too. Unknown keys are errors that name the key.
//
// Thread-safety: every function is pure or reads immutable data; all are safe from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "ringside/common/status.h"
#include "ringside/proto/ringside.pb.h"

namespace ringside {

// Largest run-spec JSON text read: 1 MiB. Longer text is refused before it is parsed, and so is
// text nesting objects and arrays deeper than kMaxJsonDepth (json_limits.h; a run spec needs 2).
inline constexpr size_t kMaxTrainerConfigJsonBytes = size_t{1} << 20;
// Bounds of TrainerConfig.hidden: layers and units per layer.
inline constexpr int kMaxHiddenLayers = 64;
inline constexpr int kMaxHiddenWidth = 1 << 20;
// Bounds of TrainerConfig.channels (the cnn model): conv stages and channels per stage.
inline constexpr int kMaxConvStages = 8;
inline constexpr int kMaxConvChannels = 4096;
// TrainerConfig.collective_timeout_s and RunSpec.hang_timeout_s: 0 (never) or at most a week.
// A collective deadline under 10 s would abort healthy runs whose first step pays for lazy
// connection set-up (NCCL, Open MPI).
inline constexpr int kMinCollectiveTimeoutSeconds = 10;
inline constexpr int kMaxTimeoutSeconds = 7 * 24 * 3600;
// RunSpec.hang_timeout_s when the field is absent: 10 minutes.
inline constexpr uint32_t kDefaultHangTimeoutSeconds = 600;
// RunSpec.phase_timeout_s when the field is absent: 10 minutes in one set-up or one checkpoint
// write (loading a large dataset, a checkpoint of many GiB to a network file system). 0 (no
// bound) or at most kMaxTimeoutSeconds.
inline constexpr uint32_t kDefaultPhaseTimeoutSeconds = 600;

// ringside-trainer's defaults with every field set (weight_decay = 0, the default of the default
// optimizer sgd). The one definition of each default in the code base; the .proto's comments and
// docs/run-spec.md state the same values.
const v1::TrainerConfig& defaultTrainerConfig();

// The weight decay an optimizer uses when the run spec sets none (or a negative one): 0.01 for
// "adamw", 0 otherwise (PyTorch's defaults for AdamW and SGD).
double defaultWeightDecay(std::string_view optimizer);

// The epochs a model trains for when the run spec sets none: 5 for "cnn" (its published 2-conv
// baseline's accuracy on Fashion-MNIST, 0.916, needs more than 3: docs/trainer.md), 3 otherwise.
int32_t defaultEpochs(std::string_view model);

// `config` with every absent field (and an empty `hidden` or `channels`) set to its default, an
// absent epochs set to defaultEpochs(model), and an absent or negative weight_decay set to
// defaultWeightDecay(optimizer). The result has every field set.
v1::TrainerConfig withTrainerDefaults(const v1::TrainerConfig& config);

// Sets in `*base` every field that `over` sets; `hidden` and `channels` are replaced when `over`
// has any entry.
// Used for command-line flags over a --config file.
void overlayTrainerConfig(const v1::TrainerConfig& over, v1::TrainerConfig* base);

// Checks withTrainerDefaults(config) against the ranges and names the .proto states (e.g.
// epochs 1..1,000,000, optimizer "sgd" or "adamw", finite numbers) and the combinations
// (lr_min <= lr, AdamW betas below 1). Errors: InvalidArgument naming the key, its
// ringside-trainer flag, the value and what is allowed, e.g.
// "epochs (--epochs) is 0: use 1 to 1000000".
Status validateTrainerConfig(const v1::TrainerConfig& config);

// Parses run-spec JSON (a JSON object of TrainerConfig keys) with protobuf's JSON mapping.
// `source` names the text in messages (a file name, "config_json"). Errors: InvalidArgument
// naming `source` when the text is over kMaxTrainerConfigJsonBytes, nests deeper than
// kMaxJsonDepth, is not JSON, is not an object, has an unknown key or a value of the wrong type
// (protobuf's message names the key). Both bounds are checked before protobuf builds anything.
// Values are not range-checked here: see validateTrainerConfig.
Result<v1::TrainerConfig> trainerConfigFromJson(std::string_view json,
                                                std::string_view source = "run spec");

// `config` as a JSON object with the .proto's field names as keys, holding the fields that are
// set (withTrainerDefaults first for every key); seed as a decimal string (protobuf's mapping of
// 64-bit integers). `multiline`: indented, one key per line; else one line.
std::string trainerConfigToJson(const v1::TrainerConfig& config, bool multiline = false);

// The run spec of a trainer job: `job.config` when set; else the deprecated `config_json` text of
// an old spec (old journals and GUI databases), converted with trainerConfigFromJson; else the
// empty config (all defaults). Errors: trainerConfigFromJson's, for a config_json that is not a
// valid run spec.
Result<v1::TrainerConfig> trainerConfigOf(const v1::TrainerJob& job);

// TrainerConfig.inject_compute_delay or inject_data_delay parsed: rank `rank` spends
// `milliseconds` more in the compute (or the data loading) of every step. nullopt for text that
// is not "RANK:MS" (RANK an integer >= 0, MS a number from 0 to 60,000).
struct InjectedDelay {
  int rank = 0;
  double milliseconds = 0.0;
};
std::optional<InjectedDelay> parseInjectedDelay(std::string_view text);

// The run's hang timeout in seconds (RunSpec.hang_timeout_s; kDefaultHangTimeoutSeconds when
// absent); 0: never.
uint32_t hangTimeoutSeconds(const v1::RunSpec& spec);

// How long one rank may stay in set-up or in one checkpoint write while its heartbeat goes on
// before it counts as stalled in that phase (RunSpec.phase_timeout_s; kDefaultPhaseTimeoutSeconds
// when absent); 0: no bound. docs/metrics.md, "Hangs".
uint32_t phaseTimeoutSeconds(const v1::RunSpec& spec);

// Checks RunSpec.hang_timeout_s: at most kMaxTimeoutSeconds, and for a trainer job shorter than
// its collective_timeout_s when both are on (else the trainer's own abort would end a hung run
// before the agent's verdict); and RunSpec.phase_timeout_s: at most kMaxTimeoutSeconds.
// Errors: InvalidArgument saying which value to change, e.g.
// "the hang timeout (1200 s) must be shorter than the trainer's collective timeout
// (collective_timeout_s, 900 s): ...". A trainer config that cannot be read is left to the
// launch's own check.
Status validateHangTimeout(const v1::RunSpec& spec);

}  // namespace ringside
