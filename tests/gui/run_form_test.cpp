// Form -> run spec -> form round trips, presets, and every validation error.
#include <QJsonArray>
#include <QJsonDocument>
#include <QtTest>

#include "gui_test_support.h"
#include "ringside/common/run_spec.h"
#include "ringside/gui/run_form.h"

using ringside::gui::FieldError;
using ringside::gui::NodeChoice;
using ringside::gui::RunForm;
using ringside::gui::testing::nodeChoice;

class RunFormTest : public QObject {
  Q_OBJECT

 private:
  static RunForm sample() {
    RunForm form;
    form.name = QStringLiteral("wide adamw");
    form.tags = {QStringLiteral("sweep"), QStringLiteral("fmnist")};
    form.hidden = {512, 256, 64};
    form.optimizer = QStringLiteral("adamw");
    form.lr = 0.002;
    form.beta1 = 0.85;
    form.beta2 = 0.995;
    form.weightDecay = 0.05;
    form.lrSchedule = QStringLiteral("step");
    form.lrStepEpochs = 2;
    form.lrGamma = 0.5;
    form.warmupSteps = 100;
    form.epochs = 7;
    form.globalBatch = 256;
    form.microBatch = 4;
    form.backend = QStringLiteral("mpi");
    form.bucketMb = 4;
    form.checkpointEvery = 500;
    form.logEvery = 1;
    form.seed = 18446744073709551557ull;  // above 2^53: must survive JSON
    form.nodeIds = {QStringLiteral("n1")};
    form.ranksPerNode = 4;
    return form;
  }

  // One online node "n1" (host gpu01) with `freeSlots` free CPU slots.
  static QList<NodeChoice> oneNode(int freeSlots) {
    return {nodeChoice("n1", "gpu01", freeSlots, "cpu", true, false, "gpu01")};
  }

  // Three online nodes n1..n3 on hosts gpu01..gpu03 with 8 free GPU slots each.
  static QList<NodeChoice> threeNodes() {
    QList<NodeChoice> nodes;
    for (int i = 1; i <= 3; ++i) {
      nodes.append(nodeChoice(QStringLiteral("n%1").arg(i), QStringLiteral("node %1").arg(i), 8,
                              "gpu", true, false, QStringLiteral("gpu0%1").arg(i)));
    }
    return nodes;
  }

  static QString messageOn(const QList<FieldError>& errors, const QString& field) {
    QStringList messages;
    for (const auto& e : errors) {
      if (e.field == field) messages << e.message;
    }
    return messages.join(QLatin1Char('\n'));
  }

  static QStringList fieldsOf(const QList<FieldError>& errors) {
    QStringList fields;
    for (const auto& e : errors) fields << e.field;
    return fields;
  }

  static void expectSameTrainerSettings(const RunForm& a, const RunForm& b) {
    QCOMPARE(a.name, b.name);
    QCOMPARE(a.tags, b.tags);
    QCOMPARE(a.hidden, b.hidden);
    QCOMPARE(a.optimizer, b.optimizer);
    QCOMPARE(a.lr, b.lr);
    QCOMPARE(a.beta1, b.beta1);
    QCOMPARE(a.beta2, b.beta2);
    QCOMPARE(a.weightDecay, b.weightDecay);
    QCOMPARE(a.lrSchedule, b.lrSchedule);
    QCOMPARE(a.lrStepEpochs, b.lrStepEpochs);
    QCOMPARE(a.lrGamma, b.lrGamma);
    QCOMPARE(a.warmupSteps, b.warmupSteps);
    QCOMPARE(a.epochs, b.epochs);
    QCOMPARE(a.globalBatch, b.globalBatch);
    QCOMPARE(a.microBatch, b.microBatch);
    QCOMPARE(a.backend, b.backend);
    QCOMPARE(a.bucketMb, b.bucketMb);
    QCOMPARE(a.checkpointEvery, b.checkpointEvery);
    QCOMPARE(a.logEvery, b.logEvery);
    QCOMPARE(a.seed, b.seed);
    QCOMPARE(a.ranksPerNode, b.ranksPerNode);
  }

 private slots:
  void defaultsAreValid() {
    QVERIFY(validate(
                [] {
                  RunForm f;
                  f.name = "x";
                  f.nodeIds = {QStringLiteral("n1")};
                  return f;
                }(),
                oneNode(8))
                .isEmpty());
  }

