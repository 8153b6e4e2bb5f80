// MetricsStore: the GUI's run history and metrics database (docs/design.md decisions 6 and 7).
// One SQLite file (WAL, synchronous=NORMAL) opened through QtSql's QSQLITE driver on the store's
// own thread; every public call posts its work there and returns a QFuture, so the GUI thread
// never waits on SQLite. docs/gui-database.md documents the schema and its migrations.
#pragma once

#include <QFuture>
#include <QObject>
#include <QString>
#include <QStringList>
#include <QThread>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <optional>
#include <vector>

#include "ringside/common/status.h"
#include "ringside/gui/decimation.h"
#include "ringside/proto/ringside.pb.h"

namespace ringside::gui {

// A node the GUI knows (the Nodes view's list; the agent's public key goes to its CURVE client).
struct NodeRecord {
  QString nodeId;          // stable agent id (NodeInfo.node_id), or one the GUI chose before Hello
  QString name;            // display name
  QString address;         // e.g. "tcp://gpu01:7710"
  QString publicKey;       // the agent's CURVE public key, Z85 text
  double addedTime = 0.0;  // Unix seconds
  // Launch settings (node_settings.h, NodeSettings): the interface or subnet for MPI/NCCL traffic
  // ("" = the libraries' choice), extra mpirun options when this node owns a run (one command
  // line), and the CURVE secret key file presented instead of the GUI's keypair ("" = the GUI's).
  QString networkInterface;
  QString mpirunOptions;
  QString clientKeyFile;
};

// One row of the history table: the last known RunInfo plus what the GUI adds (tags, notes) and
// the summary kept up to date on ingest.
struct RunRecord {
  QString runId;
  int64_t runKey = 0;  // the database's integer key for the run
  QString nodeId;      // the agent that owns the run
  QString name;
  v1::RunState state = v1::RUN_STATE_UNSPECIFIED;
  QString reason;  // why it failed or stopped
  int exitCode = 0;
  QByteArray spec;     // serialized ringside.v1.RunSpec (empty until a RunInfo arrived)
  QString configJson;  // flat JSON object of the spec's settings, for the config diff
  int worldSize = 0;
  // Where its ranks run (RunInfo.placement): hosts in rank order with their ranks and GPUs.
  // Empty until an agent that reports it sent the run.
  std::vector<v1::HostSlots> placement;
  double createdTime = 0.0;  // Unix seconds; 0 = unknown
  double startTime = 0.0;
  double endTime = 0.0;     // 0 while running
  uint64_t lastSeq = 0;     // highest journal seq ingested (samples, log lines, states)
  int64_t sampleCount = 0;  // metric samples stored
  QString tags;             // comma-separated, editable
  QString notes;            // free text, editable
  // Summary over global (rank -1) values; empty until such a value arrived.
  std::optional<double> finalLoss;        // train/loss at the highest step
  std::optional<double> bestAccuracy;     // max of test/accuracy
  std::optional<double> meanSamplesPerS;  // mean of train/samples_per_s records
};

// Filter of the history table; empty fields match everything.
struct RunFilter {
  QString text;  // case-insensitive (ASCII) substring of name, run id, tags or notes
  std::optional<v1::RunState> state;
  // Paging, so that a long history is read (and handed to the GUI thread) a page at a time:
  // limit > 0 returns at most `limit` runs whose runKey is greater than afterRunKey, in runKey
  // order (the order they were first stored), instead of every run newest first.
  int limit = 0;
  int64_t afterRunKey = 0;
  // Only these runs, in runKey order (with limit, the page of them); ids not stored are left
  // out. One query for any number of ids (History's changed runs, up to a page of them).
  std::optional<QStringList> runIds = std::nullopt;
};

// A stretch of a run's node telemetry the GUI does not hold yet (MetricsStore::telemetryWindows):
// [from, to] in Unix seconds, to = 0 while the run is running (no upper end: up to now).
struct TelemetryWindow {
  QString runId;
  double from = 0;
  double to = 0;
};

// Everything one FetchRunDataReply page or one batch of live events brings for one run.
struct IngestBatch {
  QString runId;
  QString nodeId;  // stored when the run is new to the database
  std::vector<v1::MetricSample> samples;
  std::vector<v1::LogLine> logLines;
  std::vector<v1::RunStateEvent> states;  // each applied as upsertRun unless an older seq
};

// One live telemetry message of a node, for MetricsStore::ingestTelemetry.
struct TelemetryReading {
  QString nodeId;
  QString hostName;  // as NodeChoice.hostName
  v1::NodeTelemetry telemetry;
};

struct IngestResult {
  int64_t newSamples = 0;  // samples not stored before (re-sent seqs are ignored)
  int64_t newLogLines = 0;
  uint64_t lastSeq = 0;  // the run's highest ingested seq after this batch
  // The run was deleted in this GUI (MetricsStore::deleteRun): nothing was stored, and the
  // connection should stop fetching it.
  bool deleted = false;
};

// Which value of a sample becomes the x of a series point.
enum class SeriesX { kStep, kEpoch, kWallTime };

// The store. Thread-safe: every method may be called from any thread; work runs in order of
// submission on the store's thread and the returned future completes there (use
// QFuture::then(context, ...) or QFutureWatcher on the GUI thread; never wait on it there).
// Failures come back as a non-OK Status in the future's result: kFailedPrecondition before a
// successful open(), kIOError/kCorruption/kInternal from SQLite with its message. A query that
// meets a damaged page part-way returns kCorruption, never the rows it read before as if they
// were all.
// Signals are emitted from the store's thread (queued to receivers in other threads).
class MetricsStore : public QObject {
  Q_OBJECT

