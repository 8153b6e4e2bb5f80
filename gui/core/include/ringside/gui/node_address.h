// A node's address as the GUI stores it (NodeRecord.address), and the command that authorizes the
// GUI on a node: pure functions of Qt Core, thread-safe.
#pragma once

#include <QString>

#include "ringside/common/protocol.h"

namespace ringside::gui {

// A node's host and ports, parsed from NodeRecord.address ("tcp://HOST:CONTROL tcp://HOST:EVENTS",
// as Controller stores it). `valid` is false for "local" and for anything else it cannot parse.
struct NodeAddress {
  QString host;
  int controlPort = protocol::kDefaultControlPort;
  int eventsPort = protocol::kDefaultEventsPort;
  bool valid = false;
};
NodeAddress parseNodeAddress(const QString& address);

// The shell command that authorizes `guiPublicKey` on an agent. The key is single-quoted (Z85
// uses characters such as & $ < > that the shell would interpret, never a quote) and follows "--"
// (Z85 keys may start with '-').
QString authorizeCommand(const QString& guiPublicKey);

}  // namespace ringside::gui
