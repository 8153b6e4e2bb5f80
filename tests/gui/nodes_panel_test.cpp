// The nodes panel's parts without an agent: the table's cell texts (N/A for absent values, never
// 0; numbers in the default locale), the address round trip the edit dialog relies on, the
// add-node dialog's key validation, the GUI key it shows and the node's launch settings (network
// interface, mpirun options) it checks and saves, and the detail pane's rolling telemetry series.
#include <QClipboard>
#include <QGuiApplication>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPushButton>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>

#include "gui_test_support.h"
#include "ringside/gui/controller.h"
#include "ringside/gui/widgets/add_node_dialog.h"
#include "ringside/gui/widgets/node_detail_pane.h"
#include "ringside/gui/widgets/node_table_model.h"
#include "ringside/gui/widgets/nodes_panel.h"

using namespace ringside::gui;
using ringside::gui::testing::ControllerInTempDir;

namespace v1 = ringside::v1;

namespace {

NodeView gpuNode() {
  NodeView node;
  node.record.nodeId = QStringLiteral("n-1");
  node.record.name = QStringLiteral("gpu01");
  node.record.address = QStringLiteral("tcp://gpu01:47600 tcp://gpu01:47601");
  node.state = NodeState::Online;
  node.heartbeatAgeMs = 400;
  v1::NodeInfo info;
  info.set_cpu_model("AMD EPYC 7763");
  info.set_cpu_cores(64);
  info.set_memory_total_mib(512 * 1024);
  info.set_agent_version("0.1.0");
  info.set_slots_total(2);
  info.set_slot_kind("gpu");
  info.set_cpu_slots_total(64);  // slots by kind: 64 cores and 2 GPUs
  info.set_gpu_slots_total(2);
  for (uint32_t i = 0; i < 2; ++i) {
    v1::GpuInfo* gpu = info.add_gpus();
    gpu->set_index(i);
    gpu->set_name("NVIDIA H100");
    gpu->set_memory_total_mib(81559);
  }
  node.info = info;
  v1::NodeTelemetry telemetry;
  telemetry.set_cpu_pct(12.4);
  telemetry.set_slots_used(1);
  telemetry.set_gpu_slots_used(1);
  telemetry.set_cpu_slots_used(2);
  telemetry.add_gpus_in_use(1);  // a run holds GPU 1
  v1::GpuTelemetry* gpu0 = telemetry.add_gpus();
  gpu0->set_index(0);
  gpu0->set_util_pct(87);
  telemetry.add_gpus()->set_index(1);  // utilization unreadable
  node.telemetry = telemetry;
  return node;
}

}  // namespace

class NodesPanelTest : public QObject {
  Q_OBJECT