 public:
  // Does not touch the file yet; call open(). `databasePath` is the SQLite file, e.g.
  // QStandardPaths::AppDataLocation + "/ringside.sqlite" or <--data-dir>/ringside.sqlite.
  explicit MetricsStore(QString databasePath, QObject* parent = nullptr);
  // Finishes all submitted work, closes the database and joins the store's thread, waiting at
  // most 60 s: after that the thread is ended and the writes still queued are lost (logged; the
  // database stays consistent).
  ~MetricsStore() override;
  MetricsStore(const MetricsStore&) = delete;
  MetricsStore& operator=(const MetricsStore&) = delete;

  const QString& databasePath() const { return databasePath_; }

  // Opens or creates the file (and its folder), checks it, sets WAL and synchronous=NORMAL and
  // migrates the schema forward to the current version. The check runs PRAGMA quick_check
  // (about 0.7 s per 130 MB on the store's thread; docs/gui-database.md, "Damaged databases")
  // and tries a write that it rolls back. Errors, each with a message that names the file and
  // says what to do: kCorruption when the file is damaged or not an SQLite database (nothing is
  // read from or written to it then); kIOError "<path> is read-only: <reason>" when the file, its
  // -wal/-shm or its folder cannot be written (chmod, chattr +i, a read-only mount: root too),
  // and when it cannot be opened; kFailedPrecondition when the file's user_version is newer
  // than this build knows (a newer ringside wrote it).
  QFuture<Status> open();

  // The schema version this build writes (PRAGMA user_version).
  static int schemaVersion();

  QFuture<Status> upsertNode(NodeRecord node);
  QFuture<Status> removeNode(QString nodeId);
  QFuture<Result<std::vector<NodeRecord>>> nodes();

  // Inserts or updates the run from an agent's RunInfo (list reply, launch reply, state event).
  // Tags are taken from the spec only when the run is new; notes are never touched. A run
  // deleted in this GUI (deleteRun) is not stored again (OK, nothing written).
  QFuture<Status> upsertRun(QString nodeId, v1::RunInfo run);
  // upsertRun for many runs of node `nodeId` in one transaction (a slice of a run list), with
  // runChanged for each stored one. The result holds each run's highest ingested seq (lastSeq),
  // in the order of `runs`; nullopt for a run deleted in this GUI (deleteRun), which is not
  // stored again. Errors: as upsertRun (InvalidArgument for a RunInfo without run_id); nothing
  // is stored then.
  QFuture<Result<std::vector<std::optional<uint64_t>>>> upsertRuns(QString nodeId,
                                                                   std::vector<v1::RunInfo> runs);

  // Stores a batch in one transaction. Idempotent by (run, seq): entries already stored are
  // skipped, so catch-up after a reconnect never duplicates. Creates the run row if needed.
  QFuture<Result<IngestResult>> ingest(IngestBatch batch);

  // Stores the GPU values of one telemetry message of node `nodeId` (host name `hostName`, as
  // NodeChoice.hostName) with every run stored as RUNNING that has GPUs there (run_gpu_metrics.h:
  // gpu<i>/... at the node's first rank), at the run's highest stored step and epoch, with
  // negative seqs that leave the run's last_seq alone. Returns the run ids that got samples; an
  // empty list when no running run uses the node's GPUs. Emits no signal (the dashboard draws
  // live telemetry itself; History reads the samples when it shows the run).
  QFuture<Result<QStringList>> ingestTelemetry(QString nodeId, QString hostName,
                                               v1::NodeTelemetry telemetry);
  // ingestTelemetry of several messages (of one node or many) in one transaction, in order: one
  // commit instead of one per message (the Controller groups live telemetry so). Returns every
  // run id that got samples, once. On an error nothing of the batch is stored.
  QFuture<Result<QStringList>> ingestTelemetry(std::vector<TelemetryReading> readings);

