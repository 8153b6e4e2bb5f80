#include "ringside/agent/reply_pages.h"

#include <algorithm>
#include <charconv>
#include <deque>

#include "ringside/agent/log_tailer.h"
#include "ringside/common/file_io.h"

namespace ringside::agent {

Result<v1::ListRunsReply> listRunsPage(const std::vector<StoredRun>& runs,
                                       const std::string& pageToken, size_t budgetBytes) {
  int64_t after = 0;
  if (!pageToken.empty()) {
    const char* end = pageToken.data() + pageToken.size();
    const auto parsed = std::from_chars(pageToken.data(), end, after);
    if (parsed.ec != std::errc() || parsed.ptr != end || after < 0) {
      return Status::invalidArgument("list_runs page_token '" + pageToken.substr(0, 64) +
                                     "' is not one this agent wrote: send the next_page_token "
                                     "of the previous reply, or none for the first page");
    }
  }
  v1::ListRunsReply page;
  size_t bytes = 0;
  for (const StoredRun& run : runs) {
    if (run.runKey <= after) continue;
    const size_t size = run.info.ByteSizeLong() + 8;
    if (page.runs_size() > 0 && bytes + size > budgetBytes) {
      page.set_next_page_token(std::to_string(after));  // the key of the last run sent
      break;
    }
    bytes += size;
    *page.add_runs() = run.info;
    after = run.runKey;
  }
  return page;
}

v1::TailLogReply tailLogReply(const std::string& runId, const std::string& runDir,
                              uint32_t maxLines, size_t budgetBytes) {
  const size_t wanted = maxLines == 0 ? 100 : std::min(maxLines, kMaxTailLines);
  v1::TailLogReply reply;
  reply.set_run_id(runId);
  for (const char* stream : {"stdout", "stderr"}) {
    const std::string text = readFileTail(runDir + "/" + stream + ".log", size_t{16} << 20);
    std::vector<std::string_view> all;
    for (size_t begin = 0; begin < text.size();) {
      size_t end = text.find('\n', begin);
      if (end == std::string::npos) end = text.size();
      all.push_back(std::string_view(text).substr(begin, end - begin));
      begin = end + 1;
    }
    // The newest lines, while they fit half the budget (at least one).
    std::deque<std::string> lines;
    size_t bytes = 0;
    for (size_t i = all.size(); i-- > 0 && lines.size() < wanted;) {
      std::string line = logLineText(all[i]);
      bytes += line.size() + 16;
      if (!lines.empty() && bytes > budgetBytes / 2) break;
      lines.push_front(std::move(line));
    }
    for (std::string& line : lines) {
      v1::LogLine* out = reply.add_lines();
      out->set_stream(stream);
      out->set_text(std::move(line));
    }
  }
  return reply;
}

}  // namespace ringside::agent
