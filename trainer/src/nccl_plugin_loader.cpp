#include "ringside/trainer/nccl_plugin_loader.h"

#include <dlfcn.h>
#include <link.h>

#include <cstdlib>
#include <filesystem>
#include <optional>

namespace ringside::trainer {

namespace {

// The installed plugin directory relative to the installed trainer's directory, from CMake
// (file(RELATIVE_PATH) of <LIBDIR>/ringside against <BINDIR>: "../lib/ringside").
#ifndef RINGSIDE_NCCL_PLUGIN_RELATIVE_DIR
#define RINGSIDE_NCCL_PLUGIN_RELATIVE_DIR "../lib/ringside"
#endif
#ifndef RINGSIDE_VERSION
#error "RINGSIDE_VERSION must be defined (trainer/CMakeLists.txt)"
#endif

// The oldest table version a newer plugin's symbol could carry that this trainer looks for, to
// name it when it finds no table it knows (kNcclPluginVersion + 1 .. + kNewerVersionsProbed).
constexpr int kNewerVersionsProbed = 8;

constexpr const char* kAlternative = "or use --backend mpi (the CPU backend)";

std::string executableDir() {
  std::error_code error;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error || exe.empty()) return {};
  return exe.parent_path().string();
}

// The file name the dynamic loader could not open, from its message
// "libnccl.so.2: cannot open shared object file: No such file or directory"; nullopt for any
// other message (an undefined symbol, a wrong ELF class, ...).
std::optional<std::string> unopenedLibrary(const std::string& dlError) {
  const std::string marker = ": cannot open shared object file";
  const size_t at = dlError.find(marker);
  if (at == std::string::npos) return std::nullopt;
  std::string name = dlError.substr(0, at);
  const size_t slash = name.rfind('/');
  if (slash != std::string::npos) name = name.substr(slash + 1);
  return name;
}

std::string lastDlError() {
  const char* text = dlerror();
  return text != nullptr ? std::string(text) : std::string("(no message)");
}

// The path the dynamic loader opened for `handle` (a bare name resolves to a real path).
std::string loadedPath(void* handle, const std::string& fallback) {
  link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr &&
      map->l_name[0] != '\0') {
    return map->l_name;
  }
  return fallback;
}

Status dependencyMissing(const std::string& plugin, const std::string& library,
                         const std::string& dlError) {
  const std::string hint = cudaLibraryHint(library);
  std::string message = "the nccl backend's plugin " + plugin + " needs " + library;
  if (!hint.empty()) message += ", " + hint + ",";
  message +=
      " which the dynamic loader did not find: install it (ringside-node-cuda depends on "
      "NVIDIA's packages from NVIDIA's CUDA repository; see the README's GPU nodes section), "
      "or add its directory to LD_LIBRARY_PATH, ";
  message += kAlternative;
  message += " (dlopen: " + dlError + ")";
  return Status::failedPrecondition(std::move(message));
}

// Checks a table found under `symbol` in `path`.
Status checkTable(const NcclBackendPluginV1& table, const std::string& path,
                  const std::string& symbol) {
  const std::string reinstall =
      ": install the ringside-node-cuda of the same version as ringside-node (" +
      std::string(RINGSIDE_VERSION) + "), or rebuild both from one source tree, " + kAlternative;
  if (table.version != kNcclPluginVersion) {
    return Status::failedPrecondition("the nccl backend's plugin " + path + " exports " + symbol +
                                      " whose table says version " + std::to_string(table.version) +
                                      ", not " + std::to_string(kNcclPluginVersion) + reinstall);
  }
  const std::string pluginVersion = table.ringsideVersion != nullptr ? table.ringsideVersion : "?";
  if (pluginVersion != RINGSIDE_VERSION) {
    return Status::failedPrecondition(
        "the nccl backend's plugin " + path + " (" + symbol + ") is from Ringside " +
        pluginVersion + ", this ringside-trainer from Ringside " + RINGSIDE_VERSION + reinstall);
  }
  if (table.interfaceTag != ncclPluginInterfaceTag()) {
    return Status::failedPrecondition(
        "the nccl backend's plugin " + path + " (" + symbol + ", Ringside " + pluginVersion +
        ") was compiled against other declarations of the backend interface than this "
        "ringside-trainer (interface tag " +
        std::to_string(table.interfaceTag) + ", expected " +
        std::to_string(ncclPluginInterfaceTag()) + ")" + reinstall);
  }
  if (table.visibleGpuCount == nullptr || table.create == nullptr) {
    return Status::failedPrecondition("the nccl backend's plugin " + path + " (" + symbol +
                                      ") has a table with empty entry points" + reinstall);
  }
  return Status::ok();
}