 private slots:
  void cellsShowNotAvailableNeverZero() {
    const NodeView node = gpuNode();
    QCOMPARE(NodeTableModel::stateText(node), QStringLiteral("online (0.4 s)"));
    QCOMPARE(NodeTableModel::addressText(node), QStringLiteral("gpu01:47600"));
    QCOMPARE(NodeTableModel::cpuText(node), QStringLiteral("AMD EPYC 7763, 64 cores, 12 %"));
    // Memory used is absent from the telemetry: N/A, not 0.
    QCOMPARE(NodeTableModel::memoryText(node), QStringLiteral("N/A / 512.0 GiB"));
    QCOMPARE(NodeTableModel::gpusText(node), QStringLiteral("87 %, N/A; 1 of 2 in use"));
    QCOMPARE(NodeTableModel::slotsText(node),
             QStringLiteral("1 free / 1 used gpu; 62 free / 2 used cpu"));

    NodeTableModel model;
    model.setNodes({node});
    const QVariantList utils =
        model.data(model.index(0, NodeTableModel::kGpus), NodeTableModel::kGpuUtilRole).toList();
    QCOMPARE(utils.size(), 2);
    QCOMPARE(utils[0].toDouble(), 87.0);
    QVERIFY(!utils[1].isValid());
    // Which GPUs runs hold: GPU 1, as the telemetry's gpus_in_use says; also in the tooltip.
    const QVariantList inUse =
        model.data(model.index(0, NodeTableModel::kGpus), NodeTableModel::kGpuInUseRole).toList();
    QCOMPARE(inUse, (QVariantList{false, true}));
    const QString tooltip =
        model.data(model.index(0, NodeTableModel::kGpus), Qt::ToolTipRole).toString();
    QVERIFY2(tooltip.contains(QStringLiteral("GPU 0: NVIDIA H100, 79.6 GiB, free")),
             qPrintable(tooltip));
    QVERIFY2(tooltip.contains(QStringLiteral("GPU 1: NVIDIA H100, 79.6 GiB, in use by a run")),
             qPrintable(tooltip));
    // Before any telemetry nothing is known to be in use, and the text does not claim it.
    NodeView unsampled = gpuNode();
    unsampled.telemetry.reset();
    QCOMPARE(NodeTableModel::gpusText(unsampled), QStringLiteral("N/A, N/A"));

    if (const QString pngDir = qEnvironmentVariable("RINGSIDE_TEST_PNG_DIR"); !pngDir.isEmpty()) {
      NodeView eight = gpuNode();
      eight.record.name = QStringLiteral("gpu02");
      eight.info->clear_gpus();
      eight.telemetry->clear_gpus();
      eight.telemetry->clear_gpus_in_use();
      for (uint32_t i = 0; i < 8; ++i) {
        if (i < 4) eight.telemetry->add_gpus_in_use(i);
        eight.info->add_gpus()->set_index(i);
        v1::GpuTelemetry* gpu = eight.telemetry->add_gpus();
        gpu->set_index(i);
        if (i != 5) gpu->set_util_pct(i * 14);
      }
      NodeView offline = gpuNode();
      offline.record.name = QStringLiteral("gpu03");
      offline.state = NodeState::Offline;
      offline.heartbeatAgeMs = 7300;
      NodeTableModel shown;
      shown.setNodes({node, eight, offline});
      QTableView view;
      view.setModel(&shown);
      view.setItemDelegateForColumn(NodeTableModel::kGpus, new GpuBarsDelegate(&view));
      view.resize(1100, 140);
      view.resizeColumnsToContents();
      view.show();
      QVERIFY(view.grab().save(pngDir + QStringLiteral("/node_table_gpus.png")));
    }

    NodeView unknown;
    unknown.record.name = QStringLiteral("new");
    unknown.state = NodeState::Offline;
    QCOMPARE(NodeTableModel::stateText(unknown), QStringLiteral("offline"));
    QCOMPARE(NodeTableModel::cpuText(unknown), QStringLiteral("N/A"));
    QCOMPARE(NodeTableModel::memoryText(unknown), QStringLiteral("N/A"));
    QCOMPARE(NodeTableModel::gpusText(unknown), QStringLiteral("N/A"));

    NodeView cpuOnly = gpuNode();
    cpuOnly.info->clear_gpus();
    cpuOnly.telemetry->clear_gpus();
    QCOMPARE(NodeTableModel::gpusText(cpuOnly), QStringLiteral("none"));

    NodeView draining = gpuNode();
    draining.telemetry->set_draining(true);
    draining.heartbeatAgeMs = 12500;
    QCOMPARE(NodeTableModel::stateText(draining), QStringLiteral("draining (12 s)"));
    draining.state = NodeState::Offline;
    QCOMPARE(NodeTableModel::stateText(draining), QStringLiteral("offline (12 s)"));
  }

  // Under --lang de (QLocale::setDefault(German)) the read-outs use a decimal comma and group
  // thousands with a dot; the address's port is not a quantity and stays as it is.
  void cellsFollowTheDefaultLocale() {
    const QLocale saved;
    QLocale::setDefault(QLocale(QLocale::German, QLocale::Germany));
    const auto restore = qScopeGuard([&saved] { QLocale::setDefault(saved); });
    NodeView node = gpuNode();
    node.info->set_cpu_cores(1024);
    node.info->set_slots_total(2048);
    node.info->set_cpu_slots_total(2048);
    node.telemetry->set_cpu_pct(99.6);
    node.telemetry->set_mem_used_mib(1536);
    QCOMPARE(NodeTableModel::stateText(node), QStringLiteral("online (0,4 s)"));
    QCOMPARE(NodeTableModel::addressText(node), QStringLiteral("gpu01:47600"));
    QCOMPARE(NodeTableModel::cpuText(node), QStringLiteral("AMD EPYC 7763, 1.024 cores, 100 %"));
    QCOMPARE(NodeTableModel::memoryText(node), QStringLiteral("1,5 / 512,0 GiB"));
    QCOMPARE(NodeTableModel::slotsText(node),
             QStringLiteral("1 free / 1 used gpu; 2.046 free / 2 used cpu"));
    node.heartbeatAgeMs = qint64{1234} * 3600 * 1000;
    QCOMPARE(NodeTableModel::stateText(node), QStringLiteral("online (1.234 h)"));
  }

  void addressParsesBackToHostAndPorts() {
    const auto [control, events] = agentEndpoints(QStringLiteral("10.0.0.5"), 7000, 7001);
    const NodeAddress address = parseNodeAddress(control + QLatin1Char(' ') + events);
    QVERIFY(address.valid);
    QCOMPARE(address.host, QStringLiteral("10.0.0.5"));
    QCOMPARE(address.controlPort, 7000);
    QCOMPARE(address.eventsPort, 7001);
    QVERIFY(!parseNodeAddress(QStringLiteral("local")).valid);
    QCOMPARE(authorizeCommand(QStringLiteral("-abc")),
             QStringLiteral("ringside-agent authorize -- '-abc'"));
  }

