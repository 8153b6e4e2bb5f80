// The Sweeps view's logic without an agent: a sweep's trials as a table (SweepTrialModel: values,
// states in words, the best trial, sorting by value), its CSV, the GUI's bounds on a sweep an agent
// sends, and a sweep spec read from JSON.
#include <QSortFilterProxyModel>
#include <QtTest>

#include "ringside/gui/agent_bounds.h"
#include "ringside/gui/sweep_book.h"
#include "ringside/gui/sweep_trial_model.h"

using namespace ringside;
using namespace ringside::gui;

namespace {

v1::SweepInfo sampleSweep() {
  auto spec = sweepSpecFromJson(R"({"name": "lr, width", "metric": "test/accuracy",
      "method": "GRID", "parameters": [{"name": "lr", "values": [0.1, 0.01, 0.001]},
                                       {"name": "optimizer", "values": ["sgd"]}],
      "earlyStopping": {"asha": {"eta": 3}}})");
  v1::SweepInfo sweep;
  sweep.set_sweep_id("s1");
  *sweep.mutable_spec() = *spec;
  sweep.set_state(v1::SWEEP_COMPLETED);
  const char* lrs[] = {"0.1", "0.01", "0.001"};
  for (int i = 0; i < 3; ++i) {
    v1::SweepTrial& trial = *sweep.add_trials();
    trial.set_trial(static_cast<uint32_t>(i));
    (*trial.mutable_params())["lr"] = lrs[i];
    (*trial.mutable_params())["optimizer"] = "\"sgd\"";
    trial.set_run_id("r" + std::to_string(i));
  }
  v1::SweepTrial& best = *sweep.mutable_trials(0);
  best.set_state(v1::COMPLETED);
  best.set_best_value(0.88);
  best.set_resource(9);
  best.add_earlier_run_ids("r0a");
  best.add_rungs()->set_promoted(true);
  v1::SweepTrial& loser = *sweep.mutable_trials(1);
  loser.set_state(v1::STOPPED);
  loser.set_stopped_early(true);
  loser.set_best_value(0.61);
  loser.set_resource(1);
  loser.set_reason("stopped at rung 0 (1 epoch): test/accuracy 0.61, below the cutoff 0.7, \"x\"");
  v1::SweepTrial& paused = *sweep.mutable_trials(2);
  paused.set_state(v1::STOPPED);
  paused.set_best_value(0.7);
  v1::RungValue& rung = *paused.add_rungs();
  rung.set_rung(1);
  sweep.set_best_trial(0);
  return sweep;
}

}  // namespace

class SweepsViewTest : public QObject {
  Q_OBJECT

 private slots:
  void theTrialTableShowsValuesStatesAndTheBest() {
    SweepTrialModel model;
    model.setSweep(sampleSweep());
    QCOMPARE(model.rowCount(), 3);
    QCOMPARE(model.headers(),
             QStringList({"Trial", "lr", "optimizer", "State", "Rung", "Trained (epochs)",
                          "Best test/accuracy", "Runs", "Reason"}));
    QCOMPARE(model.text(0, 2), QStringLiteral("sgd"));  // a string without its JSON quotes
    QCOMPARE(model.text(0, 3), QStringLiteral("completed"));
    QCOMPARE(model.text(0, 7), QStringLiteral("2"));     // two runs: paused once, resumed
    QCOMPARE(model.text(1, 3), QStringLiteral("stopped early"));
    QCOMPARE(model.text(2, 3), QStringLiteral("paused at rung 1"));
    QCOMPARE(model.text(2, 4), QStringLiteral("1"));
    QVERIFY(model.data(model.index(0, 0), Qt::FontRole).value<QFont>().bold());
    QVERIFY(!model.data(model.index(1, 0), Qt::FontRole).value<QFont>().bold());
    QCOMPARE(model.data(model.index(1, 0), SweepTrialModel::kRunIdRole).toString(),
             QStringLiteral("r1"));
    // Sorted by the best value, numerically (0.61 < 0.7 < 0.88), and by lr as numbers.
    QSortFilterProxyModel sorted;
    sorted.setSourceModel(&model);
    sorted.setSortRole(SweepTrialModel::kSortRole);
    sorted.sort(6, Qt::AscendingOrder);
    QCOMPARE(sorted.index(0, 0).data().toString(), QStringLiteral("1"));
    QCOMPARE(sorted.index(2, 0).data().toString(), QStringLiteral("0"));
    sorted.sort(1, Qt::AscendingOrder);
    QCOMPARE(sorted.index(0, 1).data().toString(), QStringLiteral("0.001"));
  }

  void theCsvQuotesWhatNeedsIt() {
    SweepTrialModel model;
    model.setSweep(sampleSweep());
    const QStringList lines = sweepTrialsCsv(model).split(QLatin1Char('\n'));
    QCOMPARE(lines.value(0),
             QStringLiteral("Trial,lr,optimizer,State,Rung,Trained (epochs),Best test/accuracy,"
                            "Runs,Reason,run_id"));
    QCOMPARE(lines.value(1), QStringLiteral("0,0.1,sgd,completed,0,9,0.88,2,,r0"));
    QCOMPARE(lines.value(2),
             QStringLiteral("1,0.01,sgd,stopped early,,1,0.61,1,\"stopped at rung 0 (1 epoch): "
                            "test/accuracy 0.61, below the cutoff 0.7, \"\"x\"\"\",r1"));
  }

  void aSweepFromAnAgentIsBounded() {
    v1::SweepInfo sweep = sampleSweep();
    for (int i = 0; i < 1200; ++i) sweep.add_trials()->set_trial(static_cast<uint32_t>(3 + i));
    sweep.mutable_trials(1)->set_reason(std::string(100000, 'x'));
    sweep.set_best_trial(5000);
    BoundsReport report;
    boundSweep(sweep, report);
    QCOMPARE(sweep.trials_size(), kMaxSweepTrialsShown);
    QVERIFY(sweep.trials(1).reason().size() < 100000);
    QCOMPARE(sweep.best_trial(), -1);
    QVERIFY(!report.empty());
  }

  void aSweepSpecIsReadFromJsonOrRefusedSayingWhy() {
    auto spec = sweepSpecFromJson(R"({"name": "x", "maxTrials": 4, "method": "RANDOM"})");
    QVERIFY(spec.isOk());
    QCOMPARE(spec->max_trials(), 4u);
    auto bad = sweepSpecFromJson(R"({"name": "x", "maxTrails": 4})");
    QVERIFY(!bad.isOk());
    QVERIFY2(QString::fromStdString(bad.status().message()).contains(QStringLiteral("maxTrails")),
             bad.status().message().c_str());
  }
};

QTEST_MAIN(SweepsViewTest)
#include "sweeps_view_test.moc"
