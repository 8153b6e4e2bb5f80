// MetricsStore::Database's read queries: the history table's runs, one run, a metric's series,
// the metrics and ranks a run has, counts and the log tail. The writes are in store_database.cpp,
// the CSV export in store_export.cpp.
#include <QJsonArray>
#include <QJsonDocument>
#include <QSqlError>
#include <QVariant>

#include <limits>

#include "store_database.h"

namespace ringside::gui {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

const char* const kRunColumns =
    "run_key, run_id, node_id, name, state, reason, exit_code, spec, config_json, world_size, "
    "created_time, start_time, end_time, last_seq, sample_count, tags, notes, final_loss, "
    "best_accuracy, samples_per_s_sum, samples_per_s_count, placement";

std::optional<double> optionalDouble(const QVariant& value) {
  if (value.isNull()) return std::nullopt;
  return value.toDouble();
}

RunRecord runFromRow(const QSqlQuery& query) {
  RunRecord run;
  run.runKey = query.value(0).toLongLong();
  run.runId = query.value(1).toString();
  run.nodeId = query.value(2).toString();
  run.name = query.value(3).toString();
  const int state = query.value(4).toInt();
  run.state =
      v1::RunState_IsValid(state) ? static_cast<v1::RunState>(state) : v1::RUN_STATE_UNSPECIFIED;
  run.reason = query.value(5).toString();
  run.exitCode = query.value(6).toInt();
  run.spec = query.value(7).toByteArray();
  run.configJson = query.value(8).toString();
  run.worldSize = query.value(9).toInt();
  run.createdTime = query.value(10).toDouble();
  run.startTime = query.value(11).toDouble();
  run.endTime = query.value(12).toDouble();
  run.lastSeq = query.value(13).toULongLong();
  run.sampleCount = query.value(14).toLongLong();
  run.tags = query.value(15).toString();
  run.notes = query.value(16).toString();
  run.finalLoss = optionalDouble(query.value(17));
  run.bestAccuracy = optionalDouble(query.value(18));
  const int64_t samplesPerSCount = query.value(20).toLongLong();
  if (samplesPerSCount > 0) run.meanSamplesPerS = query.value(19).toDouble() / samplesPerSCount;
  const QByteArray placement = query.value(21).toByteArray();
  v1::RunInfo placed;
  if (!placement.isEmpty() && placed.ParseFromArray(placement.constData(), placement.size())) {
    run.placement.assign(placed.placement().begin(), placed.placement().end());
  }
  return run;
}

}  // namespace

Result<uint64_t> MetricsStore::Database::lastSeq(const QString& runId) {
  auto key = findRunKey(runId);
  if (!key.isOk()) return key.status();
  if (!key.value()) return uint64_t{0};
  QSqlQuery& query = prepared("SELECT last_seq FROM runs WHERE run_key = ?");
  query.bindValue(0, qlonglong(**key));
  if (!query.exec()) return fail(query, "reading the last seq of run " + runId);
  const uint64_t seq = query.next() ? query.value(0).toULongLong() : 0;
  query.finish();
  return seq;
}

