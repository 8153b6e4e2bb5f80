// The run setup form widget: fields round-trip a RunForm, errors show at the field and block
// Launch, a valid form emits launchRequested, and the node list places a run on several nodes.
#include <QComboBox>
#include <QGroupBox>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QRadioButton>
#include <QSpinBox>
#include <QSignalSpy>
#include <QtTest>

#include "gui_test_support.h"
#include "ringside/gui/widgets/run_setup_panel.h"

using ringside::gui::NodeChoice;
using ringside::gui::RunForm;
using ringside::gui::RunSetupPanel;
using ringside::gui::testing::nodeChoice;

class RunSetupPanelTest : public QObject {
  Q_OBJECT

 private:
  static QListWidget* nodeList(RunSetupPanel& panel) { return panel.findChild<QListWidget*>(); }
  static QRadioButton* jobButton(RunSetupPanel& panel, const QString& text) {
    for (QRadioButton* button : panel.findChildren<QRadioButton*>()) {
      if (button->text() == text) return button;
    }
    return nullptr;
  }

  // Clicks a node's check box as the user would (the item's check state).
  static void setChecked(RunSetupPanel& panel, const QString& nodeId, bool checked) {
    QListWidget* list = nodeList(panel);
    for (int row = 0; row < list->count(); ++row) {
      if (list->item(row)->data(Qt::UserRole).toString() == nodeId) {
        list->item(row)->setCheckState(checked ? Qt::Checked : Qt::Unchecked);
        return;
      }
    }
    QFAIL(qPrintable(QStringLiteral("node %1 not listed").arg(nodeId)));
  }

  static QPushButton* launchButton(RunSetupPanel& panel) {
    for (QPushButton* button : panel.findChildren<QPushButton*>()) {
      if (button->text().contains(QStringLiteral("Launch"))) return button;
    }
    return nullptr;
  }

  static bool labelShown(RunSetupPanel& panel, const QString& text) {
    for (QLabel* label : panel.findChildren<QLabel*>()) {
      if (!label->isHidden() && label->text().contains(text)) return true;
    }
    return false;
  }

  static QList<NodeChoice> twoNodes(int freeOnSecond) {
    return {nodeChoice("n1", "gpu01", 8, "gpu", true, false, "gpu01.cluster"),
            nodeChoice("n2", "gpu02", freeOnSecond, "gpu", true, false, "gpu02.cluster")};
  }

 private slots:
  // The form starts with the CNN run (the one to watch); the MLP is one choice away,
  // and each model's own fields are the ones enabled.
  void theFormStartsWithTheCnnAndTheMlpIsOneChoiceAway() {
    RunSetupPanel panel;
    panel.setNodes({nodeChoice("n1", "workstation", 8, "cpu", true, false, "ws")});
    RunForm form = panel.form();
    QCOMPARE(form.model, QStringLiteral("cnn"));
    QCOMPARE(form.name, QStringLiteral("fashion-mnist cnn"));
    QCOMPARE(form.channels, (QList<int>{32, 64}));
    QVERIFY(
        validate(form, {nodeChoice("n1", "workstation", 8, "cpu", true, false, "ws")}).isEmpty());
    QComboBox* model = nullptr;
    for (QComboBox* combo : panel.findChildren<QComboBox*>()) {
      if (combo->findData(QStringLiteral("cnn")) >= 0) model = combo;
    }
    QVERIFY(model != nullptr);
    model->setCurrentIndex(model->findData(QStringLiteral("mlp")));
    form = panel.form();
    QCOMPARE(form.model, QStringLiteral("mlp"));
    QCOMPARE(trainerConfig(form).model(), std::string("mlp"));
    QCOMPARE(form.hidden, (QList<int>{256, 128}));
    form.model = QStringLiteral("cnn");
    form.channels = {16, 32, 64};
    form.dropout = 0.4;
    panel.setForm(form);
    const RunForm back = panel.form();
    QCOMPARE(back.channels, (QList<int>{16, 32, 64}));
    QCOMPARE(back.dropout, 0.4);
    QCOMPARE(trainerConfig(back).channels_size(), 3);
  }

