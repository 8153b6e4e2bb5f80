// RunTableModel and RunFilterProxy over a real MetricsStore: rows and their text, N/A for absent
// summary values, numbers in the default locale (but CSV export in the C locale), numeric sorting,
// text and state filters, tags and notes written to the store, and refresh on the store's
// runChanged/runDeleted.
#include <QtTest/QtTest>

#include <QFile>
#include <QLocale>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTemporaryDir>

#include "ringside/common/metric_names.h"
#include "ringside/gui/duration_format.h"
#include "ringside/gui/metrics_store.h"
#include "ringside/gui/run_table_model.h"
#include "ringside/gui/sort_values.h"

using namespace ringside;
using namespace ringside::gui;

namespace {

template <typename T>
T await(QFuture<T> future) {
  future.waitForFinished();
  return future.result();
}

v1::RunInfo runInfo(const QString& runId, const QString& name, v1::RunState state, double start,
                    double end, int ranks = 2) {
  v1::RunInfo run;
  run.set_run_id(runId.toStdString());
  run.set_state(state);
  run.set_world_size(ranks);
  run.set_created_time(start - 1);
  run.set_start_time(start);
  run.set_end_time(end);
  run.mutable_spec()->set_name(name.toStdString());
  run.mutable_spec()->set_ranks_per_node(ranks);
  run.mutable_spec()->mutable_trainer()->mutable_config()->set_epochs(3);
  run.mutable_spec()->mutable_trainer()->mutable_config()->set_lr(0.1);
  return run;
}

v1::MetricSample sample(uint64_t seq, int64_t step, const char* name, double value) {
  v1::MetricSample s;
  s.set_seq(seq);
  s.set_step(step);
  s.set_wall_time(1'700'000'000.0 + step);
  s.set_rank(-1);
  s.set_name(name);
  s.set_value(value);
  return s;
}

// Summary values: final loss, best accuracy, samples/s (each optional).
void addSummary(MetricsStore& store, const QString& runId, std::optional<double> loss,
                std::optional<double> accuracy, std::optional<double> samplesPerS) {
  IngestBatch batch;
  batch.runId = runId;
  uint64_t seq = 100;
  if (loss) {
    batch.samples.push_back(sample(seq++, 1, metric::kTrainLoss, *loss + 1.0));
    batch.samples.push_back(sample(seq++, 2, metric::kTrainLoss, *loss));
  }
  if (accuracy) {
    batch.samples.push_back(sample(seq++, 1, metric::kTestAccuracy, *accuracy));
    batch.samples.push_back(sample(seq++, 2, metric::kTestAccuracy, *accuracy - 0.1));
  }
  if (samplesPerS)
    batch.samples.push_back(sample(seq++, 2, metric::kTrainSamplesPerS, *samplesPerS));
  QVERIFY(await(store.ingest(batch)).isOk());
}

QStringList columnOf(const QAbstractItemModel& model, int column, int role = Qt::DisplayRole) {
  QStringList values;
  for (int row = 0; row < model.rowCount(); ++row) {
    values << model.index(row, column).data(role).toString();
  }
  return values;
}

}  // namespace

class RunTableModelTest : public QObject {
  Q_OBJECT

 private slots:
  void init() {
    dir_ = std::make_unique<QTemporaryDir>();
    store_ = std::make_unique<MetricsStore>(dir_->filePath("ringside.sqlite"));
    QVERIFY(await(store_->open()).isOk());
    // alpha: complete summary; beta: no accuracy; gamma: running, nothing yet; delta: stopped.
    QVERIFY(
        await(store_->upsertRun("n1", runInfo("r-a", "alpha", v1::COMPLETED, 1000, 1100))).isOk());
    QVERIFY(await(store_->upsertRun("n1", runInfo("r-b", "beta", v1::FAILED, 2000, 2005))).isOk());
    QVERIFY(
        await(store_->upsertRun("n1", runInfo("r-c", "gamma", v1::RUNNING, 3000, 0, 4))).isOk());
    QVERIFY(
        await(store_->upsertRun("n1", runInfo("r-d", "delta", v1::STOPPED, 4000, 7725))).isOk());
    addSummary(*store_, "r-a", 0.5, 0.8, 1000);
    addSummary(*store_, "r-b", 2.0, std::nullopt, 9000);
    addSummary(*store_, "r-d", 0.25, 0.9, 10000);
    QVERIFY(await(store_->setTags("r-a", "mnist, sgd")).isOk());
    QVERIFY(await(store_->setNotes("r-d", "lr too high")).isOk());
  }
  void cleanup() {
    store_.reset();
    dir_.reset();
  }

