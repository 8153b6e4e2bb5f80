// End to end through the GUI's controller: a real local agent on loopback with CURVE started by
// the controller itself, a 2-rank trainer run on Fashion-MNIST launched from a RunForm, every
// metric in the GUI's SQLite store (as many as the ranks sent, and as many as the agent's journal
// holds) with non-empty dashboard series, and the GUI closed mid-run and reopened: the history is
// still complete. Also: start() does not wait on the store (started() comes later with the known
// nodes and runs), a store that cannot be opened ends in startFailed(), launch routing refuses
// what it cannot send, a multi-node launch whose second agent finds a problem in its pre-flight
// fails naming that node with nothing launched, --local-cluster's nodes connect with the
// cluster's client key, and runs queued on busy slots wait across the GUI's close.
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QUuid>
#include <QtTest>

#include "build_paths.h"
#include "ringside/common/curve.h"
#include "ringside/common/metric_names.h"
#include "ringside/common/rank_tag.h"
#include "ringside/gui/controller.h"
#include "ringside/gui/local_cluster.h"

using namespace ringside::gui;

// A line of a run's stdout.log without the tag mpirun --tag-output gives it (common/rank_tag.h).
[[maybe_unused]] static QByteArray withoutRankTag(const QByteArray& line) {
  const std::string text =
      ringside::textWithoutRankTags(std::string_view(line.constData(), line.size()));
  return QByteArray(text.data(), static_cast<qsizetype>(text.size()));
}

namespace v1 = ringside::v1;

class ControllerProcessTest : public QObject {
  Q_OBJECT

