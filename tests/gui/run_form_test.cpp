// Form -> run spec -> form round trips, presets, and every validation error.
#include <QJsonDocument>
#include <QtTest>

#include "ringside/gui/run_form.h"

using ringside::gui::FieldError;
using ringside::gui::RunForm;

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
    form.backend = QStringLiteral("mpi");
    form.bucketMb = 4;
    form.checkpointEvery = 500;
    form.seed = 18446744073709551557ull;  // above 2^53: must survive JSON
    form.ranksPerNode = 4;
    return form;
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
    QCOMPARE(a.backend, b.backend);
    QCOMPARE(a.bucketMb, b.bucketMb);
    QCOMPARE(a.checkpointEvery, b.checkpointEvery);
    QCOMPARE(a.seed, b.seed);
    QCOMPARE(a.ranksPerNode, b.ranksPerNode);
  }

 private slots:
  void defaultsAreValid() {
    QVERIFY(validate(
                [] {
                  RunForm f;
                  f.name = "x";
                  return f;
                }(),
                8)
                .isEmpty());
  }

  void runSpecRoundTrip() {
    const RunForm form = sample();
    QVERIFY(validate(form, 8).isEmpty());
    const auto spec = ringside::gui::toRunSpec(form);
    QVERIFY(spec.has_trainer());
    QCOMPARE(spec.ranks_per_node(), 4u);
    // The config is the trainer's own run-spec format.
    const auto config =
        QJsonDocument::fromJson(QByteArray::fromStdString(spec.trainer().config_json())).object();
    QCOMPARE(config["global_batch"].toInt(), 256);
    QCOMPARE(config["lr_schedule"].toString(), QStringLiteral("step"));
    expectSameTrainerSettings(ringside::gui::fromRunSpec(spec), form);
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

  void presetRoundTrip() {
    const RunForm form = sample();
    const QByteArray file = QJsonDocument(ringside::gui::toPreset(form)).toJson();
    QString error;
    const RunForm back = ringside::gui::fromPreset(QJsonDocument::fromJson(file).object(), &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    expectSameTrainerSettings(back, form);
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
  }

  void everyValidationError_data() {
    QTest::addColumn<QString>("field");
    QTest::addColumn<int>("freeSlots");
    QTest::newRow("name") << "name" << 8;
    QTest::newRow("ranks0") << "ranksPerNode" << 8;
    QTest::newRow("ranksFree") << "ranksPerNode" << 1;
    QTest::newRow("dataDir") << "dataDir" << 8;
    QTest::newRow("hiddenEmpty") << "hidden" << 8;
    QTest::newRow("hiddenZero") << "hidden" << 8;
    QTest::newRow("epochs") << "epochs" << 8;
    QTest::newRow("globalBatch") << "globalBatch" << 8;
    QTest::newRow("divisible") << "globalBatch" << 8;
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
    QTest::newRow("command") << "command" << 8;
  }

  void everyValidationError() {
    QFETCH(QString, field);
    QFETCH(int, freeSlots);
    RunForm form;
    form.name = QStringLiteral("ok");
    const QByteArray row = QTest::currentDataTag();
    if (row == "name") form.name = QStringLiteral("  ");
    if (row == "ranks0") form.ranksPerNode = 0;
    if (row == "ranksFree") form.ranksPerNode = 2;
    if (row == "dataDir") form.dataDir.clear();
    if (row == "hiddenEmpty") form.hidden.clear();
    if (row == "hiddenZero") form.hidden = {64, 0};
    if (row == "epochs") form.epochs = 0;
    if (row == "globalBatch") form.globalBatch = 0;
    if (row == "divisible") form.globalBatch = 127;
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
    if (row == "command") {
      form.job = RunForm::Job::kCommand;
      form.command = QStringLiteral("   ");
    }
    const auto errors = validate(form, freeSlots);
    QVERIFY2(fieldsOf(errors).contains(field),
             qPrintable(QStringLiteral("expected an error on %1, got: %2")
                            .arg(field, fieldsOf(errors).join(QLatin1Char(',')))));
    for (const auto& e : errors) QVERIFY(!e.message.isEmpty());
  }
};

QTEST_GUILESS_MAIN(RunFormTest)
#include "run_form_test.moc"
