// RankView: the dashboard's per-rank view. A table of each rank's latest step time and all-reduce
// wait (time/step_ms and time/exposed_comm_ms, docs/metrics.md) with the node it runs on, each
// cell coloured by how far it is above the median over ranks (RankTableModel); above it a filter
// (rank number or node name), a "Show" box that keeps only the k slowest ranks and a "Group by
// node" switch (a row per node that expands to its ranks); every column sorts by a click on its
// header. Above kLargeWorldSize (64) ranks the table opens on the 16 slowest ranks, slowest
// first, until the user picks otherwise. Beside it the rank × step heatmap
// (RankHeatmapView) of the whole run; above both a label with the owner agent's straggler verdict
// (or, without one, the slowest rank and its node) and a strip with the verdict over the run
// (StragglerTimeline).
// GUI thread only.
#pragma once

#include <QString>
#include <QWidget>

#include <optional>
#include <vector>

#include "ringside/gui/rank_heatmap.h"
#include "ringside/gui/rank_stats.h"
#include "ringside/gui/rank_table_model.h"
#include "ringside/gui/straggler_history.h"
#include "ringside/gui/straggler_text.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QSplitter;
class QTreeView;

namespace ringside::gui {

class RankHeatmapView;
class StragglerTimeline;

class RankView : public QWidget {
  Q_OBJECT

 public:
  explicit RankView(QWidget* parent = nullptr);

  // Replaces the table's contents (ranks in any order; shown ascending).
  void setRanks(std::vector<RankStat> ranks);
  // The owner agent's latest straggler verdict (straggler_text.h); nullopt: none reported (a
  // custom command, or a run recorded before the verdict existed).
  void setStraggler(std::optional<StragglerView> verdict);
  // The verdict over the run (stragglerSpans()), for the timeline strip; hidden while empty.
  void setStragglerHistory(std::vector<StragglerSpan> spans);
  // The label's text: the agent's verdict ("straggler: rank 3 on node-2, compute: ..."); without
  // one, "slowest: rank 1 on node gpu01, step 1.23 ms (+18% over median)", or a note that no
  // per-rank data has arrived yet.
  QString summaryText() const;
  // Replaces the heatmap (buildRankHeatmap() of the ranks' compute and wait series).
  void setHeatmap(RankHeatmap heatmap);
  // For tests and screenshots: the table (a tree view over tableProxy()) and its controls.
  QTreeView* table() const { return table_; }
  RankTableModel* tableModel() const { return model_; }
  RankTableProxy* tableProxy() const { return proxy_; }
  QLineEdit* filterEdit() const { return filter_; }
  QComboBox* topKBox() const { return topK_; }
  QCheckBox* groupByNodeBox() const { return groupByNode_; }
  RankHeatmapView* heatmapView() const { return heatmap_; }
  StragglerTimeline* stragglerTimeline() const { return timeline_; }

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  // Gives the table the width of its columns (at most half), until the user moves the divider.
  void fitTableWidth();
  void updateSummary();
  // Hands ranks_ to the model with the current grouping and bold row.
  void showRanks();

  QLabel* summary_;
  StragglerTimeline* timeline_;
  RankTableModel* model_;
  RankTableProxy* proxy_;
  QLineEdit* filter_;
  QComboBox* topK_;
  QCheckBox* groupByNode_;
  QTreeView* table_;
  RankHeatmapView* heatmap_;
  QSplitter* splitter_;
  bool userSizedSplitter_ = false;
  bool userChoseView_ = false;       // the user touched the sort, Show or grouping
  bool largeWorldDefaults_ = false;  // the large-world defaults were applied
  std::vector<RankStat> ranks_;      // as last set, ascending
  std::optional<StragglerView> straggler_;
};

}  // namespace ringside::gui