Result<std::vector<RunRecord>> MetricsStore::Database::runs(const RunFilter& filter) {
  QString sql = QString("SELECT %1 FROM runs WHERE 1").arg(kRunColumns);
  QString pattern;
  if (!filter.text.isEmpty()) {
    pattern = filter.text;
    pattern.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_");
    pattern = "%" + pattern + "%";
    sql +=
        " AND (name LIKE ? ESCAPE '\\' OR run_id LIKE ? ESCAPE '\\' OR "
        "tags LIKE ? ESCAPE '\\' OR notes LIKE ? ESCAPE '\\')";
  }
  if (filter.state) sql += QString(" AND state = %1").arg(static_cast<int>(*filter.state));
  // The ids as one JSON array parameter (SQLite's json_each), whatever their number.
  QString ids;
  if (filter.runIds) {
    sql += " AND run_id IN (SELECT value FROM json_each(?))";
    ids = QString::fromUtf8(
        QJsonDocument(QJsonArray::fromStringList(*filter.runIds)).toJson(QJsonDocument::Compact));
  }
  if (filter.limit > 0) {
    sql += QString(" AND run_key > %1 ORDER BY run_key LIMIT %2")
               .arg(qlonglong(filter.afterRunKey))
               .arg(filter.limit);
  } else if (filter.runIds) {
    sql += " ORDER BY run_key";
  } else {
    sql += " ORDER BY created_time DESC, run_key DESC";
  }
  QSqlQuery query(db_);
  query.setForwardOnly(true);
  if (!query.prepare(sql)) return fail(query, "listing runs");
  int parameter = 0;
  if (!pattern.isEmpty()) {
    for (; parameter < 4; ++parameter) query.bindValue(parameter, pattern);
  }
  if (filter.runIds) query.bindValue(parameter, ids);
  if (!query.exec()) return fail(query, "listing runs");
  std::vector<RunRecord> runs;
  while (query.next()) runs.push_back(runFromRow(query));
  RINGSIDE_RETURN_IF_ERROR(rowsDone(query, "listing runs"));
  return runs;
}

Result<RunRecord> MetricsStore::Database::run(const QString& runId) {
  QSqlQuery query(db_);
  query.setForwardOnly(true);
  query.prepare(QString("SELECT %1 FROM runs WHERE run_id = ?").arg(kRunColumns));
  query.bindValue(0, runId);
  if (!query.exec()) return fail(query, "reading run " + runId);
  if (!query.next()) {
    RINGSIDE_RETURN_IF_ERROR(rowsDone(query, "reading run " + runId));
    return Status::notFound("no run " + runId.toStdString() + " in " + path_.toStdString());
  }
  return runFromRow(query);
}

Result<std::vector<SeriesPoint>> MetricsStore::Database::series(const QString& runId,
                                                                const QString& metricName, int rank,
                                                                SeriesX x) {
  std::vector<SeriesPoint> points;
  auto runKey = findRunKey(runId);
  if (!runKey.isOk()) return runKey.status();
  std::optional<int64_t> key;
  if (const auto keyIt = keyIds_.find(metricName.toStdString()); keyIt != keyIds_.end()) {
    key = keyIt->second;
  } else {
    auto found = findKeyId(metricName);
    if (!found.isOk()) return found.status();
    key = found.value();
  }
  if (!runKey.value() || !key) return points;

  const char* sql = nullptr;
  switch (x) {
    case SeriesX::kStep:
      sql =
          "SELECT step, value FROM metrics WHERE run_key = ? AND key_id = ? AND rank = ? "
          "ORDER BY step, seq";
      break;
    case SeriesX::kEpoch:
      sql =
          "SELECT epoch, value FROM metrics WHERE run_key = ? AND key_id = ? AND rank = ? "
          "ORDER BY step, seq";
      break;
    case SeriesX::kWallTime:
      sql =
          "SELECT wall_time, value FROM metrics WHERE run_key = ? AND key_id = ? AND rank = ? "
          "ORDER BY step, seq";
      break;
  }
  QSqlQuery& query = prepared(sql);
  query.bindValue(0, qlonglong(**runKey));
  query.bindValue(1, qlonglong(*key));
  query.bindValue(2, rank);
  const QString what = "reading series " + metricName + " of run " + runId;
  if (!query.exec()) return fail(query, what);
  while (query.next()) {
    const QVariant value = query.value(1);
    points.push_back({query.value(0).toDouble(), value.isNull() ? kNaN : value.toDouble()});
  }
  // A step that fails part-way (a damaged page) ends next() as the last row does: report it,
  // never a series cut short as if complete.
  RINGSIDE_RETURN_IF_ERROR(rowsDone(query, what));
  query.finish();
  return points;
}

