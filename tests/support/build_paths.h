// Where this build tree's programs, test libraries and data are, for the tests and benchmarks.
// The answers are fixed when CMake generates the build tree (build_paths.cpp is written there by
// tests/support/CMakeLists.txt); sources ask these functions rather than receive the paths as
// compile definitions, so no object file depends on where the tree is checked out and ccache
// shares it between checkouts (docs/development.md, "The compile cache"). For the same reason
// `__FILE__` is a path relative to the build folder under ccache: find files from sourceDir().
// Thread-safety: every function returns a pointer to a constant string; call from any thread.
#pragma once

namespace ringside::test {

// Each returns an absolute path, or "" where this build has no such file.
const char* agentBin();         // the build's ringside-agent
const char* trainerBin();       // the build's ringside-trainer
const char* mpiexec();          // Open MPI's mpirun, as CMake's FindMPI found it
const char* sourceDir();        // the source tree's root
const char* binaryDir();        // the build tree's root
const char* dataDir();          // Fashion-MNIST's IDX files (CMake cache RINGSIDE_TEST_DATA_DIR)
const char* fakeNvmlFull();     // tests/agent/fake_nvml.c with every NVML entry point
const char* fakeNvmlMinimal();  // the same with only the required entry points
const char* ncclPluginBin();    // libringside-nccl.so: "" where the build found no CUDA and NCCL
const char* fakePluginDir();    // the folder of tests/trainer/fake_plugin's fake nccl plugins
const char* lrelease();         // Qt Linguist's lrelease
const char* translationDe();    // translations/ringside_de.ts
const char* scaleNvml();        // bench/scale's fake NVML (8 GPUs)
const char* scaleRsh();         // bench/scale's remote-shell stand-in for mpirun

}  // namespace ringside::test