  // The one order of History's and the per-rank table's sorted columns.
  void sortValuesOrderNaFirstNumbersByValueTextIgnoringCase() {
    QCOMPARE(compareSortValues(QVariant(), QVariant(-1e300)), -1);
    QCOMPARE(compareSortValues(QVariant(0.0), QVariant()), 1);
    QCOMPARE(compareSortValues(QVariant(), QVariant()), 0);
    QCOMPARE(compareSortValues(QVariant(9), QVariant(10.5)), -1);  // not "10.5" < "9"
    QCOMPARE(compareSortValues(QVariant(qint64{3}), QVariant(3.0)), 0);
    QVERIFY(compareSortValues(QVariant(QStringLiteral("gpu-node-2")),
                              QVariant(QStringLiteral("GPU-node-10"))) > 0);
    QCOMPARE(
        compareSortValues(QVariant(QStringLiteral("Alpha")), QVariant(QStringLiteral("alpha"))), 0);
  }

  void rowsShowTheRunsWithNaForAbsentValues() {
    RunTableModel model(*store_);
    QSignalSpy refreshed(&model, &RunTableModel::refreshed);
    model.refresh();
    QTRY_VERIFY(model.loaded());
    QCOMPARE(model.rowCount(), 4);
    QCOMPARE(model.columnCount(), int(RunTableModel::kColumnCount));

    const QLocale locale;
    const int a = model.rowOfRun("r-a");
    const int b = model.rowOfRun("r-b");
    const int c = model.rowOfRun("r-c");
    const int d = model.rowOfRun("r-d");
    QVERIFY(a >= 0 && b >= 0 && c >= 0 && d >= 0);
    auto text = [&](int row, int column) { return model.index(row, column).data().toString(); };
    QCOMPARE(text(a, RunTableModel::kName), QStringLiteral("alpha"));
    QCOMPARE(text(a, RunTableModel::kState), RunTableModel::stateText(v1::COMPLETED));
    QCOMPARE(text(a, RunTableModel::kPlacement), QStringLiteral("1 × 2"));
    QCOMPARE(text(c, RunTableModel::kPlacement), QStringLiteral("1 × 4"));
    QCOMPARE(text(a, RunTableModel::kDuration), QStringLiteral("1 min 40 s"));
    QCOMPARE(text(d, RunTableModel::kDuration), QStringLiteral("1 h 02 min"));
    QCOMPARE(text(a, RunTableModel::kFinalLoss), locale.toString(0.5, 'f', 4));
    QCOMPARE(text(a, RunTableModel::kBestAccuracy),
             QStringLiteral("%1 %").arg(locale.toString(80.0, 'f', 2)));
    QCOMPARE(text(a, RunTableModel::kSamplesPerS), locale.toString(1000.0, 'f', 0));
    QCOMPARE(text(a, RunTableModel::kTags), QStringLiteral("mnist, sgd"));
    QCOMPARE(text(d, RunTableModel::kNotes), QStringLiteral("lr too high"));

    const QString na = RunTableModel::tr("N/A");
    QCOMPARE(text(b, RunTableModel::kBestAccuracy), na);
    for (int column :
         {RunTableModel::kFinalLoss, RunTableModel::kBestAccuracy, RunTableModel::kSamplesPerS}) {
      QCOMPARE(text(c, column), na);
      QVERIFY(!model.index(c, column).data(RunTableModel::kSortRole).isValid());
    }
    QVERIFY(model.index(c, RunTableModel::kDuration).data(RunTableModel::kSortRole).toDouble() > 0);

    QVERIFY(model.flags(model.index(a, RunTableModel::kTags)).testFlag(Qt::ItemIsEditable));
    QVERIFY(model.flags(model.index(a, RunTableModel::kNotes)).testFlag(Qt::ItemIsEditable));
    QVERIFY(!model.flags(model.index(a, RunTableModel::kName)).testFlag(Qt::ItemIsEditable));
    QVERIFY(!model.setData(model.index(a, RunTableModel::kName), "renamed"));
  }

