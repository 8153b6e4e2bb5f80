// LocalAgent with the real ringside-agent: it starts on loopback with CURVE, the GUI's own keys
// are authorized, an AgentConnection gets online; SIGKILL of the agent shows the node offline
// within 5 s; a new LocalAgent on the same state directory brings it back online.
#include <signal.h>

#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

#include "build_paths.h"
#include "ringside/gui/agent_connection.h"
#include "ringside/gui/gui_keys.h"
#include "ringside/gui/local_agent.h"

using namespace ringside;
using namespace ringside::gui;

class LocalAgentProcessTest : public QObject {
  Q_OBJECT

 private:
  LocalAgentOptions options(const QString& stateDir, const QString& key) const {
    LocalAgentOptions o;
    o.agentBinary = QString::fromUtf8(ringside::test::agentBin());
    o.trainerBinary = QString::fromUtf8(ringside::test::trainerBin());
    o.mpirun = QString::fromUtf8(ringside::test::mpiexec());
    o.stateDir = stateDir;
    o.guiPublicKey = key;
    o.telemetryIntervalS = 0.2;
    return o;
  }

  // Starts a LocalAgent and waits for ready(); null (and a test failure) when it does not start.
  std::unique_ptr<LocalAgent> startAgent(const QString& stateDir, const QString& key) {
    auto agent = std::make_unique<LocalAgent>(options(stateDir, key));
    QSignalSpy ready(agent.get(), &LocalAgent::ready);
    QSignalSpy failed(agent.get(), &LocalAgent::failed);
    agent->start();
    [&] { QTRY_VERIFY_WITH_TIMEOUT(!ready.isEmpty() || !failed.isEmpty(), 30000); }();
    if (!failed.isEmpty()) {
      qWarning() << "local agent failed:" << failed.first().first().toString();
      return nullptr;
    }
    return agent;
  }

 private slots:
  void initTestCase() {
    qputenv("OMPI_ALLOW_RUN_AS_ROOT", "1");
    qputenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
  }

  void guiKeysAreCreatedOnceAndReloaded() {
    QTemporaryDir dir;
    auto first = loadOrCreateGuiKeys(dir.path() + "/data");
    QVERIFY2(first.isOk(), first.status().toString().c_str());
    auto second = loadOrCreateGuiKeys(dir.path() + "/data");
    QVERIFY(second.isOk());
    QCOMPARE(second->publicKey, first->publicKey);
    QCOMPARE(second->secretKey, first->secretKey);
    QVERIFY(QFileInfo::exists(dir.path() + "/data/gui.key_secret"));
    QVERIFY(!loadOrCreateGuiKeys(QString()).isOk());
  }

  void missingBinaryFails() {
    QTemporaryDir dir;
    LocalAgentOptions o = options(dir.path() + "/state", QString(40, QLatin1Char('a')));
    o.agentBinary = dir.path() + "/no-such-agent";
    LocalAgent agent(o);
    QSignalSpy failed(&agent, &LocalAgent::failed);
    agent.start();
    QCOMPARE(failed.size(), 1);
    QVERIFY(failed.first().first().toString().contains("not found"));
  }

