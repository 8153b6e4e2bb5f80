#include "ringside/trainer/backend.h"

#include <algorithm>

#include "ringside/trainer/nccl_plugin_loader.h"

namespace ringside::trainer {

const char* backendName(BackendKind kind) {
  switch (kind) {
    case BackendKind::kAuto:
      return "auto";
    case BackendKind::kMpi:
      return "mpi";
    case BackendKind::kNccl:
      return "nccl";
  }
  return "auto";
}

Result<BackendKind> parseBackendKind(const std::string& name) {
  if (name == "auto") return BackendKind::kAuto;
  if (name == "mpi") return BackendKind::kMpi;
  if (name == "nccl") return BackendKind::kNccl;
  return Status::invalidArgument("unknown backend '" + name + "': use auto, mpi or nccl");
}

int visibleGpuCount(std::string* whyNone) {
  const Result<LoadedNcclPlugin>& plugin = ncclPlugin();
  if (!plugin.isOk()) {
    if (whyNone != nullptr) {
      *whyNone = plugin.status().code() == Status::Code::kNotFound
                     ? std::string("the nccl backend's plugin ") + kNcclPluginLibrary +
                           " is not installed (package ringside-node-cuda)"
                     : plugin.status().message();
    }
    return 0;
  }
  std::string reason;
  const int count = plugin->table->visibleGpuCount(&reason);
  if (count <= 0 && whyNone != nullptr) {
    *whyNone = "no CUDA GPU is visible (cudaGetDeviceCount: " + reason +
               "): check nvidia-smi and CUDA_VISIBLE_DEVICES";
  }
  return std::max(count, 0);
}

Result<std::unique_ptr<Backend>> makeNcclBackend(Communicator& comm, BackendOptions options) {
  const Result<LoadedNcclPlugin>& plugin = ncclPlugin();
  if (!plugin.isOk()) {
    // Not installed: this node cannot run --backend nccl, the same answer as no GPU (exit 2).
    if (plugin.status().code() == Status::Code::kNotFound) {
      return Status::invalidArgument(plugin.status().message());
    }
    return plugin.status();
  }
  return plugin->table->create(comm, std::move(options));
}

BackendChoice resolveBackendKind(BackendKind kind) {
  if (kind != BackendKind::kAuto) return {kind, {}};
  std::string whyNone;
  const int gpus = visibleGpuCount(&whyNone);
  if (gpus > 0) {
    return {BackendKind::kNccl,
            "nccl, " + std::to_string(gpus) + " CUDA GPU" + (gpus == 1 ? "" : "s") + " visible"};
  }
  return {BackendKind::kMpi, "mpi: " + whyNone};
}

Result<std::unique_ptr<Backend>> makeBackend(BackendKind kind, Communicator& comm,
                                             BackendOptions options) {
  kind = resolveBackendKind(kind).kind;
  if (kind == BackendKind::kNccl) return makeNcclBackend(comm, std::move(options));
  return makeCpuBackend(comm, std::move(options));
}

}  // namespace ringside::trainer
