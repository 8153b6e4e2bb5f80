#include "ringside/agent/failure_reason.h"

#include <algorithm>
#include <cctype>
#include <regex>
#include <vector>

#include "ringside/agent/log_tailer.h"
#include "ringside/common/utf8.h"

namespace ringside::agent {
namespace {

// mpirun's own lines are searched with std::regex, which recurses per character: only the last
// this many bytes of them (its verdict is printed at the end).
constexpr size_t kMaxMpirunTextBytes = 256 * 1024;

bool isBlank(std::string_view line) {
  return line.find_first_not_of(" \t\r") == std::string_view::npos;
}

// libevent's "[warn] ..." lines, which Open MPI's event loop prints while it tears down under
// load, never say why a run failed.
bool isNoise(std::string_view line) { return line.starts_with("[warn]") || isBlank(line); }

std::string_view trimmed(std::string_view line) {
  const size_t first = line.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  const size_t last = line.find_last_not_of(" \t\r");
  return line.substr(first, last - first + 1);
}

std::string quoted(std::string_view line) {
  line = trimmed(line);
  if (line.size() <= kMaxQuotedErrorBytes) return toValidUtf8(line);
  return toValidUtf8(line.substr(0, utf8PrefixLength(line, kMaxQuotedErrorBytes))) + " ...";
}

// Words programs use when they report an error (case-insensitive).
bool readsAsError(std::string_view line) {
  static const std::regex words(
      R"(error|exception|fatal|abort|panic|traceback|failed|failure|cannot|can't|could not|)"
      R"(unable|denied|refused|not found|no such|invalid|segmentation|killed|terminate)",
      std::regex::icase | std::regex::optimize);
  const std::string text(line.substr(0, std::min<size_t>(line.size(), 4096)));
  return std::regex_search(text, words);
}

struct Line {
  int32_t rank;           // -1: mpirun's own
  std::string_view text;  // without the tag
};

std::vector<Line> splitLines(std::string_view text) {
  std::vector<Line> lines;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) end = text.size();
    const RankTaggedLine split = splitRankTag(text.substr(begin, end - begin));
    lines.push_back({split.rank, split.text});
    begin = end + 1;
  }
  return lines;
}

// The error line of one rank's lines (in order), as firstErrorLine describes.
std::string errorLineOf(const std::vector<std::string_view>& lines, bool lastLineFallback) {
  for (size_t i = 0; i < lines.size(); ++i) {
    if (isNoise(lines[i]) || !readsAsError(lines[i])) continue;
    if (trimmed(lines[i]).starts_with("Traceback (most recent call last)")) {
      // Python: the exception is the first line after the traceback that is not indented.
      for (size_t j = i + 1; j < lines.size(); ++j) {
        if (!isBlank(lines[j]) && lines[j].front() != ' ' && lines[j].front() != '\t') {
          return quoted(lines[j]);
        }
      }
    }
    return quoted(lines[i]);
  }
  for (size_t i = lines.size(); lastLineFallback && i-- > 0;) {
    if (!isNoise(lines[i])) return quoted(lines[i]);
  }
  return "";
}

// What mpirun said about the rank that ended the job.
struct MpirunVerdict {
  int64_t rank = -1;
  std::string node;
  std::string
      how;  // "exited with status 2", "was killed by signal 9 (Killed)", "could not start: ..."
  bool signalled = false;
};

// The lines of the dashed block ("-----...") around `position` in `text`, joined by spaces,
// without the line that names the rank.
std::string blockAround(const std::string& text, size_t position) {
  const std::string dashes = "-------------------";
  size_t begin = text.rfind(dashes, position);
  begin = begin == std::string::npos ? 0 : text.find('\n', begin);
  size_t end = text.find(dashes, position);
  if (end == std::string::npos) end = text.size();
  std::string joined;
  for (const Line& line : splitLines(std::string_view(text).substr(begin, end - begin))) {
    const std::string_view words = trimmed(line.text);
    if (words.empty() || words.starts_with("while attempting to start process rank")) continue;
    if (!joined.empty()) joined += ' ';
    joined += words;
  }
  return joined;
}