  void startsConnectsGoesOfflineWhenKilledAndComesBack() {
    QTemporaryDir dir;
    const QString stateDir = dir.path() + "/local-agent";
    auto keys = loadOrCreateGuiKeys(dir.path() + "/data");
    QVERIFY(keys.isOk());
    const QString guiKey = QString::fromStdString(keys->publicKey);

    std::unique_ptr<LocalAgent> agent = startAgent(stateDir, guiKey);
    QVERIFY(agent);
    QVERIFY(agent->controlEndpoint().startsWith("tcp://127.0.0.1:"));
    QCOMPARE(agent->agentPublicKey().size(), 40);
    QVERIFY(agent->processId() > 0);
    // Its state directory (journal, keys, run logs) is private: created 0700, by the agent.
    const QFileDevice::Permissions others = QFileDevice::ReadGroup | QFileDevice::WriteGroup |
                                            QFileDevice::ExeGroup | QFileDevice::ReadOther |
                                            QFileDevice::WriteOther | QFileDevice::ExeOther;
    QCOMPARE(QFileInfo(stateDir).permissions() & others, QFileDevice::Permissions());

    AgentConnection connection(*keys);
    QSignalSpy states(&connection, &AgentConnection::stateChanged);
    QSignalSpy nodeInfo(&connection, &AgentConnection::nodeInfoReceived);
    QSignalSpy replies(&connection, &AgentConnection::replyReceived);
    connection.connectTo(agent->controlEndpoint(), agent->eventsEndpoint(),
                         agent->agentPublicKey());
    QTRY_COMPARE_WITH_TIMEOUT(connection.state(), NodeState::Online, 10000);
    const quint64 helloId = connection.hello();
    QTRY_VERIFY_WITH_TIMEOUT(!replies.isEmpty(), 10000);
    QCOMPARE(replies.first().at(0).toULongLong(), helloId);
    const auto reply = replies.first().at(1).value<v1::Envelope>();
    QVERIFY(reply.has_hello_reply());
    QVERIFY(!reply.hello_reply().node().hostname().empty());
    QTRY_VERIFY_WITH_TIMEOUT(!nodeInfo.isEmpty(), 5000);  // the heartbeat hellos
    QVERIFY(connection.heartbeatAgeMs() >= 0);

    // SIGKILL: the node must show offline within 5 s of the last thing heard (+ margin).
    const pid_t pid = static_cast<pid_t>(agent->processId());
    QSignalSpy exited(agent.get(), &LocalAgent::exited);
    QElapsedTimer sinceKill;
    sinceKill.start();
    QCOMPARE(::kill(pid, SIGKILL), 0);
    QTRY_COMPARE_WITH_TIMEOUT(connection.state(), NodeState::Offline, 7000);
    QVERIFY2(sinceKill.elapsed() < 7000, qPrintable(QString::number(sinceKill.elapsed())));
    QVERIFY(sinceKill.elapsed() >= 3500);  // not before the 5 s since the last heartbeat reply
    QTRY_VERIFY_WITH_TIMEOUT(!exited.isEmpty(), 5000);
    QTRY_COMPARE_WITH_TIMEOUT(states.last().at(0).value<NodeState>(), NodeState::Offline, 1000);

    // A request while offline fails instead of hanging.
    QSignalSpy failedRequests(&connection, &AgentConnection::requestFailed);
    const quint64 lost = connection.listRuns();
    QTRY_VERIFY_WITH_TIMEOUT(!failedRequests.isEmpty(), 20000);
    QCOMPARE(failedRequests.first().at(0).toULongLong(), lost);

    // A new local agent on the same state directory: same key, new ports; online again.
    agent.reset();
    agent = startAgent(stateDir, guiKey);
    QVERIFY(agent);
    connection.connectTo(agent->controlEndpoint(), agent->eventsEndpoint(),
                         agent->agentPublicKey());
    QTRY_COMPARE_WITH_TIMEOUT(connection.state(), NodeState::Online, 10000);

    QElapsedTimer stopping;
    stopping.start();
    connection.stop();
    QVERIFY2(stopping.elapsed() < 1000, "stop() joins the network thread promptly");
    agent->stop();
    QCOMPARE(agent->processId(), 0);
  }

  // Regression, "the step time-out" (dd4b1b5): the time-out of a start step (authorize,
  // print-public-key) kept running after the step had succeeded, so commandTimeoutMs after the
  // last step the LocalAgent reported "ringside-agent print-public-key did not finish within
  // N s" and stopped the agent it had just started.
  void stepTimeOut_doesNotFireAfterTheStepSucceeded() {
    QTemporaryDir dir;
    auto keys = loadOrCreateGuiKeys(dir.path() + "/data");
    QVERIFY(keys.isOk());
    LocalAgentOptions o =
        options(dir.path() + "/local-agent", QString::fromStdString(keys->publicKey));
    o.commandTimeoutMs = 5000;
    LocalAgent agent(o);
    QSignalSpy ready(&agent, &LocalAgent::ready);
    QSignalSpy failed(&agent, &LocalAgent::failed);
    agent.start();
    QTRY_VERIFY_WITH_TIMEOUT(!ready.isEmpty() || !failed.isEmpty(), 3 * o.commandTimeoutMs);
    QVERIFY2(failed.isEmpty(),
             failed.isEmpty() ? "" : qPrintable(failed.first().first().toString()));
    // Every step's time-out was started before ready() with commandTimeoutMs, as a coarse timer
    // (up to 5 % late). This precise timer, started now with more than that, fires after any
    // of them would have.
    bool stepTimeOutsPassed = false;
    QTimer::singleShot(o.commandTimeoutMs + o.commandTimeoutMs / 10 + 100, Qt::PreciseTimer,
                       [&stepTimeOutsPassed] { stepTimeOutsPassed = true; });
    QTRY_VERIFY_WITH_TIMEOUT(stepTimeOutsPassed, 3 * o.commandTimeoutMs);
    QVERIFY2(failed.isEmpty(),
             failed.isEmpty() ? "" : qPrintable(failed.first().first().toString()));
    QVERIFY(agent.isReady());
    QVERIFY(agent.processId() > 0);
    agent.stop();
  }

  void leftoverAgentOfACrashedGuiIsStopped() {
    QTemporaryDir dir;
    const QString stateDir = dir.path() + "/local-agent";
    auto keys = loadOrCreateGuiKeys(dir.path() + "/data");
    QVERIFY(keys.isOk());
    const QString guiKey = QString::fromStdString(keys->publicKey);
    std::unique_ptr<LocalAgent> first = startAgent(stateDir, guiKey);
    QVERIFY(first);
    const pid_t oldPid = static_cast<pid_t>(first->processId());
    // A GUI that crashed never stops its agent: simulate by releasing it (the process lives on).
    (void)first.release();
    std::unique_ptr<LocalAgent> second = startAgent(stateDir, guiKey);
    QVERIFY(second);
    QVERIFY(second->processId() != oldPid);
    QTRY_VERIFY_WITH_TIMEOUT(::kill(oldPid, 0) != 0, 5000);
  }
};

QTEST_GUILESS_MAIN(LocalAgentProcessTest)
#include "local_agent_process_test.moc"
