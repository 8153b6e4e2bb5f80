#include "ringside/gui/widgets/rank_heatmap_view.h"

#include <QCheckBox>
#include <QComboBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QHelpEvent>
#include <QLabel>
#include <QLinearGradient>
#include <QLocale>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollArea>
#include <QSignalBlocker>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace ringside::gui {

namespace {

constexpr double kMaxRowHeight = 32.0;
constexpr double kMinAxisTickSpacing = 90.0;  // pixels between labelled steps
constexpr int kMaxNodeLabelWidth = 140;

QString formatMs(const std::optional<double>& value) {
  return value ? QLocale().toString(*value, 'f', 2) : RankHeatmapView::tr("N/A");
}

// "+12%", "-3%": signed, whole percent, in the default locale.
QString signedPercent(double fraction) {
  const double pct = fraction * 100.0;
  return (pct >= 0 ? QStringLiteral("+") : QString()) + QLocale().toString(pct, 'f', 0) +
         QLatin1Char('%');
}

QString nodeName(const QString& node) {
  return node.isEmpty() ? RankHeatmapView::tr("unknown node") : node;
}

// The smallest 1, 2 or 5 × 10^k steps that is at least `steps`.
int64_t roundSteps(double steps) {
  for (int64_t decade = 1; decade < std::numeric_limits<int64_t>::max() / 10; decade *= 10) {
    for (int64_t multiple : {1, 2, 5}) {
      if (static_cast<double>(multiple * decade) >= steps) return multiple * decade;
    }
  }
  return std::numeric_limits<int64_t>::max() / 10;
}

// "▾ gpu-node-03" / "▸ gpu-node-03": a node row's label, with whether it is expanded.
QString nodeRowLabel(const QString& node, bool expanded) {
  return QString(expanded ? QChar(0x25BE) : QChar(0x25B8)) + QLatin1Char(' ') + nodeName(node);
}

QString rankCountLabel(size_t ranks) {
  return RankHeatmapView::tr("%1 ranks").arg(static_cast<qulonglong>(ranks));
}

// Where the parts of the canvas lie for a heatmap at a widget size: labels on the left, the
// step axis below, the cells in between.
struct Geometry {
  QRectF cells;
  int nodeColumn = 0;  // x where the node names start
  int rankColumn = 0;  // x where the rank numbers start
  double rowHeight = 0;
  double windowWidth = 0;

  Geometry(const RankHeatmapView& view, QSize size, const QFontMetrics& metrics) {
    const RankHeatmap& heatmap = view.heatmap();
    if (heatmap.empty() || view.displayRows().empty()) return;
    int nodeWidth = 0;
    int rankWidth = metrics.horizontalAdvance(RankHeatmapView::tr("rank %1").arg(0));
    for (const HeatmapNodeGroup& group : view.nodeGroups()) {
      const QString name =
          view.groupedByNode() ? nodeRowLabel(group.node, false) : nodeName(group.node);
      nodeWidth = std::max(nodeWidth, metrics.horizontalAdvance(name));
      if (view.groupedByNode()) {
        rankWidth = std::max(
            rankWidth, metrics.horizontalAdvance(rankCountLabel(group.endRow - group.firstRow)));
      }
    }
    nodeWidth = std::min(nodeWidth, kMaxNodeLabelWidth);
    // The label of the largest rank is the widest (digits are equally wide): one measurement,
    // not one per row, since the geometry is laid out again for every hover.
    int largestRank = 0;
    for (const HeatmapRow& row : heatmap.rows) largestRank = std::max(largestRank, row.rank);
    rankWidth = std::max(
        rankWidth, metrics.horizontalAdvance(RankHeatmapView::tr("rank %1").arg(largestRank)));
    nodeColumn = 4;
    rankColumn = nodeColumn + nodeWidth + 10;
    const double left = rankColumn + rankWidth + 6;
    const double top = 4;
    const double bottom = 2 * metrics.height() + 8;
    const double width = std::max(1.0, size.width() - left - 10);
    const auto rows = static_cast<double>(view.displayRows().size());
    rowHeight = std::min(kMaxRowHeight, std::max(1.0, size.height() - top - bottom) / rows);
    windowWidth = width / static_cast<double>(heatmap.windows.size());
    cells = QRectF(left, top, width, rowHeight * rows);
  }
};

}  // namespace

