// The run form's node list with 64 nodes x 8 GPUs: each node shows its free
// GPUs; the filter hides the nodes whose name and host do not contain its text; "Check all shown"
// checks every shown node that can take the run's ranks (online, not draining, a free GPU for a
// GPU run or a free CPU slot for a CPU run), in list order, and "Uncheck all" clears every check;
// the world size follows; the default node is the first that can take the ranks. With
// RINGSIDE_SCREENSHOT_DIR set it saves the form's Placement box there as run-setup-nodes-64.png:
// Uncheck all, filtered to gpu-node-1x, Check all shown (the picture in README.md).
#include <QDir>
#include <QGroupBox>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QtTest>

#include "gui_test_support.h"
#include "ringside/gui/widgets/run_setup_panel.h"

using namespace ringside::gui;
using ringside::gui::testing::nodeChoice;

namespace {

QString name(int n) { return QStringLiteral("gpu-node-%1").arg(n, 2, 10, QLatin1Char('0')); }

// 64 GPU nodes; node n has n % 9 free GPUs of 8 (so nodes 0, 9, 18, ..., 63 have none free) and
// 64 free CPU slots; node 13 is offline and node 14 draining.
QList<NodeChoice> cluster() {
  QList<NodeChoice> nodes;
  for (int n = 0; n < 64; ++n) {
    NodeChoice node =
        nodeChoice(QStringLiteral("id-%1").arg(n), name(n), n % 9, QStringLiteral("gpu"), n != 13,
                   n == 14, QStringLiteral("host%1.cluster").arg(n));
    node.gpuSlotsTotal = 8;
    nodes.append(node);
  }
  return nodes;
}

int shown(const QListWidget* list) {
  int count = 0;
  for (int row = 0; row < list->count(); ++row) count += list->item(row)->isHidden() ? 0 : 1;
  return count;
}

}  // namespace

class RunSetupNodesScaleTest : public QObject {
  Q_OBJECT

 private slots:
  void sixtyFourNodesFilterAndCheckAll() {
    RunSetupPanel panel;
    panel.setNodes(cluster());
    QListWidget* list = panel.nodeList();
    QCOMPARE(list->count(), 64);
    QVERIFY2(list->item(5)->text().contains(QStringLiteral("free: 5 of 8 GPUs")),
             qPrintable(list->item(5)->text()));
    // The default node: the first with a free GPU (gpu-node-00 has none).
    QCOMPARE(panel.form().nodeIds, QStringList{QStringLiteral("id-1")});

    panel.nodeFilter()->setText(QStringLiteral("GPU-NODE-1"));
    QCOMPARE(shown(list), 10);
    panel.checkAllNodesButton()->click();
    // gpu-node-10 to 19 without the offline 13, the draining 14 and 18 with no free GPU, and the
    // default node kept.
    QStringList expected{QStringLiteral("id-1")};
    for (int n = 10; n < 20; ++n) {
      if (n != 13 && n != 14 && n != 18) expected << QStringLiteral("id-%1").arg(n);
    }
    QCOMPARE(panel.form().nodeIds, expected);
    // By host as well.
    panel.nodeFilter()->setText(QStringLiteral("host63.cluster"));
    QCOMPARE(shown(list), 1);
    QVERIFY(!list->item(63)->isHidden());
    // Not by the tooltip's "Host:" label, which every node's tooltip has.
    panel.nodeFilter()->setText(QStringLiteral("Host:"));
    QCOMPARE(shown(list), 0);
    panel.nodeFilter()->clear();
    QCOMPARE(shown(list), 64);
    panel.checkAllNodesButton()->click();
    // 64 less the offline, the draining and the 8 with no free GPU.
    QCOMPARE(panel.form().nodeIds.size(), 54);
    QVERIFY2(panel.worldSizeText().startsWith(QStringLiteral("54 nodes")),
             qPrintable(panel.worldSizeText()));
    // A new list keeps the user's checks and the filter.
    panel.nodeFilter()->setText(QStringLiteral("gpu-node-2"));
    panel.setNodes(cluster());
    QCOMPARE(shown(list), 10);
    QCOMPARE(panel.form().nodeIds.size(), 54);
    panel.uncheckAllNodesButton()->click();
    QVERIFY(panel.form().nodeIds.isEmpty());
  }

