#include "ringside/gui/widgets/node_table_model.h"

#include <QApplication>
#include <QColor>
#include <QLocale>
#include <QPainter>
#include <QPalette>
#include <QPen>
#include <QPolygon>

#include <algorithm>

#include "ringside/gui/clipped_text.h"
#include "ringside/gui/widgets/add_node_dialog.h"

namespace ringside::gui {

namespace {

// Whether the node's latest telemetry lists GPU `index` as handed to a run.
bool gpuInUse(const NodeView& node, uint32_t index) {
  if (!node.telemetry) return false;
  const auto& used = node.telemetry->gpus_in_use();
  return std::find(used.begin(), used.end(), index) != used.end();
}

// Adds the utilization (%) of each of the node's inventory GPUs that its latest telemetry reports
// one for to *sum, and counts them in *reporting.
void addGpuUtilizations(const NodeView& node, double* sum, int* reporting) {
  if (!node.info || !node.telemetry) return;
  for (const v1::GpuInfo& gpu : node.info->gpus()) {
    for (const v1::GpuTelemetry& sample : node.telemetry->gpus()) {
      if (sample.index() == gpu.index() && sample.has_util_pct()) {
        *sum += sample.util_pct();
        ++*reporting;
        break;
      }
    }
  }
}

constexpr double kMiBPerGiB = 1024.0;
constexpr int kBarMaxWidth = 46;  // px per GPU bar
constexpr int kBarMinWidth = 8;
constexpr int kBarGap = 3;

// "0.4 s", "12 s", "5 min", "3 h"; numbers in the default locale ("0,4 s" in German).
QString ageText(qint64 ageMs) {
  const QLocale locale;
  if (ageMs < 10000) return NodeTableModel::tr("%1 s").arg(locale.toString(ageMs / 1000.0, 'f', 1));
  if (ageMs < 120000) return NodeTableModel::tr("%1 s").arg(locale.toString(ageMs / 1000));
  if (ageMs < 2 * 3600 * 1000) {
    return NodeTableModel::tr("%1 min").arg(locale.toString(ageMs / 60000));
  }
  return NodeTableModel::tr("%1 h").arg(locale.toString(ageMs / 3600000));
}

// A percentage without decimals, "87" (the unit is in the caller's text).
QString percent(double value) { return QLocale().toString(value, 'f', 0); }

QString notAvailable() { return NodeTableModel::tr("N/A"); }

QString gib(double mib) { return QLocale().toString(mib / kMiBPerGiB, 'f', 1); }

// The slots in use by kind: the latest telemetry's counts are newer than the last hello's.
int cpuSlotsUsed(const NodeView& node) {
  if (node.telemetry) return static_cast<int>(node.telemetry->cpu_slots_used());
  return node.info ? static_cast<int>(node.info->cpu_slots_used()) : 0;
}
int gpuSlotsUsed(const NodeView& node) {
  if (node.telemetry) return static_cast<int>(node.telemetry->gpu_slots_used());
  return node.info ? static_cast<int>(node.info->gpu_slots_used()) : 0;
}

QColor stateColor(const NodeView& node) {
  if (node.state == NodeState::Offline) return QColor(0xc0, 0x39, 0x2b);
  if (NodeTableModel::isDraining(node) || !node.stalls.isEmpty() || !node.problems.isEmpty()) {
    return QColor(0xd6, 0x89, 0x10);
  }
  return {};
}

}  // namespace

NodeTableModel::NodeTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void NodeTableModel::setNodes(const QList<NodeView>& nodes) {
  bool sameRows = nodes.size() == nodes_.size();
  for (int i = 0; sameRows && i < nodes.size(); ++i) {
    sameRows = nodes[i].record.nodeId == nodes_[i].record.nodeId;
  }
  if (!sameRows) {
    beginResetModel();
    nodes_ = nodes;
    endResetModel();
    return;
  }
  nodes_ = nodes;
  if (!nodes_.isEmpty()) emit dataChanged(index(0, 0), index(nodes_.size() - 1, kColumnCount - 1));
}

int NodeTableModel::rowOf(const QString& nodeId) const {
  for (int i = 0; i < nodes_.size(); ++i) {
    if (nodes_[i].record.nodeId == nodeId) return i;
  }
  return -1;
}

int NodeTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(nodes_.size());
}

int NodeTableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumnCount;
}