// The cells, the rank and node labels and the step axis.
class RankHeatmapView::Canvas : public QWidget {
 public:
  explicit Canvas(RankHeatmapView* view) : QWidget(view), view_(view) {
    setMouseTracking(true);
    setMinimumSize(240, 80);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
  }

  Geometry geometryNow() const { return Geometry(*view_, size(), fontMetrics()); }

 protected:
  // A click on a node's row (its cells or its labels) expands or collapses it.
  void mousePressEvent(QMouseEvent* event) override {
    const auto row = view_->displayRowAt(event->position().toPoint());
    if (event->button() != Qt::LeftButton || !row || !view_->groupedByNode() ||
        view_->displayRows()[*row].row) {
      QWidget::mousePressEvent(event);
      return;
    }
    const QString& node = view_->nodeGroups()[view_->displayRows()[*row].node].node;
    view_->setNodeExpanded(node, !view_->nodeExpanded(node));
  }

  bool event(QEvent* event) override {
    if (event->type() == QEvent::ToolTip) {
      auto* help = static_cast<QHelpEvent*>(event);
      const QString text = view_->toolTipAt(help->pos());
      if (text.isEmpty()) {
        QToolTip::hideText();
        event->ignore();
      } else {
        QToolTip::showText(help->globalPos(), text, this);
      }
      return true;
    }
    return QWidget::event(event);
  }

  void paintEvent(QPaintEvent*) override {
    QPainter painter(this);
    const RankHeatmap& heatmap = view_->heatmap_;
    if (heatmap.empty()) {
      painter.setPen(palette().color(QPalette::PlaceholderText));
      painter.drawText(rect(), Qt::AlignCenter | Qt::TextWordWrap,
                       RankHeatmapView::tr("No per-rank timings yet: the heatmap fills as the "
                                           "ranks report compute and all-reduce times."));
      return;
    }
    const Geometry geometry = geometryNow();
    const HeatmapLayer layer = view_->layer();
    const QRectF& cells = geometry.cells;
    const std::vector<DisplayRow>& rows = view_->displayRows();
    // Cells: each window's rectangle widened by half a pixel so that no seam shows between them.
    painter.setPen(Qt::NoPen);
    for (size_t row = 0; row < rows.size(); ++row) {
      const double y = cells.top() + static_cast<double>(row) * geometry.rowHeight;
      for (size_t window = 0; window < heatmap.windows.size(); ++window) {
        const double x = cells.left() + static_cast<double>(window) * geometry.windowWidth;
        painter.fillRect(QRectF(x, y, geometry.windowWidth + 0.5, geometry.rowHeight + 0.5),
                         heatmapColor(view_->displayExcess(row, window, layer)));
      }
    }
    // A hairline between rows tall enough to spare it, so that neighbouring ranks stay apart.
    if (geometry.rowHeight >= 8) {
      painter.setPen(QPen(palette().color(QPalette::Window), 1));
      for (size_t row = 1; row < rows.size(); ++row) {
        const double y = cells.top() + static_cast<double>(row) * geometry.rowHeight;
        painter.drawLine(QPointF(cells.left(), y), QPointF(cells.right(), y));
      }
    }
    const QColor text = palette().color(QPalette::WindowText);
    const QFontMetrics metrics = fontMetrics();
    // Row labels, thinned out when rows are shorter than the text.
    const int every = std::max(
        1, static_cast<int>(std::ceil(metrics.height() / std::max(1.0, geometry.rowHeight))));
    painter.setPen(text);
    const auto rowLabel = [&](size_t row) {
      return QRectF(geometry.rankColumn,
                    cells.top() + static_cast<double>(row) * geometry.rowHeight,
                    cells.left() - geometry.rankColumn - 6,
                    std::max<double>(geometry.rowHeight, metrics.height()));
    };
    for (size_t row = 0; row < rows.size(); row += static_cast<size_t>(every)) {
      if (rows[row].row) {
        painter.drawText(rowLabel(row), Qt::AlignRight | Qt::AlignVCenter,
                         RankHeatmapView::tr("rank %1").arg(heatmap.rows[*rows[row].row].rank));
        continue;
      }
      // A node's row: its name (with the expand marker) and how many ranks it holds.
      const HeatmapNodeGroup& group = view_->nodeGroups()[rows[row].node];
      QFont bold = painter.font();
      bold.setBold(true);
      painter.save();
      painter.setFont(bold);
      const QRectF label = rowLabel(row);
      painter.drawText(
          QRectF(geometry.nodeColumn, label.top(), geometry.rankColumn - geometry.nodeColumn,
                 label.height()),
          Qt::AlignLeft | Qt::AlignVCenter,
          metrics.elidedText(nodeRowLabel(group.node, view_->nodeExpanded(group.node)),
                             Qt::ElideMiddle, geometry.rankColumn - geometry.nodeColumn - 6));
      painter.restore();
      painter.drawText(label, Qt::AlignRight | Qt::AlignVCenter,
                       rankCountLabel(group.endRow - group.firstRow));
    }
    if (view_->groupedByNode()) {
      // A line around each expanded node: above its row and above the node row after its ranks.
      painter.setPen(QPen(text, 1.5));
      for (size_t row = 1; row < rows.size(); ++row) {
        if (rows[row].row) continue;
        const QString& node = view_->nodeGroups()[rows[row].node].node;
        if (!rows[row - 1].row && !view_->nodeExpanded(node)) continue;
        const double y = cells.top() + static_cast<double>(row) * geometry.rowHeight;
        painter.drawLine(QPointF(geometry.nodeColumn, y), QPointF(cells.right(), y));
      }
    } else {
      // Node names beside their rows, and a line between nodes.
      const std::vector<HeatmapNodeGroup>& groups = view_->nodeGroups();
      for (size_t index = 0; index < groups.size(); ++index) {
        const HeatmapNodeGroup& group = groups[index];
        const double top = cells.top() + static_cast<double>(group.firstRow) * geometry.rowHeight;
        const double bottom = cells.top() + static_cast<double>(group.endRow) * geometry.rowHeight;
        painter.setPen(text);
        const QString name = metrics.elidedText(nodeName(group.node), Qt::ElideMiddle,
                                                geometry.rankColumn - geometry.nodeColumn - 6);
        painter.drawText(QRectF(geometry.nodeColumn, top, geometry.rankColumn - geometry.nodeColumn,
                                std::max<double>(bottom - top, metrics.height())),
                         Qt::AlignLeft | Qt::AlignVCenter, name);
        if (index > 0) {
          painter.setPen(QPen(text, 1.5));
          painter.drawLine(QPointF(geometry.nodeColumn, top), QPointF(cells.right(), top));
        }
      }
    }
    painter.setPen(palette().color(QPalette::Mid));
    painter.setBrush(Qt::NoBrush);
    painter.drawRect(cells);
    drawStepAxis(painter, geometry, metrics);
  }