  // A CPU run (the mpi backend) takes CPU slots: Check all shown then takes the nodes whose GPUs
  // are all busy too, and a node with no free CPU slot is left out.
  void checkAllShownFollowsTheSlotKindTheRunTakes() {
    RunSetupPanel panel;
    QList<NodeChoice> nodes = cluster();
    nodes[20].freeCpuSlots = 0;
    panel.setNodes(nodes);
    RunForm cpuRun = panel.form();
    cpuRun.backend = QStringLiteral("mpi");
    cpuRun.nodeIds.clear();
    panel.setForm(cpuRun);
    panel.uncheckAllNodesButton()->click();
    panel.nodeFilter()->setText(QStringLiteral("gpu-node-"));
    panel.checkAllNodesButton()->click();
    // 64 less the offline 13, the draining 14 and node 20 without a free core; nodes 0, 9, 18, ...
    // with no free GPU are in.
    QCOMPARE(panel.form().nodeIds.size(), 61);
    QVERIFY(panel.form().nodeIds.contains(QStringLiteral("id-18")));
    QVERIFY(!panel.form().nodeIds.contains(QStringLiteral("id-20")));
    // The same nodes for a GPU run: those with a free GPU only.
    RunForm gpuRun = panel.form();
    gpuRun.backend = QStringLiteral("nccl");
    gpuRun.nodeIds.clear();
    panel.setForm(gpuRun);
    panel.uncheckAllNodesButton()->click();
    panel.checkAllNodesButton()->click();
    // 54: node 20 is back (a GPU rank takes a GPU slot, not a core), the full ones are out.
    QCOMPARE(panel.form().nodeIds.size(), 54);
    QVERIFY(panel.form().nodeIds.contains(QStringLiteral("id-20")));
    QVERIFY(!panel.form().nodeIds.contains(QStringLiteral("id-18")));
  }

  // The chooser as a user leaves it after Uncheck all, a filter and Check all shown (every node
  // with a free GPU): only the shown nodes online and not draining are checked, and the world
  // size and the form's checks agree.
  void uncheckAllThenCheckTheShownNodes() {
    RunSetupPanel panel;
    panel.resize(1100, 1000);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    QList<NodeChoice> nodes = cluster();
    for (int n = 0; n < nodes.size(); ++n) nodes[n].freeGpuSlots = 1 + n % 8;  // none full
    panel.setNodes(nodes);
    panel.uncheckAllNodesButton()->click();
    panel.nodeFilter()->setText(QStringLiteral("gpu-node-1"));
    panel.checkAllNodesButton()->click();
    QStringList expected;
    for (int n = 10; n < 20; ++n) {
      if (n != 13 && n != 14) expected << QStringLiteral("id-%1").arg(n);
    }
    QCOMPARE(panel.form().nodeIds, expected);
    QVERIFY2(panel.worldSizeText().startsWith(QStringLiteral("8 nodes")),
             qPrintable(panel.worldSizeText()));
    if (const QString dir = qEnvironmentVariable("RINGSIDE_SCREENSHOT_DIR"); !dir.isEmpty()) {
      QTest::qWait(100);  // the layout settles (the error line went) as it does on screen
      QWidget* placement = panel.nodeList()->parentWidget();
      while (placement != nullptr && qobject_cast<QGroupBox*>(placement) == nullptr) {
        placement = placement->parentWidget();
      }
      QVERIFY(placement != nullptr);
      QVERIFY(placement->grab().save(QDir(dir).filePath(QStringLiteral("run-setup-nodes-64.png"))));
    }
  }
};

QTEST_MAIN(RunSetupNodesScaleTest)
#include "run_setup_nodes_scale_test.moc"
