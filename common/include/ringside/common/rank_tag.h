// The tag `mpirun --tag-output` puts before every line a rank prints, and its removal.
//
// The agent always runs a job's mpirun with --tag-output (agent/include/ringside/agent/
// launch_command.h), so each line a rank prints reaches the run's stdout.log and stderr.log as
// "[<job>,<rank>]<stdout>:<text>" (also <stderr> and <stddiag>), the format of Open MPI 4.1's
// orte_tag_output. Lines mpirun prints itself (its error blocks, libevent warnings) carry no tag.
// Readers of those files (the agent's log tailer, failure reasons, tests) split lines here.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ringside {

// Largest rank a tag may carry: the world-size bound of a run (65,536 ranks) minus one.
inline constexpr int64_t kMaxTaggedRank = 65535;

struct RankTaggedLine {
  int32_t rank = -1;      // the rank that printed the line; -1: the line has no tag
  std::string_view text;  // the line after the tag (the whole line when it has none)
};

// Splits `line` (without its newline) into its rank and text. Only the exact form above is a tag:
// job and rank of 1 to 10 digits, rank at most kMaxTaggedRank, one of the three stream names.
// The result's text points into `line`.
RankTaggedLine splitRankTag(std::string_view line);

// The text of a rank's line without its tag and without the copies of that tag inside it: mpirun
// forwards output in blocks of up to 4 KiB (Open MPI's ORTE_IOF_BASE_MSG_MAX) and tags each block,
// so a block boundary inside a line puts the tag again in its middle, e.g.
// `[1,0]<stdout>:{"step":64[1,0]<stdout>:9,"type":"metrics"}` is `{"step":649,"type":"metrics"}`.
// Another rank's tag inside a line is kept (its block was forwarded into the middle of this
// line: the two lines are interleaved and neither can be rebuilt). An untagged line is returned
// as it is.
std::string textWithoutRankTags(std::string_view line);

}  // namespace ringside
