// MetricsStore::Database::ingestTelemetry: GPU telemetry of running runs stored as their metric
// samples (docs/metrics.md, "GPU telemetry of a run").
#include <QSqlError>
#include <QVariant>

#include <algorithm>
#include <cmath>

#include "ringside/gui/run_gpu_metrics.h"
#include "store_database.h"
#include "store_schema.h"

namespace ringside::gui {

namespace {

// Telemetry samples have no journal seq. They get negative seqs from their wall time (ms),
// increasing with time, so they never meet the agent's seqs (1, 2, ...), never raise a run's
// last_seq (catch-up asks the agent for seq > last_seq), and sort by time within a step.
constexpr int64_t kTelemetrySeqBase = int64_t{1} << 62;

int64_t telemetrySeq(double wallTime) {
  return static_cast<int64_t>(std::llround(wallTime * 1000.0)) - kTelemetrySeqBase;
}

}  // namespace

Result<std::pair<int64_t, int64_t>> MetricsStore::Database::lastStep(int64_t runKey) {
  if (auto cached = lastSteps_.find(runKey); cached != lastSteps_.end()) return cached->second;
  QSqlQuery& query = prepared(
      "SELECT COALESCE(MAX(step), 0), COALESCE(MAX(epoch), 0) FROM metrics "
      "WHERE run_key = ?");
  query.bindValue(0, qlonglong(runKey));
  if (!query.exec() || !query.next()) return fail(query, "reading the last step of a run");
  const std::pair<int64_t, int64_t> last{query.value(0).toLongLong(), query.value(1).toLongLong()};
  query.finish();
  lastSteps_.emplace(runKey, last);
  return last;
}

Result<QStringList> MetricsStore::Database::ingestTelemetry(const QString& nodeId,
                                                            const QString& hostName,
                                                            const v1::NodeTelemetry& telemetry) {
  const QString what = "storing GPU telemetry of node " + nodeId;
  QStringList stored;
  if (telemetry.gpus_size() == 0) return stored;
  QSqlQuery& running = prepared(
      "SELECT run_key, run_id, node_id, placement FROM runs "
      "WHERE state = ?");
  running.bindValue(0, static_cast<int>(v1::RUNNING));
  if (!running.exec()) return fail(running, what);
  struct Running {
    int64_t runKey = 0;
    QString runId;
    std::vector<v1::MetricSample> samples;
  };
  std::vector<Running> runs;
  while (running.next()) {
    std::vector<v1::HostSlots> placement;
    const QByteArray bytes = running.value(3).toByteArray();
    v1::RunInfo placed;
    if (!bytes.isEmpty() && placed.ParseFromArray(bytes.constData(), bytes.size())) {
      placement.assign(placed.placement().begin(), placed.placement().end());
    }
    const bool owner = running.value(2).toString() == nodeId;
    auto samples = runGpuSamples(placement, hostName, owner, telemetry);
    if (samples.empty()) continue;
    runs.push_back(Running{.runKey = running.value(0).toLongLong(),
                           .runId = running.value(1).toString(),
                           .samples = std::move(samples)});
  }
  RINGSIDE_RETURN_IF_ERROR(rowsDone(running, what));
  running.finish();
  if (runs.empty()) return stored;

  if (!db_.transaction()) return store::sqlError(db_.lastError(), "beginning " + what);
  QSqlQuery& insert = prepared(
      "INSERT OR IGNORE INTO metrics (run_key, key_id, rank, step, seq, epoch, wall_time, value) "
      "VALUES (?,?,?,?,?,?,?,?)");
  QSqlQuery& count = prepared("UPDATE runs SET sample_count = sample_count + ? WHERE run_key = ?");
  auto rollback = [this](Status status) {
    db_.rollback();
    dropCaches();
    return status;
  };
  for (const Running& run : runs) {
    auto last = lastStep(run.runKey);
    if (!last.isOk()) return rollback(last.status());
    int64_t inserted = 0;
    for (const v1::MetricSample& sample : run.samples) {
      auto key = keyId(sample.name());
      if (!key.isOk()) return rollback(key.status());
      insert.bindValue(0, qlonglong(run.runKey));
      insert.bindValue(1, qlonglong(*key));
      insert.bindValue(2, sample.rank());
      insert.bindValue(3, qlonglong(last->first));
      insert.bindValue(4, qlonglong(telemetrySeq(sample.wall_time())));
      insert.bindValue(5, qlonglong(last->second));
      insert.bindValue(6, sample.wall_time());
      insert.bindValue(7, sample.value());
      if (!insert.exec()) return rollback(fail(insert, what));
      inserted += std::max(0, insert.numRowsAffected());
    }
    count.bindValue(0, qlonglong(inserted));
    count.bindValue(1, qlonglong(run.runKey));
    if (!count.exec()) return rollback(fail(count, what));
    if (inserted > 0) stored.append(run.runId);
  }
  if (!db_.commit()) return rollback(store::sqlError(db_.lastError(), "committing " + what));
  return stored;
}

}  // namespace ringside::gui