QVariant NodeTableModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= nodes_.size()) return {};
  const NodeView& node = nodes_[index.row()];
  if (role == kNodeIdRole) return node.record.nodeId;
  if (role == kGpuUtilRole) {
    if (index.column() != kGpus || !node.info) return {};
    QVariantList utils;
    for (const v1::GpuInfo& gpu : node.info->gpus()) {
      QVariant util;
      if (node.telemetry) {
        for (const v1::GpuTelemetry& sample : node.telemetry->gpus()) {
          if (sample.index() == gpu.index() && sample.has_util_pct()) util = sample.util_pct();
        }
      }
      utils.append(util);
    }
    return utils;
  }
  if (role == kSortRole) {
    switch (index.column()) {
      case kCpu:
        return node.telemetry && node.telemetry->has_cpu_pct() ? QVariant(node.telemetry->cpu_pct())
                                                               : QVariant();
      case kMemory:
        return node.telemetry && node.telemetry->has_mem_used_mib()
                   ? QVariant(static_cast<double>(node.telemetry->mem_used_mib()))
                   : QVariant();
      case kGpus: {
        // The mean over the GPUs that report a utilization, online or not.
        double sum = 0;
        int reporting = 0;
        addGpuUtilizations(node, &sum, &reporting);
        return reporting > 0 ? QVariant(sum / reporting) : QVariant();
      }
      case kSlots: {
        if (!node.info) return {};
        const int freeGpus =
            qMax(0, static_cast<int>(node.info->gpu_slots_total()) - gpuSlotsUsed(node));
        const int freeCores =
            qMax(0, static_cast<int>(node.info->cpu_slots_total()) - cpuSlotsUsed(node));
        return static_cast<double>(freeGpus) * 1e6 + freeCores;
      }
      default:
        return data(index, Qt::DisplayRole).toString().toLower();
    }
  }
  if (role == kGpuInUseRole) {
    if (index.column() != kGpus || !node.info) return {};
    QVariantList inUse;
    for (const v1::GpuInfo& gpu : node.info->gpus()) inUse.append(gpuInUse(node, gpu.index()));
    return inUse;
  }
  if (role == Qt::ForegroundRole) {
    if (index.column() == kState) {
      const QColor color = stateColor(node);
      return color.isValid() ? QVariant(color) : QVariant();
    }
    // The last known values of a node that stopped answering are stale: greyed.
    if (node.state != NodeState::Online) {
      return QApplication::palette().color(QPalette::Disabled, QPalette::Text);
    }
  }
  if (role == Qt::TextAlignmentRole && (index.column() == kSlots || index.column() == kMemory)) {
    return QVariant(Qt::AlignRight | Qt::AlignVCenter);
  }
  if (role == Qt::ToolTipRole) {
    switch (index.column()) {
      case kState: {
        QStringList parts;
        if (!node.stalls.isEmpty()) {
          parts << tr("Stalled runs (docs/metrics.md, Hangs):\n%1")
                       .arg(tooltipText(node.stalls.join(QLatin1Char('\n'))));
        }
        if (!node.problems.isEmpty()) {  // what the GUI clipped or refused (docs/security.md)
          parts << tr("Data over the protocol's limits, clipped or refused:\n%1")
                       .arg(tooltipText(node.problems.join(QLatin1Char('\n'))));
        }
        return parts.isEmpty() ? QVariant() : QVariant(parts.join(QStringLiteral("\n\n")));
      }
      case kAddress:
        return node.local ? tr("The local agent, started by this GUI on loopback")
                          : node.record.address;
      case kCpu:
        return cpuText(node);
      case kGpus:
        if (node.info) {
          QStringList lines;
          for (const v1::GpuInfo& gpu : node.info->gpus()) {
            const QString line = tr("GPU %1: %2, %3 GiB")
                                     .arg(gpu.index())
                                     .arg(QString::fromStdString(gpu.name()))
                                     .arg(gib(static_cast<double>(gpu.memory_total_mib())));
            if (!node.telemetry) {
              lines.append(line);
            } else if (gpuInUse(node, gpu.index())) {
              lines.append(tr("%1, in use by a run").arg(line));
            } else {
              lines.append(tr("%1, free").arg(line));
            }
          }
          return lines.isEmpty() ? gpusText(node) : lines.join(QLatin1Char('\n'));
        }
        return {};
      default:
        return {};
    }
  }
  if (role != Qt::DisplayRole) return {};
  switch (index.column()) {
    case kName:
      return node.record.name;
    case kAddress:
      return addressText(node);
    case kState:
      return stateText(node);
    case kCpu:
      return cpuText(node);
    case kMemory:
      return memoryText(node);
    case kGpus:
      return gpusText(node);
    case kSlots:
      return slotsText(node);
    case kAgentVersion:
      return node.info && !node.info->agent_version().empty()
                 ? QString::fromStdString(node.info->agent_version())
                 : notAvailable();
    default:
      return {};
  }
}

QVariant NodeTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case kName:
      return tr("Name");
    case kAddress:
      return tr("Address");
    case kState:
      return tr("State");
    case kCpu:
      return tr("CPU");
    case kMemory:
      return tr("Memory");
    case kGpus:
      return tr("GPUs");
    case kSlots:
      return tr("Slots");
    case kAgentVersion:
      return tr("Agent");
    default:
      return {};
  }
}