  void dialogRefusesAMalformedKeyAndShowsTheGuiKey() {
    ControllerInTempDir fixture;
    Controller& controller = fixture.controller;
    QVERIFY(controller.start().isOk());
    AddNodeDialog dialog(controller);
    QLineEdit* guiKey = nullptr;
    for (QLineEdit* edit : dialog.findChildren<QLineEdit*>()) {
      if (edit->isReadOnly()) guiKey = edit;
    }
    QVERIFY(guiKey != nullptr);
    QCOMPARE(guiKey->text(), controller.guiPublicKey());
    QCOMPARE(guiKey->text().size(), 40);

    const QList<QLineEdit*> edits = dialog.findChildren<QLineEdit*>();
    QLineEdit* host = nullptr;
    QLineEdit* key = nullptr;
    for (QLineEdit* edit : edits) {
      if (edit->placeholderText().startsWith(QStringLiteral("host"))) host = edit;
      if (edit->placeholderText().startsWith(QStringLiteral("40 characters"))) key = edit;
    }
    QVERIFY(host != nullptr && key != nullptr);
    host->setText(QStringLiteral("gpu01"));
    key->setText(QStringLiteral("not a key"));
    QVERIFY(!dialog.keyError().isEmpty());
    QVERIFY2(dialog.keyError().contains(QStringLiteral("40")), qPrintable(dialog.keyError()));
    if (const QString pngDir = qEnvironmentVariable("RINGSIDE_TEST_PNG_DIR"); !pngDir.isEmpty()) {
      dialog.show();
      QVERIFY(dialog.grab().save(pngDir + QStringLiteral("/add_node_dialog_bad_key.png")));
    }
    dialog.accept();
    QCOMPARE(dialog.result(), int(QDialog::Rejected));
    QCOMPARE(controller.nodes().size(), 0);

    // A valid key (any Z85 key, here the GUI's own) is accepted and the node is added.
    key->setText(controller.guiPublicKey());
    QVERIFY(dialog.keyError().isEmpty());
    dialog.accept();
    QCOMPARE(dialog.result(), int(QDialog::Accepted));
    QCOMPARE(controller.nodes().size(), 1);
    QCOMPARE(controller.nodes().first().record.name, QStringLiteral("gpu01"));

    // Edit pre-fills from the node.
    AddNodeDialog edit(controller, controller.nodes().first().record.nodeId);
    bool prefilled = false;
    for (QLineEdit* field : edit.findChildren<QLineEdit*>()) {
      if (field->text() == QStringLiteral("gpu01") && field->placeholderText().startsWith("host")) {
        prefilled = true;
      }
    }
    QVERIFY(prefilled);

    // The Copy button puts the GUI key on the clipboard.
    for (QPushButton* button : dialog.findChildren<QPushButton*>()) {
      if (button->text() == QStringLiteral("&Copy")) button->click();
    }
    QCOMPARE(QGuiApplication::clipboard()->text(), controller.guiPublicKey());
  }