  // Under --lang de the table reads "0,5000" and "10.000"; the CSV export is a file format and
  // stays in the C locale whatever the GUI's language.
  void germanTableButCLocaleCsv() {
    const QLocale saved;
    QLocale::setDefault(QLocale(QLocale::German, QLocale::Germany));
    const auto restore = qScopeGuard([&saved] { QLocale::setDefault(saved); });
    RunTableModel model(*store_);
    model.refresh();
    QTRY_VERIFY(model.loaded());
    auto text = [&](const char* runId, int column) {
      return model.index(model.rowOfRun(runId), column).data().toString();
    };
    QCOMPARE(text("r-a", RunTableModel::kFinalLoss), QStringLiteral("0,5000"));
    QCOMPARE(text("r-a", RunTableModel::kBestAccuracy), QStringLiteral("80,00 %"));
    QCOMPARE(text("r-d", RunTableModel::kSamplesPerS), QStringLiteral("10.000"));
    QCOMPARE(formatDuration(1234 * 3600.0 + 300), QStringLiteral("1.234 h 05 min"));

    const QString csv = dir_->filePath("r-a.csv");
    QVERIFY(await(store_->exportCsv("r-a", csv)).isOk());
    QFile file(csv);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QStringList lines = QString::fromUtf8(file.readAll()).split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.value(0), QStringLiteral("step,epoch,wall_time,rank,name,value"));
    QVERIFY2(lines.contains(QStringLiteral("2,0,1700000002,-1,train/loss,0.5")),
             qPrintable(lines.join('\n')));
    QVERIFY2(lines.contains(QStringLiteral("2,0,1700000002,-1,train/samples_per_s,1000")),
             qPrintable(lines.join('\n')));
    for (const QString& line : lines) QCOMPARE(line.count(','), 5);
  }

  void sortsNumbersNumericallyWithNaFirst() {
    RunTableModel model(*store_);
    RunFilterProxy proxy;
    proxy.setSourceModel(&model);
    model.refresh();
    QTRY_VERIFY(model.loaded());

    // As text, "10,000" < "9,000"; as numbers 9000 < 10000.
    proxy.sort(RunTableModel::kSamplesPerS, Qt::AscendingOrder);
    QCOMPARE(columnOf(proxy, RunTableModel::kName),
             (QStringList{"gamma", "alpha", "beta", "delta"}));
    proxy.sort(RunTableModel::kSamplesPerS, Qt::DescendingOrder);
    QCOMPARE(columnOf(proxy, RunTableModel::kName),
             (QStringList{"delta", "beta", "alpha", "gamma"}));

    proxy.sort(RunTableModel::kFinalLoss, Qt::AscendingOrder);
    QCOMPARE(columnOf(proxy, RunTableModel::kName),
             (QStringList{"gamma", "delta", "alpha", "beta"}));
    proxy.sort(RunTableModel::kDuration, Qt::AscendingOrder);
    QCOMPARE(columnOf(proxy, RunTableModel::kName).first(), QStringLiteral("beta"));  // 5 s
    proxy.sort(RunTableModel::kStart, Qt::DescendingOrder);
    QCOMPARE(columnOf(proxy, RunTableModel::kName),
             (QStringList{"delta", "gamma", "beta", "alpha"}));
    proxy.sort(RunTableModel::kName, Qt::AscendingOrder);
    QCOMPARE(columnOf(proxy, RunTableModel::kName),
             (QStringList{"alpha", "beta", "delta", "gamma"}));
  }

