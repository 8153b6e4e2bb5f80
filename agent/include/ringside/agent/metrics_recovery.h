// Recovering a trainer run's metrics from its own output (docs/journal.md).
//
// The ranks send their metrics to the agent over ZeroMQ (docs/metrics.md, "The agent sink"),
// keeping them in memory while no agent listens. A run that ends while its agent is down (killed,
// restarting) takes what it could not send with it: the trainer prints "N unsent at exit". But rank
// 0 also prints every value it sends, and every rank's own values, as JSON Lines on stdout, which
// the agent keeps in the run's stdout.log. After such a run has ended, the agent reads that file
// and journals the samples the journal lacks, so the run's history is whole.
//
// Which samples are the same: (rank, step, metric name); rank -1 for global values, as
// parseMetricsLine (log_tailer.h) reads them and the sink sends them. The `time` of a recovered
// sample is rank 0's clock (the sink sends each rank's own). Only lines rank 0 printed (mpirun's
// tag, common/rank_tag.h) count: other ranks print no records.
//
// Thread-safety: the functions are safe to call from any one thread; the journal is thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ringside/agent/journal.h"
#include "ringside/common/status.h"

namespace ringside::agent {

struct RecoveryReport {
  uint64_t recordsRead = 0;     // metrics and start records of rank 0 in stdout.log
  uint64_t samplesInLog = 0;    // samples they hold
  uint64_t samplesMissing = 0;  // of those, not in the journal before: journaled now
  uint64_t linesSkipped = 0;    // lines longer than a log line, or records that did not parse
  // Samples the journal refused (a rank outside the run's world size, a step outside 0 to 2^53;
  // Journal::appendMetricSamples).
  uint64_t samplesRefused = 0;
  std::vector<v1::MetricSample> recovered;  // as journaled (with their seqs), for publishing
};

// Reads `stdoutPath` (a trainer run's stdout.log) and journals, in step order, each sample it
// holds that the journal has no sample of the same (rank, step, name) for. Memory: 8 bytes per
// journaled sample (a hash of its key) plus one batch of 10,000 samples. Errors: NotFound when
// the file cannot be read or the run is not journaled; FailedPrecondition once the run's final
// state is journaled (the agent recovers before it journals it, so that the recovered samples come
// before the final state); the journal's errors (batches journaled before the error stay
// journaled; a later call recovers the rest).
Result<RecoveryReport> recoverMetricsFromStdout(Journal& journal, const std::string& runId,
                                                const std::string& stdoutPath);

}  // namespace ringside::agent
