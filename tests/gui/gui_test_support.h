// Helpers shared by the GUI test suites (tests/gui): a controller in a temporary data folder, the
// NodeChoice a run setup form is given, an answer to the next file dialog, and what the process
// tests need to run real trainer runs through a controller and its local agent.
//
// Thread-safety: the GUI thread of a test only.
#pragma once

#include <algorithm>
#include <QApplication>
#include <QDeadlineTimer>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QLineEdit>
#include <QString>
#include <QTemporaryDir>
#include <QTimer>
#include <QtTest>

#include <memory>

#include "build_paths.h"
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
  // Slots by kind: a "gpu" node has `freeSlots` free GPUs (of at least one) and 64 free cores
  // (of 64); a "cpu" node `freeSlots` free cores (of as many) and no GPU.
  if (slotKind == QLatin1String("gpu")) {
    node.gpuSlotsTotal = std::max(1, freeSlots);
    node.freeGpuSlots = freeSlots;
    node.freeCpuSlots = 64;
    node.cpuSlotsTotal = 64;
  } else {
    node.freeCpuSlots = freeSlots;
    node.freeGpuSlots = freeSlots < 0 ? -1 : 0;
    node.cpuSlotsTotal = freeSlots;  // none in use
  }
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

// mpirun as root (these machines' tests run as root) with more ranks than cores.
inline void allowMpirunAsRoot() {
  qputenv("OMPI_ALLOW_RUN_AS_ROOT", "1");
  qputenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
  qputenv("OMPI_MCA_rmaps_base_oversubscribe", "1");
}

// Options of a controller that starts its local agent with this build's agent and trainer (the
// test support library knows where they are).
inline ControllerOptions withBuiltLocalAgent() {
  ControllerOptions options;
  options.agentBinary = QString::fromUtf8(ringside::test::agentBin());
  options.trainerBinary = QString::fromUtf8(ringside::test::trainerBin());
  return options;
}

// Whether Debian's /usr/bin/python3 can import torch and numpy (python3-torch, python3-numpy):
// what the PyTorch script tests need; they skip without.
inline bool pythonHasTorch() {
  QProcess probe;
  probe.start(QStringLiteral("/usr/bin/python3"), {QStringLiteral("-c"),
                                                   QStringLiteral("import torch, numpy")});
  return probe.waitForFinished(60000) && probe.exitStatus() == QProcess::NormalExit &&
         probe.exitCode() == 0;
}

// The local agent's node id once it is online and has said hello; "" before.
inline QString onlineLocalNodeId(const Controller& controller) {
  for (const NodeView& node : controller.nodes()) {
    if (node.local && node.state == NodeState::Online && node.info) return node.record.nodeId;
  }
  return {};
}

// The run's state as the GUI's store has it (RUN_STATE_UNSPECIFIED before it is known).
inline v1::RunState storedRunState(Controller& controller, const QString& runId) {
  auto run = controller.store().run(runId).result();
  return run.isOk() ? run->state : v1::RUN_STATE_UNSPECIFIED;
}

// With RINGSIDE_SCREENSHOT_DIR set (the pictures of docs/images): shows `widget`, waits until
// it is drawn and saves it there as `fileName`. True when not asked, or when saved.
inline bool saveScreenshotIfAsked(QWidget& widget, const QString& fileName) {
  const QString dir = qEnvironmentVariable("RINGSIDE_SCREENSHOT_DIR");
  if (dir.isEmpty()) return true;
  widget.show();
  if (!QTest::qWaitForWindowExposed(&widget)) return false;
  QTest::qWait(200);
  return QDir().mkpath(dir) && widget.grab().save(QDir(dir).filePath(fileName));
}

// The node's CPU slots in all, as its agent said in its hello (-1 when unknown).
inline int cpuSlotsOf(const Controller& controller, const QString& nodeId) {
  for (const NodeChoice& choice : controller.nodeChoices()) {
    if (choice.nodeId == nodeId) return choice.cpuSlotsTotal;
  }
  return -1;
}

// A custom command run of `ranks` ranks on one node: with every CPU slot of the node, runs of it
// start one after another, the rest waiting in the node's queue.
inline RunForm commandRun(const QString& name, const QString& command, const QString& nodeId,
                          int ranks) {
  RunForm run;
  run.name = name;
  run.job = RunForm::Job::kCommand;
  run.command = command;
  run.nodeIds = {nodeId};
  run.ranksPerNode = ranks;
  return run;
}

// Launches `form` and waits (at most 30 s) for the controller's answer: the new run's id, or ""
// with *error saying why (the launch failed, or no answer came).
inline QString launchAndWait(Controller& controller, const RunForm& form, QString* error) {
  QSignalSpy launched(&controller, &Controller::runLaunched);
  QSignalSpy failed(&controller, &Controller::launchFailed);
  controller.launch(form);
  const QDeadlineTimer deadline(30000);
  while (launched.isEmpty() && failed.isEmpty() && !deadline.hasExpired()) QTest::qWait(50);
  if (!launched.isEmpty()) return launched.at(0).at(0).toString();
  *error = failed.isEmpty() ? QStringLiteral("no answer to the launch within 30 s")
                            : failed.at(0).at(0).toString();
  return {};
}

}  // namespace ringside::gui::testing
