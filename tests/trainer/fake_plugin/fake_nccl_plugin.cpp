// Fake libringside-nccl.so plugins for backend_plugin_test: one source, built several times
// (tests/trainer/CMakeLists.txt), each with one FAKE_* definition saying what it exports:
//   FAKE_WORKING           a version 1 table whose entry points answer without CUDA
//   FAKE_NO_TABLE          no table at all (another library under the plugin's name)
//   FAKE_NEWER_TABLE       only ringsideNcclBackend_v2, a version this trainer does not know
//   FAKE_OTHER_RINGSIDE    a version 1 table from another Ringside version
//   FAKE_OTHER_INTERFACE   a version 1 table compiled against other declarations
//   FAKE_MISSING_LIBRARY   FAKE_WORKING, linked to a library that is absent at run time (as a
//                          plugin whose libnccl.so.2 is not installed)
#include <memory>
#include <string>

#include "ringside/trainer/nccl_plugin.h"

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

using ringside::Result;
using ringside::Status;
using ringside::trainer::Backend;
using ringside::trainer::BackendOptions;
using ringside::trainer::Communicator;
using ringside::trainer::NcclBackendPluginV1;

#ifdef FAKE_MISSING_LIBRARY
extern "C" int ringsideTestAbsentFunction();  // in libringside-test-absent.so.1
#endif

int visibleGpuCount(std::string* whyNone) {
#ifdef FAKE_MISSING_LIBRARY
  if (ringsideTestAbsentFunction() != 0) return 0;
#endif
  if (whyNone != nullptr) *whyNone = "the fake plugin has no GPU";
  return 0;
}

Result<std::unique_ptr<Backend>> create(Communicator&, BackendOptions) {
  return Status::invalidArgument("the fake plugin makes no backend");
}

[[maybe_unused]] constexpr NcclBackendPluginV1 table(int version, const char* ringsideVersion,
                                                     uint64_t tag) {
  return {version, ringsideVersion, tag, &visibleGpuCount, &create};
}

}  // namespace

#if defined(FAKE_WORKING) || defined(FAKE_MISSING_LIBRARY)
FAKE_EXPORT const NcclBackendPluginV1 ringsideNcclBackend_v1 =
    table(1, RINGSIDE_VERSION, ringside::trainer::ncclPluginInterfaceTag());
#elif defined(FAKE_NO_TABLE)
FAKE_EXPORT const int notARingsidePlugin = 1;
#elif defined(FAKE_NEWER_TABLE)
// Version 2 does not exist yet; its table would differ, but the loader must not read it.
FAKE_EXPORT const NcclBackendPluginV1 ringsideNcclBackend_v2 =
    table(2, RINGSIDE_VERSION, ringside::trainer::ncclPluginInterfaceTag());
#elif defined(FAKE_OTHER_RINGSIDE)
FAKE_EXPORT const NcclBackendPluginV1 ringsideNcclBackend_v1 =
    table(1, "0.0.1-other", ringside::trainer::ncclPluginInterfaceTag());
#elif defined(FAKE_OTHER_INTERFACE)
FAKE_EXPORT const NcclBackendPluginV1 ringsideNcclBackend_v1 =
    table(1, RINGSIDE_VERSION, ringside::trainer::ncclPluginInterfaceTag() ^ 1u);
#else
#error "define one FAKE_* kind"
#endif
