#include "ringside/common/rank_tag.h"

namespace ringside {

RankTaggedLine splitRankTag(std::string_view line) {
  RankTaggedLine split{.rank = -1, .text = line};
  if (line.empty() || line.front() != '[') return split;
  size_t at = 1;
  // 1 to 10 decimal digits ending in `terminator`, stepped over.
  auto digits = [&](char terminator, int64_t* value) {
    const size_t start = at;
    *value = 0;
    while (at < line.size() && at - start < 10 && line[at] >= '0' && line[at] <= '9') {
      *value = *value * 10 + (line[at] - '0');
      ++at;
    }
    if (at == start || at >= line.size() || line[at] != terminator) return false;
    ++at;
    return true;
  };
  int64_t job = 0, rank = 0;
  if (!digits(',', &job) || !digits(']', &rank) || rank > kMaxTaggedRank) return split;
  for (std::string_view stream : {"<stdout>:", "<stderr>:", "<stddiag>:"}) {
    if (line.substr(at, stream.size()) == stream) {
      split.rank = static_cast<int32_t>(rank);
      split.text = line.substr(at + stream.size());
      return split;
    }
  }
  return split;
}

std::string textWithoutRankTags(std::string_view line) {
  const RankTaggedLine split = splitRankTag(line);
  if (split.rank < 0) return std::string(line);
  const std::string_view tag = line.substr(0, line.size() - split.text.size());
  std::string text;
  text.reserve(split.text.size());
  for (size_t at = 0; at < split.text.size();) {
    const size_t next = split.text.find(tag, at);
    if (next == std::string_view::npos) {
      text.append(split.text.substr(at));
      break;
    }
    text.append(split.text.substr(at, next - at));
    at = next + tag.size();
  }
  return text;
}

}  // namespace ringside
