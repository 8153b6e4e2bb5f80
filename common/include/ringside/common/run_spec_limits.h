// Bounds on the fields of a RunSpec (common/proto/ringside.proto), so that a run's record, and
// every reply that carries it (LaunchRun, ListRuns, FetchRunData states), stays a small part of a
// 16 MiB frame (protocol.h kMaxMessageBytes). The agent checks them before anything else at launch
// and pre-flight; the GUI's form checks them before it sends. docs/protocol.md#limits lists them.
//
// Thread-safety: constants and a pure function.
#pragma once

#include <cstddef>

#include "ringside/common/status.h"
#include "ringside/proto/ringside.pb.h"

namespace ringside {

inline constexpr size_t kMaxRunNameBytes = 256;  // RunSpec.name
inline constexpr size_t kMaxRunTags = 64;        // RunSpec.tags entries
inline constexpr size_t kMaxRunTagBytes = 128;   // bytes of one tag
// A command line: at most 4,096 words, each at most 128 KiB (Linux's MAX_ARG_STRLEN) and 1 MiB in
// all (CustomCommand.argv; RunSpec.mpirun_args counts with them).
inline constexpr size_t kMaxArgvWords = 4096;
inline constexpr size_t kMaxArgBytes = 128 * 1024;
inline constexpr size_t kMaxCommandLineBytes = 1024 * 1024;
// Extra environment of the ranks (RunSpec.env): 1,024 variables, 256 KiB of names and values.
inline constexpr size_t kMaxEnvEntries = 1024;
inline constexpr size_t kMaxEnvBytes = 256 * 1024;
inline constexpr size_t kMaxPathBytes = 4096;  // working_dir, trainer_path (PATH_MAX)
inline constexpr size_t kMaxRunHosts = 4096;   // RunSpec.hosts entries
// The whole RunSpec, serialized: 2 MiB (its trainer config is at most 1 MiB as JSON).
inline constexpr size_t kMaxRunSpecBytes = 2 * 1024 * 1024;

// A run's hyperparameters as its script declares them (RunParams.params, RunInfo.params): at
// most 1,024 keys (a run keeps its first 1,024), each a dotted path of 1 to 256 bytes, each value
// the JSON text of a scalar of at most 4 KiB. Enough for any config file flattened; small
// enough that a run's record stays a small part of a reply (1,024 x ~4.3 KiB = 4.4 MiB at most).
inline constexpr size_t kMaxRunParams = 1024;
inline constexpr size_t kMaxRunParamKeyBytes = 256;
inline constexpr size_t kMaxRunParamValueBytes = 4096;

// OK when `params` is within the bounds above and every key and value is valid UTF-8 without
// control characters in keys. Errors: InvalidArgument naming the key and the bound.
Status validateRunParams(const google::protobuf::Map<std::string, std::string>& params);

// OK when every field of `spec` is within the bounds above. Errors: InvalidArgument naming the
// field, its size and the bound (e.g. "the run's name is 300 bytes; at most 256").
Status validateRunSpecLimits(const v1::RunSpec& spec);

// RunSpec.slurm (docs/slurm.md): a partition, account or QOS name of at most 64 bytes, a GPU
// request template of at most 128.
inline constexpr size_t kMaxSlurmNameBytes = 64;
inline constexpr size_t kMaxSlurmGpuRequestBytes = 128;

}  // namespace ringside
