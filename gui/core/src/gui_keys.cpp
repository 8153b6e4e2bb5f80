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

}  // namespace ringside::gui