  // The form refuses what the agent would (run_spec_limits.h), before sending.
  void aRunTooLargeForTheAgentIsRefusedByTheForm() {
    RunForm f;
    f.nodeIds = {QStringLiteral("n1")};
    f.name = QString(300, QLatin1Char('n'));
    auto errors = validate(f, oneNode(8));
    QCOMPARE(errors.size(), 1);
    QCOMPARE(errors.first().field, QStringLiteral("name"));
    QVERIFY2(errors.first().message.contains(QLatin1String("the run's name is 300 bytes")),
             qPrintable(errors.first().message));
    f.name = QStringLiteral("ok");
    f.job = RunForm::Job::kCommand;
    f.command = QStringLiteral("python3 ") + QString(200 * 1024, QLatin1Char('a'));
    errors = validate(f, oneNode(8));
    QCOMPARE(errors.size(), 1);
    QCOMPARE(errors.first().field, QStringLiteral("command"));
  }

  // A Slurm login node places its jobs itself: the form sends the job's options (no host list),
  // the world size is the job's nodes x ranks per node, no slot of the login node is counted,
  // the node must be chosen alone, Slurm names and the GPU request are checked, and a clone
  // keeps the options.
  void aSlurmNodesRunIsASlurmJob() {
    NodeChoice cluster;
    cluster.nodeId = QStringLiteral("login");
    cluster.name = QStringLiteral("lab cluster");
    cluster.online = true;
    cluster.slurm = true;
    cluster.slurmPartitions = {QStringLiteral("gpu"), QStringLiteral("debug")};
    cluster.freeCpuSlots = 0;  // the login node's own slots do not matter
    cluster.cpuSlotsTotal = 2;
    QVERIFY(ringside::gui::canTakeRanks(RunForm{}, cluster));
    QCOMPARE(ringside::gui::defaultRanksPerNode(cluster), 1);
    RunForm f;
    f.nodeIds = {cluster.nodeId};
    f.ranksPerNode = 4;
    f.slurm.set_nodes(8);
    f.slurm.set_partition("gpu");
    f.slurm.set_gpus_per_node(4);
    f.slurm.set_gpu_request("--gres=gpu:a100:{n}");
    f.slurm.set_time_limit_min(120);
    f.globalBatch = 256;
    QCOMPARE(f.worldSize(), 32);
    const QList<NodeChoice> nodes = {cluster};
    QVERIFY2(validate(f, nodes).isEmpty(), qPrintable(messageOn(validate(f, nodes), "nodeIds")));
    const ringside::v1::RunSpec spec = ringside::gui::toRunSpec(f, nodes);
    QCOMPARE(spec.hosts_size(), 0);
    QCOMPARE(spec.slurm().nodes(), 8u);
    QCOMPARE(spec.slurm().tasks_per_node(), 4u);
    QCOMPARE(spec.slurm().partition(), std::string("gpu"));
    QCOMPARE(spec.slurm().gpu_request(), std::string("--gres=gpu:a100:{n}"));
    const RunForm back = ringside::gui::fromRunSpec(spec);
    QCOMPARE(back.slurm.nodes(), 8u);
    QCOMPARE(back.ranksPerNode, 4);
    QCOMPARE(back.slurm.time_limit_min(), 120u);

    f.slurm.set_partition("gpu; reboot");
    QCOMPARE(fieldsOf(validate(f, nodes)), QStringList{QStringLiteral("slurm")});
    f.slurm.set_partition("gpu");
    f.slurm.set_gpu_request("--gres=gpu:4");
    QVERIFY(messageOn(validate(f, nodes), "slurm").contains(QLatin1String("{n}")));
    f.slurm.set_gpu_request("");
    NodeChoice other = oneNode(8).first();
    f.nodeIds = {cluster.nodeId, other.nodeId};
    QVERIFY(messageOn(validate(f, {cluster, other}), "nodeIds")
                .contains(QLatin1String("places its jobs itself")));
  }

  void cnnFieldsAreCheckedAndRoundTripThroughTheRunSpec() {
    RunForm f = ringside::gui::watchedDefaultRun();
    f.nodeIds = {QStringLiteral("n1")};
    QVERIFY(validate(f, oneNode(8)).isEmpty());
    f.channels = {32, 0};
    QCOMPARE(validate(f, oneNode(8)).first().field, QStringLiteral("channels"));
    f.channels = {8, 8, 8, 8, 8};
    QCOMPARE(validate(f, oneNode(8)).first().field, QStringLiteral("channels"));
    f.channels = {24, 48};
    f.dropout = 1.0;
    QCOMPARE(validate(f, oneNode(8)).first().field, QStringLiteral("dropout"));
    f.dropout = 0.3;
    f.model = QStringLiteral("resnet");
    QCOMPARE(validate(f, oneNode(8)).first().field, QStringLiteral("model"));
    f.model = QStringLiteral("cnn");
    const ringside::v1::RunSpec spec = ringside::gui::toRunSpec(f, oneNode(8));
    QCOMPARE(spec.trainer().config().model(), std::string("cnn"));
    QCOMPARE(spec.trainer().config().channels_size(), 2);
    QVERIFY(ringside::validateTrainerConfig(spec.trainer().config()).isOk());
    const RunForm back = ringside::gui::fromRunSpec(spec);
    QCOMPARE(back.model, QStringLiteral("cnn"));
    QCOMPARE(back.channels, (QList<int>{24, 48}));
    QCOMPARE(back.dropout, 0.3);
  }