  void filtersByTextAndState() {
    RunTableModel model(*store_);
    RunFilterProxy proxy;
    proxy.setSourceModel(&model);
    proxy.sort(RunTableModel::kName, Qt::AscendingOrder);
    model.refresh();
    QTRY_VERIFY(model.loaded());

    proxy.setTextFilter("MNIST");  // a tag, case-insensitive
    QCOMPARE(columnOf(proxy, RunTableModel::kName), (QStringList{"alpha"}));
    proxy.setTextFilter("too high");  // notes
    QCOMPARE(columnOf(proxy, RunTableModel::kName), (QStringList{"delta"}));
    proxy.setTextFilter("r-b");  // run id
    QCOMPARE(columnOf(proxy, RunTableModel::kName), (QStringList{"beta"}));
    proxy.setTextFilter("ta");  // name: beta, delta
    QCOMPARE(columnOf(proxy, RunTableModel::kName), (QStringList{"beta", "delta"}));
    proxy.setStateFilter(RunFilterProxy::StateFilter::kFailed);
    QCOMPARE(columnOf(proxy, RunTableModel::kName), (QStringList{"beta"}));
    proxy.setTextFilter("");
    proxy.setStateFilter(RunFilterProxy::StateFilter::kActive);
    QCOMPARE(columnOf(proxy, RunTableModel::kName), (QStringList{"gamma"}));
    proxy.setStateFilter(RunFilterProxy::StateFilter::kCompleted);
    QCOMPARE(columnOf(proxy, RunTableModel::kName), (QStringList{"alpha"}));
    proxy.setStateFilter(RunFilterProxy::StateFilter::kStopped);
    QCOMPARE(columnOf(proxy, RunTableModel::kName), (QStringList{"delta"}));
    proxy.setStateFilter(RunFilterProxy::StateFilter::kAll);
    QCOMPARE(proxy.rowCount(), 4);
  }

  void editingTagsAndNotesWritesToTheStore() {
    RunTableModel model(*store_);
    model.refresh();
    QTRY_VERIFY(model.loaded());
    const int b = model.rowOfRun("r-b");
    QVERIFY(model.setData(model.index(b, RunTableModel::kTags), " sweep ,lr,, sweep"));
    // Shown at once, normalized.
    QCOMPARE(model.index(b, RunTableModel::kTags).data().toString(), QStringLiteral("sweep, lr"));
    QTRY_COMPARE(await(store_->run("r-b"))->tags, QStringLiteral("sweep, lr"));
    QVERIFY(model.setData(model.index(b, RunTableModel::kNotes), "diverged at step 40"));
    QTRY_COMPARE(await(store_->run("r-b"))->notes, QStringLiteral("diverged at step 40"));
    // The store's runChanged refresh (still to come: the notes' runChanged is queued to the
    // model and not delivered yet) keeps the edit.
    QSignalSpy refreshed(&model, &RunTableModel::refreshed);
    QTRY_VERIFY(refreshed.count() >= 1);
    QCOMPARE(model.index(model.rowOfRun("r-b"), RunTableModel::kTags).data().toString(),
             QStringLiteral("sweep, lr"));
  }

  void followsTheStoresChangesAndKeepsRowsStable() {
    RunTableModel model(*store_);
    model.refresh();
    QTRY_VERIFY(model.loaded());
    QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
    QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
    QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);

    QVERIFY(await(store_->upsertRun("n1", runInfo("r-e", "epsilon", v1::QUEUED, 5000, 0))).isOk());
    QTRY_COMPARE(model.rowCount(), 5);
    QVERIFY(model.rowOfRun("r-e") >= 0);