  void dialogChecksAndSavesTheLaunchSettings() {
    ControllerInTempDir fixture;
    Controller& controller = fixture.controller;
    QVERIFY(controller.start().isOk());
    AddNodeDialog dialog(controller);
    QLineEdit* host = nullptr;
    QLineEdit* key = nullptr;
    QLineEdit* interface = nullptr;
    QLineEdit* mpirun = nullptr;
    for (QLineEdit* edit : dialog.findChildren<QLineEdit*>()) {
      if (edit->placeholderText().startsWith(QStringLiteral("host"))) host = edit;
      if (edit->placeholderText().startsWith(QStringLiteral("40 characters"))) key = edit;
      if (edit->placeholderText().startsWith(QStringLiteral("e.g. eth1"))) interface = edit;
      if (edit->placeholderText().startsWith(QStringLiteral("e.g. --mca"))) mpirun = edit;
    }
    QVERIFY(host && key && interface && mpirun);
    // The tooltip says what empty means and what to enter on a cluster.
    QVERIFY(interface->toolTip().contains(QStringLiteral("Empty: the libraries pick")));
    QVERIFY(interface->toolTip().contains(QStringLiteral("cluster network")));
    host->setText(QStringLiteral("gpu01"));
    key->setText(controller.guiPublicKey());
    interface->setText(QStringLiteral("-eth1"));
    QVERIFY2(dialog.interfaceError().contains(QStringLiteral("-eth1")),
             qPrintable(dialog.interfaceError()));
    mpirun->setText(QStringLiteral("btl_tcp_links 2"));
    QVERIFY(!dialog.mpirunOptionsError().isEmpty());
    dialog.accept();
    QCOMPARE(dialog.result(), int(QDialog::Rejected));
    QCOMPARE(controller.nodes().size(), 0);

    interface->setText(QStringLiteral("10.0.0.0/24"));
    mpirun->setText(QStringLiteral("--mca btl_tcp_links 2"));
    QVERIFY(dialog.interfaceError().isEmpty());
    QVERIFY(dialog.mpirunOptionsError().isEmpty());
    dialog.accept();
    QCOMPARE(dialog.result(), int(QDialog::Accepted));
    QCOMPARE(controller.nodes().size(), 1);
    const NodeRecord record = controller.nodes().first().record;
    QCOMPARE(record.networkInterface, QStringLiteral("10.0.0.0/24"));
    QCOMPARE(record.mpirunOptions, QStringLiteral("--mca btl_tcp_links 2"));
    QVERIFY(record.clientKeyFile.isEmpty());
    // The run setup form gets them with the node.
    QCOMPARE(controller.nodeChoices().first().networkInterface, record.networkInterface);
    QCOMPARE(controller.nodeChoices().first().mpirunOptions, record.mpirunOptions);

    // Edit pre-fills them.
    AddNodeDialog edit(controller, record.nodeId);
    QStringList texts;
    for (QLineEdit* field : edit.findChildren<QLineEdit*>()) texts << field->text();
    QVERIFY(texts.contains(QStringLiteral("10.0.0.0/24")));
    QVERIFY(texts.contains(QStringLiteral("--mca btl_tcp_links 2")));
    // The controller refuses what the dialog would: no change then.
    NodeSettings badInterface;
    badInterface.networkInterface = QStringLiteral("eth 1");
    const ringside::Status refused =
        controller.editNode(record.nodeId, record.name, QStringLiteral("gpu01"), 47600, 47601,
                            record.publicKey, badInterface);
    QCOMPARE(refused.code(), ringside::Status::Code::kInvalidArgument);
    QCOMPARE(controller.nodes().first().record.networkInterface, QStringLiteral("10.0.0.0/24"));
    NodeSettings absentKeyFile;
    absentKeyFile.clientKeyFile = fixture.dir.filePath(QStringLiteral("absent.key_secret"));
    const ringside::Status noKeyFile =
        controller.editNode(record.nodeId, record.name, QStringLiteral("gpu01"), 47600, 47601,
                            record.publicKey, absentKeyFile);
    QCOMPARE(noKeyFile.code(), ringside::Status::Code::kNotFound);
  }

  void detailPaneKeepsARollingSeries() {
    ControllerInTempDir fixture;
    Controller& controller = fixture.controller;
    QVERIFY(controller.start().isOk());
    NodeDetailPane pane(controller);
    pane.resize(1200, 2400);  // every chart on screen: each is drawn while the pane shows
    pane.show();
    QVERIFY(QTest::qWaitForWindowExposed(&pane));
    pane.setNodeId(QStringLiteral("n-1"));
    const double start = 1.7e9;
    for (int i = 0; i < 400; ++i) {
      v1::NodeTelemetry sample;
      sample.set_wall_time(start + i);
      sample.set_cpu_pct(i % 100);
      if (i % 2 == 0) sample.set_mem_used_mib(1024);  // every other one absent
      sample.set_net_rx_mbps(20 + 10 * std::sin(i / 20.0));
      sample.set_net_tx_mbps(5);
      for (uint32_t gpu = 0; gpu < 2; ++gpu) {
        v1::GpuTelemetry* g = sample.add_gpus();
        g->set_index(gpu);
        g->set_util_pct(gpu == 0 ? 90 + i % 10 : 40 + i % 30);
        g->set_mem_used_mib(20000 + 30 * i * (gpu + 1));
      }
      emit controller.telemetryReceived(QStringLiteral("n-1"), sample);
    }
    // 300 s of history at one sample a second.
    QCOMPARE(pane.sampleCount(QStringLiteral("n-1")), 301);
    QTRY_COMPARE(pane.chartPointCounts().value(QStringLiteral("CPU (%)")), QList<int>{301});
    QTRY_COMPARE(pane.chartPointCounts().value(QStringLiteral("Memory used (GiB)")),
                 QList<int>{150});
    QTRY_COMPARE(pane.chartPointCounts().value(QStringLiteral("GPU utilization (%)")),
                 (QList<int>{301, 301}));
    if (const QString pngDir = qEnvironmentVariable("RINGSIDE_TEST_PNG_DIR"); !pngDir.isEmpty()) {
      pane.resize(1200, 480);
      QTest::qWait(300);
      QVERIFY(pane.grab().save(pngDir + QStringLiteral("/node_detail_gpus.png")));
    }
  }
};

QTEST_MAIN(NodesPanelTest)
#include "nodes_panel_test.moc"
