#include "ringside/gui/local_cluster.h"

#include <QCoreApplication>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>
#include <QUrl>

#include "ringside/common/curve.h"
#include "ringside/gui/gui_keys.h"

namespace ringside::gui {

namespace {

// lupdate files the tr() calls of free functions under their namespace, so that is the context.
QString tr(const char* text) { return QCoreApplication::translate("ringside::gui", text); }

// What every message ends with: how to get a good file.
QString remedy() {
  return tr(
      "Start the cluster with `sudo scripts/local-cluster up 3` (it writes the file), or "
      "pass the file it printed: ringside --local-cluster FILE.");
}

Status invalid(const QString& path, const QString& what) {
  return Status::invalidArgument(
      QStringLiteral("%1: %2. %3").arg(path, what, remedy()).toStdString());
}

// "tcp://HOST:PORT" -> host and port; false when it is not one.
bool parseTcpEndpoint(const QString& endpoint, QString* host, int* port) {
  const QUrl url(endpoint, QUrl::StrictMode);
  if (!url.isValid() || url.scheme() != QLatin1String("tcp") || url.host().isEmpty() ||
      url.port() <= 0 || !url.path().isEmpty()) {
    return false;
  }
  *host = url.host();
  *port = url.port();
  return true;
}

bool isKey(const QString& key) { return curve::validateKey(key.toStdString()).isOk(); }

}  // namespace

Result<LocalCluster> parseLocalCluster(const QByteArray& json, const QString& path) {
  QJsonParseError error;
  const QJsonDocument document = QJsonDocument::fromJson(json, &error);
  if (error.error != QJsonParseError::NoError) {
    return invalid(
        path, tr("not valid JSON (%1 at offset %2)").arg(error.errorString()).arg(error.offset));
  }
  if (!document.isObject()) return invalid(path, tr("not a JSON object"));
  const QJsonObject root = document.object();
  const QJsonValue nodes = root.value(QLatin1String("nodes"));
  if (!nodes.isArray() || nodes.toArray().isEmpty()) {
    return invalid(path, tr("no \"nodes\" list"));
  }
  if (nodes.toArray().size() > kMaxLocalClusterNodes) {
    return invalid(path, tr("%1 nodes, more than the %2 Ringside takes")
                             .arg(nodes.toArray().size())
                             .arg(kMaxLocalClusterNodes));
  }
  LocalCluster cluster;
  QSet<QString> names;
  int index = 0;
  for (const QJsonValue& value : nodes.toArray()) {
    ++index;
    const QJsonObject entry = value.toObject();
    const auto field = [&entry](const char* key) {
      return entry.value(QLatin1String(key)).toString().trimmed();
    };
    LocalClusterNode node;
    node.name = field("name");
    // Messages name the node when it has a name, else its position.
    const QString which = node.name.isEmpty() ? tr("node %1").arg(index) : node.name;
    for (const char* key : {"name", "control", "events", "agent_public_key"}) {
      if (field(key).isEmpty()) {
        return invalid(path, tr("%1 has no \"%2\"").arg(which, QString::fromLatin1(key)));
      }
    }
    if (names.contains(node.name)) {
      return invalid(path, tr("two nodes are named %1").arg(node.name));
    }
    names.insert(node.name);
    node.address = field("address");
    QString eventsHost;
    if (!parseTcpEndpoint(field("control"), &node.host, &node.controlPort)) {
      return invalid(path, tr("the \"control\" endpoint of %1 is not tcp://HOST:PORT: \"%2\"")
                               .arg(which, field("control")));
    }
    if (!parseTcpEndpoint(field("events"), &eventsHost, &node.eventsPort)) {
      return invalid(path, tr("the \"events\" endpoint of %1 is not tcp://HOST:PORT: \"%2\"")
                               .arg(which, field("events")));
    }
    if (eventsHost != node.host) {
      return invalid(path, tr("the \"control\" and \"events\" endpoints of %1 name different "
                              "hosts (%2, %3)")
                               .arg(which, node.host, eventsHost));
    }
    node.agentPublicKey = field("agent_public_key");
    if (!isKey(node.agentPublicKey)) {
      return invalid(path, tr("the \"agent_public_key\" of %1 is not a CURVE key (40 Z85 "
                              "characters)")
                               .arg(which));
    }
    cluster.nodes.append(node);
  }
  cluster.clientSecretKeyFile = root.value(QLatin1String("client_secret_key_file")).toString();
  if (cluster.clientSecretKeyFile.trimmed().isEmpty()) {
    return invalid(path, tr("no \"client_secret_key_file\""));
  }
  cluster.clientPublicKey = root.value(QLatin1String("client_public_key")).toString().trimmed();
  if (!cluster.clientPublicKey.isEmpty() && !isKey(cluster.clientPublicKey)) {
    return invalid(path, tr("the \"client_public_key\" is not a CURVE key (40 Z85 characters)"));
  }
  return cluster;
}

Result<LocalCluster> readLocalCluster(const QString& path) {
  const QFileInfo info(path);
  if (!info.exists()) {
    return Status::notFound(
        tr("%1 does not exist: no local cluster is up. %2").arg(path, remedy()).toStdString());
  }
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) {
    return Status::ioError(tr("Cannot read %1 (%2): run ringside as a user who may read it "
                              "(root for a local cluster).")
                               .arg(path, file.errorString())
                               .toStdString());
  }
  if (file.size() > kMaxLocalClusterFileBytes) {
    return invalid(path, tr("%L1 bytes, more than a cluster description has").arg(file.size()));
  }
  return parseLocalCluster(file.read(kMaxLocalClusterFileBytes + 1), path);
}

Result<curve::KeyPair> localClusterClientKeys(const LocalCluster& cluster) {
  auto keys = loadClientKeyFile(cluster.clientSecretKeyFile);
  if (!keys.isOk()) {
    const std::string message = tr("The local cluster's client key cannot be used: %1. %2")
                                    .arg(QString::fromStdString(keys.status().message()), remedy())
                                    .toStdString();
    switch (keys.status().code()) {
      case Status::Code::kNotFound:
        return Status::notFound(message);
      case Status::Code::kIOError:
        return Status::ioError(message);
      default:
        return Status::invalidArgument(message);
    }
  }
  if (!cluster.clientPublicKey.isEmpty() &&
      cluster.clientPublicKey.toStdString() != keys->publicKey) {
    return Status::invalidArgument(
        tr("The client key in %1 is not the cluster's client key %2 (the file is from another "
           "cluster). %3")
            .arg(cluster.clientSecretKeyFile, cluster.clientPublicKey, remedy())
            .toStdString());
  }
  return keys;
}

}  // namespace ringside::gui
