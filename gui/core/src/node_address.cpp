#include "ringside/gui/node_address.h"

#include <QStringList>

namespace ringside::gui {

namespace {

// One endpoint "tcp://HOST:PORT" -> host and port; false when it is not one.
bool parseEndpoint(QString endpoint, QString* host, int* port) {
  if (!endpoint.startsWith(QLatin1String("tcp://"))) return false;
  endpoint.remove(0, 6);
  const qsizetype colon = endpoint.lastIndexOf(QLatin1Char(':'));
  if (colon <= 0) return false;
  bool ok = false;
  *port = endpoint.mid(colon + 1).toInt(&ok);
  *host = endpoint.left(colon);
  return ok;
}

}  // namespace

NodeAddress parseNodeAddress(const QString& address) {
  NodeAddress parsed;
  const QStringList endpoints = address.split(QLatin1Char(' '), Qt::SkipEmptyParts);
  if (endpoints.isEmpty()) return parsed;
  QString eventsHost;
  if (!parseEndpoint(endpoints[0], &parsed.host, &parsed.controlPort)) return parsed;
  if (endpoints.size() > 1 && !parseEndpoint(endpoints[1], &eventsHost, &parsed.eventsPort)) {
    return parsed;
  }
  parsed.valid = true;
  return parsed;
}

QString authorizeCommand(const QString& guiPublicKey) {
  return QStringLiteral("ringside-agent authorize -- '%1'").arg(guiPublicKey);
}

}  // namespace ringside::gui
