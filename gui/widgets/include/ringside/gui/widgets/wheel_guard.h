// WheelGuard: the mouse wheel changes a spin box, combo box or slider only while it has keyboard
// focus (clicked or tabbed into); over an unfocused one the wheel scrolls the form around it, as
// in Qt Creator and most desktop forms. Without it, scrolling the New run form over Momentum
// changed its value with no sign of it.
//
// Installed once on the application (QApplication::installEventFilter); it then covers every
// widget, present and future: on each such widget's Polish event it makes the focus policy
// Qt::StrongFocus where it was Qt::WheelFocus (so that a wheel turn does not give focus), and a
// wheel event over one without focus goes to its parent instead (the scroll area scrolls).
//
// Thread-safety: GUI thread only, as every widget.
#pragma once

#include <QObject>

namespace ringside::gui {

class WheelGuard : public QObject {
  Q_OBJECT

 public:
  explicit WheelGuard(QObject* parent = nullptr);

  // The widgets it guards: QAbstractSpinBox, QComboBox and QAbstractSlider (and their subclasses),
  // but not QScrollBar (the wheel is what moves it).
  static bool guards(const QObject* object);

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;
};

}  // namespace ringside::gui
