// The run setup form widget: fields round-trip a RunForm, errors show at the field and block
// Launch, and a valid form emits launchRequested.
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QtTest>

#include "ringside/gui/run_setup_panel.h"

using ringside::gui::NodeChoice;
using ringside::gui::RunForm;
using ringside::gui::RunSetupPanel;

class RunSetupPanelTest : public QObject {
  Q_OBJECT

 private slots:
  void formRoundTripsThroughTheWidgets() {
    RunSetupPanel panel;
    panel.setNodes({NodeChoice{"n1", "workstation", 8, "cpu", true}});
    RunForm form;
    form.name = QStringLiteral("round trip");
    form.tags = {QStringLiteral("a"), QStringLiteral("b")};
    form.hidden = {300, 100};
    form.optimizer = QStringLiteral("adamw");
    form.lr = 0.003;
    form.beta1 = 0.8;
    form.lrSchedule = QStringLiteral("step");
    form.lrStepEpochs = 3;
    form.epochs = 9;
    form.globalBatch = 96;
    form.backend = QStringLiteral("mpi");
    form.seed = 1234567;
    form.nodeId = QStringLiteral("n1");
    form.ranksPerNode = 3;
    panel.setForm(form);
    const RunForm back = panel.form();
    QCOMPARE(back.name, form.name);
    QCOMPARE(back.tags, form.tags);
    QCOMPARE(back.hidden, form.hidden);
    QCOMPARE(back.optimizer, form.optimizer);
    QCOMPARE(back.lr, form.lr);
    QCOMPARE(back.beta1, form.beta1);
    QCOMPARE(back.lrSchedule, form.lrSchedule);
    QCOMPARE(back.lrStepEpochs, form.lrStepEpochs);
    QCOMPARE(back.epochs, form.epochs);
    QCOMPARE(back.globalBatch, form.globalBatch);
    QCOMPARE(back.backend, form.backend);
    QCOMPARE(back.seed, form.seed);
    QCOMPARE(back.nodeId, form.nodeId);
    QCOMPARE(back.ranksPerNode, form.ranksPerNode);
    QVERIFY(panel.canLaunch());
  }

  void errorsShowAtTheFieldAndBlockLaunch() {
    RunSetupPanel panel;
    panel.setNodes({NodeChoice{"n1", "workstation", 2, "cpu", true}});
    RunForm form;
    form.name = QStringLiteral("too many");
    form.ranksPerNode = 4;  // only 2 free
    form.globalBatch = 130;
    panel.setForm(form);
    QVERIFY(!panel.canLaunch());
    QVERIFY(
        panel.fieldErrors().value(QStringLiteral("ranksPerNode")).contains(QStringLiteral("2")));
    QVERIFY(panel.fieldErrors().contains(QStringLiteral("globalBatch")));
    bool shown = false;
    for (QLabel* label : panel.findChildren<QLabel*>()) {
      shown |= !label->isHidden() && label->text().contains(QStringLiteral("slots are free"));
    }
    QVERIFY(shown);
  }

  void validFormEmitsLaunch() {
    RunSetupPanel panel;
    panel.setNodes({NodeChoice{"n1", "workstation", 4, "cpu", true}});
    RunForm form;
    form.name = QStringLiteral("go");
    form.ranksPerNode = 2;
    panel.setForm(form);
    QSignalSpy launched(&panel, &RunSetupPanel::launchRequested);
    QPushButton* launch = nullptr;
    for (QPushButton* button : panel.findChildren<QPushButton*>()) {
      if (button->text().contains(QStringLiteral("Launch"))) launch = button;
    }
    QVERIFY(launch != nullptr);
    QVERIFY(launch->isEnabled());
    launch->click();
    QCOMPARE(launched.count(), 1);
    QCOMPARE(launched.at(0).at(0).value<RunForm>().name, QStringLiteral("go"));
  }

  void noNodeMeansNoLaunch() {
    RunSetupPanel panel;
    RunForm form;
    form.name = QStringLiteral("nowhere");
    panel.setForm(form);
    QVERIFY(!panel.canLaunch());
  }
};

QTEST_MAIN(RunSetupPanelTest)
#include "run_setup_panel_test.moc"
