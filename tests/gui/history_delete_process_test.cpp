// End to end with a real agent: a run deleted in the GUI's history stays
// deleted. Before, the agent's next run list (after a reconnect or a GUI restart) brought it back
// with its whole journal, so the GUI database was bounded only by the agents' retention. The
// controller starts its local agent (loopback, CURVE), launches two short command runs, the first
// is deleted through the store (as History's Delete does), and the GUI is closed and opened again:
// the agent still journals both runs and lists both, the store keeps only the second.
#include <QSignalSpy>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QUuid>
#include <QtTest>

#include "build_paths.h"
#include "ringside/gui/controller.h"

using namespace ringside::gui;
namespace v1 = ringside::v1;

class HistoryDeleteProcessTest : public QObject {
  Q_OBJECT

 private:
  static ControllerOptions options(const QString& dataDir) {
    ControllerOptions o;
    o.dataDir = dataDir;
    o.agentBinary = QString::fromUtf8(ringside::test::agentBin());
    o.trainerBinary = QString::fromUtf8(ringside::test::trainerBin());
    return o;
  }

  static QString localOnlineNode(const Controller& controller) {
    for (const NodeView& node : controller.nodes()) {
      if (node.local && node.state == NodeState::Online && node.info.has_value()) {
        return node.record.nodeId;
      }
    }
    return {};
  }

  // A one-rank command run that prints a line and ends.
  static RunForm echoRun(const QString& nodeId, const QString& name) {
    RunForm form;
    form.name = name;
    form.job = RunForm::Job::kCommand;
    form.command = QStringLiteral("echo delete-test");
    form.nodeIds = {nodeId};
    form.ranksPerNode = 1;
    return form;
  }

  static v1::RunState storedState(Controller& controller, const QString& runId) {
    auto run = controller.store().run(runId).result();
    return run.isOk() ? run->state : v1::RUN_STATE_UNSPECIFIED;
  }

  static bool stored(Controller& controller, const QString& runId) {
    return controller.store().run(runId).result().isOk();
  }

  static qint64 storedLogLines(Controller& controller, const QString& runId) {
    auto count = controller.store().logLineCount(runId).result();
    return count.isOk() ? *count : -1;
  }

  // The runs the local agent journals (docs/journal.md), on a read-only connection of its own.
  static QStringList journaledRuns(const QString& dataDir) {
    const QString connection =
        QStringLiteral("agent-journal-") + QUuid::createUuid().toString(QUuid::Id128);
    QStringList ids;
    {
      QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), connection);
      db.setDatabaseName(dataDir + QStringLiteral("/local-agent/journal.sqlite"));
      db.setConnectOptions(QStringLiteral("QSQLITE_OPEN_READONLY;QSQLITE_BUSY_TIMEOUT=5000"));
      if (db.open()) {
        QSqlQuery query(QStringLiteral("SELECT run_id FROM runs"), db);
        while (query.next()) ids << query.value(0).toString();
      }
    }
    QSqlDatabase::removeDatabase(connection);
    return ids;
  }

  // Launches `form` and waits until the store holds the run ended with its log line.
  static QString launchAndWait(Controller& controller, const RunForm& form) {
    QSignalSpy launched(&controller, &Controller::runLaunched);
    QSignalSpy failed(&controller, &Controller::launchFailed);
    controller.launch(form);
    if (!QTest::qWaitFor([&] { return launched.count() + failed.count() > 0; }, 30000) ||
        launched.isEmpty()) {
      qWarning("launch failed: %s",
               failed.isEmpty() ? "timeout" : qPrintable(failed.first().first().toString()));
      return {};
    }
    const QString runId = launched.first().first().toString();
    if (!QTest::qWaitFor(
            [&] {
              return storedState(controller, runId) == v1::COMPLETED &&
                     storedLogLines(controller, runId) > 0;
            },
            60000)) {
      qWarning("run %s did not complete in the store", qPrintable(runId));
      return {};
    }
    return runId;
  }

 private slots:
  void initTestCase() {
    qputenv("OMPI_ALLOW_RUN_AS_ROOT", "1");
    qputenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    qputenv("OMPI_MCA_rmaps_base_oversubscribe", "1");
  }

  void aRunDeletedInTheGuiDoesNotComeBackFromTheAgent() {
    QTemporaryDir dir;
    QString deleted;
    QString kept;
    {
      Controller controller(options(dir.path()));
      QVERIFY(controller.start().isOk());
      QTRY_VERIFY_WITH_TIMEOUT(!localOnlineNode(controller).isEmpty(), 30000);
      const QString nodeId = localOnlineNode(controller);
      deleted = launchAndWait(controller, echoRun(nodeId, QStringLiteral("to delete")));
      QVERIFY(!deleted.isEmpty());
      kept = launchAndWait(controller, echoRun(nodeId, QStringLiteral("to keep")));
      QVERIFY(!kept.isEmpty());
      QSignalSpy gone(&controller.store(), &MetricsStore::runDeleted);
      const ringside::Status status = controller.store().deleteRun(deleted).result();
      QVERIFY2(status.isOk(), status.toString().c_str());
      QTRY_COMPARE(gone.count(), 1);
      // The node is online and lists its runs on every reconnect; give it a moment here too.
      QTest::qWait(1500);
      QVERIFY(!stored(controller, deleted));
    }  // the GUI closes (its local agent with it) and opens again below

    Controller reopened(options(dir.path()));
    QSignalSpy errors(&reopened, &Controller::errorMessage);
    QSignalSpy changed(&reopened.store(), &MetricsStore::runChanged);
    QVERIFY(reopened.start().isOk());
    QTRY_VERIFY_WITH_TIMEOUT(!localOnlineNode(reopened).isEmpty(), 30000);
    // The agent's journal keeps both runs (the GUI's delete is its own), and it lists both.
    const QStringList journal = journaledRuns(dir.path());
    QVERIFY2(journal.contains(deleted) && journal.contains(kept), qPrintable(journal.join(", ")));
    // Its run list arrived: the kept run's row was refreshed from it (one slice holds both).
    QTRY_VERIFY_WITH_TIMEOUT(changed.contains(QVariantList{kept}), 30000);
    // Any catch-up of the deleted run would land within a few delivery intervals.
    QTest::qWait(2000);
    QVERIFY(!stored(reopened, deleted));
    QCOMPARE(storedLogLines(reopened, deleted), qint64{0});
    QVERIFY(!changed.contains(QVariantList{deleted}));
    QCOMPARE(storedState(reopened, kept), v1::COMPLETED);
    auto runs = reopened.store().runs().result();
    QVERIFY(runs.isOk());
    QCOMPARE(runs->size(), size_t{1});
    for (const QVariantList& error : errors) qWarning("%s", qPrintable(error.first().toString()));
    QVERIFY(errors.isEmpty());
  }
};

QTEST_MAIN(HistoryDeleteProcessTest)
#include "history_delete_process_test.moc"
