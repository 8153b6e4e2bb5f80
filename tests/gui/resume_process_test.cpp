// Resume from the GUI (docs/dashboard.md, "Resume"): a real 2-rank MLP run through the controller
// and its local agent is stopped mid-run; its dashboard's Resume button (Controller::resumeRun)
// starts a run that continues it from the checkpoint the stop wrote. That run must be linked to
// the original (tag "resumed-from:<id>", "resumed from" on its dashboard), chart steps from the
// checkpoint's step on, complete, and end with the parameters of an uninterrupted run of the
// same spec (the trainer's resume equivalence, docs/checkpoint.md: same seed and step = same
// state). With RINGSIDE_SCREENSHOT_DIR set it saves the stopped run's dashboard with its Resume
// button as resume.png there (how docs/images/resume.png is made), and the resumed run's
// dashboard, its charts starting at the checkpoint's step, as resume-continued.png.
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtEndian>
#include <QtTest>

#include <cmath>
#include <cstring>

#include "gui_test_support.h"
#include "ringside/gui/controller.h"
#include "ringside/gui/run_resume.h"
#include "ringside/gui/widgets/dashboard_tab.h"
#include "ringside/gui/widgets/metric_chart.h"

using namespace ringside::gui;
namespace v1 = ringside::v1;

namespace {

std::optional<RunRecord> runOf(Controller& controller, const QString& runId) {
  auto run = controller.store().run(runId).result();
  if (!run.isOk()) return std::nullopt;
  return run.value();
}

bool endedAs(Controller& controller, const QString& runId, v1::RunState state) {
  return testing::storedRunState(controller, runId) == state;
}

// A checkpoint's step and flat parameter buffer, read as docs/checkpoint.md lays them out.
struct Checkpoint {
  qint64 step = -1;
  std::vector<float> params;
};

std::optional<Checkpoint> readCheckpointFile(const QString& path) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) return std::nullopt;
  const QByteArray bytes = file.readAll();
  qsizetype at = 0;
  auto u32 = [&]() -> std::optional<quint32> {
    if (at + 4 > bytes.size()) return std::nullopt;
    const quint32 value = qFromLittleEndian<quint32>(bytes.constData() + at);
    at += 4;
    return value;
  };
  auto u64 = [&]() -> std::optional<quint64> {
    if (at + 8 > bytes.size()) return std::nullopt;
    const quint64 value = qFromLittleEndian<quint64>(bytes.constData() + at);
    at += 8;
    return value;
  };
  at = 8;  // magic
  const auto version = u32();
  if (!version || *version != 2) return std::nullopt;
  at += 4;  // model
  const auto shapeEntries = u32();
  if (!shapeEntries) return std::nullopt;
  at += 4 * static_cast<qsizetype>(*shapeEntries) + 4;  // shape, optimizer
  Checkpoint checkpoint;
  const auto step = u64();
  if (!step) return std::nullopt;
  checkpoint.step = static_cast<qint64>(*step);
  at += 8 * 5 + 4;  // epoch, position, seed, global batch, training-set size; world size
  const auto count = u64();
  if (!count || at + static_cast<qsizetype>(*count) * 4 > bytes.size()) return std::nullopt;
  checkpoint.params.resize(*count);
  for (float& value : checkpoint.params) {
    const quint32 raw = qFromLittleEndian<quint32>(bytes.constData() + at);
    std::memcpy(&value, &raw, sizeof value);
    at += 4;
  }
  return checkpoint;
}

// The newest checkpoint of a run (ckpt-<step>.rsck names sort by step).
QString newestCheckpoint(const QString& dir) {
  const QStringList files =
      QDir(dir).entryList({QStringLiteral("ckpt-*.rsck")}, QDir::Files, QDir::Name);
  return files.isEmpty() ? QString() : QDir(dir).filePath(files.last());
}

// ||a - b|| / ||b||, as tests/trainer/trainer_process_test.cpp compares parameters.
double relativeDifference(const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0, norm = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    diff += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
    norm += double(b[i]) * b[i];
  }
  return std::sqrt(diff / norm);
}

}  // namespace

class ResumeProcessTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { testing::allowMpirunAsRoot(); }

  void resumedRunEndsWithTheUninterruptedParameters() {
    testing::ControllerInTempDir fixture(testing::withBuiltLocalAgent());
    Controller& controller = fixture.controller;
    QVERIFY(controller.start().isOk());
    QTRY_VERIFY_WITH_TIMEOUT(!testing::onlineLocalNodeId(controller).isEmpty(), 30000);
    const QString nodeId = testing::onlineLocalNodeId(controller);

    RunForm form;  // the MLP
    form.backend = QStringLiteral("mpi");
    form.epochs = 3;
    form.logEvery = 10;
    form.nodeIds = {nodeId};
    form.ranksPerNode = 2;
    QString launchError;
    auto launch = [&](const QString& name) {
      form.name = name;
      return testing::launchAndWait(controller, form, &launchError);
    };

    // The uninterrupted run.
    const QString fullId = launch(QStringLiteral("mlp, uninterrupted"));
    QVERIFY2(!fullId.isEmpty(), qPrintable(launchError));
    QTRY_VERIFY_WITH_TIMEOUT(endedAs(controller, fullId, v1::COMPLETED), 240000);

    // The same spec, stopped mid-run.
    const QString stoppedId = launch(QStringLiteral("mlp, stopped"));
    QVERIFY2(!stoppedId.isEmpty(), qPrintable(launchError));
    DashboardTab stoppedTab(controller, stoppedId);
    stoppedTab.resize(1500, 1000);
    stoppedTab.show();
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
          auto points =
              controller.store().series(stoppedId, QStringLiteral("train/loss"), -1).result();
          return points.isOk() && !points->empty() && points->back().x >= 200;
        }(),
        120000);
    QVERIFY(stoppedTab.resumeButton()->isHidden());  // running: nothing to resume yet
    controller.stopRun(stoppedId, 10);
    QTRY_VERIFY_WITH_TIMEOUT(endedAs(controller, stoppedId, v1::STOPPED), 60000);
    const QString stoppedCheckpoint = newestCheckpoint(controller.checkpointDirOf(stoppedId));
    QVERIFY2(!stoppedCheckpoint.isEmpty(), qPrintable(controller.checkpointDirOf(stoppedId)));
    const auto atStop = readCheckpointFile(stoppedCheckpoint);
    QVERIFY(atStop.has_value());
    const auto fullCheckpoint =
        readCheckpointFile(newestCheckpoint(controller.checkpointDirOf(fullId)));
    QVERIFY(fullCheckpoint.has_value());
    QVERIFY2(
        atStop->step > 0 && atStop->step < fullCheckpoint->step,
        qPrintable(
            QStringLiteral("stopped at %1 of %2").arg(atStop->step).arg(fullCheckpoint->step)));

    // Resume, as the dashboard's button does.
    QTRY_VERIFY_WITH_TIMEOUT(
        stoppedTab.resumeButton()->isVisible() && stoppedTab.resumeButton()->isEnabled(), 10000);
    QVERIFY(controller.resumeProblem(stoppedId).isEmpty());
    const QString screenshots = qEnvironmentVariable("RINGSIDE_SCREENSHOT_DIR");
    if (!screenshots.isEmpty()) {
      QTest::qWait(1500);  // the charts redraw
      QVERIFY(stoppedTab.grab().save(QDir(screenshots).filePath(QStringLiteral("resume.png"))));
    }
    QSignalSpy launched(&controller, &Controller::runLaunched);
    QSignalSpy failed(&controller, &Controller::launchFailed);
    const qsizetype before = launched.count();
    stoppedTab.resumeButton()->click();
    QTRY_VERIFY_WITH_TIMEOUT(launched.count() > before || !failed.isEmpty(), 30000);
    QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.at(0).at(0).toString()));
    const QString resumedId = launched.last().at(0).toString();
    QVERIFY(resumedId != stoppedId);
    DashboardTab resumedTab(controller, resumedId);
    resumedTab.resize(1500, 1000);
    resumedTab.show();
    QTRY_VERIFY_WITH_TIMEOUT(endedAs(controller, resumedId, v1::COMPLETED), 240000);

    // Linked to the original.
    const auto resumed = runOf(controller, resumedId);
    QVERIFY(resumed.has_value());
    QCOMPARE(resumedFromRunId(resumed->tags), stoppedId);
    QTRY_COMPARE_WITH_TIMEOUT(resumedTab.resumedFromText(),
                              QStringLiteral("resumed from %1").arg(stoppedId), 5000);
    QVERIFY(resumedTab.resumeButton()->isHidden());  // completed: nothing to resume

    // Its steps continue the original's axis: nothing before the checkpoint's step.
    auto steps = controller.store().series(resumedId, QStringLiteral("train/loss"), -1).result();
    QVERIFY(steps.isOk() && !steps->empty());
    QVERIFY2(steps->front().x > static_cast<double>(atStop->step),
             qPrintable(QStringLiteral("first step %1, checkpoint at %2")
                            .arg(steps->front().x)
                            .arg(atStop->step)));
    QVERIFY(steps->back().x <= static_cast<double>(fullCheckpoint->step));
    QTRY_VERIFY_WITH_TIMEOUT(
        !resumedTab.lossChart()->seriesData(DashboardTab::rawLossName()).empty(), 10000);
    QVERIFY(resumedTab.lossChart()->seriesData(DashboardTab::rawLossName()).front().x >
            static_cast<double>(atStop->step));

    if (!screenshots.isEmpty()) {
      QTest::qWait(1500);  // the charts redraw
      QVERIFY(resumedTab.grab().save(
          QDir(screenshots).filePath(QStringLiteral("resume-continued.png"))));
    }

    // The same parameters as the uninterrupted run.
    const auto atEnd = readCheckpointFile(newestCheckpoint(controller.checkpointDirOf(resumedId)));
    QVERIFY(atEnd.has_value());
    QCOMPARE(atEnd->step, fullCheckpoint->step);
    QCOMPARE(atEnd->params.size(), fullCheckpoint->params.size());
    QVERIFY(!atEnd->params.empty());
    const double difference = relativeDifference(atEnd->params, fullCheckpoint->params);
    qInfo("stopped at step %lld, resumed to step %lld: relative difference %g", atStop->step,
          atEnd->step, difference);
    QVERIFY2(difference <= 1e-5, qPrintable(QString::number(difference)));
  }
};

QTEST_MAIN(ResumeProcessTest)
#include "resume_process_test.moc"
