// NvmlProbe: a missing library fails init() cleanly (the node then has no GPUs); with the fake
// NVML of fake_nvml.c (built when tests/agent/fake_nvml.cmake is included) the dlopen path, the
// versioned-symbol preference, unit conversions and absent optional values are checked.
#include "build_paths.h"
#include "ringside/agent/nvml_probe.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "ringside/agent/inventory.h"

namespace ringside::agent {
namespace {

TEST(FormatCudaDriverVersion, SplitsMajorAndMinor) {
  EXPECT_EQ(formatCudaDriverVersion(12040), "12.4");
  EXPECT_EQ(formatCudaDriverVersion(13000), "13.0");
  EXPECT_EQ(formatCudaDriverVersion(11080), "11.8");
  EXPECT_EQ(formatCudaDriverVersion(0), "");
  EXPECT_EQ(formatCudaDriverVersion(-1), "");
}

TEST(NvmlProbe, MissingLibraryFailsInitWithNotFoundAndReportsNoGpus) {
  auto missing = std::filesystem::temp_directory_path() / "ringside-no-such-dir/libnvidia-ml.so.1";
  NvmlProbe probe(missing.string());
  Status status = probe.init();
  EXPECT_EQ(status.code(), Status::Code::kNotFound);
  EXPECT_NE(status.message().find(missing.string()), std::string::npos) << status.toString();
  EXPECT_TRUE(probe.devices().empty());
  EXPECT_TRUE(probe.sample().empty());
}

TEST(NvmlProbe, LibraryWithoutNvmlSymbolsFailsInitWithNotFound) {
  // libm is loadable but exports no NVML symbol.
  NvmlProbe probe("libm.so.6");
  Status status = probe.init();
  EXPECT_EQ(status.code(), Status::Code::kNotFound);
  EXPECT_NE(status.message().find("nvmlInit"), std::string::npos) << status.toString();
  EXPECT_TRUE(probe.devices().empty());
}

TEST(NvmlProbe, NodeWithoutNvmlHasCpuSlotsOnly) {
  NvmlProbe probe("/nonexistent/libnvidia-ml.so.1");
  ASSERT_FALSE(probe.init().isOk());
  InventoryOptions options;
  options.gpuProbe = &probe;
  NodeInventory inventory = collectInventory(options);
  EXPECT_TRUE(inventory.gpus.empty());
  EXPECT_EQ(inventory.slotKind, "cpu");
  EXPECT_EQ(inventory.slotsTotal, inventory.cpuCores);
}

class FakeNvml : public ::testing::Test {
 protected:
  void SetUp() override {
    unsetenv("FAKE_NVML_INIT_ERROR");
    unsetenv("FAKE_NVML_PROCESSES_FILE");
  }
  void TearDown() override {
    unsetenv("FAKE_NVML_INIT_ERROR");
    unsetenv("FAKE_NVML_PROCESSES_FILE");
  }
};

TEST_F(FakeNvml, ReadsStaticInfoThroughVersionedSymbols) {
  NvmlProbe probe(ringside::test::fakeNvmlFull());
  ASSERT_TRUE(probe.init().isOk());  // the fake's unversioned nvmlInit would fail
  auto devices = probe.devices();
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[0].index, 0u);
  EXPECT_EQ(devices[0].name, "Fake GPU 0");
  EXPECT_EQ(devices[0].uuid, "GPU-00000000-fake-0000-0000-000000000000");
  EXPECT_EQ(devices[0].memoryTotalMiB, 81559u);
  EXPECT_EQ(devices[0].driverVersion, "580.65.06");
  EXPECT_EQ(devices[0].cudaVersion, "13.0");
  EXPECT_EQ(devices[1].index, 1u);
  EXPECT_EQ(devices[1].name, "Fake GPU 1");
  EXPECT_TRUE(probe.init().isOk());  // a second init is a no-op
  EXPECT_EQ(probe.devices().size(), 2u);
}

TEST_F(FakeNvml, SamplesConvertUnitsAndLeaveUnsupportedValuesAbsent) {
  NvmlProbe probe(ringside::test::fakeNvmlFull());
  ASSERT_TRUE(probe.init().isOk());
  auto samples = probe.sample();
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].index, 0u);
  EXPECT_EQ(samples[0].utilPct, 87.0);
  EXPECT_EQ(samples[0].memUsedMiB, 1024.0);
  EXPECT_EQ(samples[0].powerW, 312.5);  // 312500 mW
  EXPECT_EQ(samples[0].tempC, 71.0);
  EXPECT_EQ(samples[1].utilPct, 3.0);
  EXPECT_EQ(samples[1].memUsedMiB, 512.0);
  EXPECT_FALSE(samples[1].powerW.has_value());  // NVML_ERROR_NOT_SUPPORTED
  EXPECT_EQ(samples[1].tempC, 35.0);
}

