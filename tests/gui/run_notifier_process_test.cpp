// Desktop notifications (docs/queue.md, "Notifications"): through the controller's real local
// agent, a run launched from this GUI that waited in the queue notifies when it starts, when it
// completes and when it fails (with the agent's reason), while a run stopped by hand or one that
// started at once says nothing at its start; the runs launched here are remembered in the data
// folder; a disabled notifier is silent. FreedesktopNotifications' Notify call reaches a
// notification service on a private D-Bus bus (dbus-daemon) with the spec's arguments, and a
// missing service is said once.
#include <QDBusConnection>
#include <QDBusConnectionInterface>
#include <QProcess>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QtTest>

#include "gui_test_support.h"
#include "ringside/gui/run_notifier.h"

using namespace ringside;
using namespace ringside::gui;

// A notification server of the freedesktop.org spec on the test's bus: records each Notify.
class FakeNotificationServer : public QObject {
  Q_OBJECT
  Q_CLASSINFO("D-Bus Interface", "org.freedesktop.Notifications")

 public:
  struct Call {
    QString app, icon, summary, body;
    QVariantMap hints;
    int timeout = 0;
  };
  QList<Call> calls;

 public slots:
  uint Notify(const QString& app, uint /*replaces*/, const QString& icon, const QString& summary,
              const QString& body, const QStringList& /*actions*/, const QVariantMap& hints,
              int timeout) {
    calls.append({app, icon, summary, body, hints, timeout});
    return static_cast<uint>(calls.size());
  }
};

class RunNotifierProcessTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { testing::allowMpirunAsRoot(); }

  void notifyReachesTheDesktopsService() {
    const QString daemon = QStandardPaths::findExecutable(QStringLiteral("dbus-daemon"));
    QVERIFY2(!daemon.isEmpty(), "dbus-daemon is missing: scripts/install-deps --test installs it");
    QProcess bus;
    bus.start(daemon, {QStringLiteral("--session"), QStringLiteral("--nofork"),
                       QStringLiteral("--print-address=1")});
    QVERIFY(bus.waitForStarted(10000));
    QTRY_VERIFY_WITH_TIMEOUT(bus.canReadLine(), 10000);
    const QString address = QString::fromUtf8(bus.readLine()).trimmed();
    QVERIFY2(address.startsWith(QStringLiteral("unix:")), qPrintable(address));
    {
      QDBusConnection service = QDBusConnection::connectToBus(address, QStringLiteral("service"));
      QDBusConnection client = QDBusConnection::connectToBus(address, QStringLiteral("client"));
      QVERIFY(service.isConnected() && client.isConnected());
      FreedesktopNotifications desktop(client);
      QSignalSpy unavailable(&desktop, &FreedesktopNotifications::unavailable);
      QVERIFY(!desktop.available());

      FakeNotificationServer server;
      QVERIFY(service.registerObject(QStringLiteral("/org/freedesktop/Notifications"), &server,
                                     QDBusConnection::ExportAllSlots));
      QVERIFY(service.registerService(QStringLiteral("org.freedesktop.Notifications")));
      QTRY_VERIFY(desktop.available());
      RunNotification failed;
      failed.runId = QStringLiteral("r1");
      failed.title = QStringLiteral("Run failed");
      failed.body = QStringLiteral("mlp on node-a: rank 1 exited with code 3 <stderr>");
      failed.critical = true;
      desktop.show(failed);
      QTRY_COMPARE_WITH_TIMEOUT(server.calls.size(), qsizetype(1), 10000);
      const FakeNotificationServer::Call& call = server.calls.first();
      QCOMPARE(call.app, QStringLiteral("Ringside"));
      QCOMPARE(call.icon, QStringLiteral("ringside"));
      QCOMPARE(call.summary, QStringLiteral("Run failed"));
      // Markup-capable servers must show the reason's "<" as text.
      QCOMPARE(call.body,
               QStringLiteral("mlp on node-a: rank 1 exited with code 3 &lt;stderr&gt;"));
      QCOMPARE(call.hints.value(QStringLiteral("urgency")).toInt(), 2);
      QCOMPARE(call.hints.value(QStringLiteral("desktop-entry")).toString(),
               QStringLiteral("org.ringside.Ringside"));
      QCOMPARE(call.timeout, 10000);
      failed.critical = false;
      desktop.show(failed);
      QTRY_COMPARE(server.calls.size(), qsizetype(2));
      QCOMPARE(server.calls.last().hints.value(QStringLiteral("urgency")).toInt(), 1);
      QVERIFY(unavailable.isEmpty());

      // The service gone: said once, not at every run.
      QVERIFY(service.unregisterService(QStringLiteral("org.freedesktop.Notifications")));
      desktop.show(failed);
      desktop.show(failed);
      QTRY_COMPARE_WITH_TIMEOUT(unavailable.size(), 1, 10000);
      QTest::qWait(300);
      QCOMPARE(unavailable.size(), 1);
      QCOMPARE(server.calls.size(), qsizetype(2));
    }
    QDBusConnection::disconnectFromBus(QStringLiteral("service"));
    QDBusConnection::disconnectFromBus(QStringLiteral("client"));
    bus.terminate();
    QVERIFY(bus.waitForFinished(10000));
  }

  void aQueuedRunNotifiesItsStartItsEndAndAFailure() {
    testing::ControllerInTempDir fixture(testing::withBuiltLocalAgent());
    Controller& controller = fixture.controller;
    QList<RunNotification> shown;
    RunNotifier notifier(controller, [&](const RunNotification& n) { shown.append(n); });
    int silentCalls = 0;
    RunNotifier silent(controller, [&](const RunNotification&) { ++silentCalls; });
    silent.setEnabled(false);
    QVERIFY(controller.start().isOk());
    QTRY_VERIFY_WITH_TIMEOUT(!testing::onlineLocalNodeId(controller).isEmpty(), 30000);
    const QString nodeId = testing::onlineLocalNodeId(controller);
    const int cpuSlots = testing::cpuSlotsOf(controller, nodeId);
    QVERIFY(cpuSlots > 0);
    // Each run takes every CPU slot, so they run one after another.
    auto form = [&](const QString& name, const QString& command) {
      return testing::commandRun(name, command, nodeId, cpuSlots);
    };
    QString error;
    const QString blocker = testing::launchAndWait(
        controller, form(QStringLiteral("blocker"), QStringLiteral("sleep 600")), &error);
    QVERIFY2(!blocker.isEmpty(), qPrintable(error));
    QTRY_COMPARE_WITH_TIMEOUT(testing::storedRunState(controller, blocker), v1::RUNNING, 30000);
    const QString waiter = testing::launchAndWait(
        controller, form(QStringLiteral("waiter"), QStringLiteral("sleep 1")), &error);
    QVERIFY2(!waiter.isEmpty(), qPrintable(error));
    const QString bad = testing::launchAndWait(
        controller, form(QStringLiteral("bad"), QStringLiteral("sh -c 'exit 3'")), &error);
    QVERIFY2(!bad.isEmpty(), qPrintable(error));
    QTRY_COMPARE(controller.queuedRuns().size(), qsizetype(2));
    QVERIFY(shown.isEmpty());  // the blocker started at once: nothing to tell

    controller.stopRun(blocker);  // stopped by hand: nothing to tell either
    QTRY_COMPARE_WITH_TIMEOUT(testing::storedRunState(controller, bad), v1::FAILED, 60000);
    QTRY_COMPARE_WITH_TIMEOUT(shown.size(), qsizetype(4), 10000);
    QTest::qWait(500);
    QCOMPARE(shown.size(), qsizetype(4));
    // Per run, in order (one run's end and the next one's start may come in either order).
    QList<RunNotification> ofWaiter, ofBad;
    for (const RunNotification& n : shown) (n.runId == waiter ? ofWaiter : ofBad).append(n);
    QCOMPARE(ofWaiter.size(), qsizetype(2));
    QCOMPARE(ofBad.size(), qsizetype(2));
    QCOMPARE(ofWaiter[0].title, QStringLiteral("Run started"));
    QVERIFY2(ofWaiter[0].body.startsWith(QStringLiteral("waiter on ")) &&
                 ofWaiter[0].body.contains(QStringLiteral("after waiting")),
             qPrintable(ofWaiter[0].body));
    QCOMPARE(ofWaiter[1].title, QStringLiteral("Run completed"));
    QVERIFY(!ofWaiter[1].critical);
    QCOMPARE(ofBad[0].runId, bad);
    QCOMPARE(ofBad[0].title, QStringLiteral("Run started"));
    QCOMPARE(ofBad[1].title, QStringLiteral("Run failed"));
    QVERIFY(ofBad[1].critical);
    const QString reason = QString::fromStdString(controller.runInfo(bad)->reason());
    QVERIFY(!reason.isEmpty());
    QVERIFY2(ofBad[1].body.startsWith(QStringLiteral("bad on ")) && ofBad[1].body.endsWith(reason),
             qPrintable(ofBad[1].body));
    QCOMPARE(silentCalls, 0);

    // The runs launched here are remembered for the next start of the GUI.
    RunNotifier next(controller, {});
    for (const QString& id : {blocker, waiter, bad}) QVERIFY(next.launchedHere(id));
    QVERIFY(!next.launchedHere(QStringLiteral("r20260101-000000-0000")));
  }
};

QTEST_MAIN(RunNotifierProcessTest)
#include "run_notifier_process_test.moc"
