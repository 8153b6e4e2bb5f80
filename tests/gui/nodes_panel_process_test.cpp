// The nodes panel over a real local agent started by the controller: the local node appears
// online with its cores and slots, drain and undrain reach the agent and show in the table, and
// a killed agent shows offline within ~7 s (AgentConnection: offline after 5 s of silence).
// With RINGSIDE_TEST_PNG_DIR set, the panel and the add-node dialog are rendered there as PNGs.
#include <QAction>
#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>
#include <csignal>

#include "build_paths.h"
#include "gui_test_support.h"
#include "ringside/gui/controller.h"
#include "ringside/gui/widgets/add_node_dialog.h"
#include "ringside/gui/widgets/node_detail_pane.h"
#include "ringside/gui/widgets/node_table_model.h"
#include "ringside/gui/widgets/nodes_panel.h"

using namespace ringside::gui;

class NodesPanelProcessTest : public QObject {
  Q_OBJECT

 private:
  static QString cell(const NodesPanel& panel, int column) {
    const NodeTableModel* model = panel.model();
    for (int row = 0; row < model->rowCount(); ++row) {
      if (model->nodes()[row].local) return model->index(row, column).data().toString();
    }
    return {};
  }

  static void savePng(QWidget& widget, const QString& name) {
    const QString dir = qEnvironmentVariable("RINGSIDE_TEST_PNG_DIR");
    if (dir.isEmpty()) return;
    QDir().mkpath(dir);
    QVERIFY(widget.grab().save(dir + QLatin1Char('/') + name));
  }

 private slots:
  void initTestCase() {
    qputenv("OMPI_ALLOW_RUN_AS_ROOT", "1");
    qputenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
  }

  void localNodeAppearsOnlineThenOfflineWhenKilled() {
    ControllerOptions options;
    options.agentBinary = QString::fromUtf8(ringside::test::agentBin());
    options.trainerBinary = QString::fromUtf8(ringside::test::trainerBin());
    testing::ControllerInTempDir fixture(options);
    Controller& controller = fixture.controller;
    NodesPanel panel(controller);
    panel.resize(1280, 760);
    panel.show();
    QVERIFY(controller.start().isOk());

    QTRY_VERIFY_WITH_TIMEOUT(cell(panel, NodeTableModel::kState).startsWith("online ("), 30000);
    QCOMPARE(cell(panel, NodeTableModel::kAddress), QStringLiteral("local"));
    QTRY_VERIFY_WITH_TIMEOUT(cell(panel, NodeTableModel::kCpu).contains(" cores, "), 10000);
    const std::optional<NodeView> local = controller.node(panel.selectedNodeId());
    QVERIFY(local && local->local && local->info);
    // Slots by kind: CPU slots on every node, GPU slots before them on a GPU node.
    QVERIFY2(cell(panel, NodeTableModel::kSlots).endsWith(" used cpu"),
             qPrintable(cell(panel, NodeTableModel::kSlots)));
    QCOMPARE(cell(panel, NodeTableModel::kSlots).contains(" used gpu; "),
             !local->info->gpus().empty());
    QVERIFY(cell(panel, NodeTableModel::kSlots).contains(" free / "));
    QVERIFY(!cell(panel, NodeTableModel::kAgentVersion).isEmpty());
    // Telemetry arrives about once a second: the CPU % and memory become known.
    QTRY_VERIFY_WITH_TIMEOUT(!cell(panel, NodeTableModel::kCpu).endsWith("N/A"), 10000);
    QTRY_VERIFY_WITH_TIMEOUT(!cell(panel, NodeTableModel::kMemory).startsWith("N/A"), 10000);

    // Drain and undrain go to the agent and come back in the node's state.
    QTRY_VERIFY(panel.drainAction()->isEnabled());
    panel.drainAction()->trigger();
    QTRY_VERIFY_WITH_TIMEOUT(cell(panel, NodeTableModel::kState).startsWith("draining ("), 10000);
    QTRY_VERIFY(panel.undrainAction()->isEnabled());
    panel.undrainAction()->trigger();
    QTRY_VERIFY_WITH_TIMEOUT(cell(panel, NodeTableModel::kState).startsWith("online ("), 10000);

    if (!qEnvironmentVariableIsEmpty("RINGSIDE_TEST_PNG_DIR")) {
      // A few seconds of charts for the picture (only when one is saved): wait for the samples,
      // about one a second, not for a fixed time.
      QTRY_VERIFY_WITH_TIMEOUT(panel.detailPane()->sampleCount(panel.selectedNodeId()) >= 5, 15000);
    }
    savePng(panel, QStringLiteral("nodes_panel.png"));
    panel.addNodeAction()->trigger();
    auto* dialog = panel.findChild<AddNodeDialog*>();
    QVERIFY(dialog != nullptr);
    QTRY_VERIFY(dialog->isVisible());
    savePng(*dialog, QStringLiteral("add_node_dialog.png"));
    dialog->reject();

    // Kill the agent: the node must show offline within 5 s of silence (+ one age tick).
    QFile pidFile(fixture.dir.path() + QStringLiteral("/local-agent/gui-local-agent.pid"));
    QVERIFY(pidFile.open(QIODevice::ReadOnly));
    const pid_t pid = static_cast<pid_t>(pidFile.readAll().trimmed().toLongLong());
    QVERIFY(pid > 0);
    QCOMPARE(::kill(pid, SIGKILL), 0);
    QTRY_VERIFY_WITH_TIMEOUT(cell(panel, NodeTableModel::kState).startsWith("offline ("), 7000);
  }
};

QTEST_MAIN(NodesPanelProcessTest)
#include "nodes_panel_process_test.moc"