  void formRoundTripsThroughTheWidgets() {
    RunSetupPanel panel;
    panel.setNodes({nodeChoice("n1", "workstation", 8, "cpu", true, false, "ws")});
    RunForm form;
    form.name = QStringLiteral("round trip");
    form.tags = {QStringLiteral("a"), QStringLiteral("b")};
    form.hidden = {300, 100};
    form.optimizer = QStringLiteral("adamw");
    form.lr = 0.003;
    form.beta1 = 0.8;
    form.lrSchedule = QStringLiteral("step");
    form.lrStepEpochs = 3;
    form.epochs = 9;
    form.globalBatch = 96;
    form.backend = QStringLiteral("mpi");
    form.seed = 1234567;
    form.logEvery = 1;
    form.nodeIds = {QStringLiteral("n1")};
    form.ranksPerNode = 3;
    form.priority = ringside::v1::LOW_PRIORITY;
    panel.setForm(form);
    auto* priority = panel.findChild<QComboBox*>(QStringLiteral("queuePriority"));
    QVERIFY(priority != nullptr);
    QCOMPARE(priority->currentText(), QStringLiteral("low"));
    const RunForm back = panel.form();
    QCOMPARE(back.priority, ringside::v1::LOW_PRIORITY);
    priority->setCurrentIndex(0);
    QCOMPARE(panel.form().priority, ringside::v1::HIGH_PRIORITY);
    QCOMPARE(back.name, form.name);
    QCOMPARE(back.tags, form.tags);
    QCOMPARE(back.hidden, form.hidden);
    QCOMPARE(back.optimizer, form.optimizer);
    QCOMPARE(back.lr, form.lr);
    QCOMPARE(back.beta1, form.beta1);
    QCOMPARE(back.lrSchedule, form.lrSchedule);
    QCOMPARE(back.lrStepEpochs, form.lrStepEpochs);
    QCOMPARE(back.epochs, form.epochs);
    QCOMPARE(back.globalBatch, form.globalBatch);
    QCOMPARE(back.backend, form.backend);
    QCOMPARE(back.seed, form.seed);
    QCOMPARE(back.logEvery, 1);
    QCOMPARE(back.nodeIds, form.nodeIds);
    QCOMPARE(back.ranksPerNode, form.ranksPerNode);
    QVERIFY(panel.canLaunch());
  }

  void errorsShowAtTheFieldAndBlockLaunch() {
    RunSetupPanel panel;
    panel.setNodes({nodeChoice("n1", "workstation", 2, "cpu", true, false, "ws")});
    RunForm form;
    form.name = QStringLiteral("too many");
    form.ranksPerNode = 4;  // the node has 2 in all
    form.globalBatch = 130;
    panel.setForm(form);
    QVERIFY(!panel.canLaunch());
    QVERIFY(
        panel.fieldErrors().value(QStringLiteral("ranksPerNode")).contains(QStringLiteral("2")));
    QVERIFY(panel.fieldErrors().contains(QStringLiteral("globalBatch")));
    bool shown = false;
    for (QLabel* label : panel.findChildren<QLabel*>()) {
      shown |= !label->isHidden() &&
               label->text().contains(QStringLiteral("workstation has 2 CPU slots in all"));
    }
    QVERIFY(shown);
  }

  // A one-node run on busy slots is launched: it waits in the node's queue (docs/queue.md).
  void aOneNodeRunOnBusySlotsCanLaunchAndQueues() {
    RunSetupPanel panel;
    NodeChoice busy = nodeChoice("n1", "workstation", 0, "cpu", true, false, "ws");
    busy.cpuSlotsTotal = 4;  // all 4 held by other runs
    panel.setNodes({busy});
    RunForm form;
    form.name = QStringLiteral("waits");
    form.ranksPerNode = 2;
    panel.setForm(form);
    QVERIFY2(panel.fieldErrors().isEmpty(), qPrintable(panel.fieldErrors().values().join("; ")));
    QVERIFY(panel.canLaunch());
    // More than the node has in all could never start: refused at the field.
    form.ranksPerNode = 5;
    panel.setForm(form);
    QVERIFY(!panel.canLaunch());
    QVERIFY(panel.fieldErrors()
                .value(QStringLiteral("ranksPerNode"))
                .contains(QStringLiteral("has 4 CPU slots in all")));
  }

