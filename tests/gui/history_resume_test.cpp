// History and Resume (docs/dashboard.md, "Resume"): a selected run that continues another says
// "Resumed from <name> (<id>)" under the table; Resume is offered for a stopped trainer run and
// is disabled, naming why, while no connected node has reported the run.
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QtTest>

#include "gui_test_support.h"
#include "ringside/gui/controller.h"
#include "ringside/gui/run_form.h"
#include "ringside/gui/run_resume.h"
#include "ringside/gui/run_table_model.h"
#include "ringside/gui/widgets/history_panel.h"

using namespace ringside;
using namespace ringside::gui;
using ringside::gui::testing::ControllerInTempDir;

namespace {

v1::RunInfo runInfo(const QString& runId, const QString& name, const QStringList& tags,
                    v1::RunState state, double start) {
  RunForm form;
  form.name = name;
  form.tags = tags;
  v1::RunInfo run;
  run.set_run_id(runId.toStdString());
  *run.mutable_spec() = toRunSpec(form);
  run.set_state(state);
  run.set_world_size(2);
  run.set_created_time(start - 1);
  run.set_start_time(start);
  run.set_end_time(start + 60);
  return run;
}

}  // namespace

class HistoryResumeTest : public QObject {
  Q_OBJECT

 private slots:
  void resumedRunNamesItsOriginalAndStoppedRunOffersResume() {
    ControllerInTempDir fixture;
    Controller& controller = fixture.controller;
    QVERIFY(controller.start().isOk());
    MetricsStore& store = controller.store();
    const double t0 = 1'767'000'000.0;
    auto stored = [](QFuture<Status> future) {
      future.waitForFinished();
      return future.result().isOk();
    };
    QVERIFY(
        stored(store.upsertRun("n1", runInfo("r-orig", "mlp sweep", {"sweep"}, v1::STOPPED, t0))));
    QVERIFY(stored(
        store.upsertRun("n1", runInfo("r-next", "mlp sweep", {"sweep", "resumed-from:r-orig"},
                                      v1::COMPLETED, t0 + 100))));

    HistoryPanel panel(controller);
    panel.resize(1100, 420);
    panel.show();
    QTRY_COMPARE(panel.model()->rowCount(), 2);
    QPushButton* resume = panel.resumeButton();
    QVERIFY(!resume->isEnabled());  // nothing selected

    panel.selectRuns({"r-next"});
    QCOMPARE(panel.lineageText(), QStringLiteral("Resumed from mlp sweep (r-orig)"));
    QVERIFY(!resume->isEnabled());  // completed: nothing to resume

    // Stopped, but its node is not connected: disabled, and the tooltip says why.
    panel.selectRuns({"r-orig"});
    QCOMPARE(panel.lineageText(), QString());
    QVERIFY(!resume->isEnabled());
    QCOMPARE(resume->toolTip(), controller.resumeProblem("r-orig"));
    QVERIFY(!controller.resumeProblem("r-orig").isEmpty());
    QSignalSpy failed(&controller, &Controller::launchFailed);
    controller.resumeRun("r-orig");
    QCOMPARE(failed.count(), 1);
    QCOMPARE(failed.first().first().toString(), controller.resumeProblem("r-orig"));
  }
};

QTEST_MAIN(HistoryResumeTest)
#include "history_resume_test.moc"
