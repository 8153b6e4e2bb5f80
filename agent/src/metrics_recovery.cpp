#include "ringside/agent/metrics_recovery.h"

#include <fstream>
#include <functional>
#include <unordered_set>

#include "ringside/agent/log_tailer.h"
#include "ringside/common/rank_tag.h"

namespace ringside::agent {
namespace {

constexpr size_t kBatch = 10000;

// One 64-bit key per (rank, step, name). Two different samples sharing a key (odds about n^2 /
// 2^65 for n samples) would leave one of them unrecovered, never journal one twice.
uint64_t keyOf(int32_t rank, int64_t step, std::string_view name) {
  uint64_t h = std::hash<std::string_view>{}(name);
  h ^= static_cast<uint64_t>(step) * 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
  h ^= static_cast<uint64_t>(static_cast<uint32_t>(rank)) * 0xC2B2AE3D27D4EB4Full + (h << 6) +
       (h >> 2);
  return h;
}

}  // namespace

Result<RecoveryReport> recoverMetricsFromStdout(Journal& journal, const std::string& runId,
                                                const std::string& stdoutPath) {
  std::ifstream in(stdoutPath, std::ios::binary);
  if (!in) return Status::notFound("cannot read " + stdoutPath);
  std::unordered_set<uint64_t> journaled;
  RINGSIDE_RETURN_IF_ERROR(
      journal.forEachSampleKey(runId, [&](int32_t rank, int64_t step, std::string_view name) {
        journaled.insert(keyOf(rank, step, name));
      }));

  RecoveryReport report;
  std::vector<v1::MetricSample> batch;
  auto flush = [&]() -> Status {
    if (batch.empty()) return Status::ok();
    SampleRefusal refused;
    auto stored = journal.appendMetricSamples(runId, batch, &refused);
    batch.clear();
    if (!stored.isOk()) return stored.status();
    report.samplesRefused += refused.samples;
    report.samplesMissing += stored->size();
    for (auto& sample : *stored) report.recovered.push_back(std::move(sample));
    return Status::ok();
  };
  std::string line;
  while (std::getline(in, line)) {
    const RankTaggedLine tagged = splitRankTag(line);
    if (tagged.rank > 0 || tagged.text.empty() || tagged.text.front() != '{') continue;
    std::string problem;
    const std::vector<v1::MetricSample> samples = parseMetricsLine(line, &problem);
    if (!problem.empty()) {
      ++report.linesSkipped;
      continue;
    }
    if (samples.empty()) continue;  // end records and others
    ++report.recordsRead;
    for (const v1::MetricSample& sample : samples) {
      ++report.samplesInLog;
      // insert(): a record printed twice is recovered once.
      if (!journaled.insert(keyOf(sample.rank(), sample.step(), sample.name())).second) continue;
      batch.push_back(sample);
      if (batch.size() >= kBatch) RINGSIDE_RETURN_IF_ERROR(flush());
    }
  }
  RINGSIDE_RETURN_IF_ERROR(flush());
  return report;
}

}  // namespace ringside::agent