TEST_F(FakeNvml, SamplesMemoryTotalClockAndPcieThroughput) {
  NvmlProbe probe(ringside::test::fakeNvmlFull());
  ASSERT_TRUE(probe.init().isOk());
  auto samples = probe.sample();
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].memTotalMiB, 81559.0);
  EXPECT_EQ(samples[0].smClockMHz, 1980.0);
  EXPECT_DOUBLE_EQ(samples[0].pcieRxMBps.value_or(-1), 25000 * 1024 / 1e6);  // KB/s -> MB/s
  EXPECT_DOUBLE_EQ(samples[0].pcieTxMBps.value_or(-1), 12500 * 1024 / 1e6);
  EXPECT_EQ(samples[1].memTotalMiB, 81559.0);
  EXPECT_FALSE(samples[1].smClockMHz.has_value());  // NVML_ERROR_NOT_SUPPORTED
  EXPECT_EQ(samples[1].pcieRxMBps, 0.0);            // idle is 0, not absent
  EXPECT_EQ(samples[1].pcieTxMBps, 0.0);
}

TEST_F(FakeNvml, NvlinkThroughputIsARateBetweenTwoSamplesAndAbsentWithoutNvlink) {
  NvmlProbe probe(ringside::test::fakeNvmlFull());
  ASSERT_TRUE(probe.init().isOk());
  auto first = probe.sample();
  ASSERT_EQ(first.size(), 2u);
  EXPECT_FALSE(first[0].nvlinkRxMBps.has_value());  // no previous counters yet
  EXPECT_FALSE(first[0].nvlinkTxMBps.has_value());
  auto second = probe.sample();
  ASSERT_EQ(second.size(), 2u);
  // The fake's counters grow 1000 KiB (rx) and 500 KiB (tx) per NVML-timestamped second.
  EXPECT_DOUBLE_EQ(second[0].nvlinkRxMBps.value_or(-1), 1000 * 1024 / 1e6);
  EXPECT_DOUBLE_EQ(second[0].nvlinkTxMBps.value_or(-1), 500 * 1024 / 1e6);
  EXPECT_FALSE(second[1].nvlinkRxMBps.has_value());  // GPU 1 has no NVLink
  EXPECT_FALSE(second[1].nvlinkTxMBps.has_value());
}

TEST_F(FakeNvml, OldLibraryFallsBackToUnversionedSymbolsAndMissingOptionalsAreAbsent) {
  NvmlProbe probe(ringside::test::fakeNvmlMinimal());
  ASSERT_TRUE(probe.init().isOk());
  auto devices = probe.devices();
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(devices[0].name, "Fake GPU 0");
  EXPECT_EQ(devices[0].uuid, "");
  EXPECT_FALSE(devices[0].memoryTotalMiB.has_value());
  EXPECT_EQ(devices[0].driverVersion, "");
  EXPECT_EQ(devices[0].cudaVersion, "");
  auto samples = probe.sample();
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_FALSE(samples[0].utilPct.has_value());
  EXPECT_FALSE(samples[0].memUsedMiB.has_value());
  EXPECT_FALSE(samples[0].powerW.has_value());
  EXPECT_FALSE(samples[0].tempC.has_value());
  EXPECT_FALSE(samples[0].memTotalMiB.has_value());
  EXPECT_FALSE(samples[0].smClockMHz.has_value());
  EXPECT_FALSE(samples[0].pcieRxMBps.has_value());
  EXPECT_FALSE(samples[0].pcieTxMBps.has_value());
  EXPECT_FALSE(samples[0].computeProcesses.has_value());  // no process list in this driver
  auto again = probe.sample();
  ASSERT_EQ(again.size(), 1u);
  EXPECT_FALSE(again[0].nvlinkRxMBps.has_value());
  EXPECT_FALSE(again[0].nvlinkTxMBps.has_value());
}

