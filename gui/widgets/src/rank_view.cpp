#include "ringside/gui/widgets/rank_view.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QScrollBar>
#include <QSplitter>
#include <QTreeView>
#include <QVBoxLayout>

#include <algorithm>

#include "ringside/gui/widgets/rank_heatmap_view.h"
#include "ringside/gui/widgets/straggler_timeline.h"

namespace ringside::gui {

namespace {

// Above this many ranks the table opens on the slowest ranks (kLargeWorldTopK of them, slowest
// first) instead of every rank by number: 512 rows by rank hide the one that matters.
constexpr int kLargeWorldSize = 64;
constexpr int kLargeWorldTopK = 16;
// Grouped by node, nodes start expanded up to this many nodes, collapsed above.
constexpr int kExpandNodesUpTo = 8;

// "+12", "-3", "+0": a difference in percent, signed, in the default locale.
QString signedPercent(double pct) {
  return (pct >= 0 ? QStringLiteral("+") : QString()) + QLocale().toString(pct, 'f', 0);
}

}  // namespace

RankView::RankView(QWidget* parent)
    : QWidget(parent),
      summary_(new QLabel(this)),
      timeline_(new StragglerTimeline(this)),
      model_(new RankTableModel(this)),
      proxy_(new RankTableProxy(this)),
      filter_(new QLineEdit(this)),
      topK_(new QComboBox(this)),
      groupByNode_(new QCheckBox(tr("Group by node"), this)),
      table_(new QTreeView(this)),
      heatmap_(new RankHeatmapView(this)) {
  summary_->setText(tr("No per-rank timings yet (a run with more than one rank reports them)."));
  summary_->setWordWrap(true);
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  filter_->setPlaceholderText(tr("Filter: rank or node"));
  filter_->setClearButtonEnabled(true);
  filter_->setToolTip(
      tr("Shows the rank with this number and the ranks on nodes whose name "
         "contains the text."));
  topK_->addItem(tr("All ranks"), 0);
  for (const int k : {8, kLargeWorldTopK, 32, 64}) topK_->addItem(tr("%1 slowest").arg(k), k);
  topK_->setToolTip(tr("Only the ranks with the longest latest step time."));
  groupByNode_->setToolTip(
      tr("One row per node (its slowest rank's step time and its longest "
         "wait) that expands to its ranks."));
  proxy_->setSourceModel(model_);
  table_->setModel(proxy_);
  table_->setRootIsDecorated(false);
  table_->setUniformRowHeights(true);  // row heights not measured one by one at 512 ranks
  table_->setAllColumnsShowFocus(true);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSortingEnabled(true);
  table_->sortByColumn(RankTableModel::kRankColumn, Qt::AscendingOrder);
  table_->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->header()->setStretchLastSection(true);
  connect(filter_, &QLineEdit::textChanged, proxy_, &RankTableProxy::setFilterText);
  connect(topK_, &QComboBox::activated, this, [this] { userChoseView_ = true; });
  connect(topK_, &QComboBox::currentIndexChanged, this,
          [this] { proxy_->setTopK(topK_->currentData().toInt()); });
  connect(groupByNode_, &QCheckBox::clicked, this, [this] { userChoseView_ = true; });
  connect(groupByNode_, &QCheckBox::toggled, this, [this] { showRanks(); });
  connect(table_->header(), &QHeaderView::sectionClicked, this, [this] { userChoseView_ = true; });
  auto* controls = new QHBoxLayout;
  controls->setContentsMargins(0, 0, 0, 0);
  controls->addWidget(filter_, 1);
  controls->addWidget(new QLabel(tr("Show:"), this));
  controls->addWidget(topK_);
  controls->addWidget(groupByNode_);
  auto* tablePane = new QWidget(this);
  auto* tableLayout = new QVBoxLayout(tablePane);
  tableLayout->setContentsMargins(0, 0, 0, 0);
  tableLayout->addLayout(controls);
  tableLayout->addWidget(table_, 1);
  // The table beside the heatmap: the latest values next to their history.
  splitter_ = new QSplitter(Qt::Horizontal, this);
  splitter_->addWidget(tablePane);
  splitter_->addWidget(heatmap_);
  splitter_->setStretchFactor(0, 0);
  splitter_->setStretchFactor(1, 1);
  splitter_->setChildrenCollapsible(false);
  connect(splitter_, &QSplitter::splitterMoved, this, [this] { userSizedSplitter_ = true; });
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(summary_);
  layout->addWidget(timeline_);
  layout->addWidget(splitter_, 1);
  timeline_->hide();  // until the run has a verdict
}

void RankView::fitTableWidth() {
  if (userSizedSplitter_ || model_->rowCount() == 0) return;
  // The table as wide as its columns (at most half the view), the heatmap takes the rest.
  QHeaderView* header = table_->header();
  header->resizeSections(QHeaderView::ResizeToContents);
  // The last section stretches to the view's width: its header's width is what it needs.
  const int last = RankTableModel::kColumns - 1;
  int wanted = 2 * table_->frameWidth() + table_->verticalScrollBar()->sizeHint().width() +
               header->sectionSizeHint(last) +
               (model_->groupedByNode() ? table_->indentation() : 0);
  for (int column = 0; column < last; ++column) wanted += header->sectionSize(column);
  const int total = splitter_->width();
  if (total <= 0) return;
  const int tableWidth = std::min(wanted, total / 2);
  splitter_->setSizes({tableWidth, total - tableWidth});
}

void RankView::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  fitTableWidth();
}