MpirunVerdict parseMpirunVerdict(const std::string& text) {
  // Open MPI 4.1's wording.
  static const std::regex signalled(
      R"(process rank (\d+) with PID (\d+) on node (\S+) exited on signal (\d+) \(([^)]*)\))");
  static const std::regex exited(
      R"(rank (\d+) with PID (\d+) on node (\S+) exited with\s+status (\d+))");
  static const std::regex firstProcess(
      R"(Process name:\s*\[\[\d+,\d+\],(\d+)\]\s*Exit code:\s*(\d+))");
  static const std::regex notStarted(R"(while attempting to start process rank (\d+))");
  static const std::regex nodeLine(R"(Node:\s*(\S+))");
  MpirunVerdict verdict;
  std::smatch match;
  if (std::regex_search(text, match, signalled)) {
    verdict.rank = std::stoll(match[1].str());
    verdict.node = match[3].str();
    verdict.how = "was killed by signal " + match[4].str() + " (" + match[5].str() + ")";
    verdict.signalled = true;
  } else if (std::regex_search(text, match, exited)) {
    verdict.rank = std::stoll(match[1].str());
    verdict.node = match[3].str();
    verdict.how = "exited with status " + match[4].str();
  } else if (std::regex_search(text, match, firstProcess)) {
    verdict.rank = std::stoll(match[1].str());
    verdict.how = "exited with status " + match[2].str();
  } else if (std::regex_search(text, match, notStarted)) {
    verdict.rank = std::stoll(match[1].str());
    const std::string block = blockAround(text, static_cast<size_t>(match.position(0)));
    std::smatch node;
    if (std::regex_search(block, node, nodeLine)) verdict.node = node[1].str();
    verdict.how = "could not start" + (block.empty() ? std::string() : ": " + quoted(block));
  }
  return verdict;
}

}  // namespace

std::string hostOfRank(const google::protobuf::RepeatedPtrField<v1::HostSlots>& placement,
                       int64_t rank) {
  if (rank < 0) return "";
  int64_t first = 0;
  for (const v1::HostSlots& host : placement) {
    if (rank < first + static_cast<int64_t>(host.ranks())) return host.host();
    first += host.ranks();
  }
  return "";
}

std::string firstErrorLine(std::string_view stderrText, int64_t rank, int64_t* foundRank) {
  const std::vector<Line> lines = splitLines(stderrText);
  if (rank >= 0) {
    std::vector<std::string_view> own;
    for (const Line& line : lines) {
      if (line.rank == rank) own.push_back(line.text);
    }
    if (foundRank != nullptr) *foundRank = own.empty() ? -1 : rank;
    return errorLineOf(own, /*lastLineFallback=*/true);
  }
  // Any rank: the first rank line that reads as an error, quoted as that rank's error line.
  for (const Line& line : lines) {
    if (line.rank < 0 || isNoise(line.text) || !readsAsError(line.text)) continue;
    if (foundRank != nullptr) *foundRank = line.rank;
    return firstErrorLine(stderrText, line.rank, nullptr);
  }
  if (foundRank != nullptr) *foundRank = -1;
  return "";
}

std::string runFailureReason(std::string_view stderrText,
                             const google::protobuf::RepeatedPtrField<v1::HostSlots>& placement,
                             bool statusKnown, int exitCode) {
  std::string mpirunText;
  std::string lastMpirunLine;
  for (const Line& line : splitLines(stderrText)) {
    if (line.rank >= 0 || line.text.starts_with("[warn]")) continue;
    mpirunText.append(line.text).push_back('\n');
    if (!isBlank(line.text) && line.text.find_first_not_of("-") != std::string_view::npos) {
      lastMpirunLine = std::string(line.text);
    }
  }
  if (mpirunText.size() > kMaxMpirunTextBytes) {
    mpirunText.erase(0, mpirunText.size() - kMaxMpirunTextBytes);
  }
  const MpirunVerdict verdict = parseMpirunVerdict(mpirunText);
  const std::string ended = statusKnown
                                ? "mpirun exited with status " + std::to_string(exitCode)
                                : std::string("the run's processes ended without an exit status");

  auto where = [&](int64_t rank, const std::string& node) {
    const std::string host = node.empty() ? hostOfRank(placement, rank) : node;
    return "rank " + std::to_string(rank) + (host.empty() ? "" : " on node " + host);
  };
  if (verdict.rank >= 0) {
    std::string reason = where(verdict.rank, verdict.node) + " " + verdict.how;
    // A rank killed by a signal did not end itself: its last line (progress, say) is not why.
    std::string line = firstErrorLine(stderrText, verdict.rank);
    if (verdict.signalled && !readsAsError(line)) line.clear();
    if (!line.empty()) return reason + ": " + line;
    // The rank that ended the job printed nothing (the trainer reports a bad option on rank 0
    // only, and another rank may exit first): the first rank that printed an error says why.
    int64_t other = -1;
    line = firstErrorLine(stderrText, -1, &other);
    if (!line.empty()) reason += "; " + where(other, "") + ": " + line;
    return reason;
  }
  int64_t rank = -1;
  const std::string line = firstErrorLine(stderrText, -1, &rank);
  if (!line.empty()) return ended + ": " + where(rank, "") + ": " + line;
  if (!lastMpirunLine.empty()) return ended + ": " + quoted(lastMpirunLine);
  return ended;
}

}  // namespace ringside::agent
