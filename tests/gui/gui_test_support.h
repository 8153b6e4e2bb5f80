// Helpers shared by the GUI test suites (tests/gui): a controller in a temporary data folder, the
// NodeChoice a run setup form is given, and an answer to the next file dialog.
//
// Thread-safety: the GUI thread of a test only.
#pragma once

#include <QApplication>
#include <QDeadlineTimer>
#include <QFileDialog>
#include <QFileInfo>
#include <QLineEdit>
#include <QString>
#include <QTemporaryDir>
#include <QTimer>

#include <memory>

#include "ringside/gui/controller.h"
#include "ringside/gui/run_form.h"

namespace ringside::gui::testing {

// A Controller whose data folder (database, keys) is a fresh temporary directory, removed with
// the fixture; no local agent unless `options` asks for one (its dataDir is replaced). Not
// started: call QVERIFY(fixture.controller.start().isOk()) in the test.
struct ControllerInTempDir {
  static ControllerOptions withoutLocalAgent() {
    ControllerOptions options;
    options.startLocalAgent = false;
    return options;
  }
  explicit ControllerInTempDir(ControllerOptions options = withoutLocalAgent())
      : controller(inFolder(std::move(options), dir.path())) {}

  QTemporaryDir dir;  // declared first: it exists before the controller is made
  Controller controller;

 private:
  static ControllerOptions inFolder(ControllerOptions options, const QString& path) {
    options.dataDir = path;
    return options;
  }
};

// A node as Controller::nodeChoices() makes it, without launch settings.
inline NodeChoice nodeChoice(const QString& nodeId, const QString& name, int freeSlots,
                             const QString& slotKind, bool online, bool draining,
                             const QString& hostName) {
  NodeChoice node;
  node.nodeId = nodeId;
  node.name = name;
  node.freeSlots = freeSlots;
  node.slotKind = slotKind;
  node.online = online;
  node.draining = draining;
  node.hostName = hostName;
  return node;
}

// Answers the next file dialog that opens within `timeoutMs` (QFileDialog's static functions, which
// show Qt's own dialog under the offscreen platform) with `path`, as a user types a name or picks
// a folder and presses Save or Choose. Call before the action that opens the dialog; the answer
// comes from a timer while the dialog runs its event loop. The dialog lists a folder
// asynchronously and may then select its suggested name again, so the answer is given only once
// the selection has held `path` for two ticks in a row.
inline void answerNextFileDialog(const QString& path, int timeoutMs = 10000) {
  auto* timer = new QTimer(qApp);
  const QDeadlineTimer deadline(timeoutMs);
  auto steady = std::make_shared<int>(0);
  QObject::connect(timer, &QTimer::timeout, timer, [timer, path, deadline, steady] {
    for (QWidget* widget : QApplication::topLevelWidgets()) {
      auto* dialog = qobject_cast<QFileDialog*>(widget);
      if (dialog == nullptr || !dialog->isVisible()) continue;
      if (deadline.hasExpired()) {  // never steady: give up rather than hang the test
        timer->stop();
        timer->deleteLater();
        dialog->reject();
        return;
      }
      if (dialog->selectedFiles().value(0) != path) {
        // Typed into the name field: selectFile() leaves a focused field alone.
        *steady = 0;
        const QFileInfo info(path);
        auto* name = dialog->findChild<QLineEdit*>(QStringLiteral("fileNameEdit"));
        if (dialog->fileMode() == QFileDialog::Directory) {
          dialog->setDirectory(path);
          if (name != nullptr) name->setText(path);
        } else {
          dialog->setDirectory(info.absolutePath());
          if (name != nullptr) name->setText(info.fileName());
        }
        return;
      }
      if (++*steady < 2) return;
      timer->stop();
      timer->deleteLater();
      static_cast<QDialog*>(dialog)->accept();  // QFileDialog::accept, as Save does
      return;
    }
    if (deadline.hasExpired()) {
      timer->stop();
      timer->deleteLater();
    }
  });
  timer->start(20);
}

}  // namespace ringside::gui::testing