void RankView::setHeatmap(RankHeatmap heatmap) { heatmap_->setHeatmap(std::move(heatmap)); }

void RankView::setRanks(std::vector<RankStat> ranks) {
  std::sort(ranks.begin(), ranks.end(),
            [](const RankStat& a, const RankStat& b) { return a.rank < b.rank; });
  ranks_ = std::move(ranks);
  if (!userChoseView_ && static_cast<int>(ranks_.size()) > kLargeWorldSize &&
      !largeWorldDefaults_) {
    // Once, at a large world size, unless the user chose already: the slowest ranks first.
    largeWorldDefaults_ = true;
    topK_->setCurrentIndex(std::max(0, topK_->findData(kLargeWorldTopK)));
    table_->sortByColumn(RankTableModel::kStepColumn, Qt::DescendingOrder);
  }
  showRanks();
  updateSummary();
}

void RankView::showRanks() {
  // The row in bold: the agent's straggler, else (no verdict) the rank with the longest step.
  const auto slowest = findSlowestRank(ranks_);
  const int marked = straggler_ ? straggler_->rank : (slowest ? slowest->rank : -1);
  const bool group = groupByNode_->isChecked();
  const bool regrouped = group != model_->groupedByNode() || model_->rowCount() == 0;
  model_->setRanks(ranks_, marked, group);
  table_->setRootIsDecorated(group);
  if (regrouped && group && model_->rowCount() <= kExpandNodesUpTo) table_->expandAll();
  fitTableWidth();
}

void RankView::setStraggler(std::optional<StragglerView> verdict) {
  const bool changed =
      verdict.has_value() != straggler_.has_value() ||
      (verdict && (verdict->rank != straggler_->rank || verdict->step != straggler_->step));
  straggler_ = verdict;
  if (changed) showRanks();  // the bold row follows the verdict
  updateSummary();           // the sentence says the latest verdict (its cost, its confidence)
}

void RankView::setStragglerHistory(std::vector<StragglerSpan> spans) {
  QMap<int, QString> nodes;
  for (const RankStat& rank : ranks_) nodes.insert(rank.rank, rank.node);
  timeline_->setVisible(!spans.empty());
  timeline_->setSpans(std::move(spans), std::move(nodes));
}

void RankView::updateSummary() {
  if (straggler_) {
    QString node;
    for (const RankStat& rank : ranks_) {
      if (rank.rank == straggler_->rank) node = rank.node;
    }
    summary_->setText(stragglerText(*straggler_, node));
    return;
  }
  const auto slowest = findSlowestRank(ranks_);
  if (!slowest) {
    summary_->setText(tr("No per-rank timings yet (a run with more than one rank reports them)."));
    return;
  }
  // One multi-arg call: a node name holding "%3" is not substituted again. A rank number is an
  // id, not a quantity: never grouped.
  summary_->setText(tr("slowest: rank %1 on node %2, step %3 ms (%4% over median)")
                        .arg(QString::number(slowest->rank),
                             slowest->node.isEmpty() ? tr("unknown") : slowest->node,
                             QLocale().toString(slowest->stepMs, 'f', 2),
                             signedPercent(slowest->overMedianPct)));
}

QString RankView::summaryText() const { return summary_->text(); }

}  // namespace ringside::gui