  // The convolution algorithm goes form -> run spec -> form and through a preset; an old spec
  // without it reads as the trainer's default, "auto".
  void convAlgorithmRoundTripsThroughTheRunSpecAndPresets() {
    RunForm f = ringside::gui::watchedDefaultRun();
    f.nodeIds = {QStringLiteral("n1")};
    f.convAlgorithm = QStringLiteral("direct");
    QVERIFY(validate(f, oneNode(8)).isEmpty());
    const ringside::v1::RunSpec spec = ringside::gui::toRunSpec(f, oneNode(8));
    QCOMPARE(spec.trainer().config().conv_algorithm(), std::string("direct"));
    QVERIFY(ringside::validateTrainerConfig(spec.trainer().config()).isOk());
    QCOMPARE(ringside::gui::fromRunSpec(spec).convAlgorithm, QStringLiteral("direct"));

    const QJsonObject preset = ringside::gui::toPreset(f);
    QCOMPARE(preset["trainer"].toObject()["conv_algorithm"].toString(), QStringLiteral("direct"));
    QString error;
    QCOMPARE(ringside::gui::fromPreset(preset, &error).convAlgorithm, QStringLiteral("direct"));
    QVERIFY2(error.isEmpty(), qPrintable(error));

    ringside::v1::RunSpec old;  // a spec from before the field
    old.mutable_trainer()->mutable_config()->set_model("cnn");
    QCOMPARE(ringside::gui::fromRunSpec(old).convAlgorithm, QStringLiteral("auto"));
  }

  void convAlgorithmDefaultsToAuto() {
    QCOMPARE(RunForm().convAlgorithm, QStringLiteral("auto"));
    QCOMPARE(ringside::gui::watchedDefaultRun().convAlgorithm, QStringLiteral("auto"));
    QCOMPARE(ringside::gui::trainerConfig(ringside::gui::watchedDefaultRun()).conv_algorithm(),
             std::string("auto"));
  }

  void anUnknownConvAlgorithmIsAnErrorOnTheField() {
    RunForm f = ringside::gui::watchedDefaultRun();
    f.nodeIds = {QStringLiteral("n1")};
    f.convAlgorithm = QStringLiteral("winograd");
    const auto errors = validate(f, oneNode(8));
    QCOMPARE(fieldsOf(errors), QStringList{"convAlgorithm"});
    QCOMPARE(messageOn(errors, "convAlgorithm"), QStringLiteral("Choose Auto or Direct."));
  }

  // Like the channels and the dropout, the convolution algorithm is the CNN's: the MLP's form
  // does not check it.
  void theMlpIgnoresTheConvAlgorithm() {
    RunForm f;
    f.name = QStringLiteral("mlp");
    f.nodeIds = {QStringLiteral("n1")};
    QCOMPARE(f.model, QStringLiteral("mlp"));
    f.convAlgorithm = QStringLiteral("winograd");
    QVERIFY2(validate(f, oneNode(8)).isEmpty(),
             qPrintable(fieldsOf(validate(f, oneNode(8))).join(QLatin1Char(','))));
    f.model = QStringLiteral("cnn");
    QCOMPARE(fieldsOf(validate(f, oneNode(8))), QStringList{"convAlgorithm"});
  }

  void runSpecRoundTrip() {
    const RunForm form = sample();
    QVERIFY(validate(form, oneNode(8)).isEmpty());
    const auto spec = ringside::gui::toRunSpec(form, oneNode(8));
    QVERIFY(spec.has_trainer());
    QCOMPARE(spec.ranks_per_node(), 4u);
    QCOMPARE(spec.hosts_size(), 0);  // one node: the owning agent runs every rank
    // The config is the trainer's own typed run spec.
    QVERIFY(spec.trainer().has_config());
    const ringside::v1::TrainerConfig& config = spec.trainer().config();
    QCOMPARE(config.global_batch(), 256);
    QCOMPARE(config.lr_schedule(), std::string("step"));
    QCOMPARE(config.seed(), 18446744073709551557ull);
    QCOMPARE(config.log_every(), 1);  // the metric interval: every step
    QVERIFY(!config.has_momentum());  // an sgd parameter, not sent for adamw
    QVERIFY(ringside::validateTrainerConfig(config).isOk());
    RunForm back = ringside::gui::fromRunSpec(spec);
    expectSameTrainerSettings(back, form);
    // A one-node spec names no host: the node list stays for the panel to keep its choice.
    QVERIFY(back.specHosts.isEmpty());
    QVERIFY(ringside::gui::resolveSpecHosts(&back, oneNode(8)).isEmpty());
    QVERIFY(back.nodeIds.isEmpty());
    QCOMPARE(back.worldSize(), 4);
  }

