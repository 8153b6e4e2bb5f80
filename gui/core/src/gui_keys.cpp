#include "ringside/gui/gui_keys.h"

#include <zmq.h>

#include <QFile>
#include <QFileInfo>

namespace ringside::gui {

namespace {

// A key file holds 40 characters and a newline; anything much larger is not one.
constexpr qint64 kMaxKeyFileBytes = 1024;

}  // namespace

Result<curve::KeyPair> loadOrCreateGuiKeys(const QString& dataDir) {
  if (dataDir.isEmpty()) {
    return Status::invalidArgument("no data directory for the GUI's keypair: pass --data-dir");
  }
  Result<curve::KeyPair> keys = curve::loadOrCreateKeyPair(dataDir.toStdString(), kGuiKeyName);
  if (!keys.isOk()) {
    return keys.status().withContext("GUI keypair in " + dataDir.toStdString());
  }
  return keys;
}

Result<curve::KeyPair> loadClientKeyFile(const QString& secretKeyFile) {
  const std::string path = secretKeyFile.toStdString();
  if (!QFileInfo::exists(secretKeyFile)) {
    return Status::notFound("client key file " + path + " does not exist");
  }
  QFile file(secretKeyFile);
  if (!file.open(QIODevice::ReadOnly)) {
    return Status::ioError("cannot read the client key file " + path + " (" +
                           file.errorString().toStdString() +
                           "): run ringside as a user who may read it (root for a local cluster)");
  }
  if (file.size() > kMaxKeyFileBytes) {
    return Status::invalidArgument("client key file " + path + " is " +
                                   std::to_string(file.size()) +
                                   " bytes, not one Z85 secret key of 40 characters");
  }
  const std::string secret = file.read(kMaxKeyFileBytes).trimmed().toStdString();
  RINGSIDE_RETURN_IF_ERROR(
      curve::validateKey(secret).withContext("client key file " + path + " holds no valid key"));
  char publicKey[curve::kKeyTextLength + 1] = {};
  if (zmq_curve_public(publicKey, secret.c_str()) != 0) {
    return Status::invalidArgument("client key file " + path +
                                   ": cannot derive the public key from its secret key");
  }
  return curve::KeyPair{publicKey, secret};
}

}  // namespace ringside::gui
