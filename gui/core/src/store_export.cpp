// MetricsStore::Database::exportCsv: a run's samples at full resolution as CSV.
#include <QSaveFile>
#include <QSqlError>
#include <QVariant>

#include <charconv>
#include <cmath>

#include "store_database.h"

namespace ringside::gui {

namespace {

// Shortest text that reads back as the same double (std::to_chars round-trip guarantee).
void appendNumber(QByteArray& out, double value) {
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  out.append(buffer, result.ptr - buffer);
}

void appendNumber(QByteArray& out, qlonglong value) {
  char buffer[24];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  out.append(buffer, result.ptr - buffer);
}

// RFC 4180: quote a field holding a comma, quote or line break; double inner quotes.
void appendField(QByteArray& out, const QByteArray& field) {
  if (field.contains(',') || field.contains('"') || field.contains('\n') || field.contains('\r')) {
    QByteArray quoted = field;
    quoted.replace("\"", "\"\"");
    out.append('"').append(quoted).append('"');
  } else {
    out.append(field);
  }
}

}  // namespace

Status MetricsStore::Database::exportCsv(const QString& runId, const QString& path) {
  auto runKey = findRunKey(runId);
  if (!runKey.isOk()) return runKey.status();
  if (!runKey.value()) {
    return Status::notFound("no run " + runId.toStdString() + " to export in " +
                            path_.toStdString());
  }
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly)) {
    return Status::ioError(QString("cannot write %1: %2; choose another folder")
                               .arg(path, file.errorString())
                               .toStdString());
  }
  QSqlQuery query(db_);
  query.setForwardOnly(true);
  query.prepare(
      "SELECT m.step, m.epoch, m.wall_time, m.rank, k.name, m.value FROM metrics m "
      "JOIN metric_keys k ON k.key_id = m.key_id WHERE m.run_key = ? ORDER BY m.seq");
  query.bindValue(0, qlonglong(**runKey));
  if (!query.exec()) return fail(query, "exporting run " + runId);

  QByteArray buffer = "step,epoch,wall_time,rank,name,value\n";
  QHash<QString, QByteArray> names;  // metric name -> its CSV field, encoded once
  while (query.next()) {
    appendNumber(buffer, query.value(0).toLongLong());
    buffer.append(',');
    appendNumber(buffer, query.value(1).toLongLong());
    buffer.append(',');
    appendNumber(buffer, query.value(2).toDouble());
    buffer.append(',');
    appendNumber(buffer, query.value(3).toLongLong());
    buffer.append(',');
    const QString name = query.value(4).toString();
    auto it = names.find(name);
    if (it == names.end()) {
      QByteArray field;
      appendField(field, name.toUtf8());
      it = names.insert(name, field);
    }
    buffer.append(*it).append(',');
    const QVariant value = query.value(5);
    if (!value.isNull() && std::isfinite(value.toDouble())) appendNumber(buffer, value.toDouble());
    buffer.append('\n');
    if (buffer.size() >= (1 << 16)) {
      if (file.write(buffer) != buffer.size()) break;
      buffer.clear();
    }
  }
  if (query.lastError().isValid()) return fail(query, "exporting run " + runId);
  if (file.write(buffer) != buffer.size() || !file.commit()) {
    return Status::ioError(QString("writing %1 failed: %2; is the disk full?")
                               .arg(path, file.errorString())
                               .toStdString());
  }
  return Status::ok();
}

}  // namespace ringside::gui
