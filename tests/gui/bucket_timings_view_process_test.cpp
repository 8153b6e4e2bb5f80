// The dashboard's per-bucket communication view (BucketTimingsView) on a real run: a 2-rank CNN
// run of ringside-trainer under mpirun with the default bucket size, its global metric records
// (stdout, JSON Lines) stored in a MetricsStore as the GUI stores an agent's samples, and the view
// filled through fetch() as the dashboard does. The view must show every bucket the records
// carry, with bytes summing to the CNN's 1,686,568 gradient bytes, and the step's exposed
// communication. With RINGSIDE_SCREENSHOT_DIR set it saves the view as bucket-timings.png there.
#include <QDir>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QProcess>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>

#include <set>

#include "build_paths.h"
#include "gui_test_support.h"
#include "ringside/gui/metrics_store.h"
#include "ringside/gui/widgets/bucket_timings_view.h"
#include "ringside/gui/widgets/metric_chart.h"

using namespace ringside::gui;
namespace v1 = ringside::v1;

namespace {

template <typename T>
T await(QFuture<T> future) {
  future.waitForFinished();
  return future.result();
}

// The default CNN (conv32-conv64-fc128-fc10): 421,642 parameters of 4 bytes.
constexpr double kCnnGradientBytes = 421642.0 * 4;

}  // namespace

class BucketTimingsViewProcessTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { testing::allowMpirunAsRoot(); }

  void showsEveryBucketOfARealTwoRankRun() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QProcess trainer;
    trainer.setProcessChannelMode(QProcess::SeparateChannels);
    trainer.start(QString::fromUtf8(ringside::test::mpiexec()), {QStringLiteral("-np"),
                                                     QStringLiteral("2"),
                                                     QStringLiteral("--bind-to"),
                                                     QStringLiteral("none"),
                                                     QString::fromUtf8(ringside::test::trainerBin()),
                                                     QStringLiteral("--backend"),
                                                     QStringLiteral("mpi"),
                                                     QStringLiteral("--model"),
                                                     QStringLiteral("cnn"),
                                                     QStringLiteral("--quiet"),
                                                     QStringLiteral("--epochs"),
                                                     QStringLiteral("1"),
                                                     QStringLiteral("--train-samples"),
                                                     QStringLiteral("6400"),
                                                     QStringLiteral("--test-samples"),
                                                     QStringLiteral("1000"),
                                                     QStringLiteral("--log-every"),
                                                     QStringLiteral("5"),
                                                     QStringLiteral("--checkpoint-dir"),
                                                     dir.filePath(QStringLiteral("ckpt"))});
    QVERIFY2(trainer.waitForFinished(300000), "the 2-rank trainer run did not end in 300 s");
    QVERIFY2(trainer.exitStatus() == QProcess::NormalExit && trainer.exitCode() == 0,
             trainer.readAllStandardError().constData());

    // The global metrics records, as the agent would relay them: one sample per value.
    IngestBatch batch;
    batch.runId = QStringLiteral("bucket-run");
    batch.nodeId = QStringLiteral("node-1");
    uint64_t seq = 0;
    std::set<QString> lastBuckets;  // comm/bucket<b>/bytes names of the last record with them
    double lastBytes = -1;
    for (const QByteArray& line : trainer.readAllStandardOutput().split('\n')) {
      const QJsonObject record = QJsonDocument::fromJson(line).object();
      if (record.value(QStringLiteral("type")).toString() != QStringLiteral("metrics") ||
          record.contains(QStringLiteral("rank"))) {
        continue;
      }
      const QJsonObject metrics = record.value(QStringLiteral("metrics")).toObject();
      if (metrics.contains(QStringLiteral("comm/bytes"))) {
        lastBuckets.clear();
        lastBytes = metrics.value(QStringLiteral("comm/bytes")).toDouble();
      }
      for (auto it = metrics.begin(); it != metrics.end(); ++it) {
        if (it.key().startsWith(QStringLiteral("comm/bucket")) &&
            it.key().endsWith(QStringLiteral("/bytes"))) {
          lastBuckets.insert(it.key());
        }
        v1::MetricSample sample;
        sample.set_seq(++seq);
        sample.set_step(record.value(QStringLiteral("step")).toInteger());
        sample.set_epoch(record.value(QStringLiteral("epoch")).toInteger());
        sample.set_wall_time(record.value(QStringLiteral("time")).toDouble());
        sample.set_rank(-1);
        sample.set_name(it.key().toStdString());
        sample.set_value(it.value().isNull() ? std::nan("") : it.value().toDouble());
        batch.samples.push_back(sample);
      }
    }
    QVERIFY2(lastBuckets.size() >= 2, "the default bucket size gives the CNN several buckets");
    QCOMPARE(lastBytes, kCnnGradientBytes);

    MetricsStore store(dir.filePath(QStringLiteral("ringside.sqlite")));
    QVERIFY(await(store.open()).isOk());
    QVERIFY(await(store.ingest(batch)).isOk());

    BucketTimingsView view;
    view.resize(1100, 420);
    view.fetch(store, batch.runId);
    QTRY_COMPARE_WITH_TIMEOUT(view.timings().buckets.size(), lastBuckets.size(), 10000);

    const BucketTimings& timings = view.timings();
    double bytes = 0;
    for (const BucketRow& row : timings.buckets) {
      QVERIFY(row.median.bytes.has_value());
      QVERIFY2(row.median.allreduceMs.value_or(0) > 0, "every bucket has a duration above 0");
      QVERIFY(row.median.busbwGBps.value_or(0) > 0);
      QVERIFY(!row.allreduceMs.empty());
      bytes += *row.median.bytes;
    }
    QCOMPARE(bytes, kCnnGradientBytes);
    QVERIFY(timings.exposedCommMs.has_value());
    // One series per bucket; a row per bucket, then the sum and the exposed communication.
    QCOMPARE(view.chart()->seriesNames().size(), qsizetype(lastBuckets.size()));
    QCOMPARE(view.table()->rowCount(), int(lastBuckets.size()) + 2);
    QVERIFY2(view.summaryText().contains(QStringLiteral("exposed")),
             qPrintable(view.summaryText()));

    const QString screenshots = qEnvironmentVariable("RINGSIDE_SCREENSHOT_DIR");
    if (!screenshots.isEmpty()) {
      view.show();
      QVERIFY(QTest::qWaitForWindowExposed(&view));
      view.chart()->replotNow();
      QTest::qWait(200);
      QVERIFY(QDir().mkpath(screenshots));
      QVERIFY(view.grab().save(QDir(screenshots).filePath(QStringLiteral("bucket-timings.png"))));
    }
  }
};

QTEST_MAIN(BucketTimingsViewProcessTest)
#include "bucket_timings_view_process_test.moc"