 private:
  // Ticks at round steps (1, 2 or 5 × 10^k) at least kMinAxisTickSpacing pixels apart.
  void drawStepAxis(QPainter& painter, const Geometry& geometry, const QFontMetrics& metrics) {
    const RankHeatmap& heatmap = view_->heatmap_;
    const QRectF& cells = geometry.cells;
    const double y = cells.bottom();
    const int64_t firstStep = heatmap.windows.front().firstStep;
    const int64_t endStep = heatmap.windows.back().lastStep + 1;
    const double pixelsPerStep = cells.width() / static_cast<double>(endStep - firstStep);
    const QString widest = QLocale().toString(static_cast<qlonglong>(endStep));
    const double spacing = std::max(kMinAxisTickSpacing, 1.5 * metrics.horizontalAdvance(widest));
    const int64_t tick = roundSteps(spacing / pixelsPerStep);
    painter.setPen(palette().color(QPalette::WindowText));
    for (int64_t step = (firstStep + tick - 1) / tick * tick; step <= endStep; step += tick) {
      const double x = cells.left() + static_cast<double>(step - firstStep) * pixelsPerStep;
      painter.drawLine(QPointF(x, y), QPointF(x, y + 4));
      const QString label = QLocale().toString(static_cast<qlonglong>(step));
      const double labelWidth = metrics.horizontalAdvance(label);
      painter.drawText(QRectF(x - labelWidth / 2 - 2, y + 4, labelWidth + 4, metrics.height()),
                       Qt::AlignCenter, label);
    }
    const QString title =
        RankHeatmapView::tr("step (windows of %L1 steps)").arg(heatmap.windowSteps);
    painter.drawText(
        QRectF(cells.left(), y + 4 + metrics.height(), cells.width(), metrics.height() + 2),
        Qt::AlignCenter, title);
  }

