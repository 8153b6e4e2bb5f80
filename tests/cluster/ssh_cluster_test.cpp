// A real cluster's launch path, on the local cluster: `scripts/local-cluster up 2 --ssh-user U`
// gives every node an sshd of its own (on the node's address, with its own host key) and runs
// every agent as U, an unprivileged system user made as the ringside-node package makes
// ringside-agent (nologin shell, locked password, home = the agent's state directory). The agents
// have no --launcher, so mpirun reaches node-2 with plain `ssh`, Open MPI's default. The test
// types docs/install.md's ssh steps as a user would on each node, and launches from the GUI's
// controller (what `ringside --local-cluster` does):
//   1. before the steps, a 2-node launch is refused before anything starts, naming node-2 and
//      ssh's own reason;
//   2. after them (a login shell for U, a key per node, every node's key in every other node's
//      authorized_keys, every other node's host key in known_hosts), a 2 nodes x 2 ranks trainer
//      run completes with every rank's points in the GUI's store, the agents ran as U, node-2's
//      sshd logged U's key login from node-1, and the namespace launcher
//      (local-cluster-rsh's broker) was asked nothing.
//
// Needs root (namespaces, a user), sshd and the ssh client (openssh-server, openssh-client).
// Exits 77 (ctest: skipped) without them, saying why.
#include <QCoreApplication>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QtTest>

#include <string>
#include <vector>

#include "controller_cluster_support.h"

using namespace ringside::gui;

namespace v1 = ringside::v1;
using ringside::cluster_testing::ClusterHelpers;
using ringside::cluster_testing::describe;
using ringside::cluster_testing::kLocalCluster;
using ringside::cluster_testing::pointsPerRank;
using ringside::cluster_testing::storedPointsPerRank;
using ringside::trainer::ProcessResult;
using ringside::trainer::runProcess;

namespace {

// The agents' user: a system user of its own, removed again at the end.
const std::string kUser = "ringside-ssh-test";
// Its home, where every node shows it the node's own agent state directory (local-cluster).
const std::string kHome = "/var/lib/ringside-local-cluster/home";
const QString kState = QStringLiteral("/run/ringside-local-cluster");
const QString kNodeStateRoot = QString::fromStdString(ringside::cluster_testing::kNodeStateRoot);

// Runs a bash script with kLocalCluster as $LC, kUser as $U and kHome as $H; a test failure
// with its output when it fails.
bool shell(const std::string& script) {
  const ProcessResult result = runProcess(
      {"bash", "-euo", "pipefail", "-c", script, "bash", kLocalCluster, kUser, kHome}, "/", 120);
  if (result.exitCode != 0) {
    qWarning("this failed (exit %d):\n%s\nstdout: %s\nstderr: %s", result.exitCode, script.c_str(),
             result.out.c_str(), result.err.c_str());
  }
  return result.exitCode == 0;
}

const char* const kNames = "LC=$1 U=$2 H=$3\n";

QString fileText(const QString& path) {
  QFile file(path);
  return file.open(QIODevice::ReadOnly) ? QString::fromUtf8(file.readAll()) : QString();
}

}  // namespace

class SshClusterTest : public QObject, ClusterHelpers {
  Q_OBJECT

  std::optional<LocalCluster> cluster_;

  static void removeUser() {
    (void)runProcess({"userdel", kUser}, "/", 30);
    (void)runProcess({"groupdel", kUser}, "/", 30);
  }

 private slots:
  void initTestCase() {
    (void)runProcess({kLocalCluster, "down"}, "/", 120);
    removeUser();  // a test killed half-way leaves it
    // As the ringside-node package's postinst makes ringside-agent (adduser --system: a locked
    // password, the nologin shell, no home made).
    QVERIFY(shell(std::string(kNames) +
                  "useradd --system --user-group --home-dir \"$H\" --no-create-home "
                  "--shell /usr/sbin/nologin \"$U\""));
    cluster_ = clusterUp({"--ssh-user", kUser});
    QVERIFY(cluster_);
    const QJsonObject json =
        QJsonDocument::fromJson(fileText(kState + QStringLiteral("/cluster.json")).toUtf8())
            .object();
    QCOMPARE(json.value(QStringLiteral("launcher")).toString(), QStringLiteral("ssh"));
    QCOMPARE(json.value(QStringLiteral("agent_user")).toString(), QString::fromStdString(kUser));
  }

