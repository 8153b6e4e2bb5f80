// Resume's pure parts (run_resume.h): which runs can be resumed, the resumed run's spec (resume
// path, the "resumed-from:" link, hosts) and the form's "Resume from checkpoint" field through a
// clone.
#include <QtTest>

#include "ringside/common/run_spec.h"
#include "ringside/gui/run_form.h"
#include "ringside/gui/run_resume.h"

using namespace ringside::gui;
namespace v1 = ringside::v1;

namespace {

v1::RunInfo stoppedRun() {
  RunForm form;
  form.name = QStringLiteral("mlp");
  form.tags = {QStringLiteral("sweep"), QStringLiteral("resumed-from:older")};
  form.nodeIds = {QStringLiteral("n1")};
  v1::RunInfo run;
  run.set_run_id("run-2");
  *run.mutable_spec() = toRunSpec(form);
  run.set_state(v1::STOPPED);
  run.set_run_dir("/var/lib/ringside/runs/run-2");
  return run;
}

}  // namespace

class RunResumeTest : public QObject {
  Q_OBJECT

 private slots:
  void stoppedTrainerRunsAndFailedOnesWithPeriodicCheckpointsAreResumable() {
    v1::RunInfo run = stoppedRun();
    QVERIFY(hasResumableCheckpoint(v1::STOPPED, run.spec()));
    QVERIFY(!hasResumableCheckpoint(v1::COMPLETED, run.spec()));
    QVERIFY(!hasResumableCheckpoint(v1::RUNNING, run.spec()));
    run.mutable_spec()->mutable_trainer()->mutable_config()->set_checkpoint_every(0);
    QVERIFY(!hasResumableCheckpoint(v1::FAILED, run.spec()));
    run.mutable_spec()->mutable_trainer()->mutable_config()->set_checkpoint_every(100);
    QVERIFY(hasResumableCheckpoint(v1::FAILED, run.spec()));
    v1::RunSpec command;
    command.mutable_command()->add_argv("python3");
    QVERIFY(!hasResumableCheckpoint(v1::STOPPED, command));
  }

  void resumedSpecContinuesFromTheRunsCheckpointDirectoryAndNamesIt() {
    const v1::RunInfo run = stoppedRun();
    auto dir = checkpointDirOfRun(run);
    QVERIFY(dir.isOk());
    QCOMPARE(dir.value(), QStringLiteral("/var/lib/ringside/runs/run-2/checkpoints"));
    auto spec = resumedRunSpec(run);
    QVERIFY(spec.isOk());
    QCOMPARE(QString::fromStdString(spec->trainer().config().resume()), dir.value());
    QCOMPARE(spec->name(), run.spec().name());
    // Only the direct link: the original's own "resumed-from:" tag is dropped.
    QCOMPARE(spec->tags_size(), 2);
    QCOMPARE(spec->tags(0), std::string("sweep"));
    QCOMPARE(spec->tags(1), std::string("resumed-from:run-2"));
    QCOMPARE(resumedFromRunId(
                 QStringList{QStringLiteral("sweep"), QStringLiteral(" resumed-from:run-2")}),
             QStringLiteral("run-2"));
    QCOMPARE(resumedFromRunId(QStringLiteral("sweep, resumed-from:run-2")),
             QStringLiteral("run-2"));
    QCOMPARE(resumedFromRunId(QStringLiteral("sweep")), QString());
    // Everything else as the original had it.
    v1::TrainerConfig without = spec->trainer().config();
    without.clear_resume();
    QCOMPARE(without.SerializeAsString(), run.spec().trainer().config().SerializeAsString());
  }

  void absoluteCheckpointDirectoryIsKept() {
    v1::RunInfo run = stoppedRun();
    run.mutable_spec()->mutable_trainer()->mutable_config()->set_checkpoint_dir("/data/ckpt/");
    auto dir = checkpointDirOfRun(run);
    QVERIFY(dir.isOk());
    QCOMPARE(dir.value(), QStringLiteral("/data/ckpt"));
  }

  void runWithoutDirectoryOrTrainerCannotBeResumed() {
    v1::RunInfo run = stoppedRun();
    run.clear_run_dir();
    QVERIFY(!resumedRunSpec(run).isOk());
    run = stoppedRun();
    run.mutable_spec()->mutable_command()->add_argv("python3");
    QVERIFY(!checkpointDirOfRun(run).isOk());
  }

  void multiNodeResumeKeepsTheHostsButNotTheirGpuPicks() {
    v1::RunInfo run = stoppedRun();
    for (const char* host : {"node-1", "node-2"}) {
      v1::HostSlots* hostSlots = run.mutable_spec()->add_hosts();
      hostSlots->set_host(host);
      hostSlots->set_ranks(2);
      hostSlots->add_gpus(0);
      hostSlots->add_gpus(1);
      hostSlots->set_reservation_id("held");
    }
    auto spec = resumedRunSpec(run);
    QVERIFY(spec.isOk());
    QCOMPARE(spec->hosts_size(), 2);
    QCOMPARE(spec->hosts(1).host(), std::string("node-2"));
    QCOMPARE(spec->hosts(1).ranks(), 2u);
    QCOMPARE(spec->hosts(0).gpus_size(), 0);
    QVERIFY(spec->hosts(0).reservation_id().empty());
  }

  void cloneKeepsTheResumePathInTheFormsField() {
    const v1::RunInfo run = stoppedRun();
    auto spec = resumedRunSpec(run);
    QVERIFY(spec.isOk());
    RunForm form = fromRunSpec(spec.value());
    QCOMPARE(form.resumeFrom, QStringLiteral("/var/lib/ringside/runs/run-2/checkpoints"));
    QCOMPARE(QString::fromStdString(trainerConfig(form).resume()), form.resumeFrom);
    form.resumeFrom.clear();  // start afresh
    QVERIFY(!trainerConfig(form).has_resume());
    form.resumeFrom = QStringLiteral("  /data/ckpt-00000200.rsck ");
    QCOMPARE(trainerConfig(form).resume(), std::string("/data/ckpt-00000200.rsck"));
    QCOMPARE(RunForm{}.resumeFrom, QString());
  }
};

QTEST_MAIN(RunResumeTest)
#include "run_resume_test.moc"
