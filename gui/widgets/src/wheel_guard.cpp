// The mouse wheel over unfocused value widgets (wheel_guard.h).
#include "ringside/gui/widgets/wheel_guard.h"

#include <QAbstractSlider>
#include <QAbstractSpinBox>
#include <QApplication>
#include <QComboBox>
#include <QScrollBar>
#include <QEvent>
#include <QWheelEvent>
#include <QWidget>

namespace ringside::gui {

WheelGuard::WheelGuard(QObject* parent) : QObject(parent) {}

bool WheelGuard::guards(const QObject* object) {
  if (qobject_cast<const QScrollBar*>(object) != nullptr) return false;  // it is what scrolls
  return qobject_cast<const QAbstractSpinBox*>(object) != nullptr ||
         qobject_cast<const QComboBox*>(object) != nullptr ||
         qobject_cast<const QAbstractSlider*>(object) != nullptr;
}

bool WheelGuard::eventFilter(QObject* watched, QEvent* event) {
  if (event->type() != QEvent::Polish && event->type() != QEvent::Wheel) return false;
  if (!watched->isWidgetType() || !guards(watched)) return false;
  auto* widget = static_cast<QWidget*>(watched);
  if (event->type() == QEvent::Polish) {
    if (widget->focusPolicy() == Qt::WheelFocus) widget->setFocusPolicy(Qt::StrongFocus);
    return false;
  }
  if (widget->hasFocus()) return false;
  // Not for this widget: the wheel goes to the nearest widget around it that takes it (a scroll
  // area, a table), as if the widget were not there. Qt does not pass a wheel event that was not
  // spontaneous on to the parents, so the guard walks up itself.
  auto* wheel = static_cast<QWheelEvent*>(event);
  for (QWidget* parent = widget->parentWidget(); parent != nullptr;
       parent = parent->parentWidget()) {
    const QPointF position = parent->mapFromGlobal(wheel->globalPosition());
    QWheelEvent forwarded(position, wheel->globalPosition(), wheel->pixelDelta(),
                          wheel->angleDelta(), wheel->buttons(), wheel->modifiers(),
                          wheel->phase(), wheel->inverted(), wheel->source());
    forwarded.ignore();
    QApplication::sendEvent(parent, &forwarded);
    if (forwarded.isAccepted() || parent->isWindow()) break;
  }
  return true;
}

}  // namespace ringside::gui