  void cleanupTestCase() {
    const ProcessResult down = runProcess({kLocalCluster, "down"}, "/", 120);
    removeUser();
    QVERIFY2(down.exitCode == 0, down.err.c_str());
  }

  void theAgentsRunAsTheUserWithoutALauncherOption() {
    for (const char* node : {"node-1", "node-2"}) {
      const QString pid =
          fileText(kState + QStringLiteral("/%1/agent.pid").arg(QLatin1String(node))).trimmed();
      QVERIFY(!pid.isEmpty());
      QFile status(QStringLiteral("/proc/%1/status").arg(pid));
      QVERIFY(status.open(QIODevice::ReadOnly));
      const QString uidLine = QString::fromUtf8(status.readAll())
                                  .split(QLatin1Char('\n'))
                                  .filter(QStringLiteral("Uid:"))
                                  .value(0);
      const ProcessResult uid = runProcess({"id", "-u", kUser}, "/", 10);
      QVERIFY2(
          uidLine.split(QLatin1Char('\t')).value(1) == QString::fromStdString(uid.out).trimmed(),
          qPrintable(uidLine));
      QVERIFY(!fileText(QStringLiteral("/proc/%1/cmdline").arg(pid))
                   .contains(QStringLiteral("--launcher")));
    }
  }

