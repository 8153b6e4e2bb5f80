// The nccl backend's two entry points inside libringside-nccl.so (nccl_backend.cu), behind the
// plugin's table (nccl_plugin.cpp, ringside/trainer/nccl_plugin.h). Only for files compiled with
// the CUDA toolkit; hidden, like everything in the plugin but its table.
#pragma once

#include <memory>
#include <string>

#include "ringside/common/status.h"
#include "ringside/trainer/backend.h"
#include "ringside/trainer/communicator.h"

namespace ringside::trainer::gpu {

// cudaGetDeviceCount's answer (CUDA_VISIBLE_DEVICES applies); 0 on any error (no driver, no
// device, a driver older than the runtime), and then *whyNone (when not null) is the runtime's
// error text and name. Thread-safe.
int visibleDeviceCount(std::string* whyNone);

// NcclBackendPluginV1::create: the backend on GPU comm.localRank() % visibleDeviceCount().
// Errors as documented there.
Result<std::unique_ptr<Backend>> makeNcclBackend(Communicator& comm, BackendOptions options);

}  // namespace ringside::trainer::gpu
