#include "ringside/gui/metrics_store.h"

#include <QDeadlineTimer>
#include <QPromise>

#include <memory>
#include <type_traits>

#include "store_database.h"
#include "store_schema.h"

namespace ringside::gui {

namespace {

// How long the destructor waits for the store's thread to finish the work submitted before it.
constexpr int kShutdownTimeoutMs = 60000;

Status notOpen(const QString& path) {
  return Status::failedPrecondition("the metrics store " + path.toStdString() +
                                    " is not open: open() it first (or it failed to open)");
}

}  // namespace

MetricsStore::MetricsStore(QString databasePath, QObject* parent)
    : QObject(parent),
      databasePath_(std::move(databasePath)),
      context_(new QObject),
      database_(new Database(databasePath_)) {
  thread_.setObjectName("ringside-store");
  context_->moveToThread(&thread_);
  thread_.start();
}

MetricsStore::~MetricsStore() {
  // Queued behind all submitted work, so everything submitted before completes.
  QMetaObject::invokeMethod(
      context_,
      [this] {
        delete database_;
        database_ = nullptr;
        QThread::currentThread()->quit();
      },
      Qt::QueuedConnection);
  // Bounded, so closing the GUI never hangs on a stuck disk: after the deadline the thread is
  // ended where it stands (SQLite's WAL rolls an unfinished transaction back on the next open, so
  // the file stays consistent; the writes still queued are lost, and the message says so).
  if (!thread_.wait(QDeadlineTimer(kShutdownTimeoutMs))) {
    qCritical(
        "ringside: the run database did not finish its writes within %d s; closing without "
        "them (the database stays consistent)",
        kShutdownTimeoutMs / 1000);
    thread_.terminate();
    thread_.wait();
  }
  delete context_;
}

int MetricsStore::schemaVersion() { return store::kSchemaVersion; }

// Runs `work(Database&)` on the store's thread and returns its result as a future. Work other
// than open() gets the not-open Status instead of running when the database is not open.
template <typename T, typename Work>
QFuture<T> MetricsStore::post(Work work) {
  auto promise = std::make_shared<QPromise<T>>();
  QFuture<T> future = promise->future();
  promise->start();
  QMetaObject::invokeMethod(
      context_,
      [this, promise, work = std::move(work)]() mutable {
        promise->addResult(work(*database_));
        promise->finish();
      },
      Qt::QueuedConnection);
  return future;
}

QFuture<Status> MetricsStore::open() {
  return post<Status>([](Database& db) { return db.open(); });
}

QFuture<Status> MetricsStore::upsertNode(NodeRecord node) {
  return post<Status>([this, node = std::move(node)](Database& db) {
    return db.isOpen() ? db.upsertNode(node) : notOpen(databasePath_);
  });
}

QFuture<Status> MetricsStore::removeNode(QString nodeId) {
  return post<Status>([this, nodeId = std::move(nodeId)](Database& db) {
    return db.isOpen() ? db.removeNode(nodeId) : notOpen(databasePath_);
  });
}

QFuture<Result<std::vector<NodeRecord>>> MetricsStore::nodes() {
  return post<Result<std::vector<NodeRecord>>>(
      [this](Database& db) -> Result<std::vector<NodeRecord>> {
        if (!db.isOpen()) return notOpen(databasePath_);
        return db.nodes();
      });
}

QFuture<Status> MetricsStore::upsertRun(QString nodeId, v1::RunInfo run) {
  return post<Status>([this, nodeId = std::move(nodeId), run = std::move(run)](Database& db) {
    if (!db.isOpen()) return notOpen(databasePath_);
    auto stored = db.upsertRun(nodeId, run);
    if (stored.isOk() && *stored) emit runChanged(QString::fromStdString(run.run_id()));
    return stored.status();
  });
}

QFuture<Result<std::vector<std::optional<uint64_t>>>> MetricsStore::upsertRuns(
    QString nodeId, std::vector<v1::RunInfo> runs) {
  using Seqs = std::vector<std::optional<uint64_t>>;
  return post<Result<Seqs>>(
      [this, nodeId = std::move(nodeId), runs = std::move(runs)](Database& db) -> Result<Seqs> {
        if (!db.isOpen()) return notOpen(databasePath_);
        auto lastSeqs = db.upsertRuns(nodeId, runs);
        if (lastSeqs.isOk()) {
          for (size_t i = 0; i < runs.size() && i < lastSeqs->size(); ++i) {
            if ((*lastSeqs)[i]) emit runChanged(QString::fromStdString(runs[i].run_id()));
          }
        }
        return lastSeqs;
      });
}

QFuture<Result<IngestResult>> MetricsStore::ingest(IngestBatch batch) {
  return post<Result<IngestResult>>(
      [this, batch = std::move(batch)](Database& db) -> Result<IngestResult> {
        if (!db.isOpen()) return notOpen(databasePath_);
        auto result = db.ingest(batch);
        if (result.isOk() && !result->deleted) {
          if (result->newSamples > 0) {
            emit samplesIngested(batch.runId, result->newSamples, result->lastSeq);
          }
          if (result->newSamples > 0 || result->newLogLines > 0 || !batch.states.empty()) {
            emit runChanged(batch.runId);
          }
        }
        return result;
      });
}

QFuture<Result<QStringList>> MetricsStore::ingestTelemetry(QString nodeId, QString hostName,
                                                           v1::NodeTelemetry telemetry) {
  std::vector<TelemetryReading> readings;
  readings.push_back({std::move(nodeId), std::move(hostName), std::move(telemetry)});
  return ingestTelemetry(std::move(readings));
}

QFuture<Result<QStringList>> MetricsStore::ingestTelemetry(std::vector<TelemetryReading> readings) {
  return post<Result<QStringList>>(
      [this, readings = std::move(readings)](Database& db) -> Result<QStringList> {
        if (!db.isOpen()) return notOpen(databasePath_);
        return db.ingestTelemetry(readings);
      });
}

QFuture<Result<std::vector<TelemetryWindow>>> MetricsStore::telemetryWindows(QString nodeId,
                                                                             QString hostName) {
  return post<Result<std::vector<TelemetryWindow>>>(
      [this, nodeId = std::move(nodeId),
       hostName = std::move(hostName)](Database& db) -> Result<std::vector<TelemetryWindow>> {
        if (!db.isOpen()) return notOpen(databasePath_);
        return db.telemetryWindows(nodeId, hostName);
      });
}

QFuture<Result<int64_t>> MetricsStore::ingestFetchedTelemetry(
    QString nodeId, QString hostName, QString runId, std::vector<v1::NodeTelemetry> readings,
    std::optional<double> fetchedThrough) {
  return post<Result<int64_t>>([this, nodeId = std::move(nodeId), hostName = std::move(hostName),
                                runId = std::move(runId), readings = std::move(readings),
                                fetchedThrough](Database& db) -> Result<int64_t> {
    if (!db.isOpen()) return notOpen(databasePath_);
    return db.ingestFetchedTelemetry(nodeId, hostName, runId, readings, fetchedThrough);
  });
}

QFuture<Result<uint64_t>> MetricsStore::lastSeq(QString runId) {
  return post<Result<uint64_t>>([this, runId = std::move(runId)](Database& db) -> Result<uint64_t> {
    if (!db.isOpen()) return notOpen(databasePath_);
    return db.lastSeq(runId);
  });
}

QFuture<Result<std::vector<RunRecord>>> MetricsStore::runs(RunFilter filter) {
  return post<Result<std::vector<RunRecord>>>(
      [this, filter = std::move(filter)](Database& db) -> Result<std::vector<RunRecord>> {
        if (!db.isOpen()) return notOpen(databasePath_);
        return db.runs(filter);
      });
}

QFuture<Result<RunRecord>> MetricsStore::run(QString runId) {
  return post<Result<RunRecord>>(
      [this, runId = std::move(runId)](Database& db) -> Result<RunRecord> {
        if (!db.isOpen()) return notOpen(databasePath_);
        return db.run(runId);
      });
}

QFuture<Status> MetricsStore::setTags(QString runId, QString tags) {
  return post<Status>([this, runId = std::move(runId), tags = std::move(tags)](Database& db) {
    if (!db.isOpen()) return notOpen(databasePath_);
    Status status = db.setText(runId, "tags", tags);
    if (status.isOk()) emit runChanged(runId);
    return status;
  });
}

QFuture<Status> MetricsStore::setNotes(QString runId, QString notes) {
  return post<Status>([this, runId = std::move(runId), notes = std::move(notes)](Database& db) {
    if (!db.isOpen()) return notOpen(databasePath_);
    Status status = db.setText(runId, "notes", notes);
    if (status.isOk()) emit runChanged(runId);
    return status;
  });
}

QFuture<Status> MetricsStore::deleteRun(QString runId) {
  return post<Status>([this, runId = std::move(runId)](Database& db) {
    if (!db.isOpen()) return notOpen(databasePath_);
    Status status = db.deleteRun(runId, maxDeletedRuns_.load());
    if (status.isOk()) emit runDeleted(runId);
    return status;
  });
}

QFuture<Result<std::vector<SeriesPoint>>> MetricsStore::series(QString runId, QString metricName,
                                                               int rank, SeriesX x) {
  return post<Result<std::vector<SeriesPoint>>>(
      [this, runId = std::move(runId), metricName = std::move(metricName), rank,
       x](Database& db) -> Result<std::vector<SeriesPoint>> {
        if (!db.isOpen()) return notOpen(databasePath_);
        return db.series(runId, metricName, rank, x);
      });
}

QFuture<Result<QStringList>> MetricsStore::metricNames(QString runId) {
  return post<Result<QStringList>>(
      [this, runId = std::move(runId)](Database& db) -> Result<QStringList> {
        if (!db.isOpen()) return notOpen(databasePath_);
        return db.metricNames(runId);
      });
}

QFuture<Result<std::vector<int>>> MetricsStore::metricRanks(QString runId, QString metricName) {
  return post<Result<std::vector<int>>>(
      [this, runId = std::move(runId),
       metricName = std::move(metricName)](Database& db) -> Result<std::vector<int>> {
        if (!db.isOpen()) return notOpen(databasePath_);
        return db.metricRanks(runId, metricName);
      });
}

QFuture<Result<int64_t>> MetricsStore::sampleCount(QString runId) {
  return post<Result<int64_t>>([this, runId = std::move(runId)](Database& db) -> Result<int64_t> {
    if (!db.isOpen()) return notOpen(databasePath_);
    return db.count(runId, "metrics");
  });
}

QFuture<Result<int64_t>> MetricsStore::logLineCount(QString runId) {
  return post<Result<int64_t>>([this, runId = std::move(runId)](Database& db) -> Result<int64_t> {
    if (!db.isOpen()) return notOpen(databasePath_);
    return db.count(runId, "logs");
  });
}

QFuture<Result<std::vector<v1::LogLine>>> MetricsStore::logTail(QString runId, int maxLines) {
  return post<Result<std::vector<v1::LogLine>>>(
      [this, runId = std::move(runId), maxLines](Database& db) -> Result<std::vector<v1::LogLine>> {
        if (!db.isOpen()) return notOpen(databasePath_);
        return db.logTail(runId, maxLines);
      });
}

QFuture<Status> MetricsStore::exportCsv(QString runId, QString path) {
  return post<Status>([this, runId = std::move(runId), path = std::move(path)](Database& db) {
    if (!db.isOpen()) return notOpen(databasePath_);
    return db.exportCsv(runId, path);
  });
}

}  // namespace ringside::gui