Result<QStringList> MetricsStore::Database::metricNames(const QString& runId) {
  QStringList names;
  auto runKey = findRunKey(runId);
  if (!runKey.isOk()) return runKey.status();
  if (!runKey.value()) return names;
  QSqlQuery& query = prepared(
      "SELECT name FROM metric_keys k WHERE EXISTS "
      "(SELECT 1 FROM metrics m WHERE m.run_key = ? AND m.key_id = k.key_id) ORDER BY name");
  query.bindValue(0, qlonglong(**runKey));
  if (!query.exec()) return fail(query, "listing the metrics of run " + runId);
  while (query.next()) names << query.value(0).toString();
  RINGSIDE_RETURN_IF_ERROR(rowsDone(query, "listing the metrics of run " + runId));
  query.finish();
  return names;
}

Result<std::vector<int>> MetricsStore::Database::metricRanks(const QString& runId,
                                                             const QString& metricName) {
  std::vector<int> ranks;
  auto runKey = findRunKey(runId);
  if (!runKey.isOk()) return runKey.status();
  const auto found = findKeyId(metricName);
  if (!found.isOk()) return found.status();
  const std::optional<int64_t> key = found.value();
  if (!runKey.value() || !key) return ranks;
  // One index seek per distinct rank instead of a scan of every sample.
  QSqlQuery& query =
      prepared("SELECT MIN(rank) FROM metrics WHERE run_key = ? AND key_id = ? AND rank > ?");
  qlonglong after = std::numeric_limits<int>::min();
  while (true) {
    query.bindValue(0, qlonglong(**runKey));
    query.bindValue(1, qlonglong(*key));
    query.bindValue(2, after);
    if (!query.exec()) return fail(query, "listing the ranks of " + metricName);
    const bool more = query.next() && !query.value(0).isNull();
    if (more) after = query.value(0).toLongLong();
    RINGSIDE_RETURN_IF_ERROR(rowsDone(query, "listing the ranks of " + metricName));
    query.finish();
    if (!more) break;
    ranks.push_back(static_cast<int>(after));
  }
  return ranks;
}

Result<int64_t> MetricsStore::Database::count(const QString& runId, const char* table) {
  auto runKey = findRunKey(runId);
  if (!runKey.isOk()) return runKey.status();
  if (!runKey.value()) return int64_t{0};
  QSqlQuery query(db_);
  query.prepare(QString("SELECT COUNT(*) FROM %1 WHERE run_key = ?").arg(table));
  query.bindValue(0, qlonglong(**runKey));
  if (!query.exec() || !query.next()) return fail(query, QString("counting %1").arg(table));
  return query.value(0).toLongLong();
}

Result<std::vector<v1::LogLine>> MetricsStore::Database::logTail(const QString& runId,
                                                                 int maxLines) {
  std::vector<v1::LogLine> lines;
  auto runKey = findRunKey(runId);
  if (!runKey.isOk()) return runKey.status();
  if (!runKey.value() || maxLines <= 0) return lines;
  QSqlQuery& query = prepared(
      "SELECT seq, wall_time, stream, text FROM logs WHERE run_key = ? ORDER BY seq DESC LIMIT ?");
  query.bindValue(0, qlonglong(**runKey));
  query.bindValue(1, maxLines);
  if (!query.exec()) return fail(query, "reading the log of run " + runId);
  while (query.next()) {
    v1::LogLine line;
    line.set_seq(query.value(0).toULongLong());
    line.set_wall_time(query.value(1).toDouble());
    line.set_stream(query.value(2).toString().toStdString());
    line.set_text(query.value(3).toString().toStdString());
    lines.push_back(std::move(line));
  }
  RINGSIDE_RETURN_IF_ERROR(rowsDone(query, "reading the log of run " + runId));
  query.finish();
  std::reverse(lines.begin(), lines.end());
  return lines;
}

}  // namespace ringside::gui
