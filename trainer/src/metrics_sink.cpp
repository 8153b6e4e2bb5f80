#include "ringside/trainer/metrics_sink.h"

#include <cerrno>
#include <cmath>
#include <cstring>

namespace ringside::trainer {

nlohmann::json toJson(const MetricRecord& record) {
  nlohmann::json line;
  line["type"] = "metrics";
  line["step"] = record.step;
  line["epoch"] = record.epoch;
  line["time"] = record.wallTime;
  if (record.rank) line["rank"] = *record.rank;
  nlohmann::json values = nlohmann::json::object();
  for (const auto& [name, value] : record.values) {
    values[name] = std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(nullptr);
  }
  line["metrics"] = std::move(values);
  return line;
}

JsonLinesSink::~JsonLinesSink() {
  if (owned_ && stream_ != nullptr) std::fclose(stream_);
}

Result<std::unique_ptr<JsonLinesSink>> JsonLinesSink::openFile(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "w");
  if (file == nullptr) {
    return Status::ioError("cannot create metrics file " + path + ": " + std::strerror(errno));
  }
  auto sink = std::make_unique<JsonLinesSink>(file);
  sink->owned_ = true;
  return sink;
}

void JsonLinesSink::writeMetrics(const MetricRecord& record) { writeLine(toJson(record)); }

void JsonLinesSink::writeEvent(const nlohmann::json& event) { writeLine(event); }

void JsonLinesSink::flush() { std::fflush(stream_); }

void JsonLinesSink::writeLine(const nlohmann::json& line) {
  const std::string text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::fputs(text.c_str(), stream_);
  std::fputc('\n', stream_);
  std::fflush(stream_);
}

void FanoutSink::writeMetrics(const MetricRecord& record) {
  for (auto& sink : sinks_) sink->writeMetrics(record);
}

void FanoutSink::writeEvent(const nlohmann::json& event) {
  for (auto& sink : sinks_) sink->writeEvent(event);
}

void FanoutSink::flush() {
  for (auto& sink : sinks_) sink->flush();
}

}  // namespace ringside::trainer
