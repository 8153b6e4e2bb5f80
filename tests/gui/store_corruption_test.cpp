// Regression tests of corruption that went unnoticed for the GUI's run
// database (docs/gui-database.md, "Damaged databases"): flipped bytes made charts stop short
// without a word, and a read-only (immutable) database opened without an error and showed empty
// dashboards. Now open() refuses both with a message that names the file and says what to do,
// and a query that meets a damaged page part-way reports it instead of a shorter result.
#include <QtTest/QtTest>

#include <QFile>
#include <QProcess>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QTemporaryDir>

#include <unistd.h>

#include "../../gui/core/src/store_schema.h"  // store::checkDatabase, white-box
#include "ringside/gui/metrics_store.h"

using namespace ringside;
using namespace ringside::gui;

namespace {

template <typename T>
T await(QFuture<T> future) {
  future.waitForFinished();
  return future.result();
}

// One series of `count` steps: train/loss, global (rank -1), run `runId`.
IngestBatch lossSeries(const QString& runId, int first, int count) {
  IngestBatch batch;
  batch.runId = runId;
  for (int step = first; step < first + count; ++step) {
    v1::MetricSample sample;
    sample.set_seq(step + 1);
    sample.set_step(step);
    sample.set_wall_time(1.7e9 + step);
    sample.set_rank(-1);
    sample.set_name("train/loss");
    sample.set_value(1.0 / (1 + step));
    batch.samples.push_back(sample);
  }
  return batch;
}

// A QSQLITE connection of the test's own, removed from QtSql's registry on destruction.
class Raw {
 public:
  explicit Raw(const QString& path, const QString& options = {})
      : name_(QString("raw-%1").arg(counter_++)) {
    QSqlDatabase db = QSqlDatabase::addDatabase("QSQLITE", name_);
    db.setDatabaseName(path);
    db.setConnectOptions(options);
    opened_ = db.open();
  }
  ~Raw() {
    { QSqlDatabase::database(name_).close(); }
    QSqlDatabase::removeDatabase(name_);
  }
  bool opened() const { return opened_; }
  QSqlDatabase db() const { return QSqlDatabase::database(name_); }
  // The first column of every row; an error ends the list with "ERROR: <text>".
  QStringList column(const QString& sql) const {
    QStringList values;
    QSqlQuery query(db());
    if (query.exec(sql)) {
      while (query.next()) values << query.value(0).toString();
    }
    if (query.lastError().isValid()) values << "ERROR: " + query.lastError().text();
    return values;
  }

 private:
  static inline int counter_ = 0;
  QString name_;
  bool opened_ = false;
};

// Flips every bit of the first 64 bytes of page `page` (1-based): its b-tree page header and
// cell pointers, which every read of the page checks.
bool flipPageHeader(const QString& path, qint64 page, qint64 pageSize) {
  QFile file(path);
  if (!file.open(QIODevice::ReadWrite)) return false;
  file.seek((page - 1) * pageSize);
  QByteArray bytes = file.read(64);
  for (char& byte : bytes) byte = static_cast<char>(~byte);
  file.seek((page - 1) * pageSize);
  return file.write(bytes) == bytes.size();
}

// Makes `path` read-only for everyone, root included: chattr +i as root (root ignores modes), a
// mode without write permission otherwise. False when that is not possible here.
bool makeReadOnly(const QString& path) {
  if (::geteuid() != 0) {
    return QFile::setPermissions(
        path, QFile::ReadOwner | QFile::ExeOwner | QFile::ReadUser | QFile::ExeUser);
  }
  return QProcess::execute("chattr", {"+i", path}) == 0;
}

void makeWritable(const QString& path) {
  if (::geteuid() == 0) {
    QProcess::execute("chattr", {"-i", path});
  } else {
    QFile::setPermissions(path, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
  }
}

}  // namespace

class StoreCorruptionTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir dir_;
  QStringList madeReadOnly_;

  QString path(const QString& name) const { return dir_.filePath(name); }

  // A database with one run of `steps` train/loss samples, closed; its WAL merged into the file.
  void writeDatabase(const QString& file, int steps) {
    {
      MetricsStore store(file);
      QVERIFY(await(store.open()).isOk());
      for (int first = 0; first < steps; first += 5000) {
        QVERIFY(await(store.ingest(lossSeries("run-a", first, 5000))).isOk());
      }
    }
    Raw raw(file);
    QCOMPARE(raw.column("PRAGMA wal_checkpoint(TRUNCATE)").value(0), QString("0"));
  }

  // The leaf pages of the metrics b-tree in key order (dbstat), and the page size.
  static QList<qint64> metricsLeafPages(const QString& file, qint64* pageSize) {
    Raw raw(file);
    *pageSize = raw.column("PRAGMA page_size").value(0).toLongLong();
    QList<qint64> pages;
    for (const QString& page :
         raw.column("SELECT pageno FROM dbstat WHERE name = 'metrics' AND pagetype = 'leaf' "
                    "ORDER BY path")) {
      pages << page.toLongLong();
    }
    return pages;
  }

  // PRAGMA quick_check on a fresh connection: {"ok"} when sound.
  static QStringList quickCheck(const QString& file) {
    return Raw(file).column("PRAGMA quick_check");
  }

 private slots:
  void cleanup() {
    for (const QString& file : madeReadOnly_) makeWritable(file);
    madeReadOnly_.clear();
  }

