#include "ringside/agent/sample_refusals.h"

#include <algorithm>
#include <climits>

#include "ringside/common/protocol_limits.h"

namespace ringside::agent {

std::optional<SampleRefusals::Report> SampleRefusals::add(const std::string& runId, int kind,
                                                          uint64_t samples,
                                                          const std::string& reason, double now,
                                                          const char* unit) {
  const bool isRunId =
      !runId.empty() && runId.size() <= kMaxRunIdBytes &&
      std::none_of(runId.begin(), runId.end(), [](char c) {
        return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
      });
  Key key{isRunId ? runId : std::string(), kind};
  if (!runs_.contains(key) && runs_.size() >= kMaxRuns) key.first.clear();
  Run& run = runs_[key];
  run.total += samples;
  run.unreported += samples;
  run.lastReason = reason;
  run.unit = unit;
  total_ += samples;
  if (run.reported && now - run.lastReport < kReportIntervalSeconds) return std::nullopt;
  return reportOf(key, run, now);
}

std::vector<SampleRefusals::Report> SampleRefusals::due(double now) {
  std::vector<Report> reports;
  for (auto& [key, run] : runs_) {
    if (run.unreported > 0 && now - run.lastReport >= kReportIntervalSeconds) {
      reports.push_back(reportOf(key, run, now));
    }
  }
  return reports;
}

uint64_t SampleRefusals::refused(const std::string& runId) const {
  uint64_t total = 0;
  for (auto it = runs_.lower_bound(Key{runId, INT_MIN});
       it != runs_.end() && it->first.first == runId; ++it) {
    total += it->second.total;
  }
  return total;
}

SampleRefusals::Report SampleRefusals::reportOf(const Key& key, Run& run, double now) {
  const std::string& runId = key.first;
  Report report;
  report.runId = runId;
  report.text = "refused " + std::to_string(run.unreported) + " " + run.unit +
                (run.unreported == 1 ? "" : "s") + " for " +
                (runId.empty() ? std::string("other runs") : "run " + runId) + " (" +
                std::to_string(run.total) + " so far): " + run.lastReason;
  if (!run.reported) {
    report.text += "; further refusals like it are reported at most once a minute";
  }
  run.unreported = 0;
  run.lastReport = now;
  run.reported = true;
  return report;
}

}  // namespace ringside::agent
