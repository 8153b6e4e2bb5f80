#include "ringside/agent/log_tailer.h"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <utility>

#include "ringside/common/metric_names.h"

namespace ringside::agent {

namespace {

constexpr const char* kStreams[2] = {"stdout", "stderr"};
constexpr uint64_t kMaxChunkBytes = 1 << 20;

double wallSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

std::vector<v1::MetricSample> parseMetricsLine(const std::string& line) {
  std::vector<v1::MetricSample> samples;
  if (line.empty() || line.front() != '{') return samples;
  auto record = nlohmann::json::parse(line, nullptr, false);
  if (record.is_discarded() || !record.is_object()) return samples;
  auto integer = [&](const char* key) -> int64_t {
    return record.contains(key) && record[key].is_number() ? record[key].get<int64_t>() : 0;
  };
  const double time = record.contains("time") && record["time"].is_number()
                          ? record["time"].get<double>()
                          : wallSeconds();
  if (record.value("type", "") == "start") {
    // The run's size, as the trainer sends it to the agent sink: global samples at first_step.
    const int64_t firstStep = integer("first_step");
    const int64_t perEpoch = integer("steps_per_epoch");
    for (const auto& [key, name] : {std::pair{"total_steps", metric::kRunTotalSteps},
                                    std::pair{"steps_per_epoch", metric::kRunStepsPerEpoch}}) {
      if (!record.contains(key) || !record[key].is_number()) continue;
      v1::MetricSample sample;
      sample.set_step(firstStep);
      sample.set_epoch(perEpoch > 0 ? firstStep / perEpoch : 0);
      sample.set_wall_time(time);
      sample.set_rank(-1);
      sample.set_name(name);
      sample.set_value(record[key].get<double>());
      samples.push_back(std::move(sample));
    }
    return samples;
  }
  if (record.value("type", "") != "metrics" || !record.contains("metrics") ||
      !record["metrics"].is_object()) {
    return samples;
  }
  const int rank = record.contains("rank") && record["rank"].is_number_integer()
                       ? record["rank"].get<int>()
                       : -1;
  for (const auto& [name, value] : record["metrics"].items()) {
    if (!value.is_number()) continue;
    v1::MetricSample sample;
    sample.set_step(integer("step"));
    sample.set_epoch(integer("epoch"));
    sample.set_wall_time(time);
    sample.set_rank(rank);
    sample.set_name(name);
    sample.set_value(value.get<double>());
    samples.push_back(std::move(sample));
  }
  return samples;
}

LogTailer::LogTailer(std::string runDir, bool parseMetrics)
    : runDir_(std::move(runDir)), parseMetrics_(parseMetrics) {
  std::ifstream offsets(runDir_ + "/tail_offsets");
  offsets >> committed_[0] >> committed_[1];
  pending_[0] = committed_[0];
  pending_[1] = committed_[1];
}

LogTailer::Chunk LogTailer::poll() {
  Chunk chunk;
  for (int s = 0; s < 2; ++s) {
    pending_[s] = committed_[s];
    std::ifstream file(runDir_ + "/" + kStreams[s] + ".log", std::ios::binary);
    if (!file) continue;
    file.seekg(0, std::ios::end);
    const uint64_t size = static_cast<uint64_t>(file.tellg());
    if (size <= committed_[s]) continue;
    const uint64_t length = std::min(size - committed_[s], kMaxChunkBytes);
    std::string bytes(length, '\0');
    file.seekg(static_cast<std::streamoff>(committed_[s]));
    file.read(bytes.data(), static_cast<std::streamsize>(length));
    // Only complete lines; a partial last line waits for its newline.
    const size_t lastNewline = bytes.rfind('\n');
    if (lastNewline == std::string::npos) continue;
    bytes.resize(lastNewline + 1);
    pending_[s] = committed_[s] + bytes.size();
    const double now = wallSeconds();
    std::istringstream lines(bytes);
    std::string text;
    while (std::getline(lines, text)) {
      v1::LogLine line;
      line.set_wall_time(now);
      line.set_stream(kStreams[s]);
      line.set_text(text);
      chunk.lines.push_back(std::move(line));
      if (parseMetrics_ && s == 0) {
        for (auto& sample : parseMetricsLine(text)) chunk.samples.push_back(std::move(sample));
      }
    }
  }
  return chunk;
}

void LogTailer::commit() {
  committed_[0] = pending_[0];
  committed_[1] = pending_[1];
  const std::string path = runDir_ + "/tail_offsets";
  {
    std::ofstream out(path + ".tmp");
    out << committed_[0] << " " << committed_[1] << "\n";
  }
  std::rename((path + ".tmp").c_str(), path.c_str());
}

}  // namespace ringside::agent
