#include "ringside/gui/widgets/rank_view.h"

#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QScrollBar>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>

#include "ringside/gui/widgets/rank_heatmap_view.h"
#include "ringside/gui/widgets/straggler_timeline.h"

namespace ringside::gui {

namespace {

enum Column { kRank, kNode, kStepMs, kExposedMs, kVsMedian, kColumnCount };

QString formatMs(const std::optional<double>& value) {
  return value ? QLocale().toString(*value, 'f', 3) : RankView::tr("N/A");
}

// "+12", "-3", "+0": a difference in percent, signed, in the default locale.
QString signedPercent(double pct) {
  return (pct >= 0 ? QStringLiteral("+") : QString()) + QLocale().toString(pct, 'f', 0);
}

// A heat colour for a value relative to the median: white at or below it, deepening red up to
// 50 % above.
QColor heat(const std::optional<double>& value, const std::optional<double>& median) {
  if (!value || !median || !(*median > 0)) return {};
  const double excess = std::clamp((*value / *median - 1.0) / 0.5, 0.0, 1.0);
  if (excess <= 0) return {};
  return QColor::fromRgbF(1.0, 1.0 - 0.55 * excess, 1.0 - 0.55 * excess);
}

}  // namespace

RankView::RankView(QWidget* parent)
    : QWidget(parent),
      summary_(new QLabel(this)),
      timeline_(new StragglerTimeline(this)),
      table_(new QTableWidget(0, kColumnCount, this)),
      heatmap_(new RankHeatmapView(this)) {
  summary_->setText(tr("No per-rank timings yet (a run with more than one rank reports them)."));
  summary_->setWordWrap(true);
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  table_->setHorizontalHeaderLabels(
      {tr("Rank"), tr("Node"), tr("Step (ms)"), tr("All-reduce wait (ms)"), tr("Step vs median")});
  table_->verticalHeader()->hide();
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->horizontalHeader()->setStretchLastSection(true);
  // The table beside the heatmap: the latest values next to their history.
  splitter_ = new QSplitter(Qt::Horizontal, this);
  splitter_->addWidget(table_);
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
  if (userSizedSplitter_ || table_->rowCount() == 0) return;
  // The table as wide as its columns (at most half the view), the heatmap takes the rest.
  QHeaderView* header = table_->horizontalHeader();
  header->resizeSections(QHeaderView::ResizeToContents);
  // The last section stretches to the view's width: its header's width is what it needs.
  const int last = table_->columnCount() - 1;
  int wanted = 2 * table_->frameWidth() + table_->verticalScrollBar()->sizeHint().width() +
               header->sectionSizeHint(last);
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
  const auto stepMedian = medianOf(ranks, &RankStat::stepMs);
  const auto exposedMedian = medianOf(ranks, &RankStat::exposedCommMs);
  const auto slowest = findSlowestRank(ranks);
  // The row in bold: the agent's straggler, else (no verdict) the rank with the longest step.
  const int marked = straggler_ ? straggler_->rank : (slowest ? slowest->rank : -1);
  table_->setRowCount(static_cast<int>(ranks.size()));
  for (int row = 0; row < static_cast<int>(ranks.size()); ++row) {
    const RankStat& rank = ranks[static_cast<size_t>(row)];
    auto set = [&](int column, const QString& text, const QColor& background = {}) {
      auto* item = new QTableWidgetItem(text);
      if (column != kNode) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
      if (background.isValid()) {
        item->setBackground(background);
        item->setForeground(Qt::black);
      }
      if (marked >= 0 && marked == rank.rank) {
        QFont font = item->font();
        font.setBold(true);
        item->setFont(font);
      }
      table_->setItem(row, column, item);
    };
    set(kRank, QString::number(rank.rank));
    set(kNode, rank.node.isEmpty() ? tr("unknown") : rank.node);
    set(kStepMs, formatMs(rank.stepMs), heat(rank.stepMs, stepMedian));
    set(kExposedMs, formatMs(rank.exposedCommMs), heat(rank.exposedCommMs, exposedMedian));
    QString vsMedian = tr("N/A");
    if (rank.stepMs && stepMedian && *stepMedian > 0) {
      vsMedian = signedPercent((*rank.stepMs / *stepMedian - 1.0) * 100.0) + QLatin1Char('%');
    }
    set(kVsMedian, vsMedian);
  }
  fitTableWidth();
  ranks_ = std::move(ranks);
  updateSummary();
}

void RankView::setStraggler(std::optional<StragglerView> verdict) {
  const bool changed =
      verdict.has_value() != straggler_.has_value() ||
      (verdict && (verdict->rank != straggler_->rank || verdict->step != straggler_->step));
  straggler_ = verdict;
  if (changed) setRanks(ranks_);  // the bold row follows the verdict
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
