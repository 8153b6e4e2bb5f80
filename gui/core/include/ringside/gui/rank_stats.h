// Per-rank timing statistics of a run for the dashboard's rank view: the slowest-rank rule and
// the rank-to-host mapping. Pure functions of Qt Core and the protocol types, thread-safe.
#pragma once

#include <QString>

#include <optional>
#include <vector>

#include "ringside/proto/ringside.pb.h"

namespace ringside::gui {

// One rank's latest timing values; std::nullopt where the rank has not reported the metric.
struct RankStat {
  int rank = 0;
  QString node;  // display name of the node the rank runs on ("" when unknown)
  std::optional<double> stepMs;
  std::optional<double> exposedCommMs;
};

struct SlowestRank {
  int rank = 0;
  QString node;
  double stepMs = 0;         // its latest time/step_ms
  double medianStepMs = 0;   // median over the ranks that reported one
  double overMedianPct = 0;  // (stepMs / median - 1) * 100
};

// The rank with the largest step time (the lowest rank on ties); std::nullopt when no rank has
// reported a step time. The median of an even count is the mean of the two middle values.
std::optional<SlowestRank> findSlowestRank(const std::vector<RankStat>& ranks);

// The host a rank runs on under mpirun's default by-slot mapping: the spec's hosts in order,
// each taking `ranks` consecutive ranks. A spec without hosts runs on the owning node, returned
// as `ownNode`; a rank beyond the host list gives "".
QString hostOfRank(const v1::RunSpec& spec, int rank, const QString& ownNode);

// The median of `values` (the mean of the two middle values for an even count); `values` must
// not be empty.
double medianOf(std::vector<double> values);

// The median of `field` over the ranks that reported it; std::nullopt when none did.
std::optional<double> medianOf(const std::vector<RankStat>& ranks,
                               std::optional<double> RankStat::*field);

}  // namespace ringside::gui
