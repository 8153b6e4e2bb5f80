#include "scale_check.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include "pipeline/store_check.h"
#include "ringside/common/metric_names.h"

namespace ringside::bench {

Result<ScaleCheck> checkScaleStore(const std::string& databasePath, const std::string& runId,
                                   const ScaleRanks& ranks,
                                   const std::vector<IngestEvent>& events) {
  auto db = openGuiDatabase(databasePath);
  if (!db.isOk()) return db.status();
  const CommitCover cover(events);
  ScaleCheck check;
  check.expected = ranks.expectedSamples();
  check.latencies.resize(ranks.options().phases.size());
  std::vector<bool> seen(check.expected, false);
  auto fail = [&check](uint64_t* counter, const std::string& what) {
    if (check.wrong + check.duplicates + check.missing == 0) check.firstError = what;
    ++*counter;
  };
  RINGSIDE_RETURN_IF_ERROR(forEachStoredRow(db->get(), runId, [&](const StoredRow& row) {
    ++check.rows;
    const char* name = row.name;
    if (std::strncmp(name, "gpu", 3) == 0 || std::strncmp(name, "node/", 5) == 0) {
      ++check.telemetryRows;  // the nodes' GPU telemetry the GUI keeps with the run
      return;
    }
    if (metric::isAgentVerdict(name)) {
      ++check.agentRows;
      if (std::strcmp(name, metric::kStragglerRank) == 0) {
        check.verdicts.push_back({row.step, row.value, row.wallTime, cover.at(row.seq)});
      }
      return;
    }
    const std::string where = std::string(name) + " rank " + std::to_string(row.rank) + " step " +
                              std::to_string(row.step);
    const std::optional<SentSample> sent = sentSample(
        ranks.outcomes(), ranks.steps(), name, row.rank, row.step,
        [&ranks](int rank, int field, int64_t step) { return ranks.valueOf(rank, field, step); });
    if (!sent) {
      fail(&check.wrong, "a row no rank sent: " + where);
      return;
    }
    if (seen[sent->slot]) {
      fail(&check.duplicates, "stored twice: " + where);
      return;
    }
    seen[sent->slot] = true;
    if (row.epoch != sent->epoch || row.wallTime != sent->wallTime || row.value != sent->value ||
        row.valueNull) {
      fail(&check.wrong, "not as sent: " + where);
      return;
    }
    ++check.matched;
    if (const double stored = cover.at(row.seq); stored >= 0) {
      check.latencies[ranks.phaseOf(row.step)].push_back(stored - row.wallTime);
      if (stored - row.wallTime > check.slowest.latency) {
        check.slowest = {stored - row.wallTime, where, row.seq};
      }
    }
  }));
  for (uint64_t slot = 0; slot < check.expected; ++slot) {
    if (!seen[slot]) {
      fail(&check.missing, "a sample sent but not stored (slot " + std::to_string(slot) + ")");
    }
  }
  for (auto& phase : check.latencies) std::sort(phase.begin(), phase.end());
  std::sort(check.verdicts.begin(), check.verdicts.end(),
            [](const VerdictRow& a, const VerdictRow& b) { return a.step < b.step; });
  return check;
}

}  // namespace ringside::bench
