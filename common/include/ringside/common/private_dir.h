// The directories a daemon keeps private state in (the agent's --state-dir and --runtime-dir):
// created mode 0700 when missing, and never changed when they exist: an existing directory that
// other users can write (e.g. /tmp, mode 1777) is refused as it is, since they could replace the
// allowlist, keys or journal in it.
//
// Thread-safety: free function without shared state.
#pragma once

#include <string>
#include <string_view>

#include "ringside/common/status.h"

namespace ringside {

// Makes `dir` ready to hold private files. Missing: it is created with mode 0700 (its missing
// parents with the default mode, as mkdir -p does). Existing: it must be a directory (symbolic
// links are followed) owned by this process's effective user and not writable by group or
// others; its mode is left as it is. `option` names the setting in messages ("--state-dir").
// Errors: InvalidArgument for a directory owned by another user, writable by others, or not a
// directory, saying what to do; IOError when it cannot be created or examined (with errno text).
Status preparePrivateDirectory(const std::string& dir, std::string_view option);

}  // namespace ringside
