#include "ringside/agent/reply_pages.h"

#include <algorithm>
#include <charconv>
#include <deque>
#include <string_view>
#include <vector>

#include "ringside/agent/log_tailer.h"
#include "ringside/common/file_io.h"

namespace ringside::agent {

namespace {

// The run key a page token names (0 for the empty token, the first page).
Result<int64_t> runKeyAfter(const std::string& pageToken) {
  int64_t after = 0;
  if (pageToken.empty()) return after;
  const char* end = pageToken.data() + pageToken.size();
  const auto parsed = std::from_chars(pageToken.data(), end, after);
  if (parsed.ec != std::errc() || parsed.ptr != end || after < 0) {
    return Status::invalidArgument("list_runs page_token '" + pageToken.substr(0, 64) +
                                   "' is not one this agent wrote: send the next_page_token "
                                   "of the previous reply, or none for the first page");
  }
  return after;
}

// Fills one page from runs offered in key order, after the token's run.
class RunPage {
 public:
  RunPage(int64_t after, size_t budgetBytes) : after_(after), budgetBytes_(budgetBytes) {}

  // Adds `run` when it fits (the first always does); false once the page is full, and then
  // next_page_token names the last run added.
  bool add(const StoredRun& run) {
    if (run.runKey <= after_) return true;
    const size_t size = run.info.ByteSizeLong() + 8;
    if (page_.runs_size() > 0 && bytes_ + size > budgetBytes_) {
      page_.set_next_page_token(std::to_string(after_));
      return false;
    }
    bytes_ += size;
    *page_.add_runs() = run.info;
    after_ = run.runKey;
    return true;
  }
  v1::ListRunsReply take() { return std::move(page_); }

 private:
  int64_t after_;
  size_t budgetBytes_;
  size_t bytes_ = 0;
  v1::ListRunsReply page_;
};

}  // namespace

Result<v1::ListRunsReply> listRunsPage(Journal& journal, bool activeOnly,
                                       const std::string& pageToken, size_t budgetBytes) {
  auto after = runKeyAfter(pageToken);
  if (!after.isOk()) return after.status();
  RunPage page(*after, budgetBytes);
  RINGSIDE_RETURN_IF_ERROR(journal.forEachRunAfter(
      activeOnly, *after, [&page](StoredRun&& run) { return page.add(run); }));
  return page.take();
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
