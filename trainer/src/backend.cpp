#include "ringside/trainer/backend.h"

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

BackendKind resolveBackendKind(BackendKind kind) {
  if (kind != BackendKind::kAuto) return kind;
  return visibleGpuCount() > 0 ? BackendKind::kNccl : BackendKind::kMpi;
}

Result<std::unique_ptr<Backend>> makeBackend(BackendKind kind, Communicator& comm,
                                             BackendOptions options) {
  kind = resolveBackendKind(kind);
  if (kind == BackendKind::kNccl) return makeNcclBackend(comm, std::move(options));
  return makeCpuBackend(comm, std::move(options));
}

}  // namespace ringside::trainer