QString NodeTableModel::addressText(const NodeView& node) {
  if (node.local) return QStringLiteral("local");
  const NodeAddress address = parseNodeAddress(node.record.address);
  if (!address.valid) return node.record.address;
  return QStringLiteral("%1:%2").arg(address.host).arg(address.controlPort);
}

bool NodeTableModel::isDraining(const NodeView& node) {
  if (node.state != NodeState::Online) return false;
  if (node.telemetry) return node.telemetry->draining();
  return node.info && node.info->draining();
}

QString NodeTableModel::stateText(const NodeView& node) {
  QString state;
  switch (node.state) {
    case NodeState::Connecting:
      return tr("connecting…");
    case NodeState::Online:
      state = isDraining(node) ? tr("draining") : tr("online");
      break;
    case NodeState::Offline:
      state = tr("offline");
      break;
  }
  if (node.heartbeatAgeMs >= 0) state = tr("%1 (%2)").arg(state, ageText(node.heartbeatAgeMs));
  if (!node.stalls.isEmpty())
    state = tr("%1, %n stalled run(s)", "", node.stalls.size()).arg(state);
  if (!node.problems.isEmpty()) state = tr("%1, data refused").arg(state);
  return state;
}

QString NodeTableModel::cpuText(const NodeView& node) {
  if (!node.info) return notAvailable();
  QStringList parts;
  if (!node.info->cpu_model().empty()) parts.append(QString::fromStdString(node.info->cpu_model()));
  const int cores = static_cast<int>(node.info->cpu_cores());
  parts.append(cores == 1 ? tr("1 core") : tr("%1 cores").arg(QLocale().toString(cores)));
  parts.append(node.telemetry && node.telemetry->has_cpu_pct()
                   ? tr("%1 %").arg(percent(node.telemetry->cpu_pct()))
                   : notAvailable());
  return parts.join(QStringLiteral(", "));
}

QString NodeTableModel::memoryText(const NodeView& node) {
  const bool haveUsed = node.telemetry && node.telemetry->has_mem_used_mib();
  const bool haveTotal = node.info && node.info->memory_total_mib() > 0;
  if (!haveUsed && !haveTotal) return notAvailable();
  return tr("%1 / %2 GiB")
      .arg(haveUsed ? gib(node.telemetry->mem_used_mib()) : notAvailable(),
           haveTotal ? gib(static_cast<double>(node.info->memory_total_mib())) : notAvailable());
}

QString NodeTableModel::gpusText(const NodeView& node) {
  if (!node.info) return notAvailable();
  if (node.info->gpus().empty()) return tr("none");
  QStringList utils;
  for (const v1::GpuInfo& gpu : node.info->gpus()) {
    QString util = notAvailable();
    if (node.telemetry) {
      for (const v1::GpuTelemetry& sample : node.telemetry->gpus()) {
        if (sample.index() == gpu.index() && sample.has_util_pct()) {
          util = tr("%1 %").arg(percent(sample.util_pct()));
        }
      }
    }
    utils.append(util);
  }
  const QString text = utils.join(QStringLiteral(", "));
  if (!node.telemetry) return text;
  int inUse = 0;
  for (const v1::GpuInfo& gpu : node.info->gpus()) inUse += gpuInUse(node, gpu.index());
  return tr("%1; %2 of %3 in use").arg(text).arg(inUse).arg(node.info->gpus_size());
}

QString NodeTableModel::slotsText(const NodeView& node) {
  if (!node.info) return notAvailable();
  const QLocale locale;
  const int cpuTotal = static_cast<int>(node.info->cpu_slots_total());
  const int cpuUsed = cpuSlotsUsed(node);
  const QString cpu =
      tr("%1 free / %2 used cpu")
          .arg(locale.toString(qMax(0, cpuTotal - cpuUsed)), locale.toString(cpuUsed));
  const int gpuTotal = static_cast<int>(node.info->gpu_slots_total());
  if (gpuTotal == 0) return cpu;
  const int gpuUsed = gpuSlotsUsed(node);
  return tr("%1 free / %2 used gpu; %3")
      .arg(locale.toString(qMax(0, gpuTotal - gpuUsed)), locale.toString(gpuUsed), cpu);
}

