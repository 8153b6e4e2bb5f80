// Bounds on the JSON texts that cross a process boundary into the agent: a request's run spec
// (the deprecated TrainerJob.config_json, run_spec.h) and the JSON Lines records a custom
// command prints (docs/metrics.md, log_tailer.h). Deep text is refused before a document is
// built: nlohmann::json (3.11) parses and destroys iteratively but copies, compares and prints a
// document recursively, one stack frame per level (copying 100,000 levels, a 200 KB line,
// overflows the stack), and protobuf's JSON parser reads 100,000 nested lists into a repeated
// field without an error.
//
// Thread-safety: pure functions; safe from any thread.
#pragma once

#include <string_view>

#include "ringside/common/status.h"

namespace ringside {

// Deepest nesting of objects and arrays accepted in any JSON the agent reads ({} and [] are one
// level, a scalar none). The deepest JSON Ringside itself writes is 3 levels (a "start" record's
// config.hidden list, docs/metrics.md); 32 leaves room for a user's own records while keeping
// every recursive walk of a document shallow. docs/protocol.md#limits states it.
inline constexpr int kMaxJsonDepth = 32;

// OK when the objects and arrays in `text` nest at most `maxDepth` levels. Reads `text` with
// nlohmann::json's SAX parser, which keeps its own stack and builds nothing, and stops at the
// first level too deep, so any depth costs one pass and constant stack. Text that is not JSON
// (before a level too deep) is OK here: the caller's own parser reports it in its words.
// Errors: InvalidArgument naming `source`, e.g. "config_json nests objects and arrays more than
// 32 levels deep: flatten it (the limit is in docs/protocol.md)".
Status checkJsonDepth(std::string_view text, int maxDepth, std::string_view source);

}  // namespace ringside
