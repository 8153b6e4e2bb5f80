// The cluster that `scripts/local-cluster up N` makes on one machine (docs/multi-node.md), as the
// JSON document it prints and saves as /run/ringside-local-cluster/cluster.json:
//   {"nodes": [{"name": "node-1", "address": "10.213.77.11",
//               "control": "tcp://10.213.77.11:47600", "events": "tcp://10.213.77.11:47601",
//               "agent_public_key": "<Z85>"}, ...],
//    "client_public_key": "<Z85>",
//    "client_secret_key_file": "/var/lib/ringside-local-cluster/client.key_secret"}
// Every node's agent allows the cluster's client key (not the GUI's own), so the GUI connects to
// them with that keypair (NodeRecord.clientKeyFile). `ringside --local-cluster [FILE]` reads it.
// Pure functions of Qt Core, thread-safe.
#pragma once

#include <QByteArray>
#include <QList>
#include <QString>

#include "ringside/common/curve.h"
#include "ringside/common/status.h"

namespace ringside::gui {

// Where `scripts/local-cluster up` saves the document.
inline constexpr const char* kDefaultLocalClusterFile = "/run/ringside-local-cluster/cluster.json";
// Bounds of the document: its size and its number of nodes (the script makes at most 64).
inline constexpr qint64 kMaxLocalClusterFileBytes = 1 << 20;
inline constexpr int kMaxLocalClusterNodes = 256;

struct LocalClusterNode {
  QString name;            // e.g. "node-1": the node's display name, and what an update matches
  QString address;         // e.g. "10.213.77.11"
  QString host;            // the host of the control endpoint, e.g. "10.213.77.11"
  int controlPort = 0;     // from "control"
  int eventsPort = 0;      // from "events"
  QString agentPublicKey;  // Z85
};

struct LocalCluster {
  QList<LocalClusterNode> nodes;
  QString clientPublicKey;      // Z85; the public half of the secret key in the file below
  QString clientSecretKeyFile;  // one Z85 secret key and a newline
};

// Parses the document; `path` is only named in messages. Errors (InvalidArgument, with a
// translated message that names the file and the entry and says to run
// `scripts/local-cluster up 3`): not JSON, not an object, no or an empty "nodes" list (or more than
// kMaxLocalClusterNodes), a node without "name", "control", "events" or "agent_public_key", an
// endpoint that is not tcp://HOST:PORT, control and events on different hosts, two nodes with one
// name, a key that is not 40 Z85 characters, no "client_secret_key_file".
Result<LocalCluster> parseLocalCluster(const QByteArray& json, const QString& path);

// Reads and parses `path`. Errors: NotFound when it does not exist, IOError when it cannot be
// read, InvalidArgument when it is larger than kMaxLocalClusterFileBytes or as parseLocalCluster;
// every message says what to do.
Result<LocalCluster> readLocalCluster(const QString& path);

// The cluster's client keypair, from its secret key file (loadClientKeyFile). Errors: as
// loadClientKeyFile, and InvalidArgument when the derived public key is not the document's
// "client_public_key" (the file belongs to another cluster); messages are translated.
Result<curve::KeyPair> localClusterClientKeys(const LocalCluster& cluster);

}  // namespace ringside::gui
