// The file names exports suggest (export_files.h): one rule for every per-run CSV and chart image.
#include <QtTest/QtTest>

#include "ringside/gui/export_files.h"

using namespace ringside::gui;

class ExportFilesTest : public QObject {
  Q_OBJECT

 private slots:
  void namesAreFileSafe() {
    QCOMPARE(fileSafeName(QStringLiteral("fmnist baseline/2")),
             QStringLiteral("fmnist_baseline_2"));
    QCOMPARE(fileSafeName(QStringLiteral("a  b\t: c")), QStringLiteral("a_b_c"));  // one _ per run
    QCOMPARE(fileSafeName(QStringLiteral("ok-1.2_x")), QStringLiteral("ok-1.2_x"));
    QCOMPARE(fileSafeName(QStringLiteral("Läufe")), QStringLiteral("L_ufe"));
    QCOMPARE(fileSafeName(QString()), QString());
  }

  void oneCsvNamePerRun() {
    QCOMPARE(runCsvFileName(QStringLiteral("fmnist baseline"), QStringLiteral("r-1234")),
             QStringLiteral("fmnist_baseline-r-1234.csv"));
    QCOMPARE(runCsvFileName(QString(), QStringLiteral("r-1234")), QStringLiteral("r-1234.csv"));
  }

  void chartNames() {
    QCOMPARE(chartFileBaseName(QStringLiteral("compare"), QStringLiteral("train/loss")),
             QStringLiteral("compare-train-loss"));
    QCOMPARE(chartFileBaseName(QStringLiteral("my run"), QStringLiteral("step-time")),
             QStringLiteral("my_run-step-time"));
    QCOMPARE(chartFileBaseName(QString(), QStringLiteral("test/accuracy")),
             QStringLiteral("test-accuracy"));
  }
};

QTEST_GUILESS_MAIN(ExportFilesTest)
#include "export_files_test.moc"
