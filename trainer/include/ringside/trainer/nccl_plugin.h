// The nccl backend's plugin interface: the one table of entry points that libringside-nccl.so
// exports (docs/design.md decision 11), after NCCL's own plugins (ncclNet_v9, ncclProfiler_v5: one
// versioned struct of function pointers per library, the symbol named for its version, everything
// else hidden). The trainer loads the library at run time (nccl_plugin_loader.h), so the
// ringside-trainer binary links no CUDA library and serves CPU nodes and GPU nodes alike; the
// plugin ships in the ringside-node-cuda package (docs/trainer.md, "The nccl backend's plugin").
//
// Versioning. The symbol's suffix is the table's version (kNcclPluginVersion); a change to this
// table, or to a type it passes (Backend, BackendOptions, Communicator, Status and what they hold),
// makes a new version with a new symbol name. The loader asks for the newest version it knows
// and refuses any other. The table passes C++ objects, so plugin and trainer must also come from
// the same Ringside build: `ringsideVersion` and `interfaceTag` say which, and the loader refuses
// a plugin whose values differ from its own (the ringside-node-cuda package depends on the
// ringside-node of the same version for the same reason).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "ringside/common/status.h"
#include "ringside/trainer/backend.h"
#include "ringside/trainer/communicator.h"

namespace ringside::trainer {

// The file name of the plugin, as installed and as built (beside ringside-trainer in a build tree).
inline constexpr const char* kNcclPluginLibrary = "libringside-nccl.so";
// The newest table version this build knows, and its symbol.
inline constexpr int kNcclPluginVersion = 1;
inline constexpr const char* kNcclPluginSymbol = "ringsideNcclBackend_v1";
// The environment variable that names the plugin's path, replacing the search
// (nccl_plugin_loader.h).
inline constexpr const char* kNcclPluginEnv = "RINGSIDE_NCCL_PLUGIN";

// A fingerprint of the C++ interface the table passes: the sizes of the types that cross it and
// the C++ library's version and ABI. Computed from this header on both sides; a difference means
// the plugin was compiled against other declarations or another libstdc++, whose objects this
// trainer must not touch.
constexpr uint64_t ncclPluginInterfaceTag() {
  uint64_t tag = 1469598103934665603ull;  // FNV-1a 64 (Fowler, Noll, Vo), offset basis
  const uint64_t parts[] = {
    sizeof(BackendOptions),
    sizeof(StepTimings),
    sizeof(EvalSums),
    sizeof(BucketTiming),
    sizeof(OptimizerState),
    sizeof(ModelLayout),
    sizeof(Status),
    sizeof(std::string),
#if defined(__GLIBCXX__)
    __GLIBCXX__,
    _GLIBCXX_USE_CXX11_ABI,
#endif
    kNcclPluginVersion
  };
  for (uint64_t part : parts) {
    for (int byte = 0; byte < 8; ++byte) {
      tag ^= (part >> (8 * byte)) & 0xffu;
      tag *= 1099511628211ull;  // FNV-1a 64 prime
    }
  }
  return tag;
}

// Version 1 of the table. Every function may be called from any thread, but a Backend it creates
// is used by one thread (backend.h). No entry point throws: failures come back as Status.
struct NcclBackendPluginV1 {
  // kNcclPluginVersion of the plugin's build (1 for this struct); checked against the symbol.
  int version;
  // The Ringside version the plugin was built from ("0.1.0"): must equal the trainer's.
  const char* ringsideVersion;
  // ncclPluginInterfaceTag() as the plugin computed it: must equal the trainer's.
  uint64_t interfaceTag;
  // The number of CUDA devices this process can see (cudaGetDeviceCount, so CUDA_VISIBLE_DEVICES
  // applies). 0 without a GPU or a usable driver, and then, when `whyNone` is not null, the CUDA
  // runtime's reason ("no CUDA-capable device is detected [cudaErrorNoDevice]").
  int (*visibleGpuCount)(std::string* whyNone);
  // The nccl backend over `comm` (which must outlive it), on GPU comm.localRank() % the visible
  // GPUs (docs/design.md decision 5). Errors: InvalidArgument when no GPU is visible or the options
  // cannot work (maxBatch < 1); Internal for CUDA, cuBLAS, cuDNN and NCCL failures, naming host,
  // rank and call. The Backend's code lives in the plugin: the library must stay loaded while it
  // exists (the loader never unloads it).
  Result<std::unique_ptr<Backend>> (*create)(Communicator& comm, BackendOptions options);
};

}  // namespace ringside::trainer

// The plugin's one exported symbol (defined in trainer/cuda/nccl_plugin.cpp; the plugin is built
// with hidden visibility and a version script that exports nothing else).
extern "C" __attribute__((visibility("default")))
const ringside::trainer::NcclBackendPluginV1 ringsideNcclBackend_v1;
