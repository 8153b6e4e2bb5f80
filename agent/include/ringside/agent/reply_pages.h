// Replies that carry many entries, built within the protocol's byte budget
// (protocol.h kMaxReplyPageBytes) so that none passes the 16 MiB frame limit: the pages of
// ListRuns and the lines of TailLog. (FetchRunData pages are cut by the journal, journal.h.)
//
// Thread-safety: pure functions (tailLogReply reads files; the journal's listRunsPage reads the
// journal, whose methods may be called from any thread).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "ringside/agent/journal.h"
#include "ringside/common/status.h"
#include "ringside/proto/ringside.pb.h"

namespace ringside::agent {

// Most lines TailLogRequest.max_lines may ask for, per stream.
inline constexpr uint32_t kMaxTailLines = 10000;

// One page of the journal's runs (oldest first; include_ended false: activeOnly): the runs after
// the one `pageToken` names (empty: from the first), as many as fit `budgetBytes` of serialized
// RunInfo (at least one), and next_page_token naming the last run sent when more follow. A token
// is the journal key of the last run of the previous page, as a decimal number; a run deleted
// since then does not disturb it. Only the runs after the token's run are read
// (Journal::forEachRunAfter), and the scan stops at the first run that does not fit, so a page
// costs what it holds plus one run, not the whole list. Errors: InvalidArgument for a token this
// function did not write; the journal's errors.
Result<v1::ListRunsReply> listRunsPage(Journal& journal, bool activeOnly,
                                       const std::string& pageToken, size_t budgetBytes);

// The last `maxLines` lines (0: 100; more than kMaxTailLines: kMaxTailLines) of the run's
// stdout.log and of its stderr.log, as LogLine texts (log_tailer.h logLineText: rank tags shown,
// valid UTF-8, long lines cut), fewer when their texts would pass half of `budgetBytes` per
// stream (the newest lines are kept). Reads at most the last 16 MiB of each file.
v1::TailLogReply tailLogReply(const std::string& runId, const std::string& runDir,
                              uint32_t maxLines, size_t budgetBytes);

}  // namespace ringside::agent