  RankHeatmapView* view_;
};

// A gradient bar from −50 % through the median to +50 %, labelled at both ends and the middle,
// and a swatch for cells without a value.
class RankHeatmapView::Legend : public QWidget {
 public:
  explicit Legend(QWidget* parent) : QWidget(parent) {
    setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Fixed);
  }

  QSize sizeHint() const override {
    const QFontMetrics metrics = fontMetrics();
    return {2 * metrics.horizontalAdvance(QStringLiteral("+50%")) + kBarWidth + 24 +
                metrics.horizontalAdvance(RankHeatmapView::tr("N/A")) + 16,
            kBarHeight + metrics.height() + 5};
  }

 protected:
  void paintEvent(QPaintEvent*) override {
    QPainter painter(this);
    const QFontMetrics metrics = fontMetrics();
    QString low = signedPercent(-kHeatmapSaturation);
    low.replace(QLatin1Char('-'), QChar(0x2212));  // a minus sign, as wide as the plus
    const QString high = signedPercent(kHeatmapSaturation);
    const int lowWidth = metrics.horizontalAdvance(low);
    const int highWidth = metrics.horizontalAdvance(high);
    const QRectF bar(lowWidth + 6, 1, kBarWidth, kBarHeight);
    QLinearGradient gradient(bar.topLeft(), bar.topRight());
    for (int i = 0; i <= 10; ++i) {
      const double fraction = i / 10.0;
      gradient.setColorAt(fraction, heatmapColor((fraction * 2 - 1) * kHeatmapSaturation));
    }
    painter.fillRect(bar, gradient);
    painter.setPen(palette().color(QPalette::Mid));
    painter.drawRect(bar);
    painter.setPen(palette().color(QPalette::WindowText));
    painter.drawText(QRectF(0, bar.top(), lowWidth + 2, bar.height()),
                     Qt::AlignLeft | Qt::AlignVCenter, low);
    painter.drawText(QRectF(bar.right() + 4, bar.top(), highWidth + 4, bar.height()),
                     Qt::AlignLeft | Qt::AlignVCenter, high);
    painter.drawLine(QPointF(bar.center().x(), bar.bottom()),
                     QPointF(bar.center().x(), bar.bottom() + 3));
    painter.drawText(QRectF(bar.left(), bar.bottom() + 3, bar.width(), metrics.height()),
                     Qt::AlignHCenter | Qt::AlignTop, RankHeatmapView::tr("median"));
    // The swatch of cells without a value, after the bar.
    const QRectF none(bar.right() + highWidth + 16, bar.top(), kBarHeight, kBarHeight);
    painter.fillRect(none, heatmapColor(std::nullopt));
    painter.setPen(palette().color(QPalette::Mid));
    painter.drawRect(none);
    painter.setPen(palette().color(QPalette::WindowText));
    painter.drawText(QRectF(none.right() + 4, bar.top(), width() - none.right() - 4, bar.height()),
                     Qt::AlignLeft | Qt::AlignVCenter, RankHeatmapView::tr("N/A"));
  }

 private:
  static constexpr int kBarWidth = 160;
  static constexpr int kBarHeight = 12;
};

