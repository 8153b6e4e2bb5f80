// WheelGuard (wheel_guard.h): the mouse wheel over an unfocused spin box or combo box in a
// scrolling form leaves its value and scrolls the form; with focus it changes the value.
#include <QApplication>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QLineEdit>
#include <QScrollArea>
#include <QScrollBar>
#include <QWheelEvent>
#include <QtTest>

#include "ringside/gui/widgets/wheel_guard.h"

using ringside::gui::WheelGuard;

class WheelGuardTest : public QObject {
  Q_OBJECT

 private:
  // A wheel turn of one notch (120) down over the middle of `widget`.
  static void turnWheel(QWidget* widget) {
    const QPointF local(widget->width() / 2.0, widget->height() / 2.0);
    QWheelEvent wheel(local, widget->mapToGlobal(local), QPoint(), QPoint(0, -120), Qt::NoButton,
                      Qt::NoModifier, Qt::NoScrollPhase, false);
    QApplication::sendEvent(widget, &wheel);
  }

 private slots:
  void initTestCase() { qApp->installEventFilter(new WheelGuard(qApp)); }

  void wheelOverAnUnfocusedSpinBoxScrollsTheFormAndLeavesTheValue() {
    QScrollArea area;
    auto* form = new QWidget;
    auto* layout = new QFormLayout(form);
    auto* name = new QLineEdit;  // where the focus is (a form's first field gets it on show)
    layout->addRow(QStringLiteral("Name"), name);
    auto* momentum = new QDoubleSpinBox;
    momentum->setRange(0, 1);
    momentum->setSingleStep(0.1);
    momentum->setValue(0.9);
    auto* optimizer = new QComboBox;
    optimizer->addItems({QStringLiteral("sgd"), QStringLiteral("adamw")});
    layout->addRow(QStringLiteral("Momentum"), momentum);
    layout->addRow(QStringLiteral("Optimizer"), optimizer);
    for (int i = 0; i < 40; ++i) layout->addRow(QString::number(i), new QDoubleSpinBox);
    area.setWidget(form);
    area.resize(300, 200);
    area.show();
    QVERIFY(QTest::qWaitForWindowExposed(&area));
    area.activateWindow();
    name->setFocus(Qt::OtherFocusReason);
    QTRY_VERIFY(name->hasFocus());
    // The guard made them take focus by click or tab only.
    QCOMPARE(momentum->focusPolicy(), Qt::StrongFocus);
    QCOMPARE(optimizer->focusPolicy(), Qt::StrongFocus);

    QScrollBar* bar = area.verticalScrollBar();
    QCOMPARE(bar->value(), 0);
    turnWheel(momentum);
    turnWheel(optimizer);
    QCOMPARE(momentum->value(), 0.9);
    QCOMPARE(optimizer->currentIndex(), 0);
    QVERIFY2(bar->value() > 0, "the form scrolls instead");
    QVERIFY(!momentum->hasFocus());

    // Focused (clicked or tabbed into), the wheel changes the value, as it always did.
    momentum->setFocus(Qt::TabFocusReason);
    QTRY_VERIFY(momentum->hasFocus());
    turnWheel(momentum);
    QVERIFY(qAbs(momentum->value() - 0.8) < 1e-9);
  }
};

QTEST_MAIN(WheelGuardTest)
#include "wheel_guard_test.moc"
