// End to end through the GUI's controller: a real local agent on loopback with CURVE started by
// the controller itself, a 2-rank trainer run on Fashion-MNIST launched from a RunForm, every
// metric in the GUI's SQLite store (as many as the ranks sent) with non-empty dashboard series,
// and the GUI closed mid-run and reopened: the history is still complete.
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "ringside/gui/controller.h"

using namespace ringside::gui;
namespace v1 = ringside::v1;

class ControllerProcessTest : public QObject {
  Q_OBJECT

 private:
  ControllerOptions options(const QString& dataDir) {
    ControllerOptions o;
    o.dataDir = dataDir;
    o.agentBinary = QStringLiteral(RINGSIDE_AGENT_BIN);
    o.trainerBinary = QStringLiteral(RINGSIDE_TRAINER_BIN);
    return o;
  }

  static bool localOnline(const Controller& controller) {
    for (const NodeView& node : controller.nodes()) {
      if (node.local && node.state == NodeState::Online) return true;
    }
    return false;
  }

  static QString localNodeId(const Controller& controller) {
    for (const NodeView& node : controller.nodes()) {
      if (node.local) return node.record.nodeId;
    }
    return {};
  }

  // Metric points the ranks sent, counted from the trainer's stdout (as the agent tests do).
  static qint64 pointsInStdout(const QString& dataDir, const QString& runId) {
    QFile file(dataDir + QStringLiteral("/local-agent/runs/") + runId +
               QStringLiteral("/stdout.log"));
    if (!file.open(QIODevice::ReadOnly)) return -1;
    qint64 points = 0;
    while (!file.atEnd()) {
      const QJsonObject record = QJsonDocument::fromJson(file.readLine()).object();
      if (record.value(QStringLiteral("type")).toString() == QStringLiteral("metrics")) {
        points += record.value(QStringLiteral("metrics")).toObject().size();
      }
    }
    return points;
  }

  static RunForm smallRun(const QString& nodeId, int epochs) {
    RunForm form;
    form.name = QStringLiteral("controller e2e");
    form.backend = QStringLiteral("mpi");
    form.epochs = epochs;
    form.nodeId = nodeId;
    form.ranksPerNode = 2;
    return form;
  }

  static qint64 storedSamples(Controller& controller, const QString& runId) {
    auto count = controller.store().sampleCount(runId).result();
    return count.isOk() ? *count : -1;
  }

  static v1::RunState storedState(Controller& controller, const QString& runId) {
    auto run = controller.store().run(runId).result();
    return run.isOk() ? run->state : v1::RUN_STATE_UNSPECIFIED;
  }

 private slots:
  void initTestCase() {
    qputenv("OMPI_ALLOW_RUN_AS_ROOT", "1");
    qputenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    qputenv("OMPI_MCA_rmaps_base_oversubscribe", "1");
  }

  void launchedRunLandsCompleteInHistory() {
    QTemporaryDir dir;
    Controller controller(options(dir.path()));
    QVERIFY(controller.start().isOk());
    QTRY_VERIFY_WITH_TIMEOUT(localOnline(controller), 30000);
    QSignalSpy launched(&controller, &Controller::runLaunched);
    QSignalSpy failed(&controller, &Controller::launchFailed);
    controller.launch(smallRun(localNodeId(controller), 1));
    QTRY_VERIFY_WITH_TIMEOUT(launched.count() == 1 || failed.count() == 1, 30000);
    QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.at(0).at(0).toString()));
    const QString runId = launched.at(0).at(0).toString();
    connect(&controller, &Controller::errorMessage, this,
            [](const QString& message) { qWarning("controller: %s", qPrintable(message)); });
    connect(&controller, &Controller::runStateChanged, this,
            [](const QString& id, v1::RunState state) {
              qInfo("run %s %s", qPrintable(id), v1::RunState_Name(state).c_str());
            });
    QTRY_COMPARE_WITH_TIMEOUT(storedState(controller, runId), v1::COMPLETED, 180000);
    const qint64 sent = pointsInStdout(dir.path(), runId);
    QVERIFY(sent > 0);
    QTRY_COMPARE_WITH_TIMEOUT(storedSamples(controller, runId), sent, 30000);
    auto loss = controller.store().series(runId, QStringLiteral("train/loss"), -1).result();
    QVERIFY(loss.isOk());
    QVERIFY(!loss->empty());
    auto accuracy = controller.store().series(runId, QStringLiteral("test/accuracy"), -1).result();
    QVERIFY(accuracy.isOk() && !accuracy->empty());
    auto record = controller.store().run(runId).result();
    QVERIFY(record.isOk());
    QVERIFY(record->bestAccuracy.has_value());
    QVERIFY(*record->bestAccuracy > 0.7);
  }

  void guiClosedMidRunAndReopenedHasTheCompleteHistory() {
    QTemporaryDir dir;
    QString runId;
    {
      Controller controller(options(dir.path()));
      QVERIFY(controller.start().isOk());
      QTRY_VERIFY_WITH_TIMEOUT(localOnline(controller), 30000);
      QSignalSpy launched(&controller, &Controller::runLaunched);
      controller.launch(smallRun(localNodeId(controller), 12));
      QTRY_COMPARE_WITH_TIMEOUT(launched.count(), 1, 30000);
      runId = launched.at(0).at(0).toString();
      QTRY_VERIFY_WITH_TIMEOUT(storedSamples(controller, runId) > 0, 60000);
      QCOMPARE(storedState(controller, runId) == v1::COMPLETED, false);
    }  // the GUI closes: its connection and its local agent go; the run goes on
    Controller reopened(options(dir.path()));
    QVERIFY(reopened.start().isOk());
    QTRY_COMPARE_WITH_TIMEOUT(storedState(reopened, runId), v1::COMPLETED, 180000);
    const qint64 sent = pointsInStdout(dir.path(), runId);
    QVERIFY(sent > 0);
    QTRY_COMPARE_WITH_TIMEOUT(storedSamples(reopened, runId), sent, 30000);
  }
};

QTEST_GUILESS_MAIN(ControllerProcessTest)
#include "controller_process_test.moc"
