// The trainer's settings: the run spec (ringside.v1.TrainerConfig, common/proto/ringside.proto,
// docs/run-spec.md) from command-line flags (CLI11) and a JSON run-spec file (--config FILE, read
// with protobuf's JSON mapping: keys are the .proto field names, e.g. {"global_batch": 256,
// "hidden": [512, 256]}, or the same with '-'). Flags given on the command line override the file;
// keys in neither take the defaults of ringside::defaultTrainerConfig().
#pragma once

#include <string>

#include "ringside/common/run_spec.h"
#include "ringside/common/status.h"
#include "ringside/proto/ringside.pb.h"
#include "ringside/trainer/backend.h"
#include "ringside/trainer/dataset.h"
#include "ringside/trainer/model.h"
#include "ringside/trainer/optimizer.h"

namespace CLI {
class App;  // CLI11's <CLI/CLI.hpp>, included only where flags are registered or parsed (its
            // header-only parser adds ~15 s to every translation unit that includes it).
}  // namespace CLI

namespace ringside::trainer {

// Registers on `app` one flag per TrainerConfig field (--help shows each default from
// defaultTrainerConfig()) and --config FILE. When app.parse() succeeds, `config` is the defaults,
// overlaid by the file's keys, overlaid by the flags given, with every field set
// (withTrainerDefaults) and validated (validateTrainerConfig). app.parse() throws a CLI::ParseError
// whose message names the problem: a flag's value of the wrong type (CLI11's message names the
// flag), a file that cannot be read or is over kMaxTrainerConfigJsonBytes (names the file), a file
// that is not a valid run spec (unknown key, wrong type, malformed JSON: protobuf's message names
// the key), a value out of range (names the key and its flag), or a floating-point value that is
// not finite (nan, inf, -inf: refused for every such key, also where a negative value means "the
// default"). `config` must outlive the parse.
void addTrainerOptions(CLI::App& app, v1::TrainerConfig& config);

// The optimizer and learning-rate schedule of a run spec (absent fields: their defaults).
OptimizerConfig optimizerConfigOf(const v1::TrainerConfig& spec);
LrScheduleConfig lrScheduleOf(const v1::TrainerConfig& spec);

// The model a run spec describes (`model`, `hidden`, `channels`, `dropout`) for the images of
// `train` (its size, rows and columns, one channel, and class count). Errors: InvalidArgument
// naming the value a layout cannot be built from (MlpLayout::create, CnnLayout::create; e.g. a
// CNN with more stages than the image can be pooled).
Result<ModelLayout> modelLayoutOf(const v1::TrainerConfig& spec, const ImageDataset& train);

}  // namespace ringside::trainer
