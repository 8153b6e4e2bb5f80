// MetricsStore::Database: the synchronous half of the store, used only on the store's thread
// (a QSqlDatabase connection belongs to the thread that opened it). Private to the store.
#pragma once

#include <QHash>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QString>

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ringside/gui/metrics_store.h"

struct sqlite3;
struct sqlite3_stmt;

namespace ringside::gui {

class MetricsStore::Database {
 public:
  explicit Database(QString path);
  // Closes the connection and removes it from QtSql's registry.
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  // MetricsStore::open(): refuses a read-only or damaged file (store::readOnlyProblem,
  // store::checkDatabase), then prepares the schema.
  Status open();
  bool isOpen() const { return open_; }

  Status upsertNode(const NodeRecord& node);
  Status removeNode(const QString& nodeId);
  Result<std::vector<NodeRecord>> nodes();

  // MetricsStore::upsertRun; false when the run was deleted in this GUI (nothing stored).
  Result<bool> upsertRun(const QString& nodeId, const v1::RunInfo& run);
  // MetricsStore::upsertRuns: one transaction for all; the runs' last_seq in the same order
  // (nullopt for a run deleted in this GUI, which is not stored).
  Result<std::vector<std::optional<uint64_t>>> upsertRuns(const QString& nodeId,
                                                          const std::vector<v1::RunInfo>& runs);
  Result<IngestResult> ingest(const IngestBatch& batch);
  // MetricsStore::ingestTelemetry (store_telemetry.cpp).
  Result<QStringList> ingestTelemetry(const std::vector<TelemetryReading>& readings);
  // MetricsStore::telemetryWindows and ingestFetchedTelemetry (store_telemetry.cpp).
  Result<std::vector<TelemetryWindow>> telemetryWindows(const QString& nodeId,
                                                        const QString& hostName);
  Result<int64_t> ingestFetchedTelemetry(const QString& nodeId, const QString& hostName,
                                         const QString& runId,
                                         const std::vector<v1::NodeTelemetry>& readings,
                                         std::optional<double> fetchedThrough);
  Result<uint64_t> lastSeq(const QString& runId);
  Result<std::vector<RunRecord>> runs(const RunFilter& filter);
  Result<RunRecord> run(const QString& runId);
  Status setText(const QString& runId, const char* column, const QString& text);
  // MetricsStore::deleteRun; keeps at most `maxDeletedRuns` ids in deleted_runs.
  Status deleteRun(const QString& runId, int maxDeletedRuns);
  Result<std::vector<SeriesPoint>> series(const QString& runId, const QString& metricName, int rank,
                                          SeriesX x);
  Result<QStringList> metricNames(const QString& runId);
  Result<std::vector<int>> metricRanks(const QString& runId, const QString& metricName);
  Result<int64_t> count(const QString& runId, const char* table);
  Result<std::vector<v1::LogLine>> logTail(const QString& runId, int maxLines);
  Status exportCsv(const QString& runId, const QString& path);

 private:
  struct Summary;

  // A prepared statement kept for the connection's lifetime.
  QSqlQuery& prepared(const char* sql);
  // The run's key, or nullopt when the run is not stored.
  Result<std::optional<int64_t>> findRunKey(const QString& runId);
  // The run's key, inserting a placeholder row (with `nodeId`) when it is new; nullopt (nothing
  // inserted) when the run was deleted in this GUI (deleted_runs).
  Result<std::optional<int64_t>> ensureRun(const QString& runId, const QString& nodeId);
  // Whether `runId` is in deleted_runs.
  Result<bool> isDeleted(const QString& runId);
  Result<int64_t> keyId(const std::string& name);
  // The metric's key, or nullopt when the name is not stored.
  Result<std::optional<int64_t>> findKeyId(const QString& name);
  // Applies `run` to the row `runKey`; a state with `stateSeq` older than the stored one is
  // ignored (0: always apply, e.g. from a list reply).
  Status applyRunInfo(int64_t runKey, const v1::RunInfo& run, uint64_t stateSeq);
  Status insertSamples(int64_t runKey, const std::vector<v1::MetricSample>& samples,
                       Summary& summary, int64_t& inserted);
  Status insertLogLines(int64_t runKey, const std::vector<v1::LogLine>& lines, int64_t& inserted);
  // The query's error as a Status naming `what` and the file; kCorruption (a damaged file) says
  // what to do.
  Status fail(const QSqlQuery& query, const QString& what);
  // The same for a failed call of the SQLite C API on handle_ that returned `code`.
  Status rawFail(int code, const QString& what);
  // `status`, or for kCorruption the same with "the database is damaged" and what to do.
  Status withDamageAdvice(const Status& status) const;
  // After a loop of query.next(): OK at the end of the rows, fail(query, what) when next()
  // stopped on an error (QSqlQuery::next() returns false for both).
  Status rowsDone(const QSqlQuery& query, const QString& what);
  // The highest step and epoch stored for the run (0, 0 when none): cached, read once per run.
  Result<std::pair<int64_t, int64_t>> lastStep(int64_t runKey);
  // Inserts a run's telemetry samples (run_gpu_metrics.h) at its last step with the telemetry
  // seq of their wall time, skipping any already stored for the same key, rank and wall time;
  // inside the caller's transaction. Returns the number inserted.
  Result<int64_t> insertTelemetrySamples(int64_t runKey,
                                         const std::vector<v1::MetricSample>& samples,
                                         const QString& what);
  // Records that the run's telemetry from `nodeId` is held up to `through` (never lowers it).
  Status markTelemetryFetched(int64_t runKey, const QString& nodeId, double through,
                              const QString& what);
  void dropCaches() {
    runKeys_.clear();
    keyIds_.clear();
    lastSteps_.clear();
  }

  QString path_;
  QString connectionName_;
  QSqlDatabase db_;
  // The sample inserts go through the SQLite C API on db_'s own connection (QSqlDriver::handle,
  // inside db_'s transactions): binding a QVariant per value through QtSql cost more than
  // SQLite's own work per row (bench/README.md, "chart").
  struct StatementFinalizer {
    void operator()(sqlite3_stmt* statement) const;
  };
  sqlite3* handle_ = nullptr;
  std::unique_ptr<sqlite3_stmt, StatementFinalizer> chunkInsert_;   // kChunkRows samples
  std::unique_ptr<sqlite3_stmt, StatementFinalizer> singleInsert_;  // one sample
  bool open_ = false;
  QHash<QString, int64_t> runKeys_;                  // run_id -> run_key
  std::unordered_map<std::string, int64_t> keyIds_;  // metric name -> key_id
  // run_key -> (highest step, highest epoch) stored, kept by insertSamples once read.
  std::unordered_map<int64_t, std::pair<int64_t, int64_t>> lastSteps_;
  std::unordered_map<const char*, std::unique_ptr<QSqlQuery>> statements_;
};

}  // namespace ringside::gui
