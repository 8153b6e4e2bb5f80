// The Queue page through the controller's real local agent (docs/queue.md, "The Queue page"):
// runs launched while a run holds every CPU slot wait in the agent's queue and are listed in
// order with the agent's reason; Move up, Priority and Cancel act through the agent; a refused
// move says why; once the slots are free the runs start in the new order and the page empties.
// With RINGSIDE_SCREENSHOT_DIR set it saves the page as queue.png. Also the table's words
// (times, what a run takes, which rows can move) without an agent.
#include <QComboBox>
#include <QDir>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableView>
#include <QtTest>

#include "gui_test_support.h"
#include "ringside/common/run_spec.h"
#include "ringside/gui/queue_table_model.h"
#include "ringside/gui/widgets/queue_panel.h"

using namespace ringside;
using namespace ringside::gui;

namespace {

QPushButton* buttonOf(QWidget& panel, const QString& text) {
  for (QPushButton* button : panel.findChildren<QPushButton*>()) {
    if (button->text() == text) return button;
  }
  return nullptr;
}

QString cell(const QueueTableModel& model, const QString& runId, int column) {
  return model.index(model.rowOfRun(runId), column).data().toString();
}

QueuedRun queuedRun(const QString& nodeId, const std::string& runId, v1::RunPriority priority) {
  QueuedRun run;
  run.nodeId = nodeId;
  run.nodeName = nodeId;
  run.nodeOnline = true;
  run.run.set_run_id(runId);
  run.run.set_state(v1::QUEUED);
  run.run.mutable_spec()->set_priority(priority);
  return run;
}

}  // namespace

class QueuePanelProcessTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { testing::allowMpirunAsRoot(); }

  void theTablesWords() {
    const QDateTime now(QDate(2026, 11, 29), QTime(10, 0));
    const double later = QDateTime(QDate(2026, 11, 29), QTime(14, 5)).toSecsSinceEpoch();
    const double tomorrow = QDateTime(QDate(2026, 11, 30), QTime(9, 30)).toSecsSinceEpoch();
    QCOMPARE(QueueTableModel::timeText(later, now), QLocale().toString(QTime(14, 5), QLocale().timeFormat(QLocale::ShortFormat).remove(QStringLiteral(":ss"))));
    QVERIFY2(QueueTableModel::timeText(tomorrow, now).contains(QStringLiteral("30")),
             qPrintable(QueueTableModel::timeText(tomorrow, now)));
    QVERIFY(QueueTableModel::timeText(tomorrow, now) != QueueTableModel::timeText(later, now));

    v1::RunSpec command;
    command.set_ranks_per_node(2);
    command.mutable_command()->add_argv("sleep");
    QCOMPARE(QueueTableModel::slotsText(command, /*gpuNode=*/true), QStringLiteral("2 CPU slots"));
    v1::RunSpec trainer;
    trainer.set_ranks_per_node(1);
    trainer.mutable_trainer();  // backend "auto": GPUs where the node has them
    QCOMPARE(QueueTableModel::slotsText(trainer, true), QStringLiteral("1 GPU"));
    QCOMPARE(QueueTableModel::slotsText(trainer, false), QStringLiteral("1 CPU slot"));
    v1::RunSpec twoNodes;
    twoNodes.mutable_python()->set_use_gpus(true);
    for (const char* host : {"a", "b"}) {
      v1::HostSlots& hostSlots = *twoNodes.add_hosts();
      hostSlots.set_host(host);
      hostSlots.set_ranks(2);
    }
    QCOMPARE(QueueTableModel::slotsText(twoNodes, false), QStringLiteral("4 GPUs on 2 nodes"));

    // A run moves among the runs of its node and priority only.
    QueueTableModel model;
    model.setRuns({queuedRun("n1", "r1", v1::HIGH_PRIORITY),
                   queuedRun("n1", "r2", v1::NORMAL_PRIORITY),
                   queuedRun("n1", "r3", v1::NORMAL_PRIORITY),
                   queuedRun("n2", "r4", v1::NORMAL_PRIORITY)});
    QVERIFY(!model.canMove(0, -1) && !model.canMove(0, 1));
    QVERIFY(!model.canMove(1, -1) && model.canMove(1, 1));
    QVERIFY(model.canMove(2, -1) && !model.canMove(2, 1));
    QVERIFY(!model.canMove(3, -1) && !model.canMove(3, 1));
    QCOMPARE(cell(model, QStringLiteral("r1"), QueueTableModel::kPriority), QStringLiteral("high"));
    QCOMPARE(cell(model, QStringLiteral("r1"), QueueTableModel::kEstimatedStart),
             QStringLiteral("unknown"));
    // The same runs again keep the rows (a view keeps its selection); others reset them.
    QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    model.setRuns({queuedRun("n1", "r1", v1::HIGH_PRIORITY),
                   queuedRun("n1", "r2", v1::NORMAL_PRIORITY),
                   queuedRun("n1", "r3", v1::NORMAL_PRIORITY),
                   queuedRun("n2", "r4", v1::NORMAL_PRIORITY)});
    QCOMPARE(reset.size(), 0);
    QCOMPARE(changed.size(), 1);
    model.setRuns({queuedRun("n1", "r3", v1::NORMAL_PRIORITY)});
    QCOMPARE(reset.size(), 1);
    QCOMPARE(model.rowOfRun(QStringLiteral("r3")), 0);
    QCOMPARE(model.rowOfRun(QStringLiteral("r1")), -1);
  }

  void queuedRunsAreListedMovedCancelledAndStartInTheNewOrder() {
    testing::ControllerInTempDir fixture(testing::withBuiltLocalAgent());
    Controller& controller = fixture.controller;
    QVERIFY(controller.start().isOk());
    QTRY_VERIFY_WITH_TIMEOUT(!testing::onlineLocalNodeId(controller).isEmpty(), 30000);
    const QString nodeId = testing::onlineLocalNodeId(controller);
    const int cpuSlots = testing::cpuSlotsOf(controller, nodeId);
    QVERIFY2(cpuSlots > 0, "the local agent reported no CPU slots");

    QueuePanel panel(controller);
    panel.resize(1100, 360);
    QSignalSpy counts(&panel, &QueuePanel::queuedCountChanged);
    QSignalSpy errors(&panel, &QueuePanel::errorMessage);
    auto* table = panel.findChild<QTableView*>(QStringLiteral("queueTable"));
    auto* summary = panel.findChild<QLabel*>(QStringLiteral("queueSummary"));
    QVERIFY(table != nullptr && summary != nullptr);
    QVERIFY2(summary->text().startsWith(QStringLiteral("No run is waiting")),
             qPrintable(summary->text()));

    // Every run takes all the node's CPU slots: one at a time, in queue order.
    auto form = [&](const QString& name, const QString& command) {
      return testing::commandRun(name, command, nodeId, cpuSlots);
    };
    QString error;
    const QString blocker =
        testing::launchAndWait(controller, form(QStringLiteral("blocker"), QStringLiteral("sleep 600")), &error);
    QVERIFY2(!blocker.isEmpty(), qPrintable(error));
    QTRY_COMPARE_WITH_TIMEOUT(testing::storedRunState(controller, blocker), v1::RUNNING, 30000);
    QStringList queued;
    for (const char* name : {"first", "second", "third"}) {
      const QString id = testing::launchAndWait(
          controller, form(QString::fromLatin1(name), QStringLiteral("sleep 1")), &error);
      QVERIFY2(!id.isEmpty(), qPrintable(error));
      queued << id;
    }
    QueueTableModel& model = *panel.model();
    QTRY_COMPARE_WITH_TIMEOUT(model.rowCount(), 3, 15000);
    for (int i = 0; i < 3; ++i) {
      QTRY_COMPARE(model.rowOfRun(queued[i]), i);
      QTRY_COMPARE(cell(model, queued[i], QueueTableModel::kPosition), QString::number(i + 1));
      QCOMPARE(cell(model, queued[i], QueueTableModel::kPriority), QStringLiteral("normal"));
      QCOMPARE(cell(model, queued[i], QueueTableModel::kRanks),
               cpuSlots == 1 ? QStringLiteral("1 CPU slot")
                             : QStringLiteral("%1 CPU slots").arg(cpuSlots));
    }
    QCOMPARE(cell(model, queued[0], QueueTableModel::kRun), QStringLiteral("first"));
    // The agent's reason names the run that holds the slots.
    const QString reason = cell(model, queued[0], QueueTableModel::kWaitingFor);
    QVERIFY2(reason.contains(QStringLiteral("held by run ") + blocker), qPrintable(reason));
    QVERIFY2(summary->text().startsWith(QStringLiteral("3 runs waiting on 1 node")),
             qPrintable(summary->text()));
    QVERIFY(!counts.isEmpty());
    QCOMPARE(counts.last().at(0).toInt(), 3);

    // The third moves up one place.
    QVERIFY(panel.selectRun(queued[2]));
    QPushButton* up = buttonOf(panel, QStringLiteral("Move up"));
    QPushButton* down = buttonOf(panel, QStringLiteral("Move down"));
    QVERIFY(up != nullptr && down != nullptr);
    QVERIFY(up->isEnabled() && !down->isEnabled());
    up->click();
    QTRY_COMPARE_WITH_TIMEOUT(cell(model, queued[2], QueueTableModel::kPosition), QStringLiteral("2"),
                              10000);
    QTRY_COMPARE(cell(model, queued[1], QueueTableModel::kPosition), QStringLiteral("3"));
    QCOMPARE(panel.selectedRun(), queued[2]);  // the selection follows its run

    // The second (now last) gets high priority: it goes to the head.
    QVERIFY(panel.selectRun(queued[1]));
    auto* priority = panel.findChild<QComboBox*>(QStringLiteral("queuePriority"));
    QVERIFY(priority != nullptr && priority->isEnabled());
    QCOMPARE(priority->currentText(), QStringLiteral("normal"));
    priority->setCurrentIndex(0);
    emit priority->activated(0);
    QTRY_COMPARE_WITH_TIMEOUT(cell(model, queued[1], QueueTableModel::kPosition), QStringLiteral("1"),
                              10000);
    QTRY_COMPARE(cell(model, queued[1], QueueTableModel::kPriority), QStringLiteral("high"));
    QTRY_COMPARE(model.rowOfRun(queued[1]), 0);

    QVERIFY(testing::saveScreenshotIfAsked(panel, QStringLiteral("queue.png")));

    // A run that is not queued cannot be moved: the agent says so.
    QSignalSpy refused(&controller, &Controller::queueActionFailed);
    controller.reorderQueuedRun(blocker, -1);
    QTRY_COMPARE_WITH_TIMEOUT(refused.size(), 1, 10000);
    QVERIFY2(refused.at(0).at(1).toString().contains(QStringLiteral("not queued")),
             qPrintable(refused.at(0).at(1).toString()));
    QVERIFY(!errors.isEmpty());

    // The first is cancelled: it leaves the page and ends stopped, never started.
    QVERIFY(panel.selectRun(queued[0]));
    QPushButton* cancel = buttonOf(panel, QStringLiteral("Cancel run"));
    QVERIFY(cancel != nullptr && cancel->isEnabled());
    cancel->click();
    QTRY_COMPARE_WITH_TIMEOUT(model.rowCount(), 2, 10000);
    QTRY_COMPARE_WITH_TIMEOUT(testing::storedRunState(controller, queued[0]), v1::STOPPED, 10000);

    // The blocker stopped: the rest start one after another, the high-priority one first.
    controller.stopRun(blocker);
    QTRY_COMPARE_WITH_TIMEOUT(model.rowCount(), 0, 60000);
    QTRY_COMPARE_WITH_TIMEOUT(testing::storedRunState(controller, queued[2]), v1::COMPLETED, 60000);
    QTRY_COMPARE_WITH_TIMEOUT(testing::storedRunState(controller, queued[1]), v1::COMPLETED, 60000);
    auto second = controller.store().run(queued[1]).result();
    auto third = controller.store().run(queued[2]).result();
    QVERIFY(second.isOk() && third.isOk());
    QVERIFY2(second->endTime <= third->startTime,
             qPrintable(QStringLiteral("%1 ended %2, %3 started %4")
                            .arg(queued[1]).arg(second->endTime, 0, 'f', 3)
                            .arg(queued[2]).arg(third->startTime, 0, 'f', 3)));
    QVERIFY(controller.store().run(queued[0]).result()->startTime == 0);
    QTRY_VERIFY(summary->text().startsWith(QStringLiteral("No run is waiting")));
    QCOMPARE(counts.last().at(0).toInt(), 0);
  }
};

QTEST_MAIN(QueuePanelProcessTest)
#include "queue_panel_process_test.moc"