    const int aBefore = model.rowOfRun("r-a");
    QVERIFY(await(store_->deleteRun("r-b")).isOk());
    QTRY_COMPARE(model.rowCount(), 4);
    QCOMPARE(model.rowOfRun("r-b"), -1);

    // The running run's loss arrives: its row updates in place.
    addSummary(*store_, "r-c", 1.5, std::nullopt, std::nullopt);
    const int c = model.rowOfRun("r-c");
    QTRY_COMPARE(model.index(c, RunTableModel::kFinalLoss).data().toString(),
                 QLocale().toString(1.5, 'f', 4));
    QCOMPARE(reset.count(), 0);  // merged row by row, never reset
    QCOMPARE(removed.count(), 1);
    QCOMPARE(inserted.count(), 1);
    QVERIFY(aBefore >= 0 && model.rowOfRun("r-a") >= 0);
  }

  // The bug this pins: every change of one run (a live run's samples, a tag)
  // made the table read every run of the store again, 40 queries of 250 runs at 10,000 runs,
  // four times a second while a run was live. Only the changed run is read now: a row changed
  // behind the store's back (no signal) stays as it was while another run's change shows.
  void aChangeOfOneRunReReadEveryRun() {
    RunTableModel model(*store_);
    model.refresh();
    QTRY_VERIFY(model.loaded());
    {
      QSqlDatabase side = QSqlDatabase::addDatabase("QSQLITE", "behind-the-store");
      side.setDatabaseName(dir_->filePath("ringside.sqlite"));
      QVERIFY(side.open());
      QSqlQuery rename(side);
      QVERIFY(rename.exec("UPDATE runs SET name = 'renamed' WHERE run_id = 'r-b'"));
      side.close();
    }
    QSqlDatabase::removeDatabase("behind-the-store");
    QSignalSpy refreshed(&model, &RunTableModel::refreshed);
    QVERIFY(await(store_->setTags("r-a", "changed")).isOk());
    QTRY_COMPARE(model.record(model.rowOfRun("r-a"))->tags, QStringLiteral("changed"));
    QTRY_VERIFY(refreshed.count() >= 1);
    QCOMPARE(model.record(model.rowOfRun("r-b"))->name, QStringLiteral("beta"));
    // A deleted run's row goes without a read; the others' rows stay found.
    QVERIFY(await(store_->deleteRun("r-d")).isOk());
    QTRY_COMPARE(model.rowOfRun("r-d"), -1);
    QCOMPARE(model.rowCount(), 3);
    for (const char* runId : {"r-a", "r-b", "r-c"}) {
      const RunRecord* run = model.record(model.rowOfRun(runId));
      QVERIFY(run != nullptr);
      QCOMPARE(run->runId, QString::fromLatin1(runId));
    }
    // More changes at once than a page holds (a node's run list): the whole table is read,
    // and with it the row changed behind the store's back.
    std::vector<v1::RunInfo> many;
    for (int i = 0; i < 1100; ++i) {
      many.push_back(runInfo(QString("m-%1").arg(i), "many", v1::COMPLETED, 10000 + i, 10001 + i));
    }
    QVERIFY(await(store_->upsertRuns("n1", many)).isOk());
    QTRY_COMPARE(model.rowCount(), 1103);
    QTRY_COMPARE(model.record(model.rowOfRun("r-b"))->name, QStringLiteral("renamed"));
  }

  // A history longer than several refresh pages is listed each run once, and
  // the text and state filters count right over it.
  void manyRunsAreListedOnceAndFilteredRight() {
    std::vector<v1::RunInfo> many;
    for (int i = 0; i < 2500; ++i) {
      many.push_back(runInfo(QString("m-%1").arg(i), i % 10 == 0 ? "tenth" : "other",
                             i % 4 == 0 ? v1::FAILED : v1::COMPLETED, 10000 + i, 10001 + i));
    }
    QVERIFY(await(store_->upsertRuns("n1", many)).isOk());
    RunTableModel model(*store_);
    RunFilterProxy proxy;
    proxy.setSourceModel(&model);
    proxy.sort(RunTableModel::kStart, Qt::DescendingOrder);
    model.refresh();
    QTRY_VERIFY(model.loaded());
    QCOMPARE(model.rowCount(), 2504);
    QSet<QString> ids;
    for (int row = 0; row < model.rowCount(); ++row) {
      ids.insert(model.record(row)->runId);
      QCOMPARE(model.rowOfRun(model.record(row)->runId), row);
    }
    QCOMPARE(ids.size(), 2504);
    proxy.setTextFilter("TENTH");
    QCOMPARE(proxy.rowCount(), 250);
    proxy.setStateFilter(RunFilterProxy::StateFilter::kFailed);
    QCOMPARE(proxy.rowCount(), 125);  // i % 10 == 0 and i % 4 == 0: i % 20 == 0
    proxy.setTextFilter({});
    QCOMPARE(proxy.rowCount(), 625 + 1);  // and beta
    proxy.setStateFilter(RunFilterProxy::StateFilter::kAll);
    QCOMPARE(proxy.rowCount(), 2504);
    // Newest start first.
    QCOMPARE(proxy.index(0, 0).data(RunTableModel::kRunIdRole).toString(),
             QStringLiteral("m-2499"));
  }

  // A script's hyperparameters (ringside.config -> RunInfo.params) are History columns,
  // one per key; numbers sort as numbers; a run without a key has an empty cell.
  void aScriptsHyperparametersAreColumns() {
    v1::RunInfo script = runInfo("r-e", "script", v1::COMPLETED, 5000, 5100);
    script.mutable_spec()->clear_trainer();
    script.mutable_spec()->mutable_python()->set_script("/srv/ddp.py");
    (*script.mutable_params())["lr"] = "0.05";
    (*script.mutable_params())["optimizer.name"] = "\"adamw\"";
    (*script.mutable_params())["batch"] = "256";
    QVERIFY(await(store_->upsertRun("n1", script)).isOk());
    v1::RunInfo other = runInfo("r-f", "script 2", v1::COMPLETED, 6000, 6100);
    (*other.mutable_params())["lr"] = "0.2";
    (*other.mutable_params())["batch"] = "64";
    QVERIFY(await(store_->upsertRun("n1", other)).isOk());
    RunTableModel model(*store_);
    QSignalSpy refreshed(&model, &RunTableModel::refreshed);
    model.refresh();
    QTRY_VERIFY(refreshed.count() >= 1);
    QCOMPARE(model.paramKeys(), (QStringList{"batch", "lr", "optimizer.name"}));
    QCOMPARE(model.columnCount(), RunTableModel::kColumnCount + 3);
    const int lr = RunTableModel::kColumnCount + 1;
    QCOMPARE(model.headerData(lr, Qt::Horizontal).toString(), QStringLiteral("lr"));
    const int e = model.rowOfRun("r-e");
    const int f = model.rowOfRun("r-f");
    const int a = model.rowOfRun("r-a");
    QCOMPARE(model.index(e, lr).data().toString(), QLocale().toString(0.05, 'g', 8));
    QCOMPARE(model.index(e, lr + 1).data().toString(), QStringLiteral("adamw"));
    QCOMPARE(model.index(a, lr).data().toString(), QString());  // the trainer run declared none
    QCOMPARE(model.index(f, lr + 1).data().toString(), QString());
    // Numbers sort as numbers: 64 before 256.
    RunFilterProxy proxy;
    proxy.setSourceModel(&model);
    proxy.sort(RunTableModel::kColumnCount, Qt::AscendingOrder);
    QStringList batches = columnOf(proxy, RunTableModel::kColumnCount);
    batches.removeAll(QString());
    QCOMPARE(batches, (QStringList{"64", "256"}));
  }

 private:
  std::unique_ptr<QTemporaryDir> dir_;
  std::unique_ptr<MetricsStore> store_;
};

QTEST_MAIN(RunTableModelTest)
#include "run_table_model_test.moc"
