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
// How long each node holds the run's slots and GPUs after answering (PreflightRequest.
// reserve_seconds): the answer time-out plus the launch, with room. A launch that does not
// follow (another node refused) leaves them held at most this long.
inline constexpr double kPreflightReserveSeconds = 30.0;

// One node's answer.
struct PreflightAnswer {
  QString nodeName;  // the node's display name, for messages
  v1::PreflightReply reply;
};

// Checks the answers of every node of a multi-node run, `answers[i]` from the node of
// `spec->hosts(i)` (so answers[0] is the owner's), and completes the spec for the launch.
// Returns "" when the run can start, after setting every host's reservation_id to its node's
// hold and HostSlots.gpus of every node but the owner where the run uses GPUs (runUsesGpusOn) to
// the GPUs held
// for the run there (reserved_gpus), else the first `ranks` of its free_gpus (an agent that
// holds nothing); the owner picks its own (from its hold).
// Otherwise returns one translated message that lists, each prefixed with the node's name, every
// problem a node reported, every node whose agent_version differs from the owner's (both
// versions named) and every GPU node with fewer free GPUs than ranks; `spec` is left unchanged.
// An answer count that does not match the hosts is a message too.
QString applyPreflight(const QList<PreflightAnswer>& answers, v1::RunSpec* spec);

// Whether `spec`'s ranks take GPUs on the node that answered `reply` (the agent's rule, slots by
// kind): a trainer with the nccl backend, or auto on a node with GPUs (slot_kind "gpu"); a Python
// script with use_gpus. Other jobs take CPU slots and get no GPUs.
bool runUsesGpusOn(const v1::RunSpec& spec, const v1::PreflightReply& reply);

}  // namespace ringside::gui
