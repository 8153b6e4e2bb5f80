// Finding and loading the nccl backend's plugin, libringside-nccl.so (nccl_plugin.h), with
// dlopen, only when a run asks for the nccl backend or `auto` needs to know whether a GPU is
// usable. Every failure is a message that names the library, and the CUDA library or the table
// (symbol and version) that is missing, and says what to install; nothing here ever stops the
// process (the trainer binary links no CUDA library, so a missing one cannot fail its start).
//
// Where the plugin is looked for, in order (docs/trainer.md, "The nccl backend's plugin"):
//   1. $RINGSIDE_NCCL_PLUGIN, when set and not empty: that file and nothing else;
//   2. beside the running executable (a build tree: build/release/trainer/);
//   3. the installed plugin directory relative to the executable's (bin/../lib/ringside/, the
//      CMake install's <LIBDIR>/ringside, in the package /usr/lib/ringside/);
//   4. the bare name, as the dynamic loader searches it: LD_LIBRARY_PATH, then ld.so.cache and
//      the default directories (NCCL finds its net plugins the same way).
// Candidates 2 and 3 that do not exist are passed over; the first that exists is loaded, and its
// failure is the answer (a broken plugin is not hidden by another one further down the list).
#pragma once

#include <string>
#include <vector>

#include "ringside/common/status.h"
#include "ringside/trainer/nccl_plugin.h"

namespace ringside::trainer {

struct LoadedNcclPlugin {
  const NcclBackendPluginV1* table = nullptr;  // lives until the process exits
  std::string path;                            // the file the dynamic loader opened
  std::string symbol;                          // the table's symbol, kNcclPluginSymbol
};

// The candidates of the search above for this process, in order: absolute paths, then the bare
// kNcclPluginLibrary. Only $RINGSIDE_NCCL_PLUGIN's value when that is set.
std::vector<std::string> ncclPluginCandidates();

// Loads the first candidate that exists (RTLD_NOW | RTLD_LOCAL: every symbol the plugin needs is
// bound now, none of its symbols can clash with the trainer's) and checks its table. A candidate
// with a '/' is a path; one without goes through the dynamic loader's search. The library is
// never unloaded once its table was accepted. Not thread-safe with itself (dlerror is per
// thread, but one caller at a time is the intent; ncclPlugin() serialises).
// Errors:
//   NotFound            no candidate exists: the message lists where it looked and says to
//                       install ringside-node-cuda or use --backend mpi;
//   FailedPrecondition  the plugin exists but cannot be used: a library it needs is missing
//                       (named, with the package that provides it: cudaLibraryHint), another
//                       dynamic loader error (quoted), no table of a version this trainer knows
//                       (naming the symbol looked for and any newer one found), or a table from
//                       another Ringside build (naming both versions).
Result<LoadedNcclPlugin> openNcclPlugin(const std::vector<std::string>& candidates);

// The process's plugin: openNcclPlugin(ncclPluginCandidates()) on the first call, the same
// answer on every later call. Thread-safe.
const Result<LoadedNcclPlugin>& ncclPlugin();

// What provides a CUDA library the plugin loads, for the message when the dynamic loader cannot
// find it: "NCCL (NVIDIA's Debian package libnccl2)" for "libnccl.so.2", likewise cuDNN 9,
// cuBLAS/cuBLASLt, the CUDA runtime and the driver's libcuda.so.1; "" for any other name.
// `soname` is the file name the dynamic loader reported.
std::string cudaLibraryHint(const std::string& soname);

}  // namespace ringside::trainer