  void validFormEmitsLaunch() {
    RunSetupPanel panel;
    panel.setNodes({nodeChoice("n1", "workstation", 4, "cpu", true, false, "ws")});
    RunForm form;
    form.name = QStringLiteral("go");
    form.ranksPerNode = 2;
    panel.setForm(form);
    QSignalSpy launched(&panel, &RunSetupPanel::launchRequested);
    QPushButton* launch = launchButton(panel);
    QVERIFY(launch != nullptr);
    QVERIFY(launch->isEnabled());
    launch->click();
    QCOMPARE(launched.count(), 1);
    QCOMPARE(launched.at(0).at(0).value<RunForm>().name, QStringLiteral("go"));
  }

  void theFirstOnlineNodeIsCheckedUntilTheUserChooses() {
    RunSetupPanel panel;
    // Start-up: the only node is still connecting (offline); it is checked all the same.
    panel.setNodes({nodeChoice("local", "workstation", -1, "", false, false, "")});
    QCOMPARE(panel.form().nodeIds, QStringList{"local"});
    QVERIFY(!panel.canLaunch());
    QVERIFY(
        panel.fieldErrors().value(QStringLiteral("nodeIds")).contains(QStringLiteral("offline")));
    panel.setNodes({nodeChoice("local", "workstation", 4, "cpu", true, false, "ws")});
    QCOMPARE(panel.form().nodeIds, QStringList{"local"});
    QVERIFY(panel.canLaunch());  // the default: one local node, 2 ranks
    QCOMPARE(panel.form().ranksPerNode, 2);
    QVERIFY(panel.worldSizeText().contains(QStringLiteral("1 node × 2 ranks = 2 ranks")));

    // A second node that is online, the first offline: the default moves to the online one.
    panel.setNodes({nodeChoice("local", "workstation", 4, "cpu", false, false, "ws"),
                    nodeChoice("n2", "gpu02", 8, "gpu", true, false, "gpu02")});
    QCOMPARE(panel.form().nodeIds, QStringList{"n2"});

    // Once the user unchecks everything, a refresh does not check a node again.
    setChecked(panel, QStringLiteral("n2"), false);
    panel.setNodes({nodeChoice("local", "workstation", 4, "cpu", true, false, "ws"),
                    nodeChoice("n2", "gpu02", 8, "gpu", true, false, "gpu02")});
    QVERIFY(panel.form().nodeIds.isEmpty());
    QVERIFY(!panel.canLaunch());
    QVERIFY(
        panel.fieldErrors().value(QStringLiteral("nodeIds")).contains(QStringLiteral("Choose")));
    QVERIFY(labelShown(panel, QStringLiteral("Choose at least one node")));
    QCOMPARE(panel.worldSizeText(), QStringLiteral("no node chosen"));
  }

  void twoCheckedNodesShowTheWorldSizeAndMakeATwoHostSpec() {
    RunSetupPanel panel;
    panel.setNodes(twoNodes(8));
    RunForm form;
    form.name = QStringLiteral("two nodes");
    form.ranksPerNode = 4;
    form.globalBatch = 128;
    panel.setForm(form);
    setChecked(panel, QStringLiteral("n1"), true);
    setChecked(panel, QStringLiteral("n2"), true);
    QCOMPARE(panel.form().nodeIds, (QStringList{"n1", "n2"}));
    QVERIFY2(panel.worldSizeText().contains(QStringLiteral("2 nodes × 4 ranks = 8 ranks")),
             qPrintable(panel.worldSizeText()));
    QVERIFY(panel.worldSizeText().contains(QStringLiteral("Rank 0 runs on gpu01")));
    QVERIFY(labelShown(panel, QStringLiteral("2 nodes × 4 ranks = 8 ranks")));
    // Each node's state and free slots are in its row.
    QVERIFY(nodeList(panel)->item(1)->text().contains(QStringLiteral("online")));
    QVERIFY(nodeList(panel)->item(1)->text().contains(QStringLiteral("free: 8 of 8 GPUs")));

    if (const QString pngDir = qEnvironmentVariable("RINGSIDE_TEST_PNG_DIR"); !pngDir.isEmpty()) {
      panel.resize(720, 1000);
      panel.show();
      QVERIFY(panel.grab().save(pngDir + QStringLiteral("/run_setup_two_nodes.png")));
    }

    QSignalSpy launched(&panel, &RunSetupPanel::launchRequested);
    QVERIFY(panel.canLaunch());
    launchButton(panel)->click();
    QCOMPARE(launched.count(), 1);
    const RunForm sent = launched.at(0).at(0).value<RunForm>();
    QCOMPARE(sent.nodeIds, (QStringList{"n1", "n2"}));
    const auto spec = ringside::gui::toRunSpec(sent, twoNodes(8));
    QCOMPARE(spec.hosts_size(), 2);
    QCOMPARE(spec.hosts(0).host(), std::string("gpu01.cluster"));
    QCOMPARE(spec.hosts(1).host(), std::string("gpu02.cluster"));
    QCOMPARE(spec.hosts(0).ranks(), 4u);
    QCOMPARE(spec.hosts(1).ranks(), 4u);

    // The global batch must divide by the world size (8), not only by the ranks per node.
    form.globalBatch = 132;  // divisible by 4
    form.nodeIds = {QStringLiteral("n2"), QStringLiteral("n1")};
    panel.setForm(form);
    QCOMPARE(panel.form().nodeIds, (QStringList{"n2", "n1"}));  // setForm puts them in order
    QVERIFY(panel.fieldErrors().value(QStringLiteral("globalBatch")).contains(QStringLiteral("8")));
    QVERIFY(!panel.canLaunch());
  }

