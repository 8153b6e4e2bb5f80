// Why a run failed, in one sentence for RunInfo.reason: which rank, on which node, how it ended,
// and the rank's own first error line, read from the run's stderr.log (mpirun's messages and the
// ranks' lines, each tagged by `mpirun --tag-output`, log_tailer.h splitRankTag).
//
// Examples of the reasons it writes (Open MPI 4.1's wording is parsed; see the .cpp):
//   rank 1 on node node-2 exited with status 2: ringside-trainer: error on rank 1 (node-2):
//       --global-batch 127 is not divisible by the world size 2: use a multiple of 2 ...
//   rank 0 on node vm was killed by signal 9 (Killed)
//   rank 0 on node vm could not start: mpirun was unable to launch the specified application as
//       it could not change to the specified working directory: Working directory: /nope
//   mpirun exited with status 1: rank 3 on node node-2: ValueError: bad learning rate
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "ringside/proto/ringside.pb.h"

namespace ringside::agent {

// Longest error line quoted in a reason (bytes, cut at a character boundary and marked "..."):
// a reason is one sentence for a table cell and a run's history, not a log.
inline constexpr size_t kMaxQuotedErrorBytes = 512;

// The host that ran `rank`, from a run's placement (RunInfo.placement: hosts in rank order, each
// with its number of ranks); empty when the placement does not cover that rank.
std::string hostOfRank(const google::protobuf::RepeatedPtrField<v1::HostSlots>& placement,
                       int64_t rank);

// The first line among `rank`'s stderr lines in `stderrText` that reads as an error (a word such
// as error, exception, fatal, failed, cannot, denied, not found; for a Python traceback, the
// exception line that ends it), else the rank's last non-empty stderr line; libevent's "[warn]"
// lines are skipped. `rank` -1: the first such line of any rank, with *foundRank set to its rank.
// Empty when the rank printed nothing on stderr. The result is valid UTF-8, at most
// kMaxQuotedErrorBytes plus a marker.
std::string firstErrorLine(std::string_view stderrText, int64_t rank, int64_t* foundRank = nullptr);

// The reason of a failed run (not stopped on request): what mpirun says ended it (a rank killed by
// a signal, exiting with a status, or not starting), the rank's node (from mpirun's words, else
// from `placement`) and the rank's first error line; when that rank printed none, the first
// error line of another rank, naming it ("rank 1 on node vm exited with status 2; rank 0 on node
// vm: ..."); when mpirun names no rank, the first rank that printed an error; when no rank printed anything, mpirun's own last line (without libevent
// warnings). `statusKnown` false: the run's processes ended without an exit status.
std::string runFailureReason(std::string_view stderrText,
                             const google::protobuf::RepeatedPtrField<v1::HostSlots>& placement,
                             bool statusKnown, int exitCode);

}  // namespace ringside::agent
