// The Nodes panel's line over the table at 64 nodes x 8 GPUs: how many nodes are
// online, how many of the online nodes' GPUs runs hold, and the mean of the utilizations they
// report (an offline node and a GPU that reports none are left out; N/A when none reports).
// The Nodes panel itself with the 64 nodes: its line, sorted by GPU use and filtered. With
// RINGSIDE_SCREENSHOT_DIR set it saves the panel's table as nodes-64.png (sorted by GPU use) and
// nodes-64-filtered.png (filtered by name) there, the pictures in docs/dashboard.md.
#include <QDir>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>

#include "ringside/gui/controller.h"
#include "ringside/gui/widgets/node_table_model.h"
#include "ringside/gui/widgets/nodes_panel.h"

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

// cluster() with what a real node also reports: address, host, CPU and memory, slots, version.
QList<NodeView> describedCluster() {
  QList<NodeView> nodes = cluster();
  for (int n = 0; n < kNodes; ++n) {
    NodeView& node = nodes[n];
    const QString host = QStringLiteral("gpu-node-%1").arg(n, 2, 10, QLatin1Char('0'));
    node.record.address = QStringLiteral("tcp://10.0.%1.%2:47600 tcp://10.0.%1.%2:47601")
                              .arg(n / 32)
                              .arg(n % 32 + 10);
    node.heartbeatAgeMs = node.state == NodeState::Online ? 200 + 13 * n % 700 : 41000;
    node.info->set_hostname(host.toStdString());
    node.info->set_cpu_model("AMD EPYC 9354 32-Core Processor");
    node.info->set_cpu_cores(64);
    node.info->set_memory_total_mib(1024 * 1024);
    node.info->set_agent_version("0.9.0");
    node.info->set_slot_kind("gpu");
    node.info->set_gpu_slots_total(kGpusPerNode);
    node.info->set_cpu_slots_total(64);
    for (v1::GpuInfo& gpu : *node.info->mutable_gpus()) {
      gpu.set_name("NVIDIA H100 80GB HBM3");
      gpu.set_memory_total_mib(81559);
    }
    node.telemetry->set_cpu_pct(n % 2 == 0 ? 38.0 + n % 11 : 2.0 + n % 5);
    node.telemetry->set_mem_used_mib(n % 2 == 0 ? 300000.0 + 1000.0 * n : 24000.0);
    const auto held = static_cast<uint32_t>(node.telemetry->gpus_in_use_size());
    node.telemetry->set_gpu_slots_used(held);
    node.telemetry->set_slots_used(held);
    node.info->set_gpu_slots_used(held);
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

  // The panel as a user sees it with 64 nodes: the cluster line over the table, the table sorted
  // by GPU use (busiest first), and the filter box narrowing it to a name.
  void thePanelShowsSixtyFourNodesSortedAndFiltered() {
    QTemporaryDir dir;
    ControllerOptions options;
    options.dataDir = dir.path();
    Controller controller(options);  // not started: the panel shows the list given to it
    NodesPanel panel(controller);
    panel.resize(1500, 1000);
    // Most of the height for the table (the user drags the splitter so).
    auto* splitter = panel.findChild<QSplitter*>();
    QVERIFY(splitter != nullptr);
    splitter->setSizes({760, 200});
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    const QList<NodeView> nodes = describedCluster();
    panel.showNodes(nodes);
    QCOMPARE(panel.clusterSummary(),
             NodeTableModel::clusterText(NodeTableModel::clusterGpuUse(nodes)));
    QVERIFY2(panel.clusterSummary().startsWith(
                 QStringLiteral("64 nodes, 63 online · GPUs in use: 192 of 504")),
             qPrintable(panel.clusterSummary()));
    QTableView* table = panel.tableView();
    QCOMPARE(table->model()->rowCount(), kNodes);
    table->sortByColumn(NodeTableModel::kGpus, Qt::DescendingOrder);
    for (int row = 1; row < kNodes; ++row) {
      QVERIFY(table->model()
                  ->index(row - 1, NodeTableModel::kGpus)
                  .data(NodeTableModel::kSortRole)
                  .toDouble() >= table->model()
                                     ->index(row, NodeTableModel::kGpus)
                                     .data(NodeTableModel::kSortRole)
                                     .toDouble());
    }
    const QString screenshots = qEnvironmentVariable("RINGSIDE_SCREENSHOT_DIR");
    // The table with its line and filter (the detail pane below belongs to the selected node).
    QWidget* tablePane = table->parentWidget();
    if (!screenshots.isEmpty()) {
      QVERIFY(tablePane->grab().save(QDir(screenshots).filePath(QStringLiteral("nodes-64.png"))));
    }
    panel.filterEdit()->setText(QStringLiteral("gpu-node-4"));
    QCOMPARE(table->model()->rowCount(), 10);  // gpu-node-40 to gpu-node-49
    if (!screenshots.isEmpty()) {
      QVERIFY(tablePane->grab().save(
          QDir(screenshots).filePath(QStringLiteral("nodes-64-filtered.png"))));
    }
  }
};

QTEST_MAIN(NodesClusterTest)
#include "nodes_cluster_test.moc"