TEST_F(FakeNvml, ComputeProcessesPerGpuWithTheirMemoryAndAnyNumberOfThem) {
  NvmlProbe probe(ringside::test::fakeNvmlFull());
  ASSERT_TRUE(probe.init().isOk());
  auto none = probe.sample();
  ASSERT_EQ(none.size(), 2u);
  ASSERT_TRUE(none[0].computeProcesses.has_value());  // listed, and empty
  EXPECT_TRUE(none[0].computeProcesses->empty());
  char path[] = "/tmp/ringside-fake-nvml-processes-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  {
    // GPU 0: one process of 1.5 GiB; GPU 1: 40 processes, more than the probe's first buffer.
    std::ofstream file(path);
    file << "0 4123 1536\n";
    for (int i = 0; i < 40; ++i) file << "1 " << 5000 + i << " 100\n";
  }
  setenv("FAKE_NVML_PROCESSES_FILE", path, 1);
  auto samples = probe.sample();
  unlink(path);
  ASSERT_EQ(samples.size(), 2u);
  ASSERT_TRUE(samples[0].computeProcesses.has_value());
  ASSERT_EQ(samples[0].computeProcesses->size(), 1u);
  EXPECT_EQ((*samples[0].computeProcesses)[0].pid, 4123u);
  ASSERT_TRUE((*samples[0].computeProcesses)[0].usedMiB.has_value());
  EXPECT_DOUBLE_EQ(*(*samples[0].computeProcesses)[0].usedMiB, 1536.0);
  ASSERT_TRUE(samples[1].computeProcesses.has_value());
  ASSERT_EQ(samples[1].computeProcesses->size(), 40u);
  EXPECT_EQ((*samples[1].computeProcesses)[39].pid, 5039u);
}

TEST_F(FakeNvml, FailingNvmlInitIsInternalWithNvmlsMessage) {
  setenv("FAKE_NVML_INIT_ERROR", "9", 1);  // NVML_ERROR_DRIVER_NOT_LOADED
  NvmlProbe probe(ringside::test::fakeNvmlFull());
  Status status = probe.init();
  EXPECT_EQ(status.code(), Status::Code::kInternal);
  EXPECT_NE(status.message().find("Driver Not Loaded"), std::string::npos) << status.toString();
  EXPECT_TRUE(probe.devices().empty());
  EXPECT_TRUE(probe.sample().empty());
}

TEST_F(FakeNvml, DestructorShutsNvmlDown) {
  // Hold our own reference so the library (and its counter) outlives the probe's dlclose.
  void* library = dlopen(ringside::test::fakeNvmlFull(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(library, nullptr) << dlerror();
  auto* shutdownCalls = static_cast<int*>(dlsym(library, "fake_nvml_shutdown_calls"));
  ASSERT_NE(shutdownCalls, nullptr);
  int before = *shutdownCalls;
  {
    NvmlProbe probe(ringside::test::fakeNvmlFull());
    ASSERT_TRUE(probe.init().isOk());
    EXPECT_EQ(*shutdownCalls, before);
  }
  EXPECT_EQ(*shutdownCalls, before + 1);
  dlclose(library);
}

TEST_F(FakeNvml, InventoryOfGpuNodeCountsGpuSlots) {
  NvmlProbe probe(ringside::test::fakeNvmlFull());
  ASSERT_TRUE(probe.init().isOk());
  InventoryOptions options;
  options.gpuProbe = &probe;
  v1::NodeInfo info = toProto(collectInventory(options));
  EXPECT_EQ(info.slot_kind(), "gpu");
  EXPECT_EQ(info.slots_total(), 2u);
  // Slots by kind: its 2 GPUs, and its cores for CPU jobs as well.
  EXPECT_EQ(info.gpu_slots_total(), 2u);
  EXPECT_EQ(info.cpu_slots_total(), info.cpu_cores());
  ASSERT_EQ(info.gpus_size(), 2);
  EXPECT_EQ(info.gpus(1).uuid(), "GPU-11111111-fake-1111-1111-111111111111");
  EXPECT_EQ(info.gpus(0).cuda_version(), "13.0");
}

}  // namespace
}  // namespace ringside::agent