  void aLaunchBeforeTheSshStepsIsRefusedNamingTheNodeAndSshsReason() {
    QVERIFY(cluster_);
    testing::ControllerInTempDir fixture(clusterOptions(*cluster_));
    Controller& controller = fixture.controller;
    QVERIFY(controller.start().isOk());
    QTRY_VERIFY_WITH_TIMEOUT(bothOnline(controller), 30000);
    const QString node1 = nodeIdNamed(controller, QStringLiteral("node-1"));
    const QString node2 = nodeIdNamed(controller, QStringLiteral("node-2"));
    QSignalSpy failed(&controller, &Controller::launchFailed);
    QSignalSpy launched(&controller, &Controller::runLaunched);
    controller.launch(trainerForm({node1, node2}, 2, 20));
    QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 60000);
    QCOMPARE(launched.count(), 0);
    // ssh has no host key for node-2 yet, and BatchMode lets nobody answer the question.
    const QString message = failed.first().first().toString();
    QVERIFY2(message.contains(QStringLiteral("node-2")) &&
                 message.contains(QStringLiteral("Host key verification failed")),
             qPrintable(message));
  }

  // docs/install.md, "Let the agents reach each other over ssh", typed on each node (runuser -u
  // for the guide's sudo -u: the same, without needing sudo installed).
  void theInstallGuidesSshStepsWork() {
    QVERIFY(cluster_);
    // 1. A login shell: sshd runs the remote command with it, and nologin refuses to.
    QVERIFY(shell(std::string(kNames) + "\"$LC\" exec node-1 usermod --shell /bin/sh \"$U\""));
    // 2. A key of each node's own.
    QVERIFY(shell(std::string(kNames) + R"sh(
      for node in node-1 node-2; do
        "$LC" exec "$node" runuser -u "$U" -- ssh-keygen -q -t ed25519 -N '' -f "$H/.ssh/id_ed25519"
      done)sh"));
    // 3. Every node's public key in every other node's authorized_keys.
    QVERIFY(shell(std::string(kNames) + R"sh(
      for from in node-1 node-2; do
        key=$("$LC" exec "$from" cat "$H/.ssh/id_ed25519.pub")
        for to in node-1 node-2; do
          [[ $to != "$from" ]] || continue
          echo "$key" | "$LC" exec "$to" runuser -u "$U" -- tee -a "$H/.ssh/authorized_keys" >/dev/null
        done
      done)sh"));
    // 4. Every other node's host key in known_hosts, and the check that ssh gets through.
    QVERIFY(shell(std::string(kNames) + R"sh(
      for from in node-1 node-2; do
        for to in node-1 node-2; do
          [[ $to != "$from" ]] || continue
          out=$("$LC" exec "$from" runuser -u "$U" -- ssh -o StrictHostKeyChecking=accept-new \
                "$to" 'echo "$(hostname) $(id -un)"' 2>&1)
          [[ $out == *"$to $U" ]] || { echo "ssh from $from to $to said: $out" >&2; exit 1; }
        done
      done)sh"));
  }

  void aTwoNodeRunLaunchedFromTheGuiGoesOverSshAndCompletes() {
    QVERIFY(cluster_);
    testing::ControllerInTempDir fixture(clusterOptions(*cluster_));
    Controller& controller = fixture.controller;
    QVERIFY(controller.start().isOk());
    QTRY_VERIFY_WITH_TIMEOUT(bothOnline(controller), 30000);
    const QString node1 = nodeIdNamed(controller, QStringLiteral("node-1"));
    const QString node2 = nodeIdNamed(controller, QStringLiteral("node-2"));
    // The refused launch's pre-flight left node-2's slots held for up to 30 s (a launch that
    // never came frees them then: docs/protocol.md, "Pre-flight holds").
    QTRY_COMPARE_WITH_TIMEOUT(usedSlots(controller, node2), 0, 45000);
    const QString sshdLog = kState + QStringLiteral("/node-2/sshd.log");
    const qsizetype loginsBefore =
        fileText(sshdLog).count(QStringLiteral("Accepted publickey for %1").arg(kUser.c_str()));

    const QString runId = launch(controller, trainerForm({node1, node2}, 2, 30));
    QVERIFY(!runId.isEmpty());
    QTRY_VERIFY_WITH_TIMEOUT(storedState(controller, runId) == v1::COMPLETED ||
                                 storedState(controller, runId) == v1::FAILED,
                             300000);
    QVERIFY2(storedState(controller, runId) == v1::COMPLETED,
             qPrintable(storedReason(controller, runId)));

    // Every rank's points, node-2's included, reached the GUI's store.
    const QString runDir = kNodeStateRoot + QStringLiteral("node-1/runs/") + runId;
    const std::map<int, qint64> printed = pointsPerRank(runDir + QStringLiteral("/stdout.log"));
    QCOMPARE(printed.size(), size_t{5});  // ranks 0..3 and the global values
    const QString database = fixture.dir.path() + QStringLiteral("/ringside.sqlite");
    QTRY_VERIFY2_WITH_TIMEOUT(
        storedPointsPerRank(database, runId) == printed,
        qPrintable(QStringLiteral("stored %1, printed %2")
                       .arg(describe(storedPointsPerRank(database, runId)), describe(printed))),
        30000);

    // node-2's ranks came through its sshd, as the user, from node-1 (the launcher's reachability
    // check and Open MPI's daemon: at least two logins); the broker was asked nothing.
    const QString node1Address = cluster_->nodes.value(0).address;
    const QString log = fileText(sshdLog);
    const QString accepted =
        QStringLiteral("Accepted publickey for %1 from %2").arg(kUser.c_str(), node1Address);
    QVERIFY2(log.count(QStringLiteral("Accepted publickey for %1").arg(kUser.c_str())) >=
                     loginsBefore + 2 &&
                 log.contains(accepted),
             qPrintable(log));
    QVERIFY2(!fileText(kState + QStringLiteral("/rsh.log")).contains(QStringLiteral("node-")),
             qPrintable(fileText(kState + QStringLiteral("/rsh.log"))));
  }
};

int main(int argc, char** argv) {
  QCoreApplication app(argc, argv);
  if (ringside::cluster_testing::clusterTestsSkipped(/*ssh=*/true)) return 77;
  SshClusterTest test;
  return QTest::qExec(&test, argc, argv);
}

#include "ssh_cluster_test.moc"
