#include "ringside/gui/rank_stats.h"

#include <algorithm>

namespace ringside::gui {

double medianOf(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t middle = values.size() / 2;
  return values.size() % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

std::optional<double> medianOf(const std::vector<RankStat>& ranks,
                               std::optional<double> RankStat::*field) {
  std::vector<double> values;
  for (const RankStat& rank : ranks) {
    if (rank.*field) values.push_back(*(rank.*field));
  }
  if (values.empty()) return std::nullopt;
  return medianOf(std::move(values));
}

std::optional<SlowestRank> findSlowestRank(const std::vector<RankStat>& ranks) {
  const RankStat* slowest = nullptr;
  for (const RankStat& rank : ranks) {
    if (!rank.stepMs) continue;
    if (slowest == nullptr || *rank.stepMs > *slowest->stepMs ||
        (*rank.stepMs == *slowest->stepMs && rank.rank < slowest->rank)) {
      slowest = &rank;
    }
  }
  if (slowest == nullptr) return std::nullopt;
  SlowestRank result;
  result.rank = slowest->rank;
  result.node = slowest->node;
  result.stepMs = *slowest->stepMs;
  result.medianStepMs = *medianOf(ranks, &RankStat::stepMs);
  result.overMedianPct =
      result.medianStepMs > 0 ? (result.stepMs / result.medianStepMs - 1.0) * 100.0 : 0.0;
  return result;
}

QString hostOfRank(const v1::RunSpec& spec, int rank, const QString& ownNode) {
  if (spec.hosts().empty()) return ownNode;
  int first = 0;
  for (const auto& host : spec.hosts()) {
    const int count = static_cast<int>(host.ranks());
    if (rank >= first && rank < first + count) return QString::fromStdString(host.host());
    first += count;
  }
  return {};
}

}  // namespace ringside::gui