RankHeatmapView::RankHeatmapView(QWidget* parent)
    : QWidget(parent),
      layerBox_(new QComboBox(this)),
      groupByNode_(new QCheckBox(tr("Group by node"), this)),
      scaleNote_(new QLabel(this)),
      canvas_(new Canvas(this)),
      legend_(new Legend(this)) {
  layerBox_->addItem(tr("Compute time"), static_cast<int>(HeatmapLayer::kCompute));
  layerBox_->addItem(tr("All-reduce wait"), static_cast<int>(HeatmapLayer::kWait));
  layerBox_->setToolTip(
      tr("Compute time: forward and backward of each rank; a slow rank (a straggler) is red. "
         "All-reduce wait: time blocked on communication after backward; a straggler waits "
         "least (blue), the ranks that wait for it most."));
  groupByNode_->setToolTip(
      tr("One row per node, coloured by its rank furthest from the median; "
         "click a node's row to show its ranks."));
  connect(groupByNode_, &QCheckBox::clicked, this, [this] { userChoseGrouping_ = true; });
  connect(groupByNode_, &QCheckBox::toggled, this, [this] {
    layOutRows();
    canvas_->update();
  });
  scaleNote_->setWordWrap(true);
  auto* controls = new QHBoxLayout;
  controls->setContentsMargins(0, 0, 0, 0);
  controls->addWidget(new QLabel(tr("Colour:"), this));
  controls->addWidget(layerBox_);
  controls->addSpacing(8);
  controls->addWidget(legend_);
  controls->addStretch(1);
  controls->addWidget(groupByNode_);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(controls);
  layout->addWidget(scaleNote_);
  // Grouped, a row is at least a line of text tall (every node named); more rows than fit scroll.
  scroll_ = new QScrollArea(this);
  scroll_->setWidget(canvas_);
  scroll_->setWidgetResizable(true);
  scroll_->setFrameShape(QFrame::NoFrame);
  layout->addWidget(scroll_, 1);
  const auto updateNote = [this] {
    scaleNote_->setText(layer() == HeatmapLayer::kCompute
                            ? tr("Each cell: the rank's mean compute time in a window of steps "
                                 "against the median over ranks in that window.")
                            : tr("Each cell: the rank's all-reduce wait minus the window's "
                                 "median wait, as a share of the median compute time."));
    canvas_->update();
  };
  connect(layerBox_, &QComboBox::currentIndexChanged, this, updateNote);
  updateNote();
}

void RankHeatmapView::setHeatmap(RankHeatmap heatmap) {
  heatmap_ = std::move(heatmap);
  nodeGroups_ = heatmap_.nodeGroups();
  // The node rows' cells cost O(rows x windows): computed by layOutRows() when grouped.
  nodeRows_.clear();
  nodeRowsStale_ = true;
  if (!userChoseGrouping_) {
    const QSignalBlocker quiet(groupByNode_);  // one layout below, not two
    groupByNode_->setChecked(heatmap_.rows.size() > kGroupAboveRows && nodeGroups_.size() > 1);
  }
  layOutRows();
  canvas_->update();
}

bool RankHeatmapView::groupedByNode() const { return groupByNode_->isChecked(); }

void RankHeatmapView::setGroupedByNode(bool grouped) {
  userChoseGrouping_ = true;
  groupByNode_->setChecked(grouped);
}

void RankHeatmapView::setNodeExpanded(const QString& node, bool expanded) {
  if (expanded == expanded_.contains(node)) return;
  if (expanded) {
    expanded_.insert(node);
  } else {
    expanded_.remove(node);
  }
  layOutRows();
  canvas_->update();
}

void RankHeatmapView::layOutRows() {
  const bool grouped = groupedByNode();
  if (grouped && nodeRowsStale_) {
    nodeRows_ = heatmapNodeRows(heatmap_);
    nodeRowsStale_ = false;
  }
  displayRows_.clear();
  for (size_t node = 0; node < nodeGroups_.size(); ++node) {
    const HeatmapNodeGroup& group = nodeGroups_[node];
    if (grouped) displayRows_.push_back({.node = node, .row = std::nullopt});
    if (!grouped || expanded_.contains(group.node)) {
      for (size_t row = group.firstRow; row < group.endRow; ++row) {
        displayRows_.push_back({.node = node, .row = row});
      }
    }
  }
  fitCanvasHeight();
}

void RankHeatmapView::fitCanvasHeight() {
  const int line = canvas_->fontMetrics().height();
  // The rows at a line of text plus 2 pixels, and the margins Geometry leaves above and below.
  const int wanted =
      groupedByNode() ? static_cast<int>(displayRows_.size()) * (line + 2) + 4 + 2 * line + 8 : 80;
  canvas_->setMinimumHeight(wanted);
}

std::optional<double> RankHeatmapView::displayExcess(size_t displayRow, size_t window,
                                                     HeatmapLayer layer) const {
  const DisplayRow& row = displayRows_[displayRow];
  if (row.row) return heatmap_.excess(*row.row, window, layer);
  return nodeRows_[row.node].cells(layer)[window].excess;
}

QWidget* RankHeatmapView::canvas() const { return canvas_; }

HeatmapLayer RankHeatmapView::layer() const {
  return static_cast<HeatmapLayer>(layerBox_->currentData().toInt());
}

