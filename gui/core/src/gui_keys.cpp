#include "ringside/gui/gui_keys.h"

namespace ringside::gui {

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
  Result<curve::KeyPair> keys = curve::readKeyPairFromSecretFile(path);
  if (keys.isOk()) return keys;
  switch (keys.status().code()) {
    case Status::Code::kNotFound:
      return Status::notFound("client key file " + path + " does not exist");
    case Status::Code::kIOError:
      return Status::ioError("cannot read the client key file: " + keys.status().message() +
                             ": run ringside as a user who may read it (root for a local cluster)");
    default:
      return Status::invalidArgument("client key file " + path + " holds no valid key: " +
                                     keys.status().message());
  }
}

}  // namespace ringside::gui
