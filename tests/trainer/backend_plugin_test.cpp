// The nccl backend's plugin loader (nccl_plugin_loader.h) against fake plugins (fake_plugin/)
// built to fail in each way a real installation can: none installed, a library it needs missing,
// no table, a newer table, a table from another Ringside build. Then ringside-trainer itself,
// copied to a folder without the plugin (as ringside-node without ringside-node-cuda), with
// --backend nccl and auto; and the binaries' dynamic sections: the trainer needs no CUDA library,
// the plugin exports its table and nothing else. Needs no GPU.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "build_paths.h"
#include "ringside/trainer/nccl_plugin.h"
#include "ringside/trainer/nccl_plugin_loader.h"
#include "test_util.h"

namespace ringside::trainer {
namespace {

namespace fs = std::filesystem;

constexpr double kTimeout = 300.0;  // seconds; generous for a loaded 2-core CI machine

std::string fake(const char* kind) {
  return std::string(ringside::test::fakePluginDir()) + "/libfake-nccl-" + kind + ".so";
}

std::string messageOf(const Result<LoadedNcclPlugin>& loaded) {
  return loaded.isOk() ? std::string("(loaded ") + loaded->path + ")" : loaded.status().message();
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A bare name no library has, to exercise the dynamic loader's search without finding anything.
constexpr const char* kNowhere = "libringside-nccl-nowhere-test.so";

TEST(NcclPluginLoaderTest, MissingPluginIsNotFoundAndSaysWhatToInstall) {
  TempDir dir;
  const std::string path = dir.path() + "/" + kNcclPluginLibrary;
  Result<LoadedNcclPlugin> loaded = openNcclPlugin({path, kNowhere});
  ASSERT_FALSE(loaded.isOk());
  EXPECT_EQ(loaded.status().code(), Status::Code::kNotFound);
  const std::string message = loaded.status().message();
  EXPECT_TRUE(contains(message, "the nccl backend needs libringside-nccl.so")) << message;
  EXPECT_TRUE(contains(message, "install ringside-node-cuda")) << message;
  EXPECT_TRUE(contains(message, "--backend mpi")) << message;
  EXPECT_TRUE(contains(message, path)) << message;  // where it looked
  EXPECT_TRUE(contains(message, kNowhere)) << message;
}

TEST(NcclPluginLoaderTest, LoadsAWorkingPluginAndItsEntryPoints) {
  Result<LoadedNcclPlugin> loaded = openNcclPlugin({fake("working")});
  ASSERT_TRUE(loaded.isOk()) << loaded.status().toString();
  EXPECT_EQ(loaded->path, fake("working"));
  EXPECT_EQ(loaded->symbol, "ringsideNcclBackend_v1");
  EXPECT_EQ(loaded->table->version, kNcclPluginVersion);
  std::string whyNone;
  EXPECT_EQ(loaded->table->visibleGpuCount(&whyNone), 0);
  EXPECT_EQ(whyNone, "the fake plugin has no GPU");
}

TEST(NcclPluginLoaderTest, TakesTheFirstCandidateThatExists) {
  TempDir dir;
  Result<LoadedNcclPlugin> loaded = openNcclPlugin(
      {dir.path() + "/absent/" + kNcclPluginLibrary, fake("working"), fake("no-table")});
  ASSERT_TRUE(loaded.isOk()) << loaded.status().toString();
  EXPECT_EQ(loaded->path, fake("working"));
}

// A broken plugin is the answer, not hidden by a working one further down the list.
TEST(NcclPluginLoaderTest, ABrokenPluginIsNotPassedOver) {
  Result<LoadedNcclPlugin> loaded = openNcclPlugin({fake("no-table"), fake("working")});
  ASSERT_FALSE(loaded.isOk()) << messageOf(loaded);
  EXPECT_TRUE(contains(loaded.status().message(), fake("no-table"))) << messageOf(loaded);
}

TEST(NcclPluginLoaderTest, MissingLibraryIsNamedWithThePlugin) {
  Result<LoadedNcclPlugin> loaded = openNcclPlugin({fake("missing-library")});
  ASSERT_FALSE(loaded.isOk()) << messageOf(loaded);
  EXPECT_EQ(loaded.status().code(), Status::Code::kFailedPrecondition);
  const std::string message = loaded.status().message();
  EXPECT_TRUE(contains(message, fake("missing-library") + " needs libringside-test-absent.so.1"))
      << message;
  EXPECT_TRUE(contains(message, "--backend mpi")) << message;
  EXPECT_TRUE(contains(message, "cannot open shared object file")) << message;  // dlerror's text
}

TEST(NcclPluginLoaderTest, PluginWithoutTheTableNamesSymbolAndVersion) {
  Result<LoadedNcclPlugin> loaded = openNcclPlugin({fake("no-table")});
  ASSERT_FALSE(loaded.isOk()) << messageOf(loaded);
  EXPECT_EQ(loaded.status().code(), Status::Code::kFailedPrecondition);
  const std::string message = loaded.status().message();
  EXPECT_TRUE(contains(message, fake("no-table") + " exports no ringsideNcclBackend_v1"))
      << message;
  EXPECT_TRUE(contains(message, "version 1")) << message;
}

TEST(NcclPluginLoaderTest, NewerPluginNamesTheVersionItHas) {
  Result<LoadedNcclPlugin> loaded = openNcclPlugin({fake("newer-table")});
  ASSERT_FALSE(loaded.isOk()) << messageOf(loaded);
  const std::string message = loaded.status().message();
  EXPECT_TRUE(contains(message, "exports no ringsideNcclBackend_v1")) << message;
  EXPECT_TRUE(contains(message, "only ringsideNcclBackend_v2, a newer version")) << message;
  EXPECT_TRUE(contains(message, "install the ringside-node-cuda of the same version")) << message;
}

TEST(NcclPluginLoaderTest, PluginFromAnotherRingsideNamesBothVersions) {
  Result<LoadedNcclPlugin> loaded = openNcclPlugin({fake("other-ringside")});
  ASSERT_FALSE(loaded.isOk()) << messageOf(loaded);
  const std::string message = loaded.status().message();
  EXPECT_TRUE(contains(message, "is from Ringside 0.0.1-other")) << message;
  EXPECT_TRUE(
      contains(message, std::string("this ringside-trainer from Ringside ") + RINGSIDE_VERSION))
      << message;
}

TEST(NcclPluginLoaderTest, PluginOfAnotherInterfaceIsRefused) {
  Result<LoadedNcclPlugin> loaded = openNcclPlugin({fake("other-interface")});
  ASSERT_FALSE(loaded.isOk()) << messageOf(loaded);
  EXPECT_TRUE(contains(loaded.status().message(), "other declarations of the backend interface"))
      << messageOf(loaded);
}

TEST(NcclPluginLoaderTest, CandidatesFollowTheEnvironmentOrTheExecutable) {
  ASSERT_EQ(setenv(kNcclPluginEnv, "/opt/somewhere/libringside-nccl.so", 1), 0);
  EXPECT_EQ(ncclPluginCandidates(), std::vector<std::string>{"/opt/somewhere/libringside-nccl.so"});
  Result<LoadedNcclPlugin> named = openNcclPlugin(ncclPluginCandidates());
  ASSERT_FALSE(named.isOk());
  EXPECT_TRUE(contains(named.status().message(),
                       "RINGSIDE_NCCL_PLUGIN names "
                       "/opt/somewhere/libringside-nccl.so, which does "
                       "not exist"))
      << named.status().message();

  ASSERT_EQ(setenv(kNcclPluginEnv, "", 1), 0);  // empty: as if unset
  const std::vector<std::string> candidates = ncclPluginCandidates();
  ASSERT_EQ(candidates.size(), 3u);
  const fs::path self = fs::read_symlink("/proc/self/exe");
  EXPECT_EQ(candidates[0], (self.parent_path() / kNcclPluginLibrary).string());
  EXPECT_EQ(candidates[1],
            (self.parent_path() / RINGSIDE_NCCL_PLUGIN_RELATIVE_DIR / kNcclPluginLibrary)
                .lexically_normal()
                .string());
  EXPECT_EQ(candidates[2], kNcclPluginLibrary);
  ASSERT_EQ(unsetenv(kNcclPluginEnv), 0);
}

TEST(NcclPluginLoaderTest, CudaLibrariesAreNamedWithNvidiasPackages) {
  EXPECT_TRUE(contains(cudaLibraryHint("libnccl.so.2"), "libnccl2"));
  EXPECT_TRUE(contains(cudaLibraryHint("libcudnn.so.9"), "libcudnn9-cuda-13"));
  EXPECT_TRUE(contains(cudaLibraryHint("libcudnn_graph.so.9"), "libcudnn9-cuda-13"));
  EXPECT_TRUE(contains(cudaLibraryHint("libcublas.so.13"), "libcublas-13-0"));
  EXPECT_TRUE(contains(cudaLibraryHint("libcublasLt.so.13"), "libcublas-13-0"));
  EXPECT_TRUE(contains(cudaLibraryHint("libcudart.so.13"), "cuda-cudart-13-0"));
  EXPECT_TRUE(contains(cudaLibraryHint("libcuda.so.1"), "NVIDIA driver"));
  EXPECT_EQ(cudaLibraryHint("libstdc++.so.6"), "");
}

// --- ringside-trainer without and with a plugin ---------------------------------------------

// ringside-trainer copied into <dir>/bin, so that it finds no plugin beside it or in
// <dir>/lib/ringside unless a test puts one there.
std::string copiedTrainer(const TempDir& dir) {
  fs::create_directories(dir.path() + "/bin");
  const std::string copy = dir.path() + "/bin/ringside-trainer";
  fs::copy_file(ringside::test::trainerBin(), copy);
  return copy;
}

// A plugin installed system-wide would be found by name and change the answers below.
bool pluginInstalledSystemWide() {
  void* handle = dlopen(kNcclPluginLibrary, RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
  if (handle == nullptr) handle = dlopen(kNcclPluginLibrary, RTLD_LAZY | RTLD_LOCAL);
  if (handle == nullptr) return false;
  dlclose(handle);
  return true;
}

std::vector<std::string> shortRun(const std::string& trainerPath, const std::string& backend) {
  return {trainerPath,
          "--backend",
          backend,
          "--train-samples",
          "512",
          "--test-samples",
          "256",
          "--global-batch",
          "64",
          "--max-steps",
          "2",
          "--data",
          ringside::test::dataDir()};
}

// The trainer's environment: no plugin named, so it searches.
const std::vector<std::string> kSearchEnv = {std::string(kNcclPluginEnv) + "="};

std::string startBackend(const std::string& out) {
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    const nlohmann::json record = nlohmann::json::parse(line, nullptr, false);
    if (record.is_object() && record.value("type", "") == "start") {
      return record.value("backend", "");
    }
  }
  return "";
}

TEST(NcclPluginTrainerTest, BackendNcclWithoutThePluginSaysWhatToInstall) {
  if (pluginInstalledSystemWide()) GTEST_SKIP() << "libringside-nccl.so is installed here";
  TempDir dir;
  ProcessResult run =
      runProcess(shortRun(copiedTrainer(dir), "nccl"), dir.path(), kTimeout, kSearchEnv);
  EXPECT_EQ(run.exitCode, 2) << run.err;
  EXPECT_TRUE(contains(run.err, "the nccl backend needs libringside-nccl.so")) << run.err;
  EXPECT_TRUE(contains(run.err, "install ringside-node-cuda")) << run.err;
  EXPECT_TRUE(contains(run.err, "--backend mpi")) << run.err;
  EXPECT_TRUE(contains(run.err, dir.path() + "/bin/libringside-nccl.so")) << run.err;
}

TEST(NcclPluginTrainerTest, AutoWithoutThePluginTrainsOnMpiAndSaysWhy) {
  if (pluginInstalledSystemWide()) GTEST_SKIP() << "libringside-nccl.so is installed here";
  TempDir dir;
  ProcessResult run =
      runProcess(shortRun(copiedTrainer(dir), "auto"), dir.path(), kTimeout, kSearchEnv);
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_TRUE(contains(run.err,
                       "backend auto chose mpi: the nccl backend's plugin "
                       "libringside-nccl.so is not installed (package "
                       "ringside-node-cuda)"))
      << run.err;
  EXPECT_EQ(startBackend(run.out), "mpi") << run.out;
}

TEST(NcclPluginTrainerTest, PluginWithAMissingLibraryIsAClearErrorNotALoaderFailure) {
  TempDir dir;
  const std::string trainerPath = copiedTrainer(dir);
  fs::copy_file(fake("missing-library"), dir.path() + "/bin/" + kNcclPluginLibrary);
  ProcessResult nccl = runProcess(shortRun(trainerPath, "nccl"), dir.path(), kTimeout, kSearchEnv);
  EXPECT_EQ(nccl.exitCode, 1) << nccl.err;
  EXPECT_TRUE(contains(nccl.err, "libringside-nccl.so needs libringside-test-absent.so.1"))
      << nccl.err;

  // auto falls back to mpi and quotes why.
  ProcessResult automatic =
      runProcess(shortRun(trainerPath, "auto"), dir.path(), kTimeout, kSearchEnv);
  ASSERT_EQ(automatic.exitCode, 0) << automatic.err;
  EXPECT_TRUE(contains(automatic.err, "backend auto chose mpi: the nccl backend's plugin"))
      << automatic.err;
  EXPECT_TRUE(contains(automatic.err, "needs libringside-test-absent.so.1")) << automatic.err;
  EXPECT_EQ(startBackend(automatic.out), "mpi");
}

TEST(NcclPluginTrainerTest, PluginNamedByTheEnvironmentIsChecked) {
  TempDir dir;
  ProcessResult run = runProcess(shortRun(ringside::test::trainerBin(), "nccl"), dir.path(), kTimeout,
                                 {std::string(kNcclPluginEnv) + "=" + fake("newer-table")});
  EXPECT_EQ(run.exitCode, 1) << run.err;
  EXPECT_TRUE(contains(run.err, "only ringsideNcclBackend_v2, a newer version")) << run.err;
}

// --backend mpi never loads the plugin: a broken one named by the environment does not matter.
TEST(NcclPluginTrainerTest, MpiBackendNeverLoadsThePlugin) {
  TempDir dir;
  ProcessResult run = runProcess(shortRun(ringside::test::trainerBin(), "mpi"), dir.path(), kTimeout,
                                 {std::string(kNcclPluginEnv) + "=" + fake("missing-library")});
  EXPECT_EQ(run.exitCode, 0) << run.err;
  EXPECT_FALSE(contains(run.err, "libringside-nccl") || contains(run.err, "libringside-test"))
      << run.err;
  EXPECT_EQ(startBackend(run.out), "mpi");
}

// The built trainer finds the plugin built beside it; without a GPU, auto says so and uses mpi.
TEST(NcclPluginTrainerTest, BuildTreeTrainerFindsItsPlugin) {
  if (*ringside::test::ncclPluginBin() == 0) {
    GTEST_SKIP() << "this build has no nccl plugin (CMake found no CUDA, NCCL or cuDNN)";
  }
  TempDir dir;
  ProcessResult run =
      runProcess(shortRun(ringside::test::trainerBin(), "auto"), dir.path(), kTimeout, kSearchEnv);
  ASSERT_EQ(run.exitCode, 0) << run.err;
  if (contains(run.err, "backend auto chose nccl")) {
    EXPECT_EQ(startBackend(run.out), "nccl");  // a GPU machine
  } else {
    EXPECT_TRUE(contains(run.err,
                         "backend auto chose mpi: no CUDA GPU is visible "
                         "(cudaGetDeviceCount: "))
        << run.err;
    EXPECT_EQ(startBackend(run.out), "mpi");
  }
}

// --- the binaries' dynamic sections ---------------------------------------------------------

std::string commandOutput(const std::string& command) {
  std::string output;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return output;
  char buffer[4096];
  size_t read = 0;
  while ((read = fread(buffer, 1, sizeof buffer, pipe)) > 0) output.append(buffer, read);
  pclose(pipe);
  return output;
}

std::vector<std::string> neededLibraries(const std::string& binary) {
  const std::string dynamic = commandOutput("readelf -d '" + binary + "' 2>&1");
  std::vector<std::string> needed;
  const std::regex entry(R"(\(NEEDED\)\s+Shared library: \[([^\]]+)\])");
  for (std::sregex_iterator it(dynamic.begin(), dynamic.end(), entry), end; it != end; ++it) {
    needed.push_back((*it)[1]);
  }
  return needed;
}

TEST(NcclPluginBinaryTest, TrainerNeedsNoCudaLibrary) {
  const std::vector<std::string> needed = neededLibraries(ringside::test::trainerBin());
  ASSERT_FALSE(needed.empty()) << "readelf -d found no NEEDED entries (is binutils installed?)";
  const std::regex cuda(R"(^lib(cuda|cudart|nccl|cudnn|cublas|cublasLt|nvidia-ml)[._-])");
  for (const std::string& library : needed) {
    EXPECT_FALSE(std::regex_search(library, cuda)) << "ringside-trainer needs " << library;
  }
}

TEST(NcclPluginBinaryTest, PluginExportsItsTableAndNothingElse) {
  if (*ringside::test::ncclPluginBin() == 0) {
    GTEST_SKIP() << "this build has no nccl plugin (CMake found no CUDA, NCCL or cuDNN)";
  }
  const std::string symbols =
      commandOutput(std::string("nm -D --defined-only '") + ringside::test::ncclPluginBin() + "' 2>&1");
  std::vector<std::string> exported;
  std::istringstream lines(symbols);
  std::string address, type, name;
  while (lines >> address >> type >> name) exported.push_back(name);
  EXPECT_EQ(exported, std::vector<std::string>{"ringsideNcclBackend_v1"}) << symbols;
  // The plugin is where the CUDA libraries are needed.
  const std::vector<std::string> needed = neededLibraries(ringside::test::ncclPluginBin());
  const auto needs = [&](const std::string& prefix) {
    for (const std::string& library : needed) {
      if (library.rfind(prefix, 0) == 0) return true;
    }
    return false;
  };
  EXPECT_TRUE(needs("libnccl.so")) << symbols;
  EXPECT_TRUE(needs("libcudart.so"));
  EXPECT_TRUE(needs("libcublas.so"));
  EXPECT_TRUE(needs("libcudnn.so"));
}

}  // namespace
}  // namespace ringside::trainer