void RankHeatmapView::setLayer(HeatmapLayer layer) {
  layerBox_->setCurrentIndex(std::max(0, layerBox_->findData(static_cast<int>(layer))));
}

std::optional<RankHeatmapView::CellIndex> RankHeatmapView::cellAt(QPoint position) const {
  const Geometry geometry = canvas_->geometryNow();
  if (heatmap_.empty() || !geometry.cells.contains(position)) return std::nullopt;
  const auto row = static_cast<size_t>((position.y() - geometry.cells.top()) / geometry.rowHeight);
  const auto window =
      static_cast<size_t>((position.x() - geometry.cells.left()) / geometry.windowWidth);
  if (row >= displayRows_.size() || window >= heatmap_.windows.size()) return std::nullopt;
  return CellIndex{.row = row, .window = window};
}

std::optional<size_t> RankHeatmapView::displayRowAt(QPoint position) const {
  const Geometry geometry = canvas_->geometryNow();
  if (heatmap_.empty() || position.x() < 0 || position.x() > geometry.cells.right() ||
      position.y() < geometry.cells.top() || position.y() >= geometry.cells.bottom()) {
    return std::nullopt;
  }
  const auto row = static_cast<size_t>((position.y() - geometry.cells.top()) / geometry.rowHeight);
  if (row >= displayRows_.size()) return std::nullopt;
  return row;
}

QString RankHeatmapView::toolTipAt(QPoint position) const {
  const auto index = cellAt(position);
  if (!index) return {};
  const HeatmapWindow& window = heatmap_.windows[index->window];
  const DisplayRow& shown = displayRows_[index->row];
  if (!shown.row) {
    // A node's row: which of its ranks lies furthest from the median, in each layer.
    const HeatmapNodeRow& node = nodeRows_[shown.node];
    const size_t ranks = node.group.endRow - node.group.firstRow;
    QString text =
        (expanded_.contains(node.group.node) ? tr("Node %1: %2 ranks (click to collapse)")
                                             : tr("Node %1: %2 ranks (click to show them)"))
            .arg(nodeName(node.group.node), QString::number(ranks));
    text += QLatin1Char('\n') + tr("Steps %L1 to %L2")
                                    .arg(static_cast<qlonglong>(window.firstStep))
                                    .arg(static_cast<qlonglong>(window.lastStep));
    const HeatmapNodeCell& compute = node.compute[index->window];
    const HeatmapNodeCell& wait = node.wait[index->window];
    text +=
        QLatin1Char('\n') +
        (compute.excess ? tr("Compute: rank %1 furthest from the median (%2)")
                              .arg(QString::number(compute.rank), signedPercent(*compute.excess))
                        : tr("Compute: N/A"));
    text += QLatin1Char('\n') +
            (wait.excess ? tr("All-reduce wait: rank %1 furthest from the median (%2 of the median "
                              "compute time)")
                               .arg(QString::number(wait.rank), signedPercent(*wait.excess))
                         : tr("All-reduce wait: N/A"));
    return text;
  }
  const HeatmapRow& row = heatmap_.rows[*shown.row];
  const HeatmapCell& cell = heatmap_.cell(*shown.row, index->window);
  QString text = tr("Rank %1 on %2").arg(QString::number(row.rank), nodeName(row.node));
  text += QLatin1Char('\n') + tr("Steps %L1 to %L2")
                                  .arg(static_cast<qlonglong>(window.firstStep))
                                  .arg(static_cast<qlonglong>(window.lastStep));
  text += QLatin1Char('\n') + tr("Compute: %1 ms, median %2 ms")
                                  .arg(formatMs(cell.computeMs), formatMs(window.medianComputeMs));
  if (const auto excess = heatmap_.excess(*shown.row, index->window, HeatmapLayer::kCompute)) {
    text += QStringLiteral(" (%1)").arg(signedPercent(*excess));
  }
  text += QLatin1Char('\n') + tr("All-reduce wait: %1 ms, median %2 ms")
                                  .arg(formatMs(cell.waitMs), formatMs(window.medianWaitMs));
  if (const auto excess = heatmap_.excess(*shown.row, index->window, HeatmapLayer::kWait)) {
    text += QLatin1Char(' ') + tr("(%1 of the median compute time)").arg(signedPercent(*excess));
  }
  return text;
}

}  // namespace ringside::gui