  // Flipped bytes in the database: open() used to succeed and charts stopped short. Now the
  // damage is found at open and the file refused, with where it is and what to do.
  void flippedBytesMakeOpenFailWithCorruptionNamingTheFile() {
    const QString file = path("flipped.sqlite");
    writeDatabase(file, 20000);
    qint64 pageSize = 0;
    const QList<qint64> pages = metricsLeafPages(file, &pageSize);
    QVERIFY(pages.size() > 10);
    QVERIFY(flipPageHeader(file, pages[pages.size() / 2], pageSize));
    QVERIFY2(quickCheck(file) != QStringList{"ok"}, "quick_check must see the damage");

    MetricsStore store(file);
    const Status status = await(store.open());
    QCOMPARE(status.code(), Status::Code::kCorruption);
    const QString message = QString::fromStdString(status.message());
    QVERIFY2(message.startsWith(file + " is damaged: SQLite's quick_check found "),
             qPrintable(message));
    QVERIFY2(message.contains("Quit Ringside and move " + file + " away"), qPrintable(message));
    QVERIFY2(message.contains(".recover"), qPrintable(message));
    // Nothing is read from a refused file.
    QCOMPARE(await(store.series("run-a", "train/loss", -1)).status().code(),
             Status::Code::kFailedPrecondition);
  }

  // A page that goes bad while the GUI runs: the series query hits it part-way. It used to
  // return the points before the bad page as the whole series (a chart silently cut off).
  void damageMetPartWayThroughASeriesIsReportedNotACutOffChart() {
    const QString file = path("midway.sqlite");
    MetricsStore store(file);
    QVERIFY(await(store.open()).isOk());
    for (int first = 0; first < 20000; first += 5000) {
      QVERIFY(await(store.ingest(lossSeries("run-a", first, 5000))).isOk());
    }
    auto whole = await(store.series("run-a", "train/loss", -1));
    QVERIFY(whole.isOk());
    QCOMPARE(whole->size(), size_t{20000});

    Raw raw(file);  // stays open: closing the last connection would merge the WAL again
    QCOMPARE(raw.column("PRAGMA wal_checkpoint(TRUNCATE)").value(0), QString("0"));
    qint64 pageSize = 0;
    const QList<qint64> pages = metricsLeafPages(file, &pageSize);
    QVERIFY(pages.size() > 10);
    // The middle of the only series: its first pages read fine, then the scan meets this one.
    QVERIFY(flipPageHeader(file, pages[pages.size() / 2], pageSize));
    QVERIFY2(quickCheck(file) != QStringList{"ok"}, "quick_check must see the damage");
    // Another connection's commit makes the store drop its page cache and read the file again.
    QVERIFY(raw.column("INSERT INTO nodes (node_id) VALUES ('another-writer')").isEmpty());

    auto cut = await(store.series("run-a", "train/loss", -1));
    QVERIFY2(!cut.isOk(), "a series read past a damaged page must not come back as complete");
    QCOMPARE(cut.status().code(), Status::Code::kCorruption);
    const QString message = QString::fromStdString(cut.status().message());
    QVERIFY2(message.startsWith("reading series train/loss of run run-a in " + file),
             qPrintable(message));
    QVERIFY2(message.contains("the database is damaged"), qPrintable(message));
    QVERIFY2(message.contains("Quit Ringside and move " + file + " away"), qPrintable(message));
  }

  // An immutable database used to open without an error and show empty dashboards.
  void readOnlyDatabaseMakesOpenFailInsteadOfShowingEmptyDashboards() {
    const QString file = path("immutable.sqlite");
    writeDatabase(file, 5000);
    for (const char* companion : {"", "-wal", "-shm"}) {
      const QString name = file + companion;
      if (!QFile::exists(name)) continue;
      if (!makeReadOnly(name)) QSKIP("cannot make a file read-only here (root without chattr)");
      madeReadOnly_ << name;
    }
    MetricsStore store(file);
    const Status status = await(store.open());
    QCOMPARE(status.code(), Status::Code::kIOError);
    const QString message = QString::fromStdString(status.message());
    QVERIFY2(message.startsWith(file + " is read-only: "), qPrintable(message));
    QVERIFY2(message.contains("--data-dir"), qPrintable(message));
  }

  // A database in a folder the GUI cannot write: SQLite cannot create its -wal and -shm there.
  void readOnlyFolderMakesOpenFailWithTheReason() {
    const QString folder = path("read-only-folder");
    QVERIFY(QDir().mkpath(folder));
    const QString file = folder + "/ringside.sqlite";
    writeDatabase(file, 100);
    QVERIFY(!QFile::exists(file + "-wal"));  // a clean close removed it
    if (!makeReadOnly(folder)) QSKIP("cannot make a folder read-only here (root without chattr)");
    madeReadOnly_ << folder;
    MetricsStore store(file);
    const Status status = await(store.open());
    QCOMPARE(status.code(), Status::Code::kIOError);
    const QString message = QString::fromStdString(status.message());
    QVERIFY2(message.startsWith(file + " is read-only: its folder " + folder + " is not writable"),
             qPrintable(message));
  }

  // What SQLite alone sees: a connection it opened read-only (QSQLITE_OPEN_READONLY simulates a
  // file SQLite could open for reading only, while the file system allows writing). The write
  // probe of the check finds it.
  void databaseSqliteCanOnlyReadIsFoundByTheWriteProbe() {
    const QString file = path("sqlite-read-only.sqlite");
    writeDatabase(file, 100);
    Raw writable(file);  // keeps the -wal and -shm in place for the read-only connection
    Raw readOnly(file, "QSQLITE_OPEN_READONLY");
    QVERIFY(readOnly.opened());
    QSqlDatabase db = readOnly.db();
    const Status status = store::checkDatabase(db, file);
    QCOMPARE(status.code(), Status::Code::kIOError);
    const QString message = QString::fromStdString(status.message());
    QVERIFY2(message.startsWith(file + " is read-only: SQLite cannot write to it"),
             qPrintable(message));
  }
};

QTEST_GUILESS_MAIN(StoreCorruptionTest)
#include "store_corruption_test.moc"