  // The stretches of run telemetry node `nodeId` (host name `hostName`) journaled that the GUI
  // may lack (docs/design.md decision 12; docs/gui-database.md, "run_node_telemetry"): for every
  // stored run with ranks on the node (run_gpu_metrics.h's nodeFirstRank) that started, from its
  // start (or from where an earlier fetch got to) to its end (0: running). An ended run fetched
  // to its end, and an ended run with no rank on the node, is marked so and never listed again.
  // Errors: SQLite errors.
  QFuture<Result<std::vector<TelemetryWindow>>> telemetryWindows(QString nodeId, QString hostName);

  // Stores readings of node `nodeId` fetched from its telemetry journal (FetchTelemetryReply)
  // with run `runId` as ingestTelemetry stores live ones (the run's GPUs on the node, at its
  // first rank), whatever the run's state now; a value already stored for the same GPU, field
  // and wall time (live, or an earlier fetch) is skipped, so a window fetched twice stores
  // nothing twice. With `fetchedThrough`, records that the run's telemetry from the node is held
  // up to that wall time (telemetryWindows then starts there). Returns the number of samples
  // stored. Errors: kNotFound for a run not stored; SQLite errors (nothing stored then).
  QFuture<Result<int64_t>> ingestFetchedTelemetry(QString nodeId, QString hostName, QString runId,
                                                  std::vector<v1::NodeTelemetry> readings,
                                                  std::optional<double> fetchedThrough);

  // The highest seq ingested for the run (0 when unknown): ask the agent for seq > this.
  QFuture<Result<uint64_t>> lastSeq(QString runId);

  // The history table, newest first (or one page of it in runKey order: RunFilter::limit).
  QFuture<Result<std::vector<RunRecord>>> runs(RunFilter filter = {});
  // One run; kNotFound when the id is unknown.
  QFuture<Result<RunRecord>> run(QString runId);

  QFuture<Status> setTags(QString runId, QString tags);
  QFuture<Status> setNotes(QString runId, QString notes);
  // Deletes the run with its metrics, log lines and telemetry marks (one transaction) and
  // remembers its id in deleted_runs, so that no agent brings it back: upsertRun, upsertRuns and
  // ingest skip a remembered id from then on (docs/gui-database.md, "Deleting a run"). The agent's
  // journal keeps the run until its own retention deletes it. At most maxDeletedRuns() ids are
  // remembered, the oldest forgotten first. Errors: kNotFound when the run is not stored;
  // kFailedPrecondition when its stored state is queued, starting or running (stop it first);
  // SQLite errors (nothing deleted then).
  QFuture<Status> deleteRun(QString runId);
  // How many deleted run ids the store remembers (kMaxDeletedRuns unless set). Thread-safe; a
  // lower value takes effect at the next deleteRun.
  int maxDeletedRuns() const { return maxDeletedRuns_.load(); }
  void setMaxDeletedRuns(int count) { maxDeletedRuns_.store(std::max(count, 1)); }
  // 100,000 ids: about 10 MB at most, more runs than a node given a retention
  // (ringside-agent --retention-max-runs) keeps, so a deleted run is forgotten only after its
  // agent forgot it too.
  static constexpr int kMaxDeletedRuns = 100000;

  // All samples of one metric of one rank (-1: global values), ordered by step (then seq), with
  // x as step, epoch or wall time and y as the value (NaN for a non-finite value). Empty when the
  // run or metric is unknown.
  QFuture<Result<std::vector<SeriesPoint>>> series(QString runId, QString metricName, int rank,
                                                   SeriesX x = SeriesX::kStep);
  // Names of the metrics the run has samples of, sorted.
  QFuture<Result<QStringList>> metricNames(QString runId);
  // Ranks (-1 = global) that have samples of the metric, ascending.
  QFuture<Result<std::vector<int>>> metricRanks(QString runId, QString metricName);
  // Rows stored for the run (counted, not the summary column); 0 when unknown.
  QFuture<Result<int64_t>> sampleCount(QString runId);
  QFuture<Result<int64_t>> logLineCount(QString runId);
  // The last `maxLines` log lines in seq order.
  QFuture<Result<std::vector<v1::LogLine>>> logTail(QString runId, int maxLines);

  // Writes every sample of the run at full resolution as CSV (RFC 4180) in seq order, columns
  // step,epoch,wall_time,rank,name,value (an empty value for a non-finite one). Written to a
  // temporary file and renamed, so `path` is either complete or untouched.
  QFuture<Status> exportCsv(QString runId, QString path);

 signals:
  // A run's row changed (upsert, ingest with new entries, tags, notes).
  void runChanged(const QString& runId);
  void runDeleted(const QString& runId);
  // New samples of a run were stored: dashboards re-query their visible series.
  void samplesIngested(const QString& runId, qint64 newSamples, quint64 lastSeq);

 private:
  class Database;

  template <typename T, typename Work>
  QFuture<T> post(Work work);

  QString databasePath_;
  std::atomic<int> maxDeletedRuns_{kMaxDeletedRuns};
  QThread thread_;
  QObject* context_;    // lives in thread_; work is posted to it
  Database* database_;  // used only on thread_
};

}  // namespace ringside::gui
