// telemetry_bench's reference: raw batched SQLite inserts of the rows the journal stores, timed
// in the same run as the agent.
#pragma once

#include <cstdint>
#include <string>

#include "ringside/common/status.h"
#include "telemetry_bench.h"

namespace ringside::bench {

struct SqliteReport {
  double seconds = 0;
  uint64_t rowsStored = 0;
};

// Inserts the same rows the journal stores (docs/journal.md's metric_samples: the narrow shape,
// PRIMARY KEY (run_key, seq), WITHOUT ROWID; no foreign keys) into a fresh WAL database at
// `path` with synchronous=NORMAL, through one prepared INSERT, one transaction per
// options.batchPoints rows, and counts the rows stored. Errors: kIOError naming the SQLite call
// that failed.
Result<SqliteReport> rawSqliteInserts(const Options& options, const std::string& path);

}  // namespace ringside::bench
