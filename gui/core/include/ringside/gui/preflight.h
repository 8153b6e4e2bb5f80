// The GUI's half of the pre-flight of a multi-node run (PreflightRequest, docs/protocol.md): before
// it asks the owner to launch, the controller asks every node of the run whether it can run its
// part, and this decides from the answers whether to launch and with which GPUs on the other
// nodes. Pure functions, thread-safe.
#pragma once

#include <QList>
#include <QString>

#include "ringside/proto/ringside.pb.h"

namespace ringside::gui {

// How long the controller waits for every node's pre-flight answer before it gives up (ms).
inline constexpr int kPreflightTimeoutMs = 10000;

// One node's answer.
struct PreflightAnswer {
  QString nodeName;  // the node's display name, for messages
  v1::PreflightReply reply;
};

// Checks the answers of every node of a multi-node run, `answers[i]` from the node of
// `spec->hosts(i)` (so answers[0] is the owner's), and completes the spec for the launch.
// Returns "" when the run can start, after setting HostSlots.gpus of every node but the owner
// whose slot_kind is "gpu" to the first `ranks` of its free_gpus (the owner picks its own).
// Otherwise returns one translated message that lists, each prefixed with the node's name, every
// problem a node reported, every node whose agent_version differs from the owner's (both
// versions named) and every GPU node with fewer free GPUs than ranks; `spec` is left unchanged.
// An answer count that does not match the hosts is a message too.
QString applyPreflight(const QList<PreflightAnswer>& answers, v1::RunSpec* spec);

}  // namespace ringside::gui
