// Built instead of cuda/ when CMake found no CUDA toolkit or NCCL (DESIGN.md decision 10): the
// nccl backend is absent and says so.
#include "ringside/trainer/backend.h"

namespace ringside::trainer {

bool ncclBackendBuilt() { return false; }

int visibleGpuCount() { return 0; }

Result<std::unique_ptr<Backend>> makeNcclBackend(Communicator&, BackendOptions) {
  return Status::invalidArgument(
      "this ringside-trainer was built without the nccl backend (CMake found no CUDA toolkit or "
      "NCCL): use --backend mpi, or rebuild with CUDA and NCCL installed");
}

}  // namespace ringside::trainer