  // A Slurm login node, checked alone, shows the Slurm job box with its partitions (the default
  // first); the world size is the job's nodes x ranks per node, and the run is a Slurm job.
  void aSlurmNodeShowsTheSlurmJobBoxAndMakesASlurmJob() {
    RunSetupPanel panel;
    NodeChoice cluster = nodeChoice("login", "lab cluster", 0, "cpu", true, false, "login1");
    cluster.slurm = true;
    cluster.slurmPartitions = {QStringLiteral("debug"), QStringLiteral("gpu")};
    panel.setNodes({cluster});
    RunForm form;
    form.name = QStringLiteral("on slurm");
    form.nodeIds = {QStringLiteral("login")};
    form.ranksPerNode = 4;
    form.globalBatch = 256;
    form.slurm.set_nodes(8);
    form.slurm.set_partition("gpu");
    form.slurm.set_gpus_per_node(4);
    form.slurm.set_time_limit_min(120);
    form.slurm.set_gpu_request("--gres=gpu:a100:{n}");
    panel.setForm(form);
    QGroupBox* box = nullptr;
    for (QGroupBox* each : panel.findChildren<QGroupBox*>()) {
      if (each->title() == QStringLiteral("Slurm job")) box = each;
    }
    QVERIFY(box != nullptr);
    QVERIFY(!box->isHidden());
    QVERIFY(nodeList(panel)->item(0)->text().contains(QStringLiteral("Slurm cluster: debug, gpu")));
    QVERIFY2(panel.worldSizeText().contains(QStringLiteral("8 nodes × 4 ranks = 32 ranks")),
             qPrintable(panel.worldSizeText()));
    QVERIFY(panel.worldSizeText().contains(QStringLiteral("Slurm places the job")));
    QVERIFY2(panel.canLaunch(), qPrintable(panel.fieldErrors().values().join('\n')));
    const RunForm back = panel.form();
    QCOMPARE(back.slurm.nodes(), 8u);
    QCOMPARE(back.slurm.partition(), std::string("gpu"));
    QCOMPARE(back.slurm.gpu_request(), std::string("--gres=gpu:a100:{n}"));
    const auto spec = ringside::gui::toRunSpec(back, {cluster});
    QCOMPARE(spec.hosts_size(), 0);
    QCOMPARE(spec.slurm().tasks_per_node(), 4u);
    QCOMPARE(spec.slurm().time_limit_min(), 120u);

    if (const QString pngDir = qEnvironmentVariable("RINGSIDE_TEST_PNG_DIR"); !pngDir.isEmpty()) {
      panel.resize(720, 1400);
      panel.show();
      QVERIFY(QTest::qWaitForWindowExposed(&panel));
      QTest::qWait(100);  // the layouts settle
      QVERIFY(panel.grab().save(pngDir + QStringLiteral("/run_setup_slurm.png")));
    }
    // A local node: no Slurm box, no Slurm options sent.
    panel.setNodes({cluster, nodeChoice("n1", "workstation", 8, "cpu", true, false, "ws")});
    setChecked(panel, QStringLiteral("login"), false);
    setChecked(panel, QStringLiteral("n1"), true);
    QVERIFY(box->isHidden());
    QCOMPARE(panel.form().slurm.nodes(), 0u);
  }

