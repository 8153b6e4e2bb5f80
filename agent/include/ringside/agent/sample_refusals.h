// SampleRefusals: the metric samples the agent's journal refused, counted per run and reported
// at a bounded rate. The journal refuses samples of a run whose final state it
// holds, of a rank outside the run's world size, with a step or epoch outside 0 to 2^53, and of a
// run it does not hold (Journal::appendRankMetrics, appendMetricSamples); a broken or hostile
// sender can send such batches by the thousand a second, so the agent says so once at once and
// then at most once a minute per run, with the totals, instead of a line per batch.
//
// Thread-safety: not thread-safe; the agent uses it from its main loop.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ringside::agent {

class SampleRefusals {
 public:
  // A run's first refusal is reported at once; later ones at most this often, in seconds.
  static constexpr double kReportIntervalSeconds = 60.0;
  // Runs (and kinds) counted one by one; refusals for further run ids (which a sender can make
  // up by the million) are counted together under "other runs".
  static constexpr size_t kMaxRuns = 1024;

  // One report: `runId` ("" for "other runs") and its line, e.g. "refused 3 metric samples for
  // run 3f2a... (3 so far): rank 5 is outside the run's world size 2 (ranks 0 to 1)".
  struct Report {
    std::string runId;
    std::string text;
  };

  // Counts `samples` samples of `runId` refused because of `reason` at `now` (seconds, any
  // monotonic clock). `kind` tells refusals apart that are reported each on their own (the agent
  // passes the journal's Status::Code: a run's samples after its end, out of bounds, of an unknown
  // run). Returns the report to make now: the first refusal of its run and kind, or the first
  // after kReportIntervalSeconds since their last report (with what was held back since);
  // nullopt while held back.
  // `unit`: what is counted, in the singular ("metric sample"; "message" for whole messages
  // refused before their samples are read); an "s" makes its plural. A run id that is no run
  // id (over kMaxRunIdBytes, or with control characters) is counted under "other runs": neither
  // kept nor logged.
  std::optional<Report> add(const std::string& runId, int kind, uint64_t samples,
                            const std::string& reason, double now,
                            const char* unit = "metric sample");

  // Reports of the refusals held back whose interval has passed by `now` (call about once a
  // second, so that the last refusals of a burst are reported too).
  std::vector<Report> due(double now);

  // Samples refused so far for `runId` ("" for the runs past kMaxRuns), and for all runs.
  uint64_t refused(const std::string& runId) const;
  uint64_t refusedTotal() const { return total_; }

 private:
  struct Run {
    uint64_t total = 0;       // refused so far
    uint64_t unreported = 0;  // refused since the last report
    std::string lastReason;   // of the latest refusal
    double lastReport = 0.0;  // when the last report was made; valid once reported
    bool reported = false;
    const char* unit = "metric sample";
  };
  using Key = std::pair<std::string, int>;  // run id ("": other runs), kind
  static Report reportOf(const Key& key, Run& run, double now);

  std::map<Key, Run> runs_;
  uint64_t total_ = 0;
};

}  // namespace ringside::agent
