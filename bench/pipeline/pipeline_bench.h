// What pipeline_bench's parts share. pipeline_bench measures the whole metrics path the GUI shows
// a run through, at the trainer's log rate: simulated trainer ranks (the real ZmqMetricSink,
// every step logged) -> the GUI's embedded ringside-agent (journal, PUB) -> the GUI's Controller
// (AgentConnection, MetricsStore) -> rows in the GUI's SQLite. The parts: simulated_ranks (what
// the ranks send, and the values they sent), gui_harness (the Controller, its local agent and the
// placeholder run), store_check (reads the GUI's database back and checks every row);
// pipeline_bench.cpp runs the phases. bench/README.md ("pipeline") has the command and figures.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "build_paths.h"

namespace ringside::bench {

struct PipelineOptions {
  std::string agentPath = ringside::test::agentBin();
  // The NVML the GUI's local agent loads: bench/scale's fake one, 8 GPUs, so that the node has a
  // GPU slot for every simulated rank (the agent refuses samples of ranks outside the run's world
  // size, and a run takes a slot per rank; this machine may have fewer cores than ranks).
  std::string nvmlLibrary = ringside::test::scaleNvml();
  int ranks = 8;
  // One phase per step interval, ms (0 < interval): each phase is its own run.
  std::vector<double> stepMs = {10, 5, 2, 1, 0.5, 0.25};
  double phaseSeconds = 10;  // steps per phase = phaseSeconds / stepMs
  // Seconds a phase may take, from its first step until the last sample is in the GUI store.
  double timeoutS = 300;
  // A phase is sustained when every sample arrived and its p99 latency (rank's writeMetrics to
  // the row in the GUI store) is at most this many seconds: a pipeline that falls behind the
  // ranks by a few percent builds a backlog of seconds over a phase.
  double sustainedP99S = 1.0;
  // The target: the pipeline sustains `ranks` ranks logging every step at this step time (ms).
  double targetStepMs = 1.0;
  bool keepGoing = false;  // run the faster phases after one that was not sustained
  uint64_t referenceSamples = 1'000'000;
  uint32_t referenceBatch = 1000;
  bool keepDir = false;
};

}  // namespace ringside::bench
