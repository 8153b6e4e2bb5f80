// The GUI install's own CURVE keypair (docs/design.md decision 3): created on first start under the
// GUI's data directory, given to agents for their allowlist, presented on every connection.
#pragma once

#include <QString>

#include "ringside/common/curve.h"
#include "ringside/common/status.h"

namespace ringside::gui {

// File name stem of the GUI's keypair: `<dir>/gui.key` (public) and `<dir>/gui.key_secret`.
inline constexpr const char* kGuiKeyName = "gui";

// Loads the GUI's keypair from `dataDir` (the app passes QStandardPaths::AppDataLocation, or
// --data-dir), creating the directory (mode 0700) and the pair on first use; see
// curve::loadOrCreateKeyPair. Errors: as loadOrCreateKeyPair (a secret file readable by others,
// a corrupt key file, an OS failure), with the directory named in the message.
// Thread-safety: safe from any thread, but two processes creating the pair at once may race.
Result<curve::KeyPair> loadOrCreateGuiKeys(const QString& dataDir);

// A client keypair from a secret key file: one Z85 secret key (40 characters) and a newline, as
// `ringside-agent create-keypair` and scripts/local-cluster write it; the public key is derived
// from it (curve::readKeyPairFromSecretFile). Nothing is created. Errors: NotFound when the file
// does not exist, IOError when it cannot be read (the message says to run ringside as a user who
// may read it), InvalidArgument when it is larger than 4 KiB or holds no valid key. Thread-safe.
Result<curve::KeyPair> loadClientKeyFile(const QString& secretKeyFile);

}  // namespace ringside::gui