  void aNodeWithTooFewFreeSlotsIsRefused() {
    RunSetupPanel panel;
    panel.setNodes(twoNodes(2));
    RunForm form;
    form.name = QStringLiteral("too wide");
    form.nodeIds = {QStringLiteral("n1"), QStringLiteral("n2")};
    form.ranksPerNode = 4;
    panel.setForm(form);
    QVERIFY(!panel.canLaunch());
    QVERIFY(!launchButton(panel)->isEnabled());
    const QString message = panel.fieldErrors().value(QStringLiteral("ranksPerNode"));
    QVERIFY2(message.contains(QStringLiteral("Only 2 GPUs are free on gpu02")),
             qPrintable(message));
    QVERIFY(labelShown(panel, QStringLiteral("Only 2 GPUs are free on gpu02")));
    // Unchecking that node makes the form launchable on the other one.
    setChecked(panel, QStringLiteral("n2"), false);
    QVERIFY(panel.fieldErrors().isEmpty());
    QVERIFY(panel.canLaunch());
  }

  void aRefreshKeepsTheOrderAndTheChecks() {
    RunSetupPanel panel;
    QList<NodeChoice> nodes = twoNodes(8);
    nodes.append(nodeChoice("n3", "gpu03", 8, "gpu", true, false, "gpu03"));
    panel.setNodes(nodes);
    RunForm form;
    form.nodeIds = {QStringLiteral("n3"), QStringLiteral("n1")};
    panel.setForm(form);
    nodes[0].freeGpuSlots = 6;  // new telemetry
    panel.setNodes(nodes);
    QCOMPARE(panel.form().nodeIds, (QStringList{"n3", "n1"}));
    QVERIFY2(nodeList(panel)->item(1)->text().contains(QStringLiteral("free: 6 of 8 GPUs")),
             qPrintable(nodeList(panel)->item(1)->text()));
    // A node that went away leaves the list (and the choice); a new one comes unchecked.
    nodes.removeAt(2);
    nodes.append(nodeChoice("n4", "gpu04", 8, "gpu", true, true, "gpu04"));
    panel.setNodes(nodes);
    QCOMPARE(panel.form().nodeIds, QStringList{"n1"});
    QCOMPARE(nodeList(panel)->count(), 3);
    QVERIFY(nodeList(panel)->item(2)->text().contains(QStringLiteral("draining")));
    setChecked(panel, QStringLiteral("n4"), true);
    QVERIFY(panel.fieldErrors()
                .value(QStringLiteral("nodeIds"))
                .contains(QStringLiteral("gpu04 is draining")));
  }

  void noNodeMeansNoLaunch() {
    RunSetupPanel panel;
    RunForm form;
    form.name = QStringLiteral("nowhere");
    panel.setForm(form);
    QVERIFY(!panel.canLaunch());
  }

  // The default run launches on a CPU node, a 1-GPU and a 2-GPU node. The form starts
  // with as many ranks as the default node has free GPUs (the trainer's auto backend takes one
  // GPU per rank there), 2 on a CPU node; a job that takes cores counts cores.
  void theDefaultRunFitsACpuAOneGpuAndATwoGpuNode_data() {
    QTest::addColumn<QString>("kind");
    QTest::addColumn<int>("free");
    QTest::addColumn<int>("ranks");
    QTest::newRow("cpu node, 8 cores") << "cpu" << 8 << 2;
    QTest::newRow("cpu node, 1 core") << "cpu" << 1 << 1;
    QTest::newRow("1-GPU node") << "gpu" << 1 << 1;
    QTest::newRow("2-GPU node") << "gpu" << 2 << 2;
  }
  void theDefaultRunFitsACpuAOneGpuAndATwoGpuNode() {
    QFETCH(QString, kind);
    QFETCH(int, free);
    QFETCH(int, ranks);
    RunSetupPanel panel;
    panel.setNodes({nodeChoice("n1", "workstation", free, kind, true, false, "ws")});
    QCOMPARE(panel.form().ranksPerNode, ranks);
    QVERIFY2(panel.canLaunch(), qPrintable(QStringList(panel.fieldErrors().values()).join("; ")));
    if (kind == QLatin1String("gpu")) {
      // A custom command takes cores: its default is 2 ranks (64 free cores here).
      jobButton(panel, QStringLiteral("Custom command"))->setChecked(true);
      QCOMPARE(panel.form().ranksPerNode, 2);
      jobButton(panel, QStringLiteral("Ringside trainer"))->setChecked(true);
      QCOMPARE(panel.form().ranksPerNode, ranks);
    }
  }

