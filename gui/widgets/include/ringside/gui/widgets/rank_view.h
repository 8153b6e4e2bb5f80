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

#include "ringside/gui/rank_stats.h"

class QLabel;
class QTableWidget;

namespace ringside::gui {

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
