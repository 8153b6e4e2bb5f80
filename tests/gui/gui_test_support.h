// Helpers shared by the GUI test suites (tests/gui): a controller in a temporary data folder, and
// the NodeChoice a run setup form is given.
//
// Thread-safety: the GUI thread of a test only.
#pragma once

#include <QString>
#include <QTemporaryDir>

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

}  // namespace ringside::gui::testing
