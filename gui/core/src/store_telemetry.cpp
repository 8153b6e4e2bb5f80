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

// run_node_telemetry.fetched_through of an ended run that has nothing (more) to fetch from the
// node: later than any end time, so telemetryWindows never lists it again.
constexpr double kSettled = 1e300;

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

Result<QStringList> MetricsStore::Database::ingestTelemetry(
    const std::vector<TelemetryReading>& readings) {
  QStringList stored;
  const auto withGpus = [](const TelemetryReading& r) { return r.telemetry.gpus_size() > 0; };
  if (std::none_of(readings.begin(), readings.end(), withGpus)) return stored;
  const QString what = readings.size() == 1
                           ? "storing GPU telemetry of node " + readings.front().nodeId
                           : QString("storing GPU telemetry of %1 messages").arg(readings.size());
  // The running runs, read once for every reading.
  QSqlQuery& running = prepared(
      "SELECT run_key, run_id, node_id, placement FROM runs "
      "WHERE state = ?");
  running.bindValue(0, static_cast<int>(v1::RUNNING));
  if (!running.exec()) return fail(running, what);
  struct Running {
    int64_t runKey = 0;
    QString runId;
    QString ownerNodeId;
    std::vector<v1::HostSlots> placement;
  };
  std::vector<Running> runs;
  while (running.next()) {
    Running run{.runKey = running.value(0).toLongLong(),
                .runId = running.value(1).toString(),
                .ownerNodeId = running.value(2).toString(),
                .placement = {}};
    const QByteArray bytes = running.value(3).toByteArray();
    v1::RunInfo placed;
    if (!bytes.isEmpty() && placed.ParseFromArray(bytes.constData(), bytes.size())) {
      run.placement.assign(placed.placement().begin(), placed.placement().end());
    }
    runs.push_back(std::move(run));
  }
  RINGSIDE_RETURN_IF_ERROR(rowsDone(running, what));
  running.finish();
  if (runs.empty()) return stored;

  bool began = false;
  auto rollback = [this](Status status) {
    db_.rollback();
    dropCaches();
    return status;
  };
  for (const TelemetryReading& reading : readings) {
    if (reading.telemetry.gpus_size() == 0) continue;
    const QString readingWhat = "storing GPU telemetry of node " + reading.nodeId;
    for (const Running& run : runs) {
      auto samples = runGpuSamples(run.placement, reading.hostName,
                                   run.ownerNodeId == reading.nodeId, reading.telemetry);
      if (samples.empty()) continue;
      if (!began) {
        if (!db_.transaction()) return store::sqlError(db_.lastError(), "beginning " + what);
        began = true;
      }
      auto inserted = insertTelemetrySamples(run.runKey, samples, readingWhat);
      if (!inserted.isOk()) return rollback(inserted.status());
      if (*inserted > 0 && !stored.contains(run.runId)) stored.append(run.runId);
    }
  }
  if (began && !db_.commit()) {
    return rollback(store::sqlError(db_.lastError(), "committing " + what));
  }
  return stored;
}

Result<int64_t> MetricsStore::Database::insertTelemetrySamples(
    int64_t runKey, const std::vector<v1::MetricSample>& samples, const QString& what) {
  // "seq < 0" in the text lets SQLite use the partial index metrics_telemetry.
  QSqlQuery& held = prepared(
      "SELECT 1 FROM metrics WHERE run_key = ? AND key_id = ? AND rank = ? AND seq = ? "
      "AND seq < 0 LIMIT 1");
  QSqlQuery& insert = prepared(
      "INSERT OR IGNORE INTO metrics (run_key, key_id, rank, step, seq, epoch, wall_time, value) "
      "VALUES (?,?,?,?,?,?,?,?)");
  QSqlQuery& count = prepared("UPDATE runs SET sample_count = sample_count + ? WHERE run_key = ?");
  auto last = lastStep(runKey);
  if (!last.isOk()) return last.status();
  int64_t inserted = 0;
  for (const v1::MetricSample& sample : samples) {
    auto key = keyId(sample.name());
    if (!key.isOk()) return key.status();
    const int64_t seq = telemetrySeq(sample.wall_time());
    // The same reading stored before (live, or by an earlier fetch), perhaps at another step.
    held.bindValue(0, qlonglong(runKey));
    held.bindValue(1, qlonglong(*key));
    held.bindValue(2, sample.rank());
    held.bindValue(3, qlonglong(seq));
    if (!held.exec()) return fail(held, what);
    const bool known = held.next();
    held.finish();
    if (known) continue;
    insert.bindValue(0, qlonglong(runKey));
    insert.bindValue(1, qlonglong(*key));
    insert.bindValue(2, sample.rank());
    insert.bindValue(3, qlonglong(last->first));
    insert.bindValue(4, qlonglong(seq));
    insert.bindValue(5, qlonglong(last->second));
    insert.bindValue(6, sample.wall_time());
    insert.bindValue(7, sample.value());
    if (!insert.exec()) return fail(insert, what);
    inserted += std::max(0, insert.numRowsAffected());
  }
  if (inserted > 0) {
    count.bindValue(0, qlonglong(inserted));
    count.bindValue(1, qlonglong(runKey));
    if (!count.exec()) return fail(count, what);
  }
  return inserted;
}

