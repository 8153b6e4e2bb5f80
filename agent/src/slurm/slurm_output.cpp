#include "ringside/agent/slurm/slurm_output.h"

#include <ctime>
#include <map>

namespace ringside::agent::slurm {

namespace {

std::vector<std::string_view> splitFields(std::string_view line, char separator) {
  std::vector<std::string_view> fields;
  size_t begin = 0;
  while (true) {
    const size_t end = line.find(separator, begin);
    fields.push_back(line.substr(begin, end == std::string_view::npos ? end : end - begin));
    if (end == std::string_view::npos) break;
    begin = end + 1;
  }
  return fields;
}

std::vector<std::string_view> splitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  for (std::string_view line : splitFields(text, '\n')) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

uint64_t toNumber(std::string_view text) {
  uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') break;
    value = value * 10 + static_cast<uint64_t>(c - '0');
    if (value > (uint64_t{1} << 40)) break;
  }
  return value;
}

bool isDigits(std::string_view text) {
  return !text.empty() && text.find_first_not_of("0123456789") == std::string_view::npos;
}

}  // namespace

std::optional<double> parseSlurmTime(std::string_view text) {
  // "YYYY-MM-DDTHH:MM:SS"
  if (text.size() != 19 || text[4] != '-' || text[7] != '-' || text[10] != 'T' ||
      text[13] != ':' || text[16] != ':') {
    return std::nullopt;
  }
  for (size_t i : {0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18}) {
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
  }
  std::tm tm{};
  tm.tm_year = static_cast<int>(toNumber(text.substr(0, 4))) - 1900;
  tm.tm_mon = static_cast<int>(toNumber(text.substr(5, 2))) - 1;
  tm.tm_mday = static_cast<int>(toNumber(text.substr(8, 2)));
  tm.tm_hour = static_cast<int>(toNumber(text.substr(11, 2)));
  tm.tm_min = static_cast<int>(toNumber(text.substr(14, 2)));
  tm.tm_sec = static_cast<int>(toNumber(text.substr(17, 2)));
  tm.tm_isdst = -1;  // the machine's own rule, as Slurm printed it
  const std::time_t seconds = std::mktime(&tm);
  if (seconds == static_cast<std::time_t>(-1)) return std::nullopt;
  return static_cast<double>(seconds);
}

std::vector<QueuedJob> parseSqueue(std::string_view text) {
  std::vector<QueuedJob> jobs;
  for (std::string_view line : splitLines(text)) {
    const std::vector<std::string_view> fields = splitFields(line, '|');
    if (fields.size() != 7 || fields[0].empty()) continue;
    QueuedJob job;
    job.jobId = std::string(fields[0]);
    job.name = std::string(fields[1]);
    job.state = std::string(fields[2]);
    job.reason = std::string(fields[3]);
    job.expectedStart = parseSlurmTime(fields[4]).value_or(0.0);
    job.nodeList = fields[5] == "(null)" ? std::string() : std::string(fields[5]);
    job.partition = std::string(fields[6]);
    jobs.push_back(std::move(job));
  }
  return jobs;
}

uint32_t gpusOfGres(std::string_view gres) {
  uint64_t gpus = 0;
  for (std::string_view item : splitFields(gres, ',')) {
    const size_t paren = item.find('(');
    if (paren != std::string_view::npos) item = item.substr(0, paren);
    const std::vector<std::string_view> parts = splitFields(item, ':');
    if (parts.size() < 2 || parts[0] != "gpu") continue;
    // "gpu:N" or "gpu:TYPE:N"
    gpus += toNumber(parts.back());
  }
  return static_cast<uint32_t>(std::min<uint64_t>(gpus, 1u << 16));
}

std::vector<v1::SlurmPartition> parseSinfo(std::string_view text) {
  std::vector<v1::SlurmPartition> partitions;
  std::map<std::string, size_t, std::less<>> index;
  for (std::string_view line : splitLines(text)) {
    const std::vector<std::string_view> fields = splitFields(line, '|');
    if (fields.size() != 8 || fields[0].empty()) continue;
    std::string_view name = fields[0];
    const bool isDefault = name.back() == '*';
    if (isDefault) name.remove_suffix(1);
    auto found = index.find(name);
    if (found == index.end()) {
      if (partitions.size() >= kMaxPartitions) continue;
      found = index.emplace(std::string(name), partitions.size()).first;
      v1::SlurmPartition& added = partitions.emplace_back();
      added.set_name(std::string(name));
      added.set_availability(std::string(fields[1]));
      added.set_time_limit(std::string(fields[2]));
    }
    v1::SlurmPartition& partition = partitions[found->second];
    if (isDefault) partition.set_is_default(true);
    if (static_cast<size_t>(partition.nodes_size()) >= kMaxPartitionNodes) continue;
    v1::SlurmNode* node = partition.add_nodes();
    node->set_name(std::string(fields[3]));
    node->set_state(std::string(fields[4]));
    node->set_cpus(static_cast<uint32_t>(std::min<uint64_t>(toNumber(fields[5]), 1u << 20)));
    node->set_memory_mib(toNumber(fields[6]));
    node->set_gres(std::string(fields[7]));
    node->set_gpus(gpusOfGres(fields[7]));
  }
  return partitions;
}

bool isFinalJobState(std::string_view state) {
  const size_t space = state.find(' ');
  if (space != std::string_view::npos) state = state.substr(0, space);  // "CANCELLED by 0"
  static constexpr std::string_view kFinal[] = {
      "BOOT_FAIL", "CANCELLED",     "COMPLETED", "DEADLINE", "FAILED",    "NODE_FAIL",
      "OUT_OF_MEMORY", "PREEMPTED", "TIMEOUT",   "REVOKED",  "SPECIAL_EXIT"};
  for (std::string_view final : kFinal) {
    if (state == final) return true;
  }
  return false;
}

std::optional<JobEnd> parseSacct(std::string_view text, std::string_view jobId) {
  for (std::string_view line : splitLines(text)) {
    const std::vector<std::string_view> fields = splitFields(line, '|');
    if (fields.size() < 3 || fields[0] != jobId) continue;
    std::string_view state = fields[1];
    const size_t space = state.find(' ');
    if (space != std::string_view::npos) state = state.substr(0, space);
    if (!isFinalJobState(state)) return std::nullopt;
    JobEnd end;
    end.state = std::string(state);
    const std::vector<std::string_view> code = splitFields(fields[2], ':');
    end.exitCode = static_cast<int>(std::min<uint64_t>(toNumber(code[0]), 255));
    if (code.size() > 1) end.signal = static_cast<int>(std::min<uint64_t>(toNumber(code[1]), 255));
    return end;
  }
  return std::nullopt;
}

Result<std::string> parseSbatchJobId(std::string_view text) {
  std::vector<std::string_view> lines = splitLines(text);
  std::string_view id = lines.empty() ? std::string_view() : lines.back();
  const size_t semicolon = id.find(';');
  if (semicolon != std::string_view::npos) id = id.substr(0, semicolon);
  if (!isDigits(id) || id.size() > 20) {
    return Status::invalidArgument("sbatch printed no job id: '" +
                                   std::string(text.substr(0, 200)) + "'");
  }
  return std::string(id);
}

}  // namespace ringside::agent::slurm
