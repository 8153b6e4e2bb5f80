// straggler_replay: reads a ringside-trainer run's JSON Lines (stdout of rank 0, which carries
// every rank's per-rank records: docs/metrics.md) on stdin, feeds each rank's time/data_ms,
// time/compute_ms and time/wait_ms with the record's time to the agent's StragglerDetector
// (straggler_detector.h, the rule the owner agent applies to a live run) in the order they
// arrive, and prints every verdict as one JSON line: {"step": S, "time": Unix s, "rank": R (-1:
// none), "stage": "none"|"data"|"compute", "stage_ms": ..., "median_ms": ...,
// "others_wait_ms": ..., "cost_share": 0-1, "confidence": 0-1, "window_s": ...,
// "leading_rank": R, "leading_cost_share": ...}. Options set the rule's values (StragglerRule) for
// experiments: --enter-cost, --exit-cost, --slice-cost (shares 0-1), --enter-agreement,
// --exit-agreement (0-1), --slice-seconds, --slices, --lateness (true/false).
//
// Exit status: 0; 1 when the input has no start record (no world size) or a line is not JSON; 2
// on a bad option.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "ringside/agent/straggler_detector.h"
#include "ringside/common/metric_names.h"

int main(int argc, char** argv) {
  using ringside::agent::StragglerDetector;
  using ringside::agent::StragglerRule;
  using ringside::agent::StragglerVerdict;
  StragglerRule rule;
  CLI::App app{"straggler_replay: a trainer run's JSON Lines on stdin through StragglerDetector"};
  app.add_option("--enter-cost", rule.enterCostShare, "cost share to name a rank")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--exit-cost", rule.exitCostShare, "cost share to keep it named")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--slice-cost", rule.sliceCostShare, "cost share for a slice to agree")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--enter-agreement", rule.enterAgreement, "share of slices to name a rank")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--exit-agreement", rule.exitAgreement, "share of slices to keep it named")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--slice-seconds", rule.sliceSeconds, "shortest slice, s")
      ->check(CLI::PositiveNumber);
  app.add_option("--slices", rule.slices, "slices in the window")->check(CLI::Range(1, 1000));
  app.add_option("--lateness", rule.countLateness,
                 "count signed lateness above duty (true) or only stage charges (false)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error) == 0 ? 0 : 2;
  }
  std::unique_ptr<StragglerDetector> detector;
  std::string line;
  int64_t lineNumber = 0;
  while (std::getline(std::cin, line)) {
    ++lineNumber;
    if (line.empty() || line[0] != '{') continue;  // not a record (the trainer writes only JSON)
    const nlohmann::json record = nlohmann::json::parse(line, nullptr, false);
    if (record.is_discarded()) {
      std::fprintf(stderr, "straggler_replay: line %lld is not JSON\n",
                   static_cast<long long>(lineNumber));
      return 1;
    }
    const std::string type = record.value("type", "");
    if (type == "start") {
      detector = std::make_unique<StragglerDetector>(record.value("world_size", 1), rule);
      continue;
    }
    if (type != "metrics" || !record.contains("rank") || !record.contains("metrics")) continue;
    if (!detector) {
      std::fprintf(stderr, "straggler_replay: a per-rank record before the start record\n");
      return 1;
    }
    const int rank = record["rank"].get<int>();
    const int64_t step = record.value("step", int64_t{0});
    const double time = record.value("time", 0.0);
    // The run-queue delay first, as the trainer sends it (the detector counts it only before
    // the rank's record of the step is complete); then the rest in the record's order.
    const auto& metrics = record["metrics"];
    std::vector<std::pair<std::string, double>> values;
    if (auto rq = metrics.find(ringside::metric::kRunQueueMs);
        rq != metrics.end() && rq->is_number()) {
      values.emplace_back(ringside::metric::kRunQueueMs, rq->get<double>());
    }
    for (const auto& [name, value] : metrics.items()) {
      if (value.is_number() && name != ringside::metric::kRunQueueMs) {
        values.emplace_back(name, value.get<double>());
      }
    }
    for (const auto& [name, value] : values) {
      const auto verdict = detector->onSample(rank, step, name, value, time);
      if (!verdict) continue;
      const char* stage = verdict->stage == StragglerVerdict::kData      ? "data"
                          : verdict->stage == StragglerVerdict::kCompute ? "compute"
                          : verdict->stage == StragglerVerdict::kCpu     ? "cpu"
                                                                         : "none";
      std::cout << nlohmann::json{{"step", verdict->step},
                                  {"time", verdict->wallTime},
                                  {"rank", verdict->rank},
                                  {"stage", stage},
                                  {"stage_ms", verdict->stageMs},
                                  {"median_ms", verdict->medianMs},
                                  {"others_wait_ms", verdict->othersWaitMs},
                                  {"cost_share", verdict->costShare},
                                  {"confidence", verdict->confidence},
                                  {"window_s", verdict->windowSeconds},
                                  {"leading_rank", verdict->leadingRank},
                                  {"leading_cost_share", verdict->leadingCostShare}}
                       .dump()
                << "\n";
    }
  }
  if (!detector) {
    std::fprintf(stderr, "straggler_replay: no start record on stdin\n");
    return 1;
  }
  return 0;
}