Status MetricsStore::Database::markTelemetryFetched(int64_t runKey, const QString& nodeId,
                                                    double through, const QString& what) {
  QSqlQuery& mark = prepared(
      "INSERT INTO run_node_telemetry (run_key, node_id, fetched_through) VALUES (?,?,?) "
      "ON CONFLICT (run_key, node_id) DO UPDATE SET "
      "fetched_through = MAX(fetched_through, excluded.fetched_through)");
  mark.bindValue(0, qlonglong(runKey));
  mark.bindValue(1, nodeId);
  mark.bindValue(2, through);
  if (!mark.exec()) return fail(mark, what);
  return Status::ok();
}

Result<std::vector<TelemetryWindow>> MetricsStore::Database::telemetryWindows(
    const QString& nodeId, const QString& hostName) {
  const QString what = "listing the runs whose telemetry node " + nodeId + " may hold";
  QSqlQuery& query = prepared(
      "SELECT r.run_key, r.run_id, r.node_id, r.placement, r.state, r.start_time, r.end_time, "
      "t.fetched_through FROM runs r LEFT JOIN run_node_telemetry t "
      "ON t.run_key = r.run_key AND t.node_id = ? "
      "WHERE t.fetched_through IS NULL OR t.fetched_through < r.end_time OR r.state NOT IN "
      "(?, ?, ?) ORDER BY r.run_key");
  query.bindValue(0, nodeId);
  query.bindValue(1, static_cast<int>(v1::COMPLETED));
  query.bindValue(2, static_cast<int>(v1::FAILED));
  query.bindValue(3, static_cast<int>(v1::STOPPED));
  if (!query.exec()) return fail(query, what);
  std::vector<TelemetryWindow> windows;
  std::vector<int64_t> settled;  // ended runs with nothing (more) to fetch from this node
  while (query.next()) {
    const auto state = static_cast<v1::RunState>(query.value(4).toInt());
    const bool ended = state == v1::COMPLETED || state == v1::FAILED || state == v1::STOPPED;
    const double start = query.value(5).toDouble();
    const double end = query.value(6).toDouble();
    const int64_t runKey = query.value(0).toLongLong();
    std::vector<v1::HostSlots> placement;
    const QByteArray bytes = query.value(3).toByteArray();
    v1::RunInfo placed;
    if (!bytes.isEmpty() && placed.ParseFromArray(bytes.constData(), bytes.size())) {
      placement.assign(placed.placement().begin(), placed.placement().end());
    }
    const bool owner = query.value(2).toString() == nodeId;
    const bool onNode = nodeFirstRank(placement, hostName, owner).has_value();
    if (ended && (!onNode || start <= 0 || end <= 0)) {
      settled.push_back(runKey);
      continue;
    }
    if (!onNode || start <= 0) continue;  // not placed here (yet), or not started
    const double through = query.value(7).isNull() ? 0 : query.value(7).toDouble();
    windows.push_back(TelemetryWindow{.runId = query.value(1).toString(),
                                      .from = std::max(start, through),
                                      .to = ended ? end : 0});
  }
  RINGSIDE_RETURN_IF_ERROR(rowsDone(query, what));
  query.finish();
  if (!settled.empty()) {
    if (!db_.transaction()) return store::sqlError(db_.lastError(), "beginning " + what);
    for (int64_t runKey : settled) {
      if (Status s = markTelemetryFetched(runKey, nodeId, kSettled, what); !s.isOk()) {
        db_.rollback();
        return s;
      }
    }
    if (!db_.commit()) {
      db_.rollback();
      return store::sqlError(db_.lastError(), "committing " + what);
    }
  }
  return windows;
}

Result<int64_t> MetricsStore::Database::ingestFetchedTelemetry(
    const QString& nodeId, const QString& hostName, const QString& runId,
    const std::vector<v1::NodeTelemetry>& readings, std::optional<double> fetchedThrough) {
  const QString what = "storing fetched telemetry of node " + nodeId + " for run " + runId;
  QSqlQuery& find = prepared("SELECT run_key, node_id, placement FROM runs WHERE run_id = ?");
  find.bindValue(0, runId);
  if (!find.exec()) return fail(find, what);
  if (!find.next()) {
    RINGSIDE_RETURN_IF_ERROR(rowsDone(find, what));
    find.finish();
    return Status::notFound("no run " + runId.toStdString() + " is stored");
  }
  const int64_t runKey = find.value(0).toLongLong();
  const bool owner = find.value(1).toString() == nodeId;
  std::vector<v1::HostSlots> placement;
  const QByteArray bytes = find.value(2).toByteArray();
  find.finish();
  v1::RunInfo placed;
  if (!bytes.isEmpty() && placed.ParseFromArray(bytes.constData(), bytes.size())) {
    placement.assign(placed.placement().begin(), placed.placement().end());
  }
  std::vector<v1::MetricSample> samples;
  for (const v1::NodeTelemetry& reading : readings) {
    std::vector<v1::MetricSample> more = runGpuSamples(placement, hostName, owner, reading);
    samples.insert(samples.end(), std::make_move_iterator(more.begin()),
                   std::make_move_iterator(more.end()));
  }
  if (!db_.transaction()) return store::sqlError(db_.lastError(), "beginning " + what);
  auto rollback = [this](Status status) {
    db_.rollback();
    dropCaches();
    return status;
  };
  auto inserted = insertTelemetrySamples(runKey, samples, what);
  if (!inserted.isOk()) return rollback(inserted.status());
  if (fetchedThrough) {
    if (Status s = markTelemetryFetched(runKey, nodeId, *fetchedThrough, what); !s.isOk()) {
      return rollback(s);
    }
  }
  if (!db_.commit()) return rollback(store::sqlError(db_.lastError(), "committing " + what));
  return *inserted;
}

}  // namespace ringside::gui
