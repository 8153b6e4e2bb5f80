// Issue 28, item 3: the Nodes panel's line over the table at 64 nodes x 8 GPUs: how many nodes are
// online, how many of the online nodes' GPUs runs hold, and the mean of the utilizations they
// report (an offline node and a GPU that reports none are left out; N/A when none reports).
#include <QLocale>
#include <QSortFilterProxyModel>
#include <QtTest>

#include "ringside/gui/controller.h"
#include "ringside/gui/widgets/node_table_model.h"

using namespace ringside;
using namespace ringside::gui;

namespace {

constexpr int kNodes = 64;
constexpr uint32_t kGpusPerNode = 8;

// Node n online with 8 GPUs; GPU g at (n + 10 g) % 100 % utilization; on even nodes GPUs 0-5
// are held by a run, on odd nodes none. Node 63 is offline; node 62's GPU 7 reports no
// utilization.
QList<NodeView> cluster() {
  QList<NodeView> nodes;
  for (int n = 0; n < kNodes; ++n) {
    NodeView node;
    node.record.nodeId = QStringLiteral("id-%1").arg(n);
    node.record.name = QStringLiteral("gpu-node-%1").arg(n, 2, 10, QLatin1Char('0'));
    node.state = n == 63 ? NodeState::Offline : NodeState::Online;
    node.info.emplace();
    node.telemetry.emplace();
    for (uint32_t g = 0; g < kGpusPerNode; ++g) {
      node.info->add_gpus()->set_index(g);
      v1::GpuTelemetry* gpu = node.telemetry->add_gpus();
      gpu->set_index(g);
      if (!(n == 62 && g == 7)) gpu->set_util_pct(static_cast<double>((n + 10 * g) % 100));
      if (n % 2 == 0 && g < 6) node.telemetry->add_gpus_in_use(g);
    }
    nodes.append(node);
  }
  return nodes;
}

}  // namespace

class NodesClusterTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { QLocale::setDefault(QLocale(QLocale::English, QLocale::UnitedStates)); }

  void theClusterLineCountsTheOnlineNodesGpus() {
    const QList<NodeView> nodes = cluster();
    const auto use = NodeTableModel::clusterGpuUse(nodes);
    QCOMPARE(use.nodes, 64);
    QCOMPARE(use.onlineNodes, 63);
    QCOMPARE(use.gpus, 63 * 8);
    QCOMPARE(use.gpusInUse, 32 * 6);  // even nodes 0..62
    double sum = 0;
    int count = 0;
    for (int n = 0; n < 63; ++n) {
      for (int g = 0; g < 8; ++g) {
        if (n == 62 && g == 7) continue;
        sum += (n + 10 * g) % 100;
        ++count;
      }
    }
    QVERIFY(use.meanUtilPct.has_value());
    QVERIFY(std::abs(*use.meanUtilPct - sum / count) < 1e-9);
    QCOMPARE(NodeTableModel::clusterText(use),
             QStringLiteral("64 nodes, 63 online · GPUs in use: 192 of 504 · mean GPU "
                            "utilization %1 %")
                 .arg(QLocale().toString(sum / count, 'f', 0)));
  }

  void withoutGpuReportsTheMeanIsNotAvailable() {
    QList<NodeView> nodes = cluster();
    for (NodeView& node : nodes) node.telemetry.reset();
    const auto use = NodeTableModel::clusterGpuUse(nodes);
    QCOMPARE(use.gpusInUse, 0);
    QVERIFY(!use.meanUtilPct);
    QVERIFY(NodeTableModel::clusterText(use).endsWith(QStringLiteral("utilization N/A")));
    QCOMPARE(NodeTableModel::clusterText(NodeTableModel::clusterGpuUse({})),
             QStringLiteral("0 nodes, 0 online · GPUs in use: 0 of 0 · mean GPU utilization N/A"));
  }

  // The Nodes panel's table sorts by NodeTableModel::kSortRole: numbers, not their text.
  void theNodesSortByTheirValues() {
    NodeTableModel model;
    QList<NodeView> nodes = cluster();
    for (int n = 0; n < kNodes; ++n) nodes[n].telemetry->set_cpu_pct(n == 5 ? 100.0 : 9.0 + n % 7);
    model.setNodes(nodes);
    QSortFilterProxyModel proxy;
    proxy.setSourceModel(&model);
    proxy.setSortRole(NodeTableModel::kSortRole);
    proxy.sort(NodeTableModel::kCpu, Qt::DescendingOrder);
    QCOMPARE(proxy.index(0, NodeTableModel::kName).data().toString(),
             QStringLiteral("gpu-node-05"));
    for (int row = 1; row < kNodes; ++row) {
      QVERIFY(
          proxy.index(row - 1, NodeTableModel::kCpu).data(NodeTableModel::kSortRole).toDouble() >=
          proxy.index(row, NodeTableModel::kCpu).data(NodeTableModel::kSortRole).toDouble());
    }
    proxy.sort(NodeTableModel::kGpus, Qt::AscendingOrder);
    for (int row = 1; row < kNodes; ++row) {
      QVERIFY(
          proxy.index(row - 1, NodeTableModel::kGpus).data(NodeTableModel::kSortRole).toDouble() <=
          proxy.index(row, NodeTableModel::kGpus).data(NodeTableModel::kSortRole).toDouble());
    }
    proxy.sort(NodeTableModel::kName, Qt::DescendingOrder);
    QCOMPARE(proxy.index(0, NodeTableModel::kName).data().toString(),
             QStringLiteral("gpu-node-63"));
    proxy.setFilterKeyColumn(-1);
    proxy.setFilterCaseSensitivity(Qt::CaseInsensitive);
    proxy.setFilterFixedString(QStringLiteral("GPU-NODE-1"));
    QCOMPARE(proxy.rowCount(), 10);  // gpu-node-10 to gpu-node-19
  }
};

QTEST_MAIN(NodesClusterTest)
#include "nodes_cluster_test.moc"
