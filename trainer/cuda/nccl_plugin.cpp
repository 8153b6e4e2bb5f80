// libringside-nccl.so's one exported symbol: the version 1 table of the nccl backend's entry
// points (ringside/trainer/nccl_plugin.h). Everything else in the library is hidden
// (-fvisibility=hidden and the version script nccl_plugin.map).
#include "ringside/trainer/nccl_plugin.h"

#include <exception>
#include <new>

#include "nccl_backend.h"

#ifndef RINGSIDE_VERSION
#error "RINGSIDE_VERSION must be defined (trainer/CMakeLists.txt)"
#endif

namespace ringside::trainer {
namespace {

// No exception crosses the table: the trainer's side is compiled to expect Status.
int visibleGpuCountEntry(std::string* whyNone) noexcept {
  try {
    return gpu::visibleDeviceCount(whyNone);
  } catch (const std::exception& e) {
    if (whyNone != nullptr) *whyNone = e.what();
    return 0;
  }
}

Result<std::unique_ptr<Backend>> createEntry(Communicator& comm, BackendOptions options) noexcept {
  try {
    return gpu::makeNcclBackend(comm, std::move(options));
  } catch (const std::bad_alloc&) {
    return Status::resourceExhausted(comm.hostname() + " rank " + std::to_string(comm.rank()) +
                                     ": out of host memory while setting up the nccl backend");
  } catch (const std::exception& e) {
    return Status::internal(comm.hostname() + " rank " + std::to_string(comm.rank()) +
                            ": setting up the nccl backend failed: " + e.what());
  }
}

}  // namespace
}  // namespace ringside::trainer

extern "C" const ringside::trainer::NcclBackendPluginV1 ringsideNcclBackend_v1 = {
    ringside::trainer::kNcclPluginVersion,
    RINGSIDE_VERSION,
    ringside::trainer::ncclPluginInterfaceTag(),
    &ringside::trainer::visibleGpuCountEntry,
    &ringside::trainer::createEntry,
};
