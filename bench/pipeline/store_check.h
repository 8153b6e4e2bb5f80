// pipeline_bench's check (nccl-tests' -c): reads a run's rows back from the GUI's SQLite file
// (docs/gui-database.md, table metrics) and compares them with what the simulated ranks sent;
// also the latency of every row, from the rank's writeMetrics to the store's commit.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gui_harness.h"
#include "ringside/common/status.h"
#include "simulated_ranks.h"

namespace ringside::bench {

struct StoreCheck {
  uint64_t rows = 0;        // the run's rows in the GUI store
  uint64_t expected = 0;    // samples the ranks sent
  uint64_t matched = 0;     // rows equal in every field (name, rank, step, epoch, wall_time,
                            // value) to a sample a rank sent, each sample counted once
  uint64_t duplicates = 0;  // rows of a sample already matched
  uint64_t wrong = 0;       // rows no rank sent, or with a field that differs
  uint64_t missing = 0;     // samples sent with no row
  std::string firstError;
  // Seconds from each matched row's wall_time (the rank's clock at writeMetrics) to the first
  // IngestEvent whose lastSeq covers its seq, sorted ascending.
  std::vector<double> latencies;
  // IngestEvents that stored more samples than their lastSeq advanced (a catch-up page filling
  // a gap): their rows' latency is under-estimated (shown as of an earlier commit).
  uint64_t outOfOrderIngests = 0;

  // The run's log lines (table logs) against the lines rank 0 printed, compared as hashes of
  // their text: matched once each, stored again, missing, or lines nobody printed (agent notes).
  uint64_t logRows = 0;
  uint64_t logExpected = 0;
  uint64_t logMatched = 0;
  uint64_t logDuplicates = 0;
  uint64_t logMissing = 0;
  uint64_t logOther = 0;

  bool ok() const {
    return matched == expected && duplicates == 0 && wrong == 0 && missing == 0 &&
           logMatched == logExpected && logDuplicates == 0 && logMissing == 0;
  }
};

// Reads run `runId` from the GUI database at `databasePath` (read-only, beside the store's own
// connection) and checks it against `ranks` (after join()) with `events` (GuiHarness::
// ingestEvents). Errors: kIOError naming the SQLite call that failed.
Result<StoreCheck> checkStore(const std::string& databasePath, const std::string& runId,
                              const SimulatedRanks& ranks, const std::vector<IngestEvent>& events);

// The q-quantile (0..1) of ascending `sorted`; 0 when empty.
double quantile(const std::vector<double>& sorted, double q);

}  // namespace ringside::bench