  // The form's defaults are the trainer's (one definition: defaultTrainerConfig()).
  void defaultsAreTheTrainersDefaults() {
    const ringside::v1::TrainerConfig& defaults = ringside::defaultTrainerConfig();
    const RunForm form;
    QCOMPARE(form.dataDir.toStdString(), defaults.data());
    QCOMPARE(form.epochs, defaults.epochs());
    QCOMPARE(form.globalBatch, qint64{defaults.global_batch()});
    QCOMPARE(form.lr, defaults.lr());
    QCOMPARE(form.hidden, (QList<int>{256, 128}));
    QCOMPARE(form.seed, defaults.seed());
    QCOMPARE(form.logEvery, defaults.log_every());  // the form keeps the trainer's default
    // What the form sends for them resolves to the trainer's defaults.
    const auto resolved = ringside::withTrainerDefaults(ringside::gui::trainerConfig(form));
    QCOMPARE(resolved.SerializeAsString(), defaults.SerializeAsString());
  }

  // A clone keeps the keys the form has no field for, and reads an old spec's config_json.
  void cloneKeepsTheWholeRunSpec() {
    ringside::v1::RunSpec spec;
    spec.set_name("small");
    spec.set_ranks_per_node(2);
    ringside::v1::TrainerConfig* config = spec.mutable_trainer()->mutable_config();
    config->set_train_samples(5000);
    config->set_max_steps(40);
    config->set_epochs(4);
    RunForm form = ringside::gui::fromRunSpec(spec);
    QCOMPARE(form.epochs, 4);
    const auto back = ringside::gui::toRunSpec(form).trainer().config();
    QCOMPARE(back.train_samples(), 5000);
    QCOMPARE(back.max_steps(), 40);
    QCOMPARE(back.epochs(), 4);

    ringside::v1::RunSpec old;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    old.mutable_trainer()->set_config_json(
        R"({"data":"/data/mnist","global_batch":96,"optimizer":"adamw","seed":"7"})");
#pragma GCC diagnostic pop
    form = ringside::gui::fromRunSpec(old);
    QCOMPARE(form.dataDir, QStringLiteral("/data/mnist"));
    QCOMPARE(form.globalBatch, 96);
    QCOMPARE(form.optimizer, QStringLiteral("adamw"));
    QCOMPARE(form.weightDecay, 0.01);  // absent: AdamW's default
    QCOMPARE(form.seed, 7u);
  }

  void threeNodeRunSpecRoundTrip() {
    RunForm form = sample();
    form.nodeIds = {QStringLiteral("n3"), QStringLiteral("n1"), QStringLiteral("n2")};
    form.ranksPerNode = 4;
    form.globalBatch = 240;
    QCOMPARE(form.worldSize(), 12);
    QVERIFY(validate(form, threeNodes()).isEmpty());
    const auto spec = ringside::gui::toRunSpec(form, threeNodes());
    // mpirun's --host list in rank order: the first node (n3, which owns the run) first.
    QCOMPARE(spec.hosts_size(), 3);
    QCOMPARE(spec.hosts(0).host(), std::string("gpu03"));
    QCOMPARE(spec.hosts(1).host(), std::string("gpu01"));
    QCOMPARE(spec.hosts(2).host(), std::string("gpu02"));
    for (const auto& host : spec.hosts()) QCOMPARE(host.ranks(), 4u);
    QCOMPARE(spec.ranks_per_node(), 4u);

    RunForm back = ringside::gui::fromRunSpec(spec);
    expectSameTrainerSettings(back, form);
    QCOMPARE(back.specHosts, (QStringList{"gpu03", "gpu01", "gpu02"}));
    // Host names map back to the nodes (case-insensitively, as host names compare).
    QList<NodeChoice> nodes = threeNodes();
    nodes[0].hostName = QStringLiteral("GPU01");
    QVERIFY(ringside::gui::resolveSpecHosts(&back, nodes).isEmpty());
    QCOMPARE(back.nodeIds, form.nodeIds);
    QVERIFY(back.specHosts.isEmpty());
    QCOMPARE(back.worldSize(), 12);
  }

