// NodeTableModel: the rows of the nodes panel, one per node, built from Controller::nodes()
// snapshots; GpuBarsDelegate paints the GPU column as one small utilization bar per GPU.
//
// Values a node cannot read are shown as N/A, never as 0 (the protocol leaves them absent:
// docs/protocol.md, "Events").
// GUI thread only.
#pragma once

#include <optional>

#include <QAbstractTableModel>
#include <QList>
#include <QStyledItemDelegate>

#include "ringside/gui/controller.h"

namespace ringside::gui {

class NodeTableModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column {
    kName,
    kAddress,
    kState,
    kCpu,
    kMemory,
    kGpus,
    kSlots,
    kAgentVersion,
    kColumnCount,
  };
  enum Role {
    // QString: NodeRecord.nodeId (every column).
    kNodeIdRole = Qt::UserRole + 1,
    // QVariantList, kGpus column only: one entry per GPU, its utilization in % (double), or an
    // invalid QVariant when the node cannot read it. Empty for a node without GPUs; an invalid
    // QVariant (not a list) when the inventory is not known yet.
    kGpuUtilRole,
    // QVariantList, kGpus column only, parallel to kGpuUtilRole: per GPU, true when a run holds
    // it (NodeTelemetry.gpus_in_use: handed to a run's ranks as CUDA_VISIBLE_DEVICES), false
    // when free or before the first telemetry sample.
    kGpuInUseRole,
    // What a column sorts by: CPU %, memory used (MiB), the GPUs' mean utilization (%), free GPU
    // slots then free cores (free GPUs × 1e6 + free cores); the text elsewhere. Invalid where
    // the value is not known.
    kSortRole,
  };

  explicit NodeTableModel(QObject* parent = nullptr);

  // Replaces the rows. Keeps the model's rows (and so the view's selection) when the node ids are
  // the same in the same order and only the values changed; resets the model otherwise.
  void setNodes(const QList<NodeView>& nodes);
  const QList<NodeView>& nodes() const { return nodes_; }
  // The row of `nodeId`, -1 when absent.
  int rowOf(const QString& nodeId) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

  // The cell texts, also used by tests. `node` as Controller::nodes() returns it.
  static QString addressText(const NodeView& node);
  // "online (0.4 s)", "offline (12 s)", "draining (0.4 s)", "connecting…"; the age is omitted
  // while the node was never heard.
  static QString stateText(const NodeView& node);
  static QString cpuText(const NodeView& node);
  static QString memoryText(const NodeView& node);
  // Per GPU its utilization ("87 %, N/A"), then how many of them runs hold ("; 1 of 2 in use")
  // once the node's telemetry says; "none" without GPUs, "N/A" before the inventory.
  static QString gpusText(const NodeView& node);
  static QString slotsText(const NodeView& node);
  // True when the node is online and draining (NodeInfo.draining or the latest telemetry's).
  static bool isDraining(const NodeView& node);

  // The cluster's GPU use over `nodes`: the GPUs of the online nodes'
  // inventories, how many of them a run holds (NodeTelemetry.gpus_in_use), and the mean of the
  // utilizations they report (GPUs that report none are left out; nullopt when none reports).
  struct ClusterGpuUse {
    int nodes = 0;
    int onlineNodes = 0;
    int gpus = 0;
    int gpusInUse = 0;
    std::optional<double> meanUtilPct;
  };
  static ClusterGpuUse clusterGpuUse(const QList<NodeView>& nodes);
  // "64 nodes, 64 online · GPUs in use: 412 of 512 · mean GPU utilization 63 %".
  static QString clusterText(const ClusterGpuUse& use);

 private:
  QList<NodeView> nodes_;
};

// Paints NodeTableModel::kGpuUtilRole as one small horizontal bar per GPU, the percentage on it
// ("N/A" on a grey bar for a value the node cannot read), a GPU that a run holds
// (kGpuInUseRole) framed in the highlight colour with a mark in its corner, and the display text
// ("none", "N/A") when there is no list to paint.
class GpuBarsDelegate : public QStyledItemDelegate {
  Q_OBJECT

 public:
  using QStyledItemDelegate::QStyledItemDelegate;

  void paint(QPainter* painter, const QStyleOptionViewItem& option,
             const QModelIndex& index) const override;
  QSize sizeHint(const QStyleOptionViewItem& option, const QModelIndex& index) const override;
};

}  // namespace ringside::gui