// Loads `candidate` (a path or a bare name). nullopt: it is not there (passed over).
std::optional<Result<LoadedNcclPlugin>> tryCandidate(const std::string& candidate) {
  const bool isPath = candidate.find('/') != std::string::npos;
  if (isPath) {
    std::error_code error;
    if (!std::filesystem::exists(candidate, error)) return std::nullopt;
  }
  dlerror();  // clear any earlier message
  void* handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const std::string message = lastDlError();
    const std::optional<std::string> unopened = unopenedLibrary(message);
    // A bare name the dynamic loader cannot find: the plugin is not there.
    if (!isPath && unopened && *unopened == candidate) return std::nullopt;
    if (unopened && *unopened != std::filesystem::path(candidate).filename().string()) {
      return Result<LoadedNcclPlugin>(dependencyMissing(candidate, *unopened, message));
    }
    return Result<LoadedNcclPlugin>(
        Status::failedPrecondition("cannot load the nccl backend's plugin " + candidate + ": " +
                                   message + ": reinstall ringside-node-cuda, " + kAlternative));
  }
  const std::string path = loadedPath(handle, candidate);
  // The newest version this trainer knows; there is only one so far.
  dlerror();
  void* symbol = dlsym(handle, kNcclPluginSymbol);
  if (symbol == nullptr) {
    std::string newer;
    for (int v = kNcclPluginVersion + 1; v <= kNcclPluginVersion + kNewerVersionsProbed; ++v) {
      const std::string name = "ringsideNcclBackend_v" + std::to_string(v);
      if (dlsym(handle, name.c_str()) != nullptr) newer = name;
    }
    dlclose(handle);
    std::string message = "the nccl backend's plugin " + path + " exports no " + kNcclPluginSymbol +
                          " (the table of entry points this ringside-trainer " + "knows, version " +
                          std::to_string(kNcclPluginVersion) + ")";
    message += newer.empty() ? std::string(": it is not a Ringside nccl plugin, or a broken one")
                             : ", only " + newer + ", a newer version";
    message += ": install the ringside-node-cuda of the same version as ringside-node (" +
               std::string(RINGSIDE_VERSION) + "), " + kAlternative;
    return Result<LoadedNcclPlugin>(Status::failedPrecondition(std::move(message)));
  }
  const auto* table = static_cast<const NcclBackendPluginV1*>(symbol);
  if (Status checked = checkTable(*table, path, kNcclPluginSymbol); !checked.isOk()) {
    dlclose(handle);
    return Result<LoadedNcclPlugin>(std::move(checked));
  }
  // Accepted: never dlclose'd, since backends it creates run its code.
  return Result<LoadedNcclPlugin>(LoadedNcclPlugin{table, path, kNcclPluginSymbol});
}

}  // namespace

std::vector<std::string> ncclPluginCandidates() {
  if (const char* chosen = std::getenv(kNcclPluginEnv); chosen != nullptr && *chosen != '\0') {
    return {chosen};
  }
  std::vector<std::string> candidates;
  if (const std::string dir = executableDir(); !dir.empty()) {
    candidates.push_back(dir + "/" + kNcclPluginLibrary);
    candidates.push_back(
        (std::filesystem::path(dir) / RINGSIDE_NCCL_PLUGIN_RELATIVE_DIR / kNcclPluginLibrary)
            .lexically_normal()
            .string());
  }
  candidates.push_back(kNcclPluginLibrary);
  return candidates;
}

Result<LoadedNcclPlugin> openNcclPlugin(const std::vector<std::string>& candidates) {
  for (const std::string& candidate : candidates) {
    if (std::optional<Result<LoadedNcclPlugin>> loaded = tryCandidate(candidate)) {
      return std::move(*loaded);
    }
  }
  std::string looked;
  for (const std::string& candidate : candidates) {
    looked +=
        (looked.empty() ? "" : ", ") + candidate +
        (candidate.find('/') == std::string::npos ? " (LD_LIBRARY_PATH and ld.so.cache)" : "");
  }
  const char* chosen = std::getenv(kNcclPluginEnv);
  const bool fromEnv = chosen != nullptr && *chosen != '\0' && candidates.size() == 1 &&
                       candidates.front() == chosen;
  if (fromEnv) {
    return Status::notFound(std::string(kNcclPluginEnv) + " names " + candidates.front() +
                            ", which does not exist: point it at " + kNcclPluginLibrary +
                            " or unset it, " + kAlternative);
  }
  return Status::notFound(std::string("the nccl backend needs ") + kNcclPluginLibrary +
                          ", which is not installed here (looked for " + looked +
                          "): install ringside-node-cuda (a build from source makes it where "
                          "CMake finds CUDA, NCCL and cuDNN), " +
                          kAlternative);
}

const Result<LoadedNcclPlugin>& ncclPlugin() {
  static const Result<LoadedNcclPlugin> loaded = openNcclPlugin(ncclPluginCandidates());
  return loaded;
}

std::string cudaLibraryHint(const std::string& soname) {
  const auto startsWith = [&](const char* prefix) { return soname.rfind(prefix, 0) == 0; };
  // NVIDIA's Debian package names in its CUDA repository for CUDA 13 (README, "GPU nodes").
  if (startsWith("libnccl.so")) return "NCCL (NVIDIA's Debian package libnccl2)";
  if (startsWith("libcudnn"))
    return "cuDNN 9 for CUDA 13 (NVIDIA's Debian package libcudnn9-cuda-13)";
  if (startsWith("libcublasLt.so") || startsWith("libcublas.so")) {
    return "cuBLAS for CUDA 13 (NVIDIA's Debian package libcublas-13-0)";
  }
  if (startsWith("libcudart.so")) {
    return "the CUDA 13 runtime (NVIDIA's Debian package cuda-cudart-13-0)";
  }
  if (startsWith("libcuda.so"))
    return "the NVIDIA driver's CUDA library (install the NVIDIA driver)";
  return {};
}

}  // namespace ringside::trainer