 private:
  ControllerOptions options(const QString& dataDir) {
    ControllerOptions o;
    o.dataDir = dataDir;
    o.agentBinary = QString::fromUtf8(ringside::test::agentBin());
    o.trainerBinary = QString::fromUtf8(ringside::test::trainerBin());
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

  // Metric points the ranks sent, counted from the trainer's stdout (as the agent tests do): the
  // values of the metrics records, and the start record's total_steps and steps_per_epoch, which
  // rank 0 sends as the run/ samples.
  static qint64 pointsInStdout(const QString& dataDir, const QString& runId) {
    QFile file(dataDir + QStringLiteral("/local-agent/runs/") + runId +
               QStringLiteral("/stdout.log"));
    if (!file.open(QIODevice::ReadOnly)) return -1;
    qint64 points = 0;
    while (!file.atEnd()) {
      const QJsonObject record = QJsonDocument::fromJson(withoutRankTag(file.readLine())).object();
      if (record.value(QStringLiteral("type")).toString() == QStringLiteral("metrics")) {
        points += record.value(QStringLiteral("metrics")).toObject().size();
      }
      if (record.value(QStringLiteral("type")).toString() == QStringLiteral("start")) points += 2;
    }
    return points;
  }

  // Metric samples the local agent journaled for the run: COUNT(*) of metric_samples joined to
  // runs by run_key (docs/journal.md), on a read-only connection of its own while the agent keeps
  // writing; -1 when the journal cannot be read.
  static qint64 journaledSamples(const QString& dataDir, const QString& runId) {
    const QString connection =
        QStringLiteral("agent-journal-") + QUuid::createUuid().toString(QUuid::Id128);
    qint64 count = -1;
    {
      QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), connection);
      db.setDatabaseName(dataDir + QStringLiteral("/local-agent/journal.sqlite"));
      db.setConnectOptions(QStringLiteral("QSQLITE_OPEN_READONLY;QSQLITE_BUSY_TIMEOUT=5000"));
      if (db.open()) {
        QSqlQuery query(db);
        query.prepare(
            QStringLiteral("SELECT COUNT(*) FROM metric_samples m JOIN runs r "
                           "ON r.run_key = m.run_key JOIN metric_keys k ON k.key_id = m.key_id "
                           "WHERE r.run_id = ? AND k.name NOT LIKE 'straggler/%'"));
        query.addBindValue(runId);
        if (query.exec() && query.next()) count = query.value(0).toLongLong();
      }
    }  // the handle and the query are gone before the connection is removed
    QSqlDatabase::removeDatabase(connection);
    return count;
  }

  static RunForm smallRun(const QString& nodeId, int epochs) {
    RunForm form;
    form.name = QStringLiteral("controller e2e");
    form.backend = QStringLiteral("mpi");
    form.epochs = epochs;
    form.nodeIds = {nodeId};
    form.ranksPerNode = 2;
    return form;
  }

  // Samples the ranks sent, stored (the agent's own straggler verdicts are not counted).
  static qint64 storedSamples(Controller& controller, const QString& runId) {
    auto count = controller.store().sampleCount(runId).result();
    auto verdicts = controller.store().series(runId, QStringLiteral("straggler/rank"), -1).result();
    if (!count.isOk() || !verdicts.isOk()) return -1;
    // Each verdict is seven samples (metric_names.h kStraggler*).
    return *count - 7 * static_cast<qint64>(verdicts->size());
  }

  static v1::RunState storedState(Controller& controller, const QString& runId) {
    auto run = controller.store().run(runId).result();
    return run.isOk() ? run->state : v1::RUN_STATE_UNSPECIFIED;
  }

  // A real agent on loopback with its own state dir that allows `clientKey`; nullptr (and a
  // test failure) when it does not come up within 30 s.
  static std::unique_ptr<LocalAgent> startAgent(const QString& stateDir, const QString& clientKey,
                                                const QString& trainer) {
    LocalAgentOptions options;
    options.agentBinary = QString::fromUtf8(ringside::test::agentBin());
    options.trainerBinary = trainer;
    options.stateDir = stateDir;
    options.guiPublicKey = clientKey;
    auto agent = std::make_unique<LocalAgent>(options);
    QSignalSpy failed(agent.get(), &LocalAgent::failed);
    agent->start();
    if (!QTest::qWaitFor([&] { return agent->isReady() || !failed.isEmpty(); }, 30000) ||
        !agent->isReady()) {
      qWarning("agent in %s did not start: %s", qPrintable(stateDir),
               failed.isEmpty() ? "timeout" : qPrintable(failed.first().first().toString()));
      return nullptr;
    }
    return agent;
  }

  static int portOf(const QString& endpoint) {
    return endpoint.mid(endpoint.lastIndexOf(QLatin1Char(':')) + 1).toInt();
  }

  static QString nodeNamed(const Controller& controller, const QString& name) {
    for (const NodeView& node : controller.nodes()) {
      if (node.record.name == name) return node.record.nodeId;
    }
    return {};
  }

  static bool onlineWithInfo(const Controller& controller, const QString& nodeId) {
    const auto node = controller.node(nodeId);
    return node && node->state == NodeState::Online && node->info.has_value();
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
    // The local node as the run setup form sees it: its agent's host name for mpirun.
    QTRY_VERIFY_WITH_TIMEOUT(controller.node(localNodeId(controller))->info.has_value(), 10000);
    const QList<NodeChoice> choices = controller.nodeChoices();
    QCOMPARE(choices.size(), 1);
    QCOMPARE(choices[0].hostName,
             QString::fromStdString(controller.node(localNodeId(controller))->info->hostname()));
    QVERIFY(!choices[0].hostName.isEmpty());
    QVERIFY(choices[0].online);
    QVERIFY(choices[0].freeCpuSlots >= 0);
    controller.launch(smallRun(localNodeId(controller), 1));
    QTRY_VERIFY_WITH_TIMEOUT(launched.count() == 1 || failed.count() == 1, 30000);
    QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.at(0).at(0).toString()));
    const QString runId = launched.at(0).at(0).toString();
    QCOMPARE(controller.nodeOfRun(runId), localNodeId(controller));
    connect(&controller, &Controller::errorMessage, this,
            [](const QString& message) { qWarning("controller: %s", qPrintable(message)); });
    connect(&controller, &Controller::runStateChanged, this,
            [](const QString& id, v1::RunState state) {
              qInfo("run %s %s", qPrintable(id), v1::RunState_Name(state).c_str());
            });
    QTRY_COMPARE_WITH_TIMEOUT(storedState(controller, runId), v1::COMPLETED, 180000);
    const qint64 sent = pointsInStdout(dir.path(), runId);
    QVERIFY(sent > 0);
    QTRY_COMPARE_WITH_TIMEOUT(journaledSamples(dir.path(), runId), sent, 30000);
    QTRY_COMPARE_WITH_TIMEOUT(storedSamples(controller, runId), sent, 30000);
    QCOMPARE(storedSamples(controller, runId), journaledSamples(dir.path(), runId));
    auto loss = controller.store().series(runId, QStringLiteral("train/loss"), -1).result();
    QVERIFY(loss.isOk());
    QVERIFY(!loss->empty());
    auto accuracy = controller.store().series(runId, QStringLiteral("test/accuracy"), -1).result();
    QVERIFY(accuracy.isOk() && !accuracy->empty());
    // The run's size reached the store through the journal: 1 epoch of 60,000 / 128 steps.
    auto totalSteps = controller.store()
                          .series(runId, QString::fromLatin1(ringside::metric::kRunTotalSteps), -1)
                          .result();
    QVERIFY(totalSteps.isOk() && totalSteps->size() == 1);
    QCOMPARE(totalSteps->front().y, 468.0);
    QCOMPARE(totalSteps->front().x, 0.0);  // at the run's first step
    auto record = controller.store().run(runId).result();
    QVERIFY(record.isOk());
    QVERIFY(record->bestAccuracy.has_value());
    QVERIFY(*record->bestAccuracy > 0.7);
    // The log the dashboard shows (MetricsStore::logTail) holds each printed
    // sample once, as a sample: rank 0's metrics records are not log lines too, one note says
    // where they are, and the run's other lines (the end record) are there.
    auto log = controller.store().logTail(runId, 10000).result();
    QVERIFY(log.isOk());
    int records = 0;
    int notes = 0;
    int ends = 0;
    for (const v1::LogLine& line : log.value()) {
      const QString text = QString::fromStdString(line.text());
      notes +=
          text.startsWith(QStringLiteral("[ringside-agent: the trainer's metrics records")) ? 1 : 0;
      const qsizetype body =
          text.startsWith(QStringLiteral("[rank ")) ? text.indexOf(QStringLiteral("] ")) + 2 : 0;
      const QString type =
          QJsonDocument::fromJson(text.mid(body).toUtf8()).object().value("type").toString();
      records += type == QStringLiteral("metrics") ? 1 : 0;
      ends += type == QStringLiteral("end") ? 1 : 0;
    }
    QCOMPARE(records, 0);
    QCOMPARE(notes, 1);
    QCOMPARE(ends, 1);
  }

  void guiClosedMidRunAndReopenedHasTheCompleteHistory() {
    QTemporaryDir dir;
    QString runId;
    {
      Controller controller(options(dir.path()));
      QVERIFY(controller.start().isOk());
      QTRY_VERIFY_WITH_TIMEOUT(localOnline(controller), 30000);
      QSignalSpy launched(&controller, &Controller::runLaunched);
      QSignalSpy failed(&controller, &Controller::launchFailed);
      controller.launch(smallRun(localNodeId(controller), 12));
      QTRY_VERIFY_WITH_TIMEOUT(launched.count() == 1 || failed.count() == 1, 30000);
      QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.at(0).at(0).toString()));
      runId = launched.at(0).at(0).toString();
      QTRY_VERIFY_WITH_TIMEOUT(storedSamples(controller, runId) > 0, 60000);
      QCOMPARE(storedState(controller, runId) == v1::COMPLETED, false);
    }  // the GUI closes: its connection and its local agent go; the run goes on
    Controller reopened(options(dir.path()));
    QVERIFY(reopened.start().isOk());
    QTRY_COMPARE_WITH_TIMEOUT(storedState(reopened, runId), v1::COMPLETED, 180000);
    const qint64 sent = pointsInStdout(dir.path(), runId);
    QVERIFY(sent > 0);
    QTRY_COMPARE_WITH_TIMEOUT(journaledSamples(dir.path(), runId), sent, 30000);
    QTRY_COMPARE_WITH_TIMEOUT(storedSamples(reopened, runId), sent, 30000);
    QCOMPARE(storedSamples(reopened, runId), journaledSamples(dir.path(), runId));
  }

  // The queue (docs/queue.md) through the GUI: a run on every slot of the local node and two
  // more launched behind it, which the agent queues (the launch answers with their place); the
  // GUI closed while they wait (its local agent stops with it) and reopened: all three complete,
  // each with every sample.
  void queuedRunsWaitAcrossTheGuisCloseAndCompleteWithEverySample() {
    QTemporaryDir dir;
    QStringList ids;
    {
      Controller controller(options(dir.path()));
      QVERIFY(controller.start().isOk());
      QTRY_VERIFY_WITH_TIMEOUT(localOnline(controller), 30000);
      const QString node = localNodeId(controller);
      QTRY_VERIFY_WITH_TIMEOUT(controller.node(node)->info.has_value(), 10000);
      const int cpuSlots = controller.nodeChoices().at(0).cpuSlotsTotal;
      QVERIFY(cpuSlots >= 1);
      QSignalSpy launched(&controller, &Controller::runLaunched);
      QSignalSpy failed(&controller, &Controller::launchFailed);
      RunForm first = smallRun(node, 5);
      first.name = QStringLiteral("holds every slot");
      first.ranksPerNode = cpuSlots;
      controller.launch(first);
      QTRY_VERIFY_WITH_TIMEOUT(launched.count() == 1 || failed.count() == 1, 30000);
      QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.at(0).at(0).toString()));
      for (int i = 1; i <= 2; ++i) {
        RunForm next = smallRun(node, 1);
        next.name = QStringLiteral("queued %1").arg(i);
        next.ranksPerNode = 1;
        next.globalBatch = 128;
        QVERIFY(validate(next, controller.nodeChoices()).isEmpty());  // busy slots: it may launch
        controller.launch(next);
        QTRY_VERIFY_WITH_TIMEOUT(launched.count() == i + 1 || !failed.isEmpty(), 30000);
        QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.at(0).at(0).toString()));
      }
      for (const QList<QVariant>& signal : launched) ids << signal.at(0).toString();
      QVERIFY2(controller.queuedText(ids[1]).startsWith(QStringLiteral("Queued: position 1")),
               qPrintable(controller.queuedText(ids[1])));
      QVERIFY2(controller.queuedText(ids[2]).startsWith(QStringLiteral("Queued: position 2")),
               qPrintable(controller.queuedText(ids[2])));
      QVERIFY2(controller.queuedText(ids[1]).contains(QStringLiteral("held by run ") + ids[0]),
               qPrintable(controller.queuedText(ids[1])));
      QCOMPARE(storedState(controller, ids[1]), v1::QUEUED);
      auto stored = controller.store().run(ids[1]).result();
      QVERIFY(stored.isOk() && stored->reason.startsWith(QStringLiteral("Queued: position 1")));
    }  // the GUI closes, and its local agent with it; the journal keeps the queue
    Controller reopened(options(dir.path()));
    QVERIFY(reopened.start().isOk());
    for (const QString& runId : ids) {
      QTRY_COMPARE_WITH_TIMEOUT(storedState(reopened, runId), v1::COMPLETED, 240000);
      const qint64 sent = pointsInStdout(dir.path(), runId);
      QVERIFY(sent > 0);
      QTRY_COMPARE_WITH_TIMEOUT(storedSamples(reopened, runId), sent, 30000);
      QCOMPARE(storedSamples(reopened, runId), journaledSamples(dir.path(), runId));
    }
    auto ran = reopened.store().run(ids[2]).result();
    QVERIFY(ran.isOk());
    QVERIFY2(ran->reason.isEmpty(), qPrintable(ran->reason));  // the queue's line is gone
  }

  void startDoesNotWaitOnTheStore() {
    QTemporaryDir dir;
    // A database from an earlier session: one remote node (nothing listens there) and one run.
    {
      MetricsStore store(dir.path() + QStringLiteral("/ringside.sqlite"));
      QVERIFY(store.open().result().isOk());
      const auto key = ringside::curve::generateKeyPair();
      QVERIFY(key.isOk());
      NodeRecord node;
      node.nodeId = QStringLiteral("n-remote");
      node.name = QStringLiteral("remote");
      node.address = QStringLiteral("tcp://127.0.0.1:9 tcp://127.0.0.1:10");
      node.publicKey = QString::fromStdString(key->publicKey);
      node.addedTime = 1.7e9;
      QVERIFY(store.upsertNode(node).result().isOk());
      v1::RunInfo run;
      run.set_run_id("r-earlier");
      run.set_state(v1::COMPLETED);
      run.mutable_spec()->set_name("earlier");
      run.mutable_spec()->set_ranks_per_node(2);
      QVERIFY(store.upsertRun(QStringLiteral("n-remote"), run).result().isOk());
    }
    ControllerOptions o = options(dir.path());
    Controller controller(o);  // startLocalAgent: not started, a node is configured
    QSignalSpy started(&controller, &Controller::started);
    QSignalSpy startFailed(&controller, &Controller::startFailed);
    QSignalSpy nodesChanged(&controller, &Controller::nodesChanged);
    QVERIFY(controller.start().isOk());
    // start() returned without the store's results: nothing is known or connected yet.
    QVERIFY(!controller.isStarted());
    QCOMPARE(started.count(), 0);
    QCOMPARE(nodesChanged.count(), 0);
    QVERIFY(controller.nodes().isEmpty());
    QVERIFY(controller.nodeOfRun(QStringLiteral("r-earlier")).isEmpty());
    QCOMPARE(controller.guiPublicKey().size(), 40);  // the keys are loaded at once
    // The store can be used at once: its work runs after the open.
    auto runs = controller.store().runs();

    QTRY_COMPARE(started.count(), 1);
    QVERIFY(controller.isStarted());
    QCOMPARE(startFailed.count(), 0);
    QVERIFY(nodesChanged.count() >= 1);
    QCOMPARE(controller.nodeOfRun(QStringLiteral("r-earlier")), QStringLiteral("n-remote"));
    QCOMPARE(controller.nodes().size(), 1);
    QCOMPARE(controller.nodes().first().record.name, QStringLiteral("remote"));
    QVERIFY(!controller.nodes().first().local);  // no local agent: a node was configured
    QTRY_VERIFY(runs.isFinished());
    QVERIFY(runs.result().isOk());
    QCOMPARE(runs.result()->size(), size_t{1});
    // Before its hello, the node's host for mpirun is the host of its address.
    const QList<NodeChoice> choices = controller.nodeChoices();
    QCOMPARE(choices.size(), 1);
    QCOMPARE(choices[0].hostName, QStringLiteral("127.0.0.1"));
    QCOMPARE(choices[0].freeCpuSlots, -1);
    QCOMPARE(choices[0].freeGpuSlots, -1);
    QVERIFY(!choices[0].online);
    // start() is called once.
    QVERIFY(!controller.start().isOk());
  }

  void aStoreThatCannotOpenEndsInStartFailed() {
    QTemporaryDir dir;
    QFile garbage(dir.path() + QStringLiteral("/ringside.sqlite"));
    QVERIFY(garbage.open(QIODevice::WriteOnly));
    garbage.write(QByteArray(8192, 'x'));  // not an SQLite file
    garbage.close();
    Controller controller(options(dir.path()));
    QSignalSpy started(&controller, &Controller::started);
    QSignalSpy startFailed(&controller, &Controller::startFailed);
    QVERIFY(controller.start().isOk());
    QTRY_COMPARE(startFailed.count(), 1);
    const QString message = startFailed.at(0).at(0).toString();
    QVERIFY2(message.contains(garbage.fileName()) && message.contains(QStringLiteral("--data-dir")),
             qPrintable(message));
    QCOMPARE(started.count(), 0);
    QVERIFY(!controller.isStarted());
    QVERIFY(controller.nodes().isEmpty());  // nothing connected, no local agent started
    // The controller stays usable enough to refuse work instead of crashing.
    QSignalSpy launchFailed(&controller, &Controller::launchFailed);
    controller.launch(smallRun(QStringLiteral("local"), 1));
    QCOMPARE(launchFailed.count(), 1);
    QVERIFY(!controller.store().runs().result().isOk());
  }

  void launchRoutingRefusesWhatItCannotSend() {
    QTemporaryDir dir;
    ControllerOptions o = options(dir.path());
    o.startLocalAgent = false;
    Controller controller(o);
    QSignalSpy started(&controller, &Controller::started);
    QVERIFY(controller.start().isOk());
    QTRY_COMPARE(started.count(), 1);
    const auto key = ringside::curve::generateKeyPair();
    QVERIFY(key.isOk());
    QVERIFY(controller
                .addNode(QStringLiteral("first"), QStringLiteral("127.0.0.1"), 9, 10,
                         QString::fromStdString(key->publicKey))
                .isOk());
    const QString first = controller.nodes().first().record.nodeId;
    QSignalSpy failed(&controller, &Controller::launchFailed);
    RunForm form = smallRun(first, 1);
    form.nodeIds.clear();
    controller.launch(form);
    QCOMPARE(failed.count(), 1);
    QVERIFY(failed.at(0).at(0).toString().contains(QStringLiteral("Choose")));
    // The first node owns the run: it must be connected; every other one must be known.
    form.nodeIds = {QStringLiteral("n-gone"), first};
    controller.launch(form);
    QCOMPARE(failed.count(), 2);
    QVERIFY(failed.at(1).at(0).toString().contains(QStringLiteral("not connected")));
    form.nodeIds = {first, QStringLiteral("n-gone")};
    controller.launch(form);
    QCOMPARE(failed.count(), 3);
    QVERIFY2(failed.at(2).at(0).toString().contains(QStringLiteral("n-gone")),
             qPrintable(failed.at(2).at(0).toString()));
  }

  // Two real agents; the second has no trainer binary, which its pre-flight reports. The launch
  // fails naming the second node and its problem; the owner was never asked to launch.
  void preflightProblemOnTheSecondAgentFailsTheLaunch() {
    QTemporaryDir dir;
    ControllerOptions o = options(dir.path());
    o.startLocalAgent = false;
    Controller controller(o);
    QSignalSpy started(&controller, &Controller::started);
    QVERIFY(controller.start().isOk());
    QTRY_COMPARE(started.count(), 1);
    const QString missingTrainer = dir.filePath(QStringLiteral("no-such/ringside-trainer"));
    auto first = startAgent(dir.filePath(QStringLiteral("agent-1")), controller.guiPublicKey(),
                            QString::fromUtf8(ringside::test::trainerBin()));
    auto second = startAgent(dir.filePath(QStringLiteral("agent-2")), controller.guiPublicKey(),
                             missingTrainer);
    QVERIFY(first && second);
    QVERIFY(controller
                .addNode(QStringLiteral("first"), QStringLiteral("127.0.0.1"),
                         portOf(first->controlEndpoint()), portOf(first->eventsEndpoint()),
                         first->agentPublicKey())
                .isOk());
    QVERIFY(controller
                .addNode(QStringLiteral("second"), QStringLiteral("127.0.0.1"),
                         portOf(second->controlEndpoint()), portOf(second->eventsEndpoint()),
                         second->agentPublicKey())
                .isOk());
    const QString firstId = nodeNamed(controller, QStringLiteral("first"));
    const QString secondId = nodeNamed(controller, QStringLiteral("second"));
    QTRY_VERIFY_WITH_TIMEOUT(
        onlineWithInfo(controller, firstId) && onlineWithInfo(controller, secondId), 15000);

    QSignalSpy launched(&controller, &Controller::runLaunched);
    QSignalSpy failed(&controller, &Controller::launchFailed);
    RunForm form = smallRun(firstId, 1);
    form.nodeIds = {firstId, secondId};
    form.ranksPerNode = 1;
    controller.launch(form);
    QTRY_VERIFY_WITH_TIMEOUT(launched.count() + failed.count() == 1, 15000);
    QCOMPARE(launched.count(), 0);
    const QString message = failed.first().first().toString();
    QVERIFY2(message.contains(QStringLiteral("second: trainer binary '%1'").arg(missingTrainer)),
             qPrintable(message));
    QVERIFY2(!message.contains(QStringLiteral("first:")), qPrintable(message));
    // Nothing was launched. A Launch sent to the owner would have been answered, and the answer
    // handled, before anything the controller sends it now (one connection; the agent answers
    // in order): drain the owner, and wait for a heartbeat that shows it draining.
    controller.setDrain(firstId, true);
    QTRY_VERIFY_WITH_TIMEOUT(controller.node(firstId)->info->draining(), 10000);
    QCOMPARE(launched.count(), 0);
    auto runs = controller.store().runs().result();
    QVERIFY(runs.isOk());
    QVERIFY(runs->empty());
    QVERIFY(!QDir(dir.filePath(QStringLiteral("agent-1/runs"))).exists() ||
            QDir(dir.filePath(QStringLiteral("agent-1/runs")))
                .entryList(QDir::Dirs | QDir::NoDotAndDotDot)
                .isEmpty());
  }

  // --local-cluster: the cluster's agent allows the cluster's client key, not the GUI's, so the
  // node comes online only when the controller connects with the key file. A second start with
  // the same cluster updates the node (by name) instead of adding another; no local agent starts.
  void localClusterNodesConnectWithTheClustersClientKey() {
    QTemporaryDir dir;
    const auto client = ringside::curve::generateKeyPair();
    QVERIFY(client.isOk());
    const QString secretFile = dir.filePath(QStringLiteral("client.key_secret"));
    {
      QFile file(secretFile);
      QVERIFY(file.open(QIODevice::WriteOnly));
      file.write(QByteArray::fromStdString(client->secretKey + "\n"));
    }
    auto agent =
        startAgent(dir.filePath(QStringLiteral("node-1")),
                   QString::fromStdString(client->publicKey), QString::fromUtf8(ringside::test::trainerBin()));
    QVERIFY(agent);
    const QByteArray document =
        QJsonDocument(QJsonObject{{"nodes", QJsonArray{QJsonObject{
                                                {"name", "node-1"},
                                                {"address", "127.0.0.1"},
                                                {"control", agent->controlEndpoint()},
                                                {"events", agent->eventsEndpoint()},
                                                {"agent_public_key", agent->agentPublicKey()}}}},
                                  {"client_public_key", QString::fromStdString(client->publicKey)},
                                  {"client_secret_key_file", secretFile}})
            .toJson();
    auto cluster = parseLocalCluster(document, QStringLiteral("cluster.json"));
    QVERIFY2(cluster.isOk(), cluster.status().message().c_str());
    QVERIFY(localClusterClientKeys(*cluster).isOk());
    QString nodeId;
    for (int session = 0; session < 2; ++session) {
      ControllerOptions o = options(dir.filePath(QStringLiteral("gui")));
      o.localCluster = *cluster;
      Controller controller(o);
      QSignalSpy started(&controller, &Controller::started);
      QVERIFY(controller.start().isOk());
      QTRY_COMPARE(started.count(), 1);
      QVERIFY(controller.guiPublicKey() != QString::fromStdString(client->publicKey));
      QCOMPARE(controller.nodes().size(), 1);  // no local agent beside the cluster's node
      const NodeView node = controller.nodes().first();
      QCOMPARE(node.record.name, QStringLiteral("node-1"));
      QVERIFY(!node.local);
      QCOMPARE(node.record.clientKeyFile, secretFile);
      if (session == 0) nodeId = node.record.nodeId;
      QCOMPARE(node.record.nodeId, nodeId);  // updated by name, not added again
      QTRY_VERIFY_WITH_TIMEOUT(onlineWithInfo(controller, nodeId), 15000);
      QTRY_VERIFY(controller.store().nodes().result().isOk());
      QCOMPARE(controller.store().nodes().result()->size(), size_t{1});
    }
  }
};

QTEST_GUILESS_MAIN(ControllerProcessTest)
#include "controller_process_test.moc"
