// The Sweeps page through the controller's real local agent (docs/sweeps.md): a sweep spec file
// started from the page runs on the agent, its trials fill the table as they are queued, paused
// at their rungs and promoted, the best is named; Add trials runs the completed sweep again; a
// bad file is refused saying why; every trial's curve is on one chart; the GUI closed in the
// middle of a sweep and opened again changes nothing. With RINGSIDE_SCREENSHOT_DIR set it saves the page as sweeps.png.
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>
#include <map>

#include "gui_test_support.h"
#include "ringside/gui/sweep_book.h"
#include "ringside/gui/sweep_trial_model.h"
#include "ringside/gui/widgets/metric_chart.h"
#include "ringside/gui/widgets/sweeps_panel.h"

using namespace ringside;
using namespace ringside::gui;

class SweepsPanelProcessTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { testing::allowMpirunAsRoot(); }

  void aSweepStartedFromAFileRunsAndIsShown() {
    testing::ControllerInTempDir fixture(testing::withBuiltLocalAgent());
    Controller& controller = fixture.controller;
    QVERIFY(controller.start().isOk());
    QTRY_VERIFY_WITH_TIMEOUT(!testing::onlineLocalNodeId(controller).isEmpty(), 30000);
    SweepBook book(&controller);
    SweepsPanel panel(controller, book);
    panel.resize(1100, 620);
    QSignalSpy errors(&panel, &SweepsPanel::errorMessage);

    QTemporaryDir files;
    const QString specFile = files.filePath(QStringLiteral("lr.json"));
    {
      QFile file(specFile);
      QVERIFY(file.open(QIODevice::WriteOnly));
      file.write(R"({"name": "lr search", "method": "RANDOM", "seed": "5", "max_trials": 4,
        "max_concurrent": 2, "metric": "test/accuracy",
        "base": {"name": "mlp", "ranks_per_node": 1, "trainer": {"config": {
          "backend": "mpi", "epochs": 3, "train_samples": 3000, "test_samples": 500,
          "hidden": [64], "log_every": 10, "quiet": true, "inject_compute_delay": "0:10"}}},
        "parameters": [{"name": "lr", "log_uniform": {"min": 0.0001, "max": 0.3}}],
        "early_stopping": {"asha": {"eta": 2, "grace_period": 1}}})");
    }
    panel.launchFile(specFile);
    QTRY_VERIFY_WITH_TIMEOUT(!panel.selectedSweep().isEmpty(), 15000);
    QVERIFY2(errors.isEmpty(), errors.isEmpty() ? "" : qPrintable(errors.at(0).at(0).toString()));
    const QString id = panel.selectedSweep();
    QTRY_VERIFY_WITH_TIMEOUT(book.find(id) && book.find(id)->sweep.state() == v1::SWEEP_COMPLETED,
                             240000);
    auto* table = panel.findChild<QTableView*>(QStringLiteral("trialTable"));
    QVERIFY(table != nullptr);
    QTRY_COMPARE(table->model()->rowCount(), 4);
    const v1::SweepInfo& done = book.find(id)->sweep;
    QVERIFY(done.best_trial() >= 0);
    const QString summary = panel.findChild<QLabel*>(QStringLiteral("sweepSummary"))->text();
    QVERIFY2(summary.contains(QStringLiteral("Best: trial %1").arg(done.best_trial())),
             qPrintable(summary));
    // The table says how each ended: completed or stopped early at its rung.
    const int stateColumn = 2;  // Trial, lr, State
    int completed = 0;
    for (int row = 0; row < 4; ++row) {
      const QString state = table->model()->index(row, stateColumn).data().toString();
      QVERIFY2(state == QLatin1String("completed") || state == QLatin1String("stopped early"),
               qPrintable(state));
      completed += state == QLatin1String("completed");
    }
    QVERIFY(completed >= 1);

    // Every trial's curve of the metric, from the runs the GUI caught up on (read every 3 s).
    auto* curves = panel.findChild<MetricChart*>(QStringLiteral("trialCurves"));
    QVERIFY(curves != nullptr);
    QTRY_COMPARE_WITH_TIMEOUT(curves->seriesNames().size(), qsizetype(4), 15000);
    QTest::qWait(3500);  // the last samples' refresh

    QVERIFY(testing::saveScreenshotIfAsked(panel, QStringLiteral("sweeps.png")));

    // Add trials: the completed sweep runs again and draws one more.
    QPushButton* add = nullptr;
    for (QPushButton* button : panel.findChildren<QPushButton*>()) {
      if (button->text() == QLatin1String("Add trials")) add = button;
    }
    QVERIFY(add != nullptr && add->isEnabled());
    auto* count = panel.findChild<QSpinBox*>();
    count->setValue(1);
    add->click();
    QTRY_VERIFY_WITH_TIMEOUT(book.find(id)->sweep.trials_size() == 5, 15000);
    QTRY_VERIFY_WITH_TIMEOUT(book.find(id)->sweep.state() == v1::SWEEP_COMPLETED, 120000);

    // A file that is not a sweep spec is refused with the parser's words; nothing starts.
    const QString bad = files.filePath(QStringLiteral("bad.json"));
    {
      QFile file(bad);
      QVERIFY(file.open(QIODevice::WriteOnly));
      file.write(R"({"name": "x", "maxTrails": 3})");
    }
    panel.launchFile(bad);
    QTRY_VERIFY(!errors.isEmpty());
    QVERIFY(errors.last().at(0).toString().contains(QStringLiteral("maxTrails")));
    QCOMPARE(book.sweeps().size(), size_t(1));
  }

  // The GUI closed in the middle of a sweep (its local agent stops with it) and opened again:
  // the agent takes the sweep back, it completes, and no trial ran twice.
  void closingTheGuiMidSweepChangesNothing() {
    QTemporaryDir data;
    ControllerOptions options = testing::withBuiltLocalAgent();
    options.dataDir = data.path();
    QString id;
    {
      Controller controller(options);
      QVERIFY(controller.start().isOk());
      QTRY_VERIFY_WITH_TIMEOUT(!testing::onlineLocalNodeId(controller).isEmpty(), 30000);
      SweepBook book(&controller);
      QSignalSpy launched(&book, &SweepBook::sweepLaunched);
      auto spec = sweepSpecFromJson(R"({"name": "closed", "method": "GRID",
        "max_concurrent": 2, "metric": "test/accuracy",
        "base": {"ranks_per_node": 1, "trainer": {"config": {"backend": "mpi", "epochs": 3,
          "train_samples": 3000, "test_samples": 500, "hidden": [64], "log_every": 10,
          "quiet": true, "inject_compute_delay": "0:20"}}},
        "parameters": [{"name": "lr", "values": [0.001, 0.01, 0.05, 0.1]}],
        "early_stopping": {"asha": {"eta": 2, "grace_period": 1}}})");
      QVERIFY(spec.isOk());
      book.launch(testing::onlineLocalNodeId(controller), *spec);
      QTRY_VERIFY_WITH_TIMEOUT(!launched.isEmpty(), 15000);
      id = launched.at(0).at(0).toString();
      // Close once the sweep is under way: a trial has run.
      QTRY_VERIFY_WITH_TIMEOUT(book.find(id) && book.find(id)->sweep.trials_size() >= 3, 120000);
    }
    Controller reopened(options);
    QVERIFY(reopened.start().isOk());
    QTRY_VERIFY_WITH_TIMEOUT(!testing::onlineLocalNodeId(reopened).isEmpty(), 30000);
    SweepBook book(&reopened);
    QTRY_VERIFY_WITH_TIMEOUT(book.find(id) != nullptr, 15000);
    QTRY_VERIFY_WITH_TIMEOUT(book.find(id)->sweep.state() == v1::SWEEP_COMPLETED, 240000);
    const v1::SweepInfo& done = book.find(id)->sweep;
    QCOMPARE(done.trials_size(), 4);
    int completed = 0;
    for (const v1::SweepTrial& trial : done.trials()) {
      QVERIFY2(trial.state() == v1::COMPLETED || trial.stopped_early(),
               qPrintable(QString::fromStdString(trial.reason())));
      completed += trial.state() == v1::COMPLETED;
    }
    QVERIFY(completed >= 1);
    // Each trial's runs are its attempts 1, 2, ... once each, as the GUI's store lists them.
    size_t expected = 0;
    for (const v1::SweepTrial& trial : done.trials()) expected += trial.earlier_run_ids_size() + 1;
    std::map<std::pair<uint32_t, uint32_t>, int> attempts;
    auto countRuns = [&] {
      attempts.clear();
      auto runs = reopened.store().runs().result();
      if (!runs.isOk()) return size_t(0);
      size_t count = 0;
      for (const RunRecord& run : *runs) {
        v1::RunSpec spec;
        if (!spec.ParseFromArray(run.spec.constData(), int(run.spec.size()))) continue;
        if (spec.sweep_trial().sweep_id() != id.toStdString()) continue;
        ++attempts[{spec.sweep_trial().trial(), spec.sweep_trial().attempt()}];
        ++count;
      }
      return count;
    };
    QTRY_COMPARE_WITH_TIMEOUT(countRuns(), expected, 30000);
    for (const auto& [key, count] : attempts) QCOMPARE(count, 1);
    for (const v1::SweepTrial& trial : done.trials()) {
      QCOMPARE(attempts.count({trial.trial(), uint32_t(trial.earlier_run_ids_size() + 1)}),
               size_t(1));
    }
  }
};

QTEST_MAIN(SweepsPanelProcessTest)
#include "sweeps_panel_process_test.moc"
