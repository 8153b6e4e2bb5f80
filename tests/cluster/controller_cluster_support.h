// Helpers shared by the cluster tests that drive the GUI's controller (controller_cluster_test,
// ssh_cluster_test): a 2-node local cluster, a controller given it, launching a RunForm and
// reading back what the run printed and what the GUI's store holds.
//
// Thread-safety: call from the test's main thread (the controller's).
#pragma once

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QStringList>
#include <QUuid>
#include <QtTest>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "build_paths.h"
#include "gui_test_support.h"
#include "local_cluster_support.h"
#include "ringside/common/rank_tag.h"
#include "ringside/gui/controller.h"
#include "ringside/gui/local_cluster.h"
#include "test_util.h"

namespace ringside::cluster_testing {

using namespace ringside::gui;
namespace v1 = ringside::v1;
using trainer::ProcessResult;
using trainer::runProcess;

// A line of a run's stdout.log without the tag mpirun --tag-output gives it (common/rank_tag.h).
inline QByteArray withoutRankTag(const QByteArray& line) {
  const std::string text =
      ringside::textWithoutRankTags(std::string_view(line.constData(), line.size()));
  return QByteArray(text.data(), static_cast<qsizetype>(text.size()));
}

// Per rank, the metric points a run's trainer printed to the owner's stdout.log (mpirun forwards
// every rank's output there): rank 0 prints the global ones and the start record's two run/
// facts as rank -1's. Empty when the file cannot be read.
inline std::map<int, qint64> pointsPerRank(const QString& stdoutPath) {
  std::map<int, qint64> points;
  QFile file(stdoutPath);
  if (!file.open(QIODevice::ReadOnly)) return points;
  while (!file.atEnd()) {
    const QJsonObject record = QJsonDocument::fromJson(withoutRankTag(file.readLine())).object();
    const QString type = record.value(QStringLiteral("type")).toString();
    if (type == QStringLiteral("metrics")) {
      const int rank = record.contains(QStringLiteral("rank"))
                           ? record.value(QStringLiteral("rank")).toInt()
                           : -1;
      points[rank] += record.value(QStringLiteral("metrics")).toObject().size();
    }
    if (type == QStringLiteral("start")) points[-1] += 2;
  }
  return points;
}

// Per rank, the metric points the GUI's store holds for the run, read from its SQLite file
// (docs/gui-database.md) on a read-only connection of its own while the store keeps writing.
inline std::map<int, qint64> storedPointsPerRank(const QString& databasePath,
                                                 const QString& runId) {
  const QString connection =
      QStringLiteral("gui-store-") + QUuid::createUuid().toString(QUuid::Id128);
  std::map<int, qint64> points;
  {
    QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), connection);
    db.setDatabaseName(databasePath);
    db.setConnectOptions(QStringLiteral("QSQLITE_OPEN_READONLY;QSQLITE_BUSY_TIMEOUT=5000"));
    if (db.open()) {
      QSqlQuery query(db);
      query.prepare(
          QStringLiteral("SELECT m.rank, COUNT(*) FROM metrics m JOIN runs r "
                         "ON r.run_key = m.run_key JOIN metric_keys k ON k.key_id = m.key_id "
                         "WHERE r.run_id = ? AND k.name NOT LIKE 'straggler/%' GROUP BY m.rank"));
      query.addBindValue(runId);
      if (query.exec()) {
        while (query.next()) points[query.value(0).toInt()] = query.value(1).toLongLong();
      }
    }
  }
  QSqlDatabase::removeDatabase(connection);
  return points;
}

inline QString describe(const std::map<int, qint64>& points) {
  QStringList parts;
  for (const auto& [rank, count] : points) parts << QStringLiteral("%1:%2").arg(rank).arg(count);
  return parts.join(QLatin1Char(' '));
}

// What the controller cluster tests use: a controller given the cluster, node lookup, launching
// and the stored state of a run.
struct ClusterHelpers {
  // A controller given the local cluster, started, with both nodes online and their hello in.
  static ControllerOptions clusterOptions(const LocalCluster& cluster) {
    ControllerOptions options = gui::testing::ControllerInTempDir::withoutLocalAgent();
    options.localCluster = cluster;
    return options;
  }

  static QString nodeIdNamed(const Controller& controller, const QString& name) {
    for (const NodeView& node : controller.nodes()) {
      if (node.record.name == name) return node.record.nodeId;
    }
    return {};
  }

  static bool bothOnline(const Controller& controller) {
    int online = 0;
    for (const NodeView& node : controller.nodes()) {
      online += node.state == NodeState::Online && node.info.has_value();
    }
    return online == 2;
  }

  static RunForm trainerForm(const QStringList& nodeIds, int ranksPerNode, int maxSteps) {
    RunForm form;
    form.name = QStringLiteral("controller cluster test");
    form.backend = QStringLiteral("mpi");
    form.globalBatch = 64;
    form.seed = 11;
    form.trainerBase.set_max_steps(maxSteps);
    form.trainerBase.set_log_every(1);
    form.trainerBase.set_train_samples(10000);
    form.trainerBase.set_test_samples(1000);
    form.trainerBase.set_quiet(true);
    form.nodeIds = nodeIds;
    form.ranksPerNode = ranksPerNode;
    return form;
  }

  // Launches `form` and returns the run id ("" and a test failure when the launch failed).
  static QString launch(Controller& controller, const RunForm& form) {
    QSignalSpy launched(&controller, &Controller::runLaunched);
    QSignalSpy failed(&controller, &Controller::launchFailed);
    controller.launch(form);
    if (!QTest::qWaitFor([&] { return launched.count() + failed.count() > 0; }, 60000)) {
      qWarning("the launch neither succeeded nor failed within 60 s");
      return {};
    }
    if (failed.count() > 0) {
      qWarning("launch failed: %s", qPrintable(failed.first().first().toString()));
      return {};
    }
    return launched.first().first().toString();
  }

  // The CPU slots in use that a node's latest telemetry reports; -1 before its first sample.
  static int usedSlots(const Controller& controller, const QString& nodeId) {
    const auto node = controller.node(nodeId);
    return node && node->telemetry ? static_cast<int>(node->telemetry->cpu_slots_used()) : -1;
  }

  static v1::RunState storedState(Controller& controller, const QString& runId) {
    auto run = controller.store().run(runId).result();
    return run.isOk() ? run->state : v1::RUN_STATE_UNSPECIFIED;
  }
  static QString storedReason(Controller& controller, const QString& runId) {
    auto run = controller.store().run(runId).result();
    return run.isOk() ? run->reason : QString();
  }

  // Brings a fresh 2-node cluster up (`extra`: more options for `up`).
  static std::optional<LocalCluster> clusterUp(const std::vector<std::string>& extra = {}) {
    (void)runProcess({kLocalCluster, "down"}, "/", 120);
    std::vector<std::string> argv{kLocalCluster, "up", "2", "--bin-dir", ringside::test::binaryDir()};
    argv.insert(argv.end(), extra.begin(), extra.end());
    const ProcessResult up = runProcess(argv, "/", 180);
    if (up.exitCode != 0) {
      qWarning("local-cluster up failed: %s", up.err.c_str());
      return std::nullopt;
    }
    auto cluster = parseLocalCluster(QByteArray::fromStdString(up.out), QStringLiteral("stdout"));
    if (!cluster.isOk() || cluster->nodes.size() != 2) {
      qWarning("local-cluster up printed no 2-node cluster: %s", up.out.c_str());
      return std::nullopt;
    }
    return *cluster;
  }
};

}  // namespace ringside::cluster_testing
