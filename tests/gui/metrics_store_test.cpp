// MetricsStore: schema migrations, idempotent ingestion, series, summaries, editing, deletion,
// CSV export, concurrent use, and the ingest rate (printed, not asserted).
#include <QtTest/QtTest>

#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTemporaryDir>

#include <atomic>
#include <cmath>
#include <map>
#include <optional>
#include <thread>

#include "ringside/common/metric_names.h"
#include "ringside/gui/metrics_store.h"

using namespace ringside;
using namespace ringside::gui;

namespace {

template <typename T>
T await(QFuture<T> future) {
  future.waitForFinished();
  return future.result();
}

v1::MetricSample sample(uint64_t seq, int64_t step, const char* name, double value, int rank = -1) {
  v1::MetricSample s;
  s.set_seq(seq);
  s.set_step(step);
  s.set_epoch(step / 100);
  s.set_wall_time(1'700'000'000.0 + step * 0.5);
  s.set_rank(rank);
  s.set_name(name);
  s.set_value(value);
  return s;
}

v1::RunInfo runInfo(const char* runId, v1::RunState state, const char* name = "baseline") {
  v1::RunInfo run;
  run.set_run_id(runId);
  run.set_state(state);
  run.set_world_size(2);
  run.set_created_time(1'700'000'000.0);
  run.mutable_spec()->set_name(name);
  run.mutable_spec()->add_tags("mnist");
  run.mutable_spec()->add_tags("sgd");
  run.mutable_spec()->set_ranks_per_node(2);
  // An old spec, as journaled before TrainerJob.config existed: its config_json is still read.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  run.mutable_spec()->mutable_trainer()->set_config_json(R"({"epochs":3,"lr":0.1})");
#pragma GCC diagnostic pop
  return run;
}

// `count` samples with seqs first..first+count-1 spread over 8 names and 4 ranks (+ global).
IngestBatch syntheticBatch(const QString& runId, uint64_t first, int count) {
  static const char* kNames[] = {metric::kStepMs,        metric::kComputeMs, metric::kAllreduceMs,
                                 metric::kExposedCommMs, metric::kCommBytes, metric::kCommAlgbw,
                                 metric::kCommBusbw,     metric::kTrainLr};
  IngestBatch batch;
  batch.runId = runId;
  batch.samples.reserve(count);
  for (int i = 0; i < count; ++i) {
    const uint64_t seq = first + i;
    batch.samples.push_back(sample(seq, static_cast<int64_t>(seq / 40), kNames[seq % 8],
                                   double(seq % 1000) * 0.25, static_cast<int>(seq % 5) - 1));
  }
  return batch;
}

int userVersion(const QString& path) {
  int version = -1;
  {
    QSqlDatabase db = QSqlDatabase::addDatabase("QSQLITE", "inspect");
    db.setDatabaseName(path);
    if (db.open()) {
      QSqlQuery query("PRAGMA user_version", db);
      if (query.next()) version = query.value(0).toInt();
    }
  }
  QSqlDatabase::removeDatabase("inspect");
  return version;
}

}  // namespace

class MetricsStoreTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir dir_;
  QString path(const char* name) const { return dir_.filePath(name); }

 private slots:
  void migratesAnEmptyFileToTheCurrentVersion() {
    const QString file = path("nested/folder/new.sqlite");
    {
      MetricsStore store(file);
      const Status status = await(store.open());
      QVERIFY2(status.isOk(), status.toString().c_str());
    }
    QCOMPARE(userVersion(file), MetricsStore::schemaVersion());
    {
      QSqlDatabase db = QSqlDatabase::addDatabase("QSQLITE", "tables");
      db.setDatabaseName(file);
      QVERIFY(db.open());
      QSqlQuery mode("PRAGMA journal_mode", db);
      QVERIFY(mode.next());
      QCOMPARE(mode.value(0).toString(), QString("wal"));
      QSqlQuery tables("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name", db);
      QStringList names;
      while (tables.next()) names << tables.value(0).toString();
      QCOMPARE(names, QStringList({"deleted_runs", "logs", "metric_keys", "metrics", "nodes",
                                   "run_node_telemetry", "runs"}));
    }
    QSqlDatabase::removeDatabase("tables");
    // Reopening a current file migrates nothing and keeps working.
    MetricsStore again(file);
    QVERIFY(await(again.open()).isOk());
    QVERIFY(await(again.runs()).isOk());
  }

  void refusesANewerSchemaVersion() {
    const QString file = path("newer.sqlite");
    {
      QSqlDatabase db = QSqlDatabase::addDatabase("QSQLITE", "newer");
      db.setDatabaseName(file);
      QVERIFY(db.open());
      QSqlQuery query(db);
      QVERIFY(
          query.exec(QString("PRAGMA user_version = %1").arg(MetricsStore::schemaVersion() + 1)));
    }
    QSqlDatabase::removeDatabase("newer");
    MetricsStore store(file);
    const Status status = await(store.open());
    QCOMPARE(status.code(), Status::Code::kFailedPrecondition);
    QVERIFY2(QString::fromStdString(status.message()).contains("newer"), status.message().c_str());
    QCOMPARE(userVersion(file), MetricsStore::schemaVersion() + 1);  // left untouched
    // Every other call reports that the store is not open.
    QCOMPARE(await(store.lastSeq("r")).status().code(), Status::Code::kFailedPrecondition);
  }

  // Schema version 2: a node's launch settings and client key file. A node stored by a version-1
  // build migrates with them empty; set ones survive a reopen.
  void nodeSettingsMigrateAndRoundTrip() {
    const QString file = path("version1.sqlite");
    {
      MetricsStore store(file);
      QVERIFY(await(store.open()).isOk());
    }
    {
      // Back to schema version 1: without migration 2's columns, with a node in it.
      QSqlDatabase db = QSqlDatabase::addDatabase("QSQLITE", "version1");
      db.setDatabaseName(file);
      QVERIFY(db.open());
      QSqlQuery query(db);
      for (const char* column : {"network_interface", "mpirun_options", "client_key_file"}) {
        QVERIFY(query.exec(QString("ALTER TABLE nodes DROP COLUMN %1").arg(column)));
      }
      QVERIFY(query.exec("ALTER TABLE runs DROP COLUMN placement"));  // migration 3's
      QVERIFY(query.exec("DROP TABLE run_node_telemetry"));           // migration 4's
      QVERIFY(query.exec("DROP INDEX metrics_telemetry"));
      QVERIFY(query.exec("DROP TABLE deleted_runs"));  // migration 5's (with its index)
      QVERIFY(
          query.exec("INSERT INTO nodes VALUES ('n-old', 'old', 'tcp://a:1 tcp://a:2', "
                     "'key', 1.5)"));
      QVERIFY(query.exec("PRAGMA user_version = 1"));
    }
    QSqlDatabase::removeDatabase("version1");
    NodeRecord settings;
    settings.nodeId = "n-new";
    settings.name = "new";
    settings.address = "tcp://b:1 tcp://b:2";
    settings.publicKey = "key2";
    settings.addedTime = 2.5;
    settings.networkInterface = "10.0.0.0/24";
    settings.mpirunOptions = "--mca plm_rsh_args \"-p 2222\"";
    settings.clientKeyFile = "/var/lib/ringside-local-cluster/client.key_secret";
    {
      MetricsStore store(file);
      const Status status = await(store.open());
      QVERIFY2(status.isOk(), status.toString().c_str());
      QCOMPARE(userVersion(file), MetricsStore::schemaVersion());
      auto nodes = await(store.nodes());
      QVERIFY(nodes.isOk());
      QCOMPARE(nodes->size(), size_t{1});
      QCOMPARE(nodes->front().name, QString("old"));
      QCOMPARE(nodes->front().addedTime, 1.5);
      QVERIFY(nodes->front().networkInterface.isEmpty());
      QVERIFY(nodes->front().mpirunOptions.isEmpty());
      QVERIFY(nodes->front().clientKeyFile.isEmpty());
      QVERIFY(await(store.upsertNode(settings)).isOk());
    }
    MetricsStore reopened(file);
    QVERIFY(await(reopened.open()).isOk());
    auto nodes = await(reopened.nodes());
    QVERIFY(nodes.isOk());
    QCOMPARE(nodes->size(), size_t{2});
    const NodeRecord& back = nodes->back();  // ordered by added time
    QCOMPARE(back.nodeId, settings.nodeId);
    QCOMPARE(back.networkInterface, settings.networkInterface);
    QCOMPARE(back.mpirunOptions, settings.mpirunOptions);
    QCOMPARE(back.clientKeyFile, settings.clientKeyFile);
    // An update replaces the settings (and keeps the added time).
    settings.networkInterface = "eth1";
    settings.mpirunOptions.clear();
    settings.addedTime = 99;
    QVERIFY(await(reopened.upsertNode(settings)).isOk());
    nodes = await(reopened.nodes());
    QVERIFY(nodes.isOk());
    QCOMPARE(nodes->back().networkInterface, QString("eth1"));
    QVERIFY(nodes->back().mpirunOptions.isEmpty());
    QCOMPARE(nodes->back().clientKeyFile, settings.clientKeyFile);
    QCOMPARE(nodes->back().addedTime, 2.5);
  }

  void ingestIsIdempotentBySeq() {
    MetricsStore store(path("idempotent.sqlite"));
    QVERIFY(await(store.open()).isOk());
    QSignalSpy ingested(&store, &MetricsStore::samplesIngested);
    auto first = await(store.ingest(syntheticBatch("run-a", 1, 5000)));
    QVERIFY2(first.isOk(), first.status().toString().c_str());
    QCOMPARE(first->newSamples, int64_t{5000});
    QCOMPARE(first->lastSeq, uint64_t{5000});
    QCOMPARE(*await(store.sampleCount("run-a")), int64_t{5000});

    // The same seqs again (a catch-up after reconnect) change nothing.
    auto again = await(store.ingest(syntheticBatch("run-a", 1, 5000)));
    QVERIFY(again.isOk());
    QCOMPARE(again->newSamples, int64_t{0});
    QCOMPARE(*await(store.sampleCount("run-a")), int64_t{5000});

    // An overlapping page stores only the new tail.
    auto overlap = await(store.ingest(syntheticBatch("run-a", 4990, 111)));
    QVERIFY(overlap.isOk());
    QCOMPARE(overlap->newSamples, int64_t{100});
    QCOMPARE(*await(store.sampleCount("run-a")), int64_t{5100});
    QCOMPARE(*await(store.lastSeq("run-a")), uint64_t{5100});
    QCOMPARE(await(store.run("run-a"))->sampleCount, int64_t{5100});
    QCOMPARE(*await(store.lastSeq("unknown")), uint64_t{0});
    QTRY_COMPARE(ingested.count(), 2);  // not for the batch that added nothing

    // Log lines: idempotent too, and they advance last_seq.
    IngestBatch logs;
    logs.runId = "run-a";
    for (uint64_t seq = 5101; seq <= 5105; ++seq) {
      v1::LogLine line;
      line.set_seq(seq);
      line.set_stream(seq % 2 ? "stdout" : "stderr");
      line.set_text("line " + std::to_string(seq));
      logs.logLines.push_back(line);
    }
    QCOMPARE(await(store.ingest(logs))->newLogLines, int64_t{5});
    QCOMPARE(await(store.ingest(logs))->newLogLines, int64_t{0});
    QCOMPARE(*await(store.logLineCount("run-a")), int64_t{5});
    QCOMPARE(*await(store.lastSeq("run-a")), uint64_t{5105});
    const auto tail = await(store.logTail("run-a", 2));
    QCOMPARE(tail->size(), size_t{2});
    QCOMPARE(tail->at(0).text(), std::string("line 5104"));
    QCOMPARE(tail->at(1).stream(), std::string("stdout"));
  }

  // The sample inserts went from QtSql to the SQLite C API, in primary-key
  // order and 64 rows per statement. Every field of every sample is stored as sent, across chunk
  // boundaries and the tail; a NaN is NULL; of two samples with the same key in one batch the
  // first one sent is kept (as before the sort); summary samples still count once.
  void everyFieldIsStoredAsSentInChunksAndTail() {
    const QString file = path("fields.sqlite");
    MetricsStore store(file);
    QVERIFY(await(store.open()).isOk());
    IngestBatch batch = syntheticBatch("run-f", 1, 203);  // 3 chunks of 64 and a tail of 11
    batch.samples[5].set_value(NAN);
    v1::MetricSample twin = batch.samples[7];  // same key, rank, step and seq, another value
    twin.set_value(-1.0);
    batch.samples.push_back(twin);
    batch.samples.push_back(sample(204, 5, metric::kTrainLoss, 0.75));  // a summary sample
    auto stored = await(store.ingest(batch));
    QVERIFY2(stored.isOk(), stored.status().toString().c_str());
    QCOMPARE(stored->newSamples, int64_t{204});
    QCOMPARE(await(store.run("run-f"))->finalLoss, std::optional<double>(0.75));
    std::map<uint64_t, const v1::MetricSample*> sent;
    for (const v1::MetricSample& s : batch.samples) sent.emplace(s.seq(), &s);  // first wins
    int rows = 0;
    {
      QSqlDatabase db = QSqlDatabase::addDatabase("QSQLITE", "fields");
      db.setDatabaseName(file);
      db.setConnectOptions("QSQLITE_OPEN_READONLY");
      QVERIFY(db.open());
      QSqlQuery query(db);
      QVERIFY(
          query.exec("SELECT k.name, m.rank, m.step, m.seq, m.epoch, m.wall_time, m.value "
                     "FROM metrics m JOIN metric_keys k ON k.key_id = m.key_id"));
      while (query.next()) {
        ++rows;
        const auto it = sent.find(query.value(3).toULongLong());
        QVERIFY(it != sent.end());
        const v1::MetricSample& s = *it->second;
        QCOMPARE(query.value(0).toString().toStdString(), s.name());
        QCOMPARE(query.value(1).toInt(), s.rank());
        QCOMPARE(query.value(2).toLongLong(), s.step());
        QCOMPARE(query.value(4).toLongLong(), s.epoch());
        QCOMPARE(query.value(5).toDouble(), s.wall_time());
        if (std::isnan(s.value())) {
          QVERIFY(query.value(6).isNull());
        } else {
          QCOMPARE(query.value(6).toDouble(), s.value());
        }
      }
    }
    QSqlDatabase::removeDatabase("fields");
    QCOMPARE(rows, 204);
  }

  void seriesIsOrderedByStepPerRank() {
    MetricsStore store(path("series.sqlite"));
    QVERIFY(await(store.open()).isOk());
    IngestBatch batch;
    batch.runId = "run-s";
    // Out of step order, two ranks and the global value interleaved, one NaN.
    const int64_t steps[] = {30, 10, 20, 50, 40};
    uint64_t seq = 1;
    for (int64_t step : steps) {
      batch.samples.push_back(sample(seq++, step, metric::kStepMs, step + 0.0, 0));
      batch.samples.push_back(sample(seq++, step, metric::kStepMs, step + 0.5, 1));
      batch.samples.push_back(
          sample(seq++, step, metric::kTrainLoss, step == 40 ? NAN : 1.0 / step));
    }
    QVERIFY(await(store.ingest(batch)).isOk());

    const auto rank1 = await(store.series("run-s", metric::kStepMs, 1));
    QVERIFY(rank1.isOk());
    QCOMPARE(rank1->size(), size_t{5});
    for (size_t i = 0; i < rank1->size(); ++i) {
      QCOMPARE(rank1->at(i).x, 10.0 * (i + 1));
      QCOMPARE(rank1->at(i).y, 10.0 * (i + 1) + 0.5);
    }
    const auto global = await(store.series("run-s", metric::kTrainLoss, -1));
    QCOMPARE(global->size(), size_t{5});
    QVERIFY(std::isnan(global->at(3).y));
    QCOMPARE(global->at(4).y, 1.0 / 50);

    const auto wall = await(store.series("run-s", metric::kStepMs, 0, SeriesX::kWallTime));
    QCOMPARE(wall->front().x, 1'700'000'000.0 + 5.0);
    const auto epoch = await(store.series("run-s", metric::kStepMs, 0, SeriesX::kEpoch));
    QCOMPARE(epoch->back().x, 0.0);

    QVERIFY(await(store.series("run-s", metric::kStepMs, 7))->empty());
    QVERIFY(await(store.series("run-s", "no/such", -1))->empty());
    QVERIFY(await(store.series("no-run", metric::kStepMs, 0))->empty());
    QCOMPARE(*await(store.metricNames("run-s")),
             QStringList({metric::kStepMs, metric::kTrainLoss}));
    QCOMPARE(*await(store.metricRanks("run-s", metric::kStepMs)), std::vector<int>({0, 1}));
    QCOMPARE(*await(store.metricRanks("run-s", metric::kTrainLoss)), std::vector<int>({-1}));
  }

  void summaryFollowsIngestion() {
    MetricsStore store(path("summary.sqlite"));
    QVERIFY(await(store.open()).isOk());
    QVERIFY(await(store.upsertRun("node-1", runInfo("run-m", v1::RUNNING))).isOk());
    auto fresh = await(store.run("run-m"));
    QVERIFY(!fresh->finalLoss && !fresh->bestAccuracy && !fresh->meanSamplesPerS);

    IngestBatch first;
    first.runId = "run-m";
    first.samples = {sample(1, 200, metric::kTrainLoss, 0.5),
                     sample(2, 100, metric::kTrainLoss, 0.9),
                     sample(3, 200, metric::kTrainLoss, 7.0, 1),  // per rank: not the summary
                     sample(4, 100, metric::kTestAccuracy, 0.80),
                     sample(5, 200, metric::kTestAccuracy, 0.91),
                     sample(6, 100, metric::kTrainSamplesPerS, 100.0),
                     sample(7, 200, metric::kTrainSamplesPerS, 200.0)};
    QVERIFY(await(store.ingest(first)).isOk());
    auto run = await(store.run("run-m"));
    QCOMPARE(*run->finalLoss, 0.5);
    QCOMPARE(*run->bestAccuracy, 0.91);
    QCOMPARE(*run->meanSamplesPerS, 150.0);

    // Re-sent rows do not count twice; later steps and better accuracy update the summary;
    // an older step's loss arriving late does not replace the final loss.
    IngestBatch second = first;
    second.samples.push_back(sample(8, 300, metric::kTrainLoss, 0.4));
    second.samples.push_back(sample(9, 300, metric::kTestAccuracy, 0.85));
    second.samples.push_back(sample(10, 300, metric::kTrainSamplesPerS, 300.0));
    QVERIFY(await(store.ingest(second)).isOk());
    IngestBatch late;
    late.runId = "run-m";
    late.samples = {sample(11, 50, metric::kTrainLoss, 2.0)};
    QVERIFY(await(store.ingest(late)).isOk());
    run = await(store.run("run-m"));
    QCOMPARE(*run->finalLoss, 0.4);
    QCOMPARE(*run->bestAccuracy, 0.91);
    QCOMPARE(*run->meanSamplesPerS, 200.0);
  }

  void runsTagsNotesAndStates() {
    MetricsStore store(path("runs.sqlite"));
    QVERIFY(await(store.open()).isOk());
    QSignalSpy changed(&store, &MetricsStore::runChanged);
    QVERIFY(await(store.upsertRun("node-1", runInfo("run-1", v1::RUNNING, "baseline"))).isOk());
    auto second = runInfo("run-2", v1::COMPLETED, "wide 50% model");
    second.set_created_time(1'700'000'100.0);
    QVERIFY(await(store.upsertRun("node-2", second)).isOk());

    auto run = await(store.run("run-1"));
    QVERIFY(run.isOk());
    QCOMPARE(run->name, QString("baseline"));
    QCOMPARE(run->nodeId, QString("node-1"));
    QCOMPARE(run->state, v1::RUNNING);
    QCOMPARE(run->worldSize, 2);
    QCOMPARE(run->tags, QString("mnist, sgd"));
    v1::RunSpec spec;
    QVERIFY(spec.ParseFromArray(run->spec.constData(), run->spec.size()));
    QCOMPARE(spec.name(), std::string("baseline"));
    QVERIFY(run->configJson.contains("\"lr\":0.1"));
    QVERIFY(run->configJson.contains("\"ranks_per_node\":2"));
    // The flat config comes from the typed run spec (the old config_json converted), with the
    // values the run used for keys it did not set.
    QVERIFY2(run->configJson.contains("\"epochs\":3"), qPrintable(run->configJson));
    QVERIFY2(run->configJson.contains("\"global_batch\":128"), qPrintable(run->configJson));

    QVERIFY(await(store.setTags("run-1", "tuned")).isOk());
    QVERIFY(await(store.setNotes("run-1", "the good one")).isOk());
    QCOMPARE(await(store.setNotes("nope", "x")).code(), Status::Code::kNotFound);
    // A later RunInfo keeps the user's tags and notes.
    auto done = runInfo("run-1", v1::COMPLETED, "baseline");
    done.set_end_time(1'700'000'500.0);
    QVERIFY(await(store.upsertRun("node-1", done)).isOk());
    run = await(store.run("run-1"));
    QCOMPARE(run->tags, QString("tuned"));
    QCOMPARE(run->notes, QString("the good one"));
    QCOMPARE(run->state, v1::COMPLETED);
    QCOMPARE(run->endTime, 1'700'000'500.0);

    // State events apply in seq order: an older one arriving late is ignored.
    IngestBatch states;
    states.runId = "run-2";
    v1::RunStateEvent failed;
    failed.set_seq(20);
    *failed.mutable_run() = runInfo("run-2", v1::FAILED, "wide 50% model");
    failed.mutable_run()->set_reason("rank 1 killed by signal 9");
    v1::RunStateEvent running;
    running.set_seq(5);
    *running.mutable_run() = runInfo("run-2", v1::RUNNING, "wide 50% model");
    states.states = {failed, running};
    auto ingested = await(store.ingest(states));
    QVERIFY(ingested.isOk());
    QCOMPARE(ingested->lastSeq, uint64_t{20});
    run = await(store.run("run-2"));
    QCOMPARE(run->state, v1::FAILED);
    QCOMPARE(run->reason, QString("rank 1 killed by signal 9"));

    // History: newest first; text filter on name, tags, notes (with LIKE wildcards escaped);
    // state filter.
    auto all = await(store.runs());
    QCOMPARE(all->size(), size_t{2});
    QCOMPARE(all->at(0).runId, QString("run-2"));
    QCOMPARE(await(store.runs({"GOOD", {}}))->size(), size_t{1});
    QCOMPARE(await(store.runs({"tuned", {}}))->at(0).runId, QString("run-1"));
    QCOMPARE(await(store.runs({"50%", {}}))->at(0).runId, QString("run-2"));
    QCOMPARE(await(store.runs({"0%", {}}))->size(), size_t{1});
    QCOMPARE(await(store.runs({"%", {}}))->size(), size_t{1});
    QCOMPARE(await(store.runs({"", v1::FAILED}))->at(0).runId, QString("run-2"));
    QVERIFY(await(store.runs({"baseline", v1::FAILED}))->empty());
    QCOMPARE(await(store.run("nope")).status().code(), Status::Code::kNotFound);
    QTRY_VERIFY(changed.count() >= 5);

    // Nodes.
    const auto node = [](const char* id, const char* name, const char* address, const char* key,
                         double addedTime) {
      NodeRecord record;
      record.nodeId = id;
      record.name = name;
      record.address = address;
      record.publicKey = key;
      record.addedTime = addedTime;
      return record;
    };
    QVERIFY(await(store.upsertNode(node("n1", "gpu01", "tcp://gpu01:7710", "key1", 1.0))).isOk());
    QVERIFY(await(store.upsertNode(node("n1", "gpu01b", "tcp://gpu01:7711", "key1", 9.0))).isOk());
    QVERIFY(await(store.upsertNode(node("n2", "gpu02", "tcp://gpu02:7710", "key2", 2.0))).isOk());
    auto nodes = await(store.nodes());
    QCOMPARE(nodes->size(), size_t{2});
    QCOMPARE(nodes->at(0).name, QString("gpu01b"));
    QCOMPARE(nodes->at(0).addedTime, 1.0);
    QVERIFY(await(store.removeNode("n1")).isOk());
    QCOMPARE(await(store.nodes())->size(), size_t{1});
  }

  // Regression: a run whose spec has no tags bound a null QString, which QtSql stores as NULL,
  // and every upsert and state ingest of that run failed on runs.tags NOT NULL.
  void runWithoutTagsCanBeStoredAndUpdated() {
    MetricsStore store(path("untagged.sqlite"));
    QVERIFY(await(store.open()).isOk());
    v1::RunInfo run = runInfo("run-untagged", v1::RUNNING);
    run.mutable_spec()->clear_tags();
    const Status first = await(store.upsertRun("node-1", run));
    QVERIFY2(first.isOk(), first.toString().c_str());
    IngestBatch batch;
    batch.runId = QStringLiteral("run-untagged");
    v1::RunStateEvent done;
    done.set_seq(1);
    *done.mutable_run() = run;
    done.mutable_run()->set_state(v1::COMPLETED);
    batch.states.push_back(done);
    auto ingested = await(store.ingest(batch));
    QVERIFY2(ingested.isOk(), ingested.status().toString().c_str());
    auto stored = await(store.run(QStringLiteral("run-untagged")));
    QVERIFY(stored.isOk());
    QCOMPARE(stored->state, v1::COMPLETED);
    QCOMPARE(stored->tags, QString());
  }

  void runPlacementIsStoredAndKeptWhenALaterInfoHasNone() {
    MetricsStore store(path("placement.sqlite"));
    QVERIFY(await(store.open()).isOk());
    v1::RunInfo run = runInfo("run-placed", v1::RUNNING);
    for (const auto& [host, gpus] : std::vector<std::pair<std::string, std::vector<uint32_t>>>{
             {"node-1", {2}}, {"node-2", {0, 1}}}) {
      v1::HostSlots* entry = run.add_placement();
      entry->set_host(host);
      entry->set_ranks(static_cast<uint32_t>(gpus.size()));
      for (uint32_t gpu : gpus) entry->add_gpus(gpu);
    }
    QVERIFY(await(store.upsertRun("node-1", run)).isOk());
    // A state event's RunInfo without a placement (an older agent's) keeps the stored one.
    run.clear_placement();
    run.set_state(v1::COMPLETED);
    QVERIFY(await(store.upsertRun("node-1", run)).isOk());
    auto stored = await(store.run(QStringLiteral("run-placed")));
    QVERIFY(stored.isOk());
    QCOMPARE(stored->state, v1::COMPLETED);
    QCOMPARE(stored->placement.size(), size_t{2});
    QCOMPARE(stored->placement[0].host(), std::string("node-1"));
    QCOMPARE(std::vector<uint32_t>(stored->placement[0].gpus().begin(),
                                   stored->placement[0].gpus().end()),
             std::vector<uint32_t>{2});
    QCOMPARE(stored->placement[1].host(), std::string("node-2"));
    QCOMPARE(stored->placement[1].gpus_size(), 2);
    // A run never placed has none.
    QVERIFY(await(store.upsertRun("node-1", runInfo("run-unplaced", v1::RUNNING))).isOk());
    auto unplaced = await(store.run(QStringLiteral("run-unplaced")));
    QVERIFY(unplaced.isOk());
    QVERIFY(unplaced->placement.empty());
  }

  void deleteRemovesEverything() {
    MetricsStore store(path("delete.sqlite"));
    QVERIFY(await(store.open()).isOk());
    QVERIFY(await(store.upsertRun("n", runInfo("gone", v1::COMPLETED))).isOk());
    auto batch = syntheticBatch("gone", 1, 1000);
    v1::LogLine line;
    line.set_seq(1001);
    line.set_text("bye");
    batch.logLines.push_back(line);
    QVERIFY(await(store.ingest(batch)).isOk());
    QVERIFY(await(store.ingest(syntheticBatch("kept", 1, 10))).isOk());
    QSignalSpy deleted(&store, &MetricsStore::runDeleted);
    QVERIFY(await(store.deleteRun("gone")).isOk());
    QCOMPARE(await(store.deleteRun("gone")).code(), Status::Code::kNotFound);
    QCOMPARE(*await(store.sampleCount("gone")), int64_t{0});
    QCOMPARE(*await(store.logLineCount("gone")), int64_t{0});
    QCOMPARE(*await(store.lastSeq("gone")), uint64_t{0});
    QCOMPARE(await(store.runs())->size(), size_t{1});
    QCOMPARE(*await(store.sampleCount("kept")), int64_t{10});
    QTRY_COMPARE(deleted.count(), 1);
  }

  // A run deleted in History came back from the agent's next run list or
  // catch-up (ensureRun re-created it), so the GUI database was bounded only by the agents'
  // retention. Now the id is remembered and nothing an agent sends stores it again.
  void aDeletedRunStaysDeletedWhateverTheAgentSends() {
    const QString file = path("tombstone.sqlite");
    {
      MetricsStore store(file);
      QVERIFY(await(store.open()).isOk());
      QVERIFY(await(store.upsertRun("n", runInfo("gone", v1::COMPLETED))).isOk());
      QVERIFY(await(store.ingest(syntheticBatch("gone", 1, 100))).isOk());
      QVERIFY(await(store.deleteRun("gone")).isOk());
    }
    MetricsStore store(file);  // remembered across a restart
    QVERIFY(await(store.open()).isOk());
    QSignalSpy changed(&store, &MetricsStore::runChanged);
    // The agent's run list: the deleted run is skipped (nullopt), the others stored as before.
    auto listed = await(
        store.upsertRuns("n", {runInfo("before", v1::COMPLETED), runInfo("gone", v1::COMPLETED),
                               runInfo("after", v1::FAILED)}));
    QVERIFY(listed.isOk());
    QCOMPARE(listed->size(), size_t{3});
    QVERIFY((*listed)[0].has_value());
    QVERIFY(!(*listed)[1].has_value());
    QVERIFY((*listed)[2].has_value());
    // A catch-up page and a single RunInfo: nothing stored, said so.
    auto fetched = await(store.ingest(syntheticBatch("gone", 1, 100)));
    QVERIFY(fetched.isOk());
    QVERIFY(fetched->deleted);
    QCOMPARE(fetched->newSamples, int64_t{0});
    QVERIFY(await(store.upsertRun("n", runInfo("gone", v1::COMPLETED))).isOk());
    QCOMPARE(await(store.run("gone")).status().code(), Status::Code::kNotFound);
    QCOMPARE(*await(store.sampleCount("gone")), int64_t{0});
    auto runs = await(store.runs());
    QVERIFY(runs.isOk());
    QCOMPARE(runs->size(), size_t{2});
    for (const RunRecord& run : *runs) QVERIFY(run.runId != QStringLiteral("gone"));
    QCOMPARE(changed.count(), 2);  // before and after only
    // Other runs keep working, and a new run is stored as usual.
    auto other = await(store.ingest(syntheticBatch("after", 1, 10)));
    QVERIFY(other.isOk() && !other->deleted);
    QCOMPARE(other->newSamples, int64_t{10});
  }

  // RunFilter::runIds: the named runs in one query, in runKey order, unknown ids left out.
  void runsByIdInOneQuery() {
    MetricsStore store(path("by-id.sqlite"));
    QVERIFY(await(store.open()).isOk());
    for (const char* id : {"r1", "r2", "r3", "r'4\"%"}) {
      QVERIFY(await(store.upsertRun("n", runInfo(id, v1::COMPLETED))).isOk());
    }
    RunFilter filter;
    filter.runIds = QStringList{"r3", "unknown", "r1", "r'4\"%"};
    auto runs = await(store.runs(filter));
    QVERIFY(runs.isOk());
    QStringList ids;
    for (const RunRecord& run : *runs) ids << run.runId;
    QCOMPARE(ids, (QStringList{"r1", "r3", "r'4\"%"}));
    filter.runIds = QStringList{};
    QVERIFY(await(store.runs(filter))->empty());
    filter.runIds = QStringList{"r2"};
    filter.text = "R2";
    QCOMPARE(await(store.runs(filter))->size(), size_t{1});
  }

  // A queued run's reason is its place and why it waits, as its agent last said (docs/queue.md);
  // it is replaced when the run starts.
  void aQueuedRunsReasonIsItsPlaceAndWhyItWaits() {
    MetricsStore store(path("queued.sqlite"));
    QVERIFY(await(store.open()).isOk());
    v1::RunInfo queued = runInfo("q1", v1::QUEUED);
    queued.set_queue_position(2);
    queued.set_waiting_reason("waiting for 1 CPU slot: 0 of 2 free; 2 slots held by run r1 (a)");
    QVERIFY(await(store.upsertRun("n", queued)).isOk());
    auto run = await(store.run("q1"));
    QVERIFY(run.isOk());
    QCOMPARE(run->state, v1::QUEUED);
    QCOMPARE(run->reason, QStringLiteral("Queued: position 2. waiting for 1 CPU slot: 0 of 2 "
                                         "free; 2 slots held by run r1 (a)"));
    QVERIFY(await(store.upsertRun("n", runInfo("q1", v1::STARTING))).isOk());
    run = await(store.run("q1"));
    QCOMPARE(run->state, v1::STARTING);
    QCOMPARE(run->reason, QString());
  }

  // A run whose stored state is queued, starting or running cannot be deleted: its data would
  // come back with the next live event half-empty, and the run is still using its nodes.
  void aLiveRunIsNotDeleted() {
    MetricsStore store(path("live.sqlite"));
    QVERIFY(await(store.open()).isOk());
    for (const v1::RunState state : {v1::QUEUED, v1::STARTING, v1::RUNNING}) {
      const QByteArray id = "live-" + QByteArray::number(static_cast<int>(state));
      QVERIFY(await(store.upsertRun("n", runInfo(id.constData(), state))).isOk());
      QVERIFY(await(store.ingest(syntheticBatch(QString::fromLatin1(id), 1, 10))).isOk());
      const Status refused = await(store.deleteRun(QString::fromLatin1(id)));
      QCOMPARE(refused.code(), Status::Code::kFailedPrecondition);
      QVERIFY2(QString::fromStdString(refused.message()).contains("stop it"),
               refused.message().c_str());
      QCOMPARE(*await(store.sampleCount(QString::fromLatin1(id))), int64_t{10});
    }
    // Once it ended it can go.
    QVERIFY(await(store.upsertRun("n", runInfo("live-3", v1::STOPPED))).isOk());
    QVERIFY(await(store.deleteRun("live-3")).isOk());
  }

  // The remembered ids are bounded: past maxDeletedRuns the oldest is forgotten, and an agent
  // that still journals that run brings it back (a fresh row).
  void rememberedDeletionsAreBounded() {
    MetricsStore store(path("bounded.sqlite"));
    QVERIFY(await(store.open()).isOk());
    store.setMaxDeletedRuns(3);
    for (int i = 0; i < 5; ++i) {
      const QString id = QString("old-%1").arg(i);
      QVERIFY(
          await(store.upsertRun("n", runInfo(id.toLatin1().constData(), v1::COMPLETED))).isOk());
      QVERIFY(await(store.deleteRun(id)).isOk());
      QTest::qWait(2);  // distinct deleted_time
    }
    auto listed = await(
        store.upsertRuns("n", {runInfo("old-0", v1::COMPLETED), runInfo("old-1", v1::COMPLETED),
                               runInfo("old-2", v1::COMPLETED), runInfo("old-3", v1::COMPLETED),
                               runInfo("old-4", v1::COMPLETED)}));
    QVERIFY(listed.isOk());
    QVERIFY((*listed)[0].has_value());  // forgotten: back
    QVERIFY((*listed)[1].has_value());
    QVERIFY(!(*listed)[2].has_value());  // the newest three stay deleted
    QVERIFY(!(*listed)[3].has_value());
    QVERIFY(!(*listed)[4].has_value());
    QCOMPARE(await(store.runs())->size(), size_t{2});
  }

  void exportsCsvAtFullResolution() {
    MetricsStore store(path("csv.sqlite"));
    QVERIFY(await(store.open()).isOk());
    IngestBatch batch;
    batch.runId = "run-c";
    batch.samples = {sample(1, 1, metric::kTrainLoss, 2.302585092994046),
                     sample(2, 1, metric::kStepMs, 1.25, 0), sample(3, 2, "odd,name", NAN, 1),
                     sample(4, 2, metric::kTrainLoss, 0.1)};
    QVERIFY(await(store.ingest(batch)).isOk());
    const QString csv = path("run-c.csv");
    QVERIFY(await(store.exportCsv("run-c", csv)).isOk());
    QFile file(csv);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QByteArray expected =
        "step,epoch,wall_time,rank,name,value\n"
        "1,0,1700000000.5,-1,train/loss,2.302585092994046\n"
        "1,0,1700000000.5,0,time/step_ms,1.25\n"
        "2,0,1700000001,1,\"odd,name\",\n"
        "2,0,1700000001,-1,train/loss,0.1\n";
    QCOMPARE(file.readAll(), expected);
    QCOMPARE(await(store.exportCsv("nope", path("nope.csv"))).code(), Status::Code::kNotFound);
    QVERIFY(!QFile::exists(path("nope.csv")));
  }

  void ingestWhileQueryingFromOtherThreads() {
    MetricsStore store(path("concurrent.sqlite"));
    QVERIFY(await(store.open()).isOk());
    constexpr int kBatches = 100;
    constexpr int kBatchSize = 1000;
    std::atomic<bool> writing{true};
    std::atomic<int> errors{0};
    std::atomic<int> queries{0};
    std::thread writer([&] {
      for (int b = 0; b < kBatches; ++b) {
        if (!await(store.ingest(syntheticBatch("run-t", 1 + uint64_t(b) * kBatchSize, kBatchSize)))
                 .isOk()) {
          ++errors;
        }
      }
      writing = false;
    });
    std::thread reader([&] {
      int64_t lastCount = 0;
      while (writing) {
        const auto count = await(store.sampleCount("run-t"));
        const auto series = await(store.series("run-t", metric::kStepMs, 0));
        const auto runs = await(store.runs());
        if (!count.isOk() || !series.isOk() || !runs.isOk() || count.value() < lastCount) ++errors;
        if (count.isOk()) lastCount = count.value();
        ++queries;
      }
    });
    writer.join();
    reader.join();
    QCOMPARE(errors.load(), 0);
    QVERIFY(queries.load() > 0);
    QCOMPARE(*await(store.sampleCount("run-t")), int64_t{kBatches * kBatchSize});
  }
};

QTEST_GUILESS_MAIN(MetricsStoreTest)
#include "metrics_store_test.moc"