  // Each node's interface goes to its HostSlots; the owner's mpirun options to the spec.
  void perNodeInterfaceAndOwnersMpirunOptionsReachTheSpec() {
    RunForm form = sample();
    form.nodeIds = {QStringLiteral("n2"), QStringLiteral("n1")};
    form.ranksPerNode = 2;
    QList<NodeChoice> nodes = threeNodes();
    nodes[0].networkInterface = QStringLiteral("eth1");
    nodes[0].mpirunOptions = QStringLiteral("--mca btl_tcp_links 4");
    nodes[1].networkInterface = QStringLiteral("10.0.0.0/24");
    nodes[1].mpirunOptions = QStringLiteral("--mca plm_rsh_args \"-p 2222\"");
    QVERIFY(validate(form, nodes).isEmpty());
    auto spec = ringside::gui::toRunSpec(form, nodes);
    QCOMPARE(spec.hosts_size(), 2);
    QCOMPARE(spec.hosts(0).host(), std::string("gpu02"));
    QCOMPARE(spec.hosts(0).network_interface(), std::string("10.0.0.0/24"));
    QCOMPARE(spec.hosts(1).host(), std::string("gpu01"));
    QCOMPARE(spec.hosts(1).network_interface(), std::string("eth1"));
    // GPUs are the pre-flight's business (Controller::launch), not the form's.
    QCOMPARE(spec.hosts(0).gpus_size(), 0);
    QCOMPARE(spec.hosts(1).gpus_size(), 0);
    // The owner (n2) starts mpirun: its options, in words as QProcess splits them.
    QCOMPARE(spec.mpirun_args_size(), 3);
    QCOMPARE(spec.mpirun_args(0), std::string("--mca"));
    QCOMPARE(spec.mpirun_args(1), std::string("plm_rsh_args"));
    QCOMPARE(spec.mpirun_args(2), std::string("-p 2222"));

    // One node owns a single-node run too: its options apply; there is no host list.
    form.nodeIds = {QStringLiteral("n1")};
    spec = ringside::gui::toRunSpec(form, nodes);
    QCOMPARE(spec.hosts_size(), 0);
    QCOMPARE(spec.mpirun_args_size(), 3);
    QCOMPARE(spec.mpirun_args(2), std::string("4"));

    // A node without settings: no options, no interface (the libraries choose).
    form.nodeIds = {QStringLiteral("n3"), QStringLiteral("n1")};
    spec = ringside::gui::toRunSpec(form, nodes);
    QCOMPARE(spec.mpirun_args_size(), 0);
    QVERIFY(spec.hosts(0).network_interface().empty());
    QCOMPARE(spec.hosts(1).network_interface(), std::string("eth1"));
  }

  void unknownHostsOfASpecAreReported() {
    RunForm form = sample();
    form.nodeIds = {QStringLiteral("n1"), QStringLiteral("n2")};
    RunForm back = ringside::gui::fromRunSpec(ringside::gui::toRunSpec(form, threeNodes()));
    QList<NodeChoice> nodes = threeNodes();
    nodes.removeAt(0);  // gpu01 is gone
    QCOMPARE(ringside::gui::resolveSpecHosts(&back, nodes), QStringList{"gpu01"});
    QCOMPARE(back.nodeIds, QStringList{"n2"});
  }

  void priorityTravelsInTheRunSpec() {
    ringside::gui::RunForm form;
    QCOMPARE(form.priority, ringside::v1::NORMAL_PRIORITY);
    QCOMPARE(ringside::gui::toRunSpec(form).priority(), ringside::v1::NORMAL_PRIORITY);
    form.priority = ringside::v1::HIGH_PRIORITY;
    const ringside::v1::RunSpec spec = ringside::gui::toRunSpec(form);
    QCOMPARE(spec.priority(), ringside::v1::HIGH_PRIORITY);
    QCOMPARE(ringside::gui::fromRunSpec(spec).priority, ringside::v1::HIGH_PRIORITY);
    ringside::v1::RunSpec unknown;
    unknown.set_priority(static_cast<ringside::v1::RunPriority>(7));  // a newer client's value
    QCOMPARE(ringside::gui::fromRunSpec(unknown).priority, ringside::v1::NORMAL_PRIORITY);
  }

  void hangTimeoutTravelsInTheRunSpec() {
    RunForm form;
    QCOMPARE(form.hangTimeoutSeconds, 600);
    form.hangTimeoutSeconds = 120;
    const ringside::v1::RunSpec spec = toRunSpec(form, oneNode(8));
    QCOMPARE(spec.hang_timeout_s(), 120u);
    QCOMPARE(ringside::gui::fromRunSpec(spec).hangTimeoutSeconds, 120);
    form.hangTimeoutSeconds = 0;  // never
    QVERIFY(toRunSpec(form, oneNode(8)).has_hang_timeout_s());
    QCOMPARE(toRunSpec(form, oneNode(8)).hang_timeout_s(), 0u);
    ringside::v1::RunSpec old;  // a spec from before the field: the agent's default
    QCOMPARE(ringside::gui::fromRunSpec(old).hangTimeoutSeconds, 600);
  }

