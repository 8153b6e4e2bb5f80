// "Defaults that launch": the New run form's default run launches as it stands on a CPU
// node, a 1-GPU node and a 2-GPU node (the tests' fake NVML gives the agent one or two GPUs). On a
// GPU node the form starts with one rank per free GPU and the run takes the node's GPUs (slots by
// kind), leaving its cores to CPU jobs. The runs are cut to a few steps (max_steps, a run-spec key
// without a form field); on this machine without a real GPU the trainer's auto backend falls back
// to mpi and says so, so every run completes.
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include "build_paths.h"
#include "gui_test_support.h"
#include "ringside/gui/controller.h"
#include "ringside/gui/widgets/run_setup_panel.h"

namespace ringside::gui {

class DefaultRunProcessTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { testing::allowMpirunAsRoot(); }

  void theDefaultRunLaunchesAsItStands_data() {
    QTest::addColumn<QString>("nvml");  // "": no NVML (a CPU node)
    QTest::addColumn<int>("gpus");
    QTest::newRow("CPU node") << QString() << 0;
    QTest::newRow("1-GPU node") << QString::fromUtf8(ringside::test::fakeNvmlMinimal()) << 1;
    QTest::newRow("2-GPU node") << QString::fromUtf8(ringside::test::fakeNvmlFull()) << 2;
  }

  void theDefaultRunLaunchesAsItStands() {
    QFETCH(QString, nvml);
    QFETCH(int, gpus);
    QTemporaryDir scripts;
    QVERIFY(scripts.isValid());
    ControllerOptions options = testing::withBuiltLocalAgent();
    if (!nvml.isEmpty()) {
      // The local agent, started by the controller, with the fake NVML.
      options.agentBinary = scripts.filePath(QStringLiteral("ringside-agent-fake-nvml"));
      QFile script(options.agentBinary);
      QVERIFY(script.open(QIODevice::WriteOnly));
      script.write(QByteArray("#!/bin/sh\nexec '") + ringside::test::agentBin() +
                   "' --nvml-library '" + nvml.toUtf8() + "' \"$@\"\n");
      script.close();
      QVERIFY(script.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner |
                                    QFileDevice::ExeOwner));
    }
    testing::ControllerInTempDir fixture(options);
    Controller& controller = fixture.controller;
    QVERIFY(controller.start().isOk());
    QTRY_VERIFY_WITH_TIMEOUT(!testing::onlineLocalNodeId(controller).isEmpty(), 30000);
    const QString nodeId = testing::onlineLocalNodeId(controller);
    QCOMPARE(controller.node(nodeId)->info->gpus_size(), gpus);

    // The form as a user first sees it, on this node.
    RunSetupPanel panel;
    panel.setNodes(controller.nodeChoices());
    RunForm form = panel.form();
    QCOMPARE(form.nodeIds, QStringList{nodeId});
    QCOMPARE(form.ranksPerNode, gpus > 0 ? gpus : 2);
    QVERIFY2(panel.canLaunch(), qPrintable(QStringList(panel.fieldErrors().values()).join("; ")));

    form.trainerBase.set_max_steps(6);  // a few steps of the default CNN
    QString error;
    const QString runId = testing::launchAndWait(controller, form, &error);
    QVERIFY2(!runId.isEmpty(), qPrintable(error));
    // Slots by kind: on a GPU node the run holds its GPUs, not cores.
    if (gpus > 0) {
      QTRY_VERIFY_WITH_TIMEOUT(controller.node(nodeId)->telemetry &&
                                   controller.node(nodeId)->telemetry->gpu_slots_used() ==
                                       static_cast<uint32_t>(gpus),
                               20000);
      QCOMPARE(controller.node(nodeId)->telemetry->cpu_slots_used(), 0u);
    }
    QTRY_VERIFY_WITH_TIMEOUT(testing::storedRunState(controller, runId) == v1::COMPLETED ||
                                 testing::storedRunState(controller, runId) == v1::FAILED,
                             240000);
    auto run = controller.store().run(runId).result();
    QVERIFY(run.isOk());
    QVERIFY2(run->state == v1::COMPLETED, qPrintable(run->reason));
    QCOMPARE(run->worldSize, gpus > 0 ? gpus : 2);
    if (gpus > 0) {
      QCOMPARE(run->placement.size(), size_t{1});
      QCOMPARE(run->placement[0].gpus_size(), gpus);
    }
  }
};

}  // namespace ringside::gui

QTEST_MAIN(ringside::gui::DefaultRunProcessTest)
#include "default_run_process_test.moc"
