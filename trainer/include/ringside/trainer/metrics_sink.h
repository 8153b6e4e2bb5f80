// Where the trainer's metrics go. Records are JSON Lines (one JSON object per line), the format
// docs/metrics.md documents and the agent parses from custom commands too. A sink is an interface
// so that other transports (the agent's ZeroMQ sink) plug in beside the stdout and file sinks.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "ringside/common/status.h"

namespace ringside::trainer {

// One metrics sample: values of several metric names at one step.
struct MetricRecord {
  int64_t step = 0;         // global optimizer steps completed (the first step logs 1)
  int64_t epoch = 0;        // 0-based epoch the step belongs to
  double wallTime = 0.0;    // Unix time, seconds
  std::optional<int> rank;  // set for one rank's own values; absent for global values
  std::vector<std::pair<std::string, double>> values;  // metric name (metric_names.h) -> value
};

// {"type":"metrics","step":..,"epoch":..,"time":..,["rank":..,]"metrics":{name: value, ...}}.
// Non-finite values are written as null (JSON has no NaN).
nlohmann::json toJson(const MetricRecord& record);

// Sinks are called from the training thread only; implementations need no locking unless they
// hand records to another thread.
class MetricSink {
 public:
  virtual ~MetricSink() = default;
  virtual void writeMetrics(const MetricRecord& record) = 0;
  // A run event, e.g. {"type":"start",...} or {"type":"end",...}; `event` holds "type".
  virtual void writeEvent(const nlohmann::json& event) = 0;
  virtual void flush() = 0;
};

// Writes JSON Lines to a stdio stream, flushing after each line so a reader sees it at once.
class JsonLinesSink final : public MetricSink {
 public:
  // Does not take ownership of `stream` (e.g. stdout).
  explicit JsonLinesSink(std::FILE* stream) : stream_(stream) {}
  ~JsonLinesSink() override;
  // Creates (truncates) `path`. Errors: IOError naming the path.
  static Result<std::unique_ptr<JsonLinesSink>> openFile(const std::string& path);

  void writeMetrics(const MetricRecord& record) override;
  void writeEvent(const nlohmann::json& event) override;
  void flush() override;

 private:
  void writeLine(const nlohmann::json& line);
  std::FILE* stream_;
  bool owned_ = false;
};

// Sends every record to each of its sinks.
class FanoutSink final : public MetricSink {
 public:
  void add(std::unique_ptr<MetricSink> sink) { sinks_.push_back(std::move(sink)); }
  void writeMetrics(const MetricRecord& record) override;
  void writeEvent(const nlohmann::json& event) override;
  void flush() override;

 private:
  std::vector<std::unique_ptr<MetricSink>> sinks_;
};

}  // namespace ringside::trainer