  void commandRoundTrip() {
    RunForm form;
    form.name = QStringLiteral("mine");
    form.job = RunForm::Job::kCommand;
    form.command = QStringLiteral("python3 train.py --out \"my dir\" -v");
    const auto spec = ringside::gui::toRunSpec(form);
    QVERIFY(spec.has_command());
    QCOMPARE(spec.command().argv_size(), 5);
    QCOMPARE(QString::fromStdString(spec.command().argv(3)), QStringLiteral("my dir"));
    const RunForm back = ringside::gui::fromRunSpec(spec);
    QCOMPARE(back.job, RunForm::Job::kCommand);
    QCOMPARE(ringside::gui::splitCommandLine(back.command),
             ringside::gui::splitCommandLine(form.command));
  }

  // Regression: the hand-written join did not quote quotes, so a clone of a run whose argv held
  // a quote or a tab came back as different words.
  void commandLineJoinRoundTripsEveryWord() {
    const QStringList words{QStringLiteral("python3"), QStringLiteral("-c"),
                            QStringLiteral("print(\"a b\")"), QStringLiteral("tab\there"),
                            QStringLiteral("plain")};
    QCOMPARE(ringside::gui::splitCommandLine(ringside::gui::joinCommandLine(words)), words);
  }

  void presetRoundTrip() {
    const RunForm form = sample();
    const QByteArray file = QJsonDocument(ringside::gui::toPreset(form)).toJson();
    QString error;
    const RunForm back = ringside::gui::fromPreset(QJsonDocument::fromJson(file).object(), &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    expectSameTrainerSettings(back, form);
    QCOMPARE(back.nodeIds, form.nodeIds);
    // "trainer" holds the run spec as protobuf's JSON mapping writes it: --config's keys.
    const QJsonObject trainer = ringside::gui::toPreset(form)["trainer"].toObject();
    QCOMPARE(trainer["global_batch"].toInt(), 256);
    QCOMPARE(trainer["seed"].toString(), QStringLiteral("18446744073709551557"));

    RunForm multi = sample();
    multi.nodeIds = {QStringLiteral("n2"), QStringLiteral("n1")};
    const QJsonObject preset = ringside::gui::toPreset(multi);
    QCOMPARE(preset["nodes"].toArray().size(), 2);
    QVERIFY(!preset.contains(QStringLiteral("node_id")));
    QCOMPARE(ringside::gui::fromPreset(preset, &error).nodeIds, multi.nodeIds);
    QVERIFY(error.isEmpty());
  }

  void presetsOfTheSingleNodeFormatStillLoad() {
    // As written before multi-node placement: one node id (or none at all) and the ranks.
    const QByteArray oldFile = R"({
      "format": "ringside-run-preset", "version": 1, "name": "old one", "tags": ["a"],
      "job": "trainer", "trainer": {"global_batch": 96, "epochs": 2}, "command": "",
      "node_id": "n-4f2a", "ranks_per_node": 3
    })";
    QString error;
    RunForm form = ringside::gui::fromPreset(QJsonDocument::fromJson(oldFile).object(), &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    QCOMPARE(form.name, QStringLiteral("old one"));
    QCOMPARE(form.nodeIds, QStringList{"n-4f2a"});
    QCOMPARE(form.ranksPerNode, 3);
    QCOMPARE(form.globalBatch, 96);
    QCOMPARE(form.worldSize(), 3);

    QJsonObject noNode = QJsonDocument::fromJson(oldFile).object();
    noNode.remove(QStringLiteral("node_id"));
    form = ringside::gui::fromPreset(noNode, &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    QVERIFY(form.nodeIds.isEmpty());
    QCOMPARE(form.ranksPerNode, 3);
  }

  void badPresetsAreNamed() {
    QString error;
    ringside::gui::fromPreset(QJsonObject{{"hello", 1}}, &error);
    QVERIFY(error.contains(QStringLiteral("not a Ringside run preset")));
    ringside::gui::fromPreset(QJsonObject{{"format", "ringside-run-preset"}, {"version", 9}},
                              &error);
    QVERIFY(error.contains(QStringLiteral("version 9")));
    ringside::gui::fromPreset(
        QJsonObject{{"format", "ringside-run-preset"}, {"version", 1}, {"trainer", 5}}, &error);
    QVERIFY(error.contains(QStringLiteral("trainer")));
    ringside::gui::fromPreset(
        QJsonObject{{"format", "ringside-run-preset"}, {"version", 1}, {"nodes", "n1"}}, &error);
    QVERIFY(error.contains(QStringLiteral("nodes")));
    // The run spec is read with protobuf's JSON mapping: an unknown key is named.
    ringside::gui::fromPreset(QJsonObject{{"format", "ringside-run-preset"},
                                          {"version", 1},
                                          {"trainer", QJsonObject{{"learning_rate", 0.1}}}},
                              &error);
    QVERIFY2(error.contains(QStringLiteral("learning_rate")), qPrintable(error));
    ringside::gui::fromPreset(QJsonObject{{"format", "ringside-run-preset"},
                                          {"version", 1},
                                          {"trainer", QJsonObject{{"epochs", "three"}}}},
                              &error);
    QVERIFY2(error.contains(QStringLiteral("epochs")), qPrintable(error));
  }

  // The placement errors name the node and what to do.
  void placementErrorsNameTheNode() {
    RunForm form = sample();
    form.nodeIds = {QStringLiteral("n1"), QStringLiteral("n2"), QStringLiteral("n3")};
    form.globalBatch = 240;  // 3 nodes x 4 ranks = 12 divide it
    QList<NodeChoice> nodes = threeNodes();
    nodes[1].freeCpuSlots = 2;
    nodes[2].freeCpuSlots = 3;
    auto errors = validate(form, nodes);
    QCOMPARE(fieldsOf(errors), QStringList{"ranksPerNode"});
    QVERIFY2(messageOn(errors, "ranksPerNode").contains(QStringLiteral("node 2")) &&
                 messageOn(errors, "ranksPerNode").contains(QStringLiteral("Only 2 CPU slots")),
             qPrintable(messageOn(errors, "ranksPerNode")));

    nodes = threeNodes();
    nodes[1].online = false;
    nodes[2].draining = true;
    errors = validate(form, nodes);
    QVERIFY(messageOn(errors, "nodeIds").contains(QStringLiteral("node 2 is offline")));
    QVERIFY(messageOn(errors, "nodeIds").contains(QStringLiteral("node 3 is draining")));

    nodes = threeNodes();
    nodes[2].hostName = QStringLiteral("gpu01");
    errors = validate(form, nodes);
    QVERIFY2(messageOn(errors, "nodeIds").contains(QStringLiteral("same host (gpu01)")),
             qPrintable(messageOn(errors, "nodeIds")));

    // 3 nodes x 4 ranks = 12: a global batch of 256 does not divide.
    form.globalBatch = 256;
    errors = validate(form, threeNodes());
    QVERIFY2(messageOn(errors, "globalBatch").contains(QStringLiteral("world size 12")),
             qPrintable(messageOn(errors, "globalBatch")));
    form.globalBatch = 240;
    QVERIFY(validate(form, threeNodes()).isEmpty());
  }

  void everyValidationError_data() {
    QTest::addColumn<QString>("field");
    QTest::addColumn<int>("freeSlots");
    QTest::newRow("name") << "name" << 8;
    QTest::newRow("noNode") << "nodeIds" << 8;
    QTest::newRow("unknownNode") << "nodeIds" << 8;
    QTest::newRow("offline") << "nodeIds" << 8;
    QTest::newRow("draining") << "nodeIds" << 8;
    QTest::newRow("sameHost") << "nodeIds" << 8;
    QTest::newRow("ranks0") << "ranksPerNode" << 8;
    QTest::newRow("ranksFree") << "ranksPerNode" << 1;
    QTest::newRow("ranksFreeOnSecondNode") << "ranksPerNode" << 8;
    QTest::newRow("dataDir") << "dataDir" << 8;
    QTest::newRow("hiddenEmpty") << "hidden" << 8;
    QTest::newRow("hiddenZero") << "hidden" << 8;
    QTest::newRow("convAlgorithm") << "convAlgorithm" << 8;
    QTest::newRow("epochs") << "epochs" << 8;
    QTest::newRow("globalBatch") << "globalBatch" << 8;
    QTest::newRow("divisible") << "globalBatch" << 8;
    QTest::newRow("divisibleByWorldSize") << "globalBatch" << 8;
    QTest::newRow("microBatchNegative") << "microBatch" << 8;
    QTest::newRow("microBatchDivides") << "microBatch" << 8;
    QTest::newRow("microBatchNccl") << "microBatch" << 8;
    QTest::newRow("lr") << "lr" << 8;
    QTest::newRow("momentum") << "momentum" << 8;
    QTest::newRow("weightDecay") << "weightDecay" << 8;
    QTest::newRow("beta1") << "beta1" << 8;
    QTest::newRow("optimizer") << "optimizer" << 8;
    QTest::newRow("lrSchedule") << "lrSchedule" << 8;
    QTest::newRow("warmupSteps") << "warmupSteps" << 8;
    QTest::newRow("lrStepEpochs") << "lrStepEpochs" << 8;
    QTest::newRow("lrMin") << "lrMin" << 8;
    QTest::newRow("backend") << "backend" << 8;
    QTest::newRow("bucketMb") << "bucketMb" << 8;
    QTest::newRow("checkpointEvery") << "checkpointEvery" << 8;
    QTest::newRow("logEvery") << "logEvery" << 8;
    QTest::newRow("hangTimeoutNegative") << "hangTimeout" << 8;
    QTest::newRow("hangTimeoutPastCollective") << "hangTimeout" << 8;
    QTest::newRow("command") << "command" << 8;
  }

  void everyValidationError() {
    QFETCH(QString, field);
    QFETCH(int, freeSlots);
    RunForm form;
    form.name = QStringLiteral("ok");
    form.nodeIds = {QStringLiteral("n1")};
    QList<NodeChoice> nodes = oneNode(freeSlots);
    nodes.append(nodeChoice("n2", "gpu02", 8, "cpu", true, false, "gpu02"));
    if (freeSlots >= form.ranksPerNode) QVERIFY(validate(form, nodes).isEmpty());  // the baseline
    const QByteArray row = QTest::currentDataTag();
    if (row == "name") form.name = QStringLiteral("  ");
    if (row == "noNode") form.nodeIds.clear();
    if (row == "unknownNode") form.nodeIds = {QStringLiteral("removed")};
    if (row == "offline") nodes[0].online = false;
    if (row == "draining") nodes[0].draining = true;
    if (row == "sameHost") {
      nodes[1].hostName = QStringLiteral("GPU01");
      form.nodeIds << QStringLiteral("n2");
    }
    if (row == "ranksFreeOnSecondNode") {
      nodes[1].freeCpuSlots = 1;
      form.nodeIds << QStringLiteral("n2");
    }
    if (row == "divisibleByWorldSize") {
      form.nodeIds << QStringLiteral("n2");  // 2 x 2 ranks
      form.globalBatch = 130;                // divisible by 2, not by 4
    }
    if (row == "ranks0") form.ranksPerNode = 0;
    if (row == "ranksFree") form.ranksPerNode = 2;
    if (row == "dataDir") form.dataDir.clear();
    if (row == "hiddenEmpty") form.hidden.clear();
    if (row == "hiddenZero") form.hidden = {64, 0};
    if (row == "convAlgorithm") {
      form.model = QStringLiteral("cnn");
      form.convAlgorithm = QStringLiteral("direct ");
    }
    if (row == "epochs") form.epochs = 0;
    if (row == "globalBatch") form.globalBatch = 0;
    if (row == "divisible") form.globalBatch = 127;
    if (row == "microBatchNegative") form.microBatch = -1;
    if (row == "microBatchDivides") form.microBatch = 48;  // local batch 128 / 2 ranks = 64
    if (row == "microBatchNccl") {
      form.microBatch = 32;
      form.backend = QStringLiteral("nccl");
    }
    if (row == "lr") form.lr = 0;
    if (row == "momentum") form.momentum = 1.0;
    if (row == "weightDecay") form.weightDecay = -1;
    if (row == "beta1") {
      form.optimizer = QStringLiteral("adamw");
      form.beta1 = 1.0;
    }
    if (row == "optimizer") form.optimizer = QStringLiteral("rmsprop");
    if (row == "lrSchedule") form.lrSchedule = QStringLiteral("linear");
    if (row == "warmupSteps") form.warmupSteps = -5;
    if (row == "lrStepEpochs") {
      form.lrSchedule = QStringLiteral("step");
      form.lrStepEpochs = 0;
    }
    if (row == "lrMin") form.lrMin = 1.0;
    if (row == "backend") form.backend = QStringLiteral("cuda");
    if (row == "bucketMb") form.bucketMb = 0;
    if (row == "checkpointEvery") form.checkpointEvery = -1;
    if (row == "logEvery") form.logEvery = 0;
    if (row == "hangTimeoutNegative") form.hangTimeoutSeconds = -1;
    // The trainer's collective timeout is 900 s: a 900 s hang timeout would never fire first.
    if (row == "hangTimeoutPastCollective") form.hangTimeoutSeconds = 900;
    if (row == "command") {
      form.job = RunForm::Job::kCommand;
      form.command = QStringLiteral("   ");
    }
    const auto errors = validate(form, nodes);
    QVERIFY2(fieldsOf(errors).contains(field),
             qPrintable(QStringLiteral("expected an error on %1, got: %2")
                            .arg(field, fieldsOf(errors).join(QLatin1Char(',')))));
    for (const auto& e : errors) QVERIFY(!e.message.isEmpty());
  }
};

QTEST_GUILESS_MAIN(RunFormTest)
#include "run_form_test.moc"
