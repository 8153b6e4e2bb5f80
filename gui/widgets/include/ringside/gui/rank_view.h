// RankView: the dashboard's per-rank table. Shows each rank's latest step time and all-reduce
// wait (time/step_ms and time/exposed_comm_ms, docs/metrics.md) with the node it runs on, colours
// each cell by how far it is above the median over ranks (a heatmap), and names the slowest rank
// and its node in a label above the table.
// GUI thread only.
#pragma once

#include <QString>
#include <QWidget>

#include <optional>
#include <vector>

#include "ringside/proto/ringside.pb.h"

class QLabel;
class QTableWidget;

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

class RankView : public QWidget {
  Q_OBJECT

 public:
  explicit RankView(QWidget* parent = nullptr);

  // Replaces the table's contents (ranks in any order; shown ascending).
  void setRanks(std::vector<RankStat> ranks);
  // The label's text: "slowest: rank 1 on node gpu01, step 1.23 ms (+18% over median)", or a
  // note that no per-rank data has arrived yet.
  QString summaryText() const;
  QTableWidget* table() const { return table_; }

 private:
  QLabel* summary_;
  QTableWidget* table_;
};

}  // namespace ringside::gui