  // Once the user sets the ranks, new telemetry no longer changes them.
  void theUsersRanksStay() {
    RunSetupPanel panel;
    QList<NodeChoice> nodes{nodeChoice("n1", "workstation", 2, "gpu", true, false, "ws")};
    panel.setNodes(nodes);
    QCOMPARE(panel.form().ranksPerNode, 2);
    for (QSpinBox* box : panel.findChildren<QSpinBox*>()) {
      if (box->value() == 2 && box->maximum() == 4096) box->setValue(1);
    }
    QCOMPARE(panel.form().ranksPerNode, 1);
    nodes[0].freeGpuSlots = 1;
    panel.setNodes(nodes);
    QCOMPARE(panel.form().ranksPerNode, 1);
  }

  // The PyTorch script job's fields reach the run spec, and a GPU script on a CPU node
  // is refused at the field with what to do.
  void aPyTorchScriptJobMakesAPythonSpec() {
    RunSetupPanel panel;
    panel.setNodes({nodeChoice("n1", "workstation", 8, "cpu", true, false, "ws")});
    RunForm form;
    form.name = QStringLiteral("my ddp");
    form.job = RunForm::Job::kPython;
    form.pythonScript = QStringLiteral("/srv/train/ddp.py");
    form.pythonArgs = QStringLiteral("--epochs 2 --out \"my dir\"");
    form.pythonWorkingDir = QStringLiteral("/srv/train");
    form.environment = QStringLiteral("OMP_NUM_THREADS=1\nNCCL_DEBUG=INFO");
    form.nodeIds = {QStringLiteral("n1")};
    form.ranksPerNode = 2;
    panel.setForm(form);
    QVERIFY2(panel.canLaunch(), qPrintable(QStringList(panel.fieldErrors().values()).join("; ")));
    const ringside::v1::RunSpec spec = ringside::gui::toRunSpec(panel.form(), {});
    QVERIFY(spec.has_python());
    QCOMPARE(spec.python().script(), std::string("/srv/train/ddp.py"));
    QCOMPARE(spec.python().args_size(), 4);
    QCOMPARE(spec.python().args(3), std::string("my dir"));
    QCOMPARE(spec.python().python(), std::string("/usr/bin/python3"));
    QCOMPARE(spec.python().working_dir(), std::string("/srv/train"));
    QVERIFY(!spec.python().use_gpus());
    QCOMPARE(spec.env().at("OMP_NUM_THREADS"), std::string("1"));
    QCOMPARE(spec.env().at("NCCL_DEBUG"), std::string("INFO"));
    // Back from the spec (History's Clone).
    const RunForm back = ringside::gui::fromRunSpec(spec);
    QCOMPARE(back.job, RunForm::Job::kPython);
    QCOMPARE(back.pythonArgs, form.pythonArgs);
    QCOMPARE(back.environment, QStringLiteral("NCCL_DEBUG=INFO\nOMP_NUM_THREADS=1"));

    form.pythonUseGpus = true;
    panel.setForm(form);
    QVERIFY(!panel.canLaunch());
    QVERIFY2(panel.fieldErrors().value(QStringLiteral("nodeIds")).contains("has no GPU"),
             qPrintable(panel.fieldErrors().value(QStringLiteral("nodeIds"))));
    form.pythonUseGpus = false;
    form.environment = QStringLiteral("CUDA_VISIBLE_DEVICES=1");
    panel.setForm(form);
    QVERIFY(panel.fieldErrors().value(QStringLiteral("environment")).contains("set by the agent"));
  }
};

QTEST_MAIN(RunSetupPanelTest)
#include "run_setup_panel_test.moc"