void GpuBarsDelegate::paint(QPainter* painter, const QStyleOptionViewItem& option,
                            const QModelIndex& index) const {
  const QVariant value = index.data(NodeTableModel::kGpuUtilRole);
  const QVariantList utils = value.toList();
  if (value.typeId() != QMetaType::QVariantList || utils.isEmpty()) {
    QStyledItemDelegate::paint(painter, option, index);
    return;
  }
  const QVariantList inUse = index.data(NodeTableModel::kGpuInUseRole).toList();
  QStyleOptionViewItem background = option;
  initStyleOption(&background, index);
  background.text.clear();
  const QWidget* widget = option.widget;
  QStyle* style = widget != nullptr ? widget->style() : QApplication::style();
  style->drawControl(QStyle::CE_ItemViewItem, &background, painter, widget);

  const QRect area = option.rect.adjusted(4, 3, -4, -3);
  const int count = static_cast<int>(utils.size());
  const int width =
      qBound(kBarMinWidth, (area.width() - kBarGap * (count - 1)) / count, kBarMaxWidth);
  const QPalette& palette = option.palette;
  painter->save();
  painter->setRenderHint(QPainter::Antialiasing, false);
  QFont font = option.font;
  font.setPointSizeF(font.pointSizeF() * 0.85);
  painter->setFont(font);
  const QFontMetrics metrics(font);
  for (int i = 0; i < count; ++i) {
    const QRect bar(area.left() + i * (width + kBarGap), area.top(), width, area.height());
    if (bar.right() > area.right()) break;  // too narrow: the tooltip still lists every GPU
    painter->setPen(palette.color(QPalette::Mid));
    painter->setBrush(palette.color(QPalette::Base));
    painter->drawRect(bar.adjusted(0, 0, -1, -1));
    QString label;
    if (utils[i].isValid()) {
      const double util = qBound(0.0, utils[i].toDouble(), 100.0);
      QRect fill = bar.adjusted(1, 1, -1, -1);
      fill.setWidth(static_cast<int>(fill.width() * util / 100.0 + 0.5));
      painter->fillRect(fill, palette.color(QPalette::Highlight));
      label = percent(util);
    } else {
      painter->fillRect(bar.adjusted(1, 1, -1, -1),
                        QBrush(palette.color(QPalette::Mid), Qt::BDiagPattern));
      label = NodeTableModel::tr("N/A");
    }
    if (i < inUse.size() && inUse[i].toBool()) {
      // Held by a run: a highlight frame and a filled corner, visible at any utilization.
      painter->setBrush(Qt::NoBrush);
      painter->setPen(QPen(palette.color(QPalette::Highlight), 2));
      painter->drawRect(bar.adjusted(1, 1, -1, -1));
      const int corner = qMin(6, bar.height() / 2);
      const QPoint tip = bar.topRight() + QPoint(1, 0);
      painter->setPen(Qt::NoPen);
      painter->setBrush(palette.color(QPalette::Highlight).darker(130));
      painter->drawPolygon(QPolygon{tip, tip - QPoint(corner, 0), tip + QPoint(0, corner)});
    }
    if (metrics.horizontalAdvance(label) + 2 <= bar.width()) {
      painter->setPen(palette.color(QPalette::Text));
      painter->drawText(bar, Qt::AlignCenter, label);
    }
  }
  painter->restore();
}

QSize GpuBarsDelegate::sizeHint(const QStyleOptionViewItem& option,
                                const QModelIndex& index) const {
  QSize size = QStyledItemDelegate::sizeHint(option, index);
  const QVariant value = index.data(NodeTableModel::kGpuUtilRole);
  if (value.typeId() == QMetaType::QVariantList && !value.toList().isEmpty()) {
    const int count = static_cast<int>(value.toList().size());
    size.setWidth(qMax(size.width() / 2, count * (kBarMaxWidth + kBarGap) + 8));
  }
  size.setHeight(qMax(size.height(), 22));
  return size;
}

NodeTableModel::ClusterGpuUse NodeTableModel::clusterGpuUse(const QList<NodeView>& nodes) {
  ClusterGpuUse use;
  double utilSum = 0;
  int reporting = 0;
  for (const NodeView& node : nodes) {
    ++use.nodes;
    if (node.state != NodeState::Online) continue;
    ++use.onlineNodes;
    if (!node.info) continue;
    for (const v1::GpuInfo& gpu : node.info->gpus()) {
      ++use.gpus;
      if (gpuInUse(node, gpu.index())) ++use.gpusInUse;
    }
    addGpuUtilizations(node, &utilSum, &reporting);
  }
  if (reporting > 0) use.meanUtilPct = utilSum / reporting;
  return use;
}

QString NodeTableModel::clusterText(const ClusterGpuUse& use) {
  const QString util =
      use.meanUtilPct ? tr("%1 %").arg(QLocale().toString(*use.meanUtilPct, 'f', 0)) : tr("N/A");
  return tr("%1 nodes, %2 online · GPUs in use: %3 of %4 · mean GPU utilization %5")
      .arg(QString::number(use.nodes), QString::number(use.onlineNodes),
           QString::number(use.gpusInUse), QString::number(use.gpus), util);
}

}  // namespace ringside::gui
