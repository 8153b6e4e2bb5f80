// Node inventory from fixture /proc, /sys and /etc files in a per-test temp root.
#include "ringside/agent/inventory.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

namespace ringside::agent {
namespace {

namespace fs = std::filesystem;

InventoryOptions optionsAt(const fs::path& root, GpuProbe* probe = nullptr) {
  InventoryOptions options;
  options.root = root;
  options.gpuProbe = probe;
  return options;
}

GpuStaticInfo gpu(uint32_t index, std::string name, std::string uuid = "") {
  GpuStaticInfo info;
  info.index = index;
  info.name = std::move(name);
  info.uuid = std::move(uuid);
  return info;
}

class InventoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    root_ = fs::temp_directory_path() /
            ("ringside-inventory-" + std::string(test->name()) + "-" + std::to_string(getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  void write(const std::string& relative, const std::string& text) {
    fs::path path = root_ / relative;
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
  }

  void writeNode() {
    write("proc/sys/kernel/hostname", "gpu-node-07\n");
    write("proc/sys/kernel/osrelease", "6.1.0-18-amd64\n");
    write("etc/os-release",
          "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nNAME=\"Debian GNU/Linux\"\n"
          "VERSION_ID=\"12\"\nID=debian\n");
    write("proc/cpuinfo",
          "processor\t: 0\nvendor_id\t: GenuineIntel\n"
          "model name\t: Intel(R) Xeon(R) Platinum 8480+\nflags\t\t: fpu vme\n\n"
          "processor\t: 1\nvendor_id\t: GenuineIntel\n"
          "model name\t: Intel(R) Xeon(R) Platinum 8480+\n\n");
    write("sys/devices/system/cpu/online", "0-15\n");
    write("proc/meminfo",
          "MemTotal:       131927040 kB\nMemFree:        100000000 kB\n"
          "MemAvailable:   120000000 kB\n");
  }

  fs::path root_;
};

TEST_F(InventoryTest, ParsesEveryFieldOfANodeWithoutGpus) {
  writeNode();
  InventoryOptions options;
  options.root = root_;
  options.agentVersion = "0.1.0";
  options.labels = {"rack-3", "a100"};
  NodeInventory inventory = collectInventory(options);
  EXPECT_EQ(inventory.hostname, "gpu-node-07");
  EXPECT_EQ(inventory.os, "Debian GNU/Linux 12 (bookworm), Linux 6.1.0-18-amd64");
  EXPECT_EQ(inventory.cpuModel, "Intel(R) Xeon(R) Platinum 8480+");
  EXPECT_EQ(inventory.cpuCores, 16u);  // from the online list, not the two cpuinfo entries
  EXPECT_EQ(inventory.memoryTotalMiB, 131927040u / 1024);
  EXPECT_TRUE(inventory.gpus.empty());
  EXPECT_EQ(inventory.slotKind, "cpu");
  EXPECT_EQ(inventory.slotsTotal, 16u);

  v1::NodeInfo info = toProto(inventory);
  EXPECT_EQ(info.hostname(), "gpu-node-07");
  EXPECT_EQ(info.cpu_cores(), 16u);
  EXPECT_EQ(info.memory_total_mib(), 128835u);
  EXPECT_EQ(info.agent_version(), "0.1.0");
  ASSERT_EQ(info.labels_size(), 2);
  EXPECT_EQ(info.labels(1), "a100");
  EXPECT_EQ(info.slots_total(), 16u);
  EXPECT_EQ(info.cpu_slots_total(), 16u);
  EXPECT_EQ(info.gpu_slots_total(), 0u);
  EXPECT_EQ(info.slot_kind(), "cpu");
  EXPECT_EQ(info.gpus_size(), 0);
}

TEST_F(InventoryTest, CoresFallBackToCpuinfoProcessorCount) {
  writeNode();
  fs::remove(root_ / "sys/devices/system/cpu/online");
  NodeInventory inventory = collectInventory(optionsAt(root_));
  EXPECT_EQ(inventory.cpuCores, 2u);
  EXPECT_EQ(inventory.slotsTotal, 2u);
}

TEST_F(InventoryTest, GpusFromProbeMakeGpuSlots) {
  writeNode();
  GpuStaticInfo first = gpu(0, "NVIDIA H100", "GPU-a");
  first.memoryTotalMiB = 81559;
  first.driverVersion = "580.65.06";
  first.cudaVersion = "13.0";
  StaticGpuProbe probe({first, gpu(1, "NVIDIA H100", "GPU-b")});
  ASSERT_TRUE(probe.init().isOk());
  NodeInventory inventory = collectInventory(optionsAt(root_, &probe));
  EXPECT_EQ(inventory.slotKind, "gpu");
  EXPECT_EQ(inventory.slotsTotal, 2u);
  v1::NodeInfo info = toProto(inventory);
  ASSERT_EQ(info.gpus_size(), 2);
  EXPECT_EQ(info.gpus(0).name(), "NVIDIA H100");
  EXPECT_EQ(info.gpus(0).memory_total_mib(), 81559u);
  EXPECT_EQ(info.gpus(0).cuda_version(), "13.0");
  EXPECT_EQ(info.gpus(1).index(), 1u);
  EXPECT_EQ(info.gpus(1).uuid(), "GPU-b");
}

TEST_F(InventoryTest, ProbeThatFailedInitLeavesCpuSlots) {
  writeNode();
  StaticGpuProbe probe({gpu(0, "NVIDIA H100")}, {}, Status::notFound("no NVML"));
  EXPECT_FALSE(probe.init().isOk());
  NodeInventory inventory = collectInventory(optionsAt(root_, &probe));
  EXPECT_TRUE(inventory.gpus.empty());
  EXPECT_EQ(inventory.slotKind, "cpu");
  EXPECT_EQ(inventory.slotsTotal, 16u);
}

TEST_F(InventoryTest, MissingFilesLeaveValuesAbsentNotZero) {
  NodeInventory inventory = collectInventory(optionsAt(root_ / "empty"));
  EXPECT_EQ(inventory.hostname, "");
  EXPECT_EQ(inventory.os, "");
  EXPECT_EQ(inventory.cpuModel, "");
  EXPECT_FALSE(inventory.cpuCores.has_value());
  EXPECT_FALSE(inventory.memoryTotalMiB.has_value());
  EXPECT_FALSE(inventory.slotsTotal.has_value());
  EXPECT_EQ(inventory.slotKind, "cpu");
}

TEST_F(InventoryTest, OsReleaseFallsBackToUsrLib) {
  write("usr/lib/os-release", "NAME=Fedora\nPRETTY_NAME='Fedora Linux 40 (Workstation Edition)'\n");
  NodeInventory inventory = collectInventory(optionsAt(root_));
  EXPECT_EQ(inventory.os, "Fedora Linux 40 (Workstation Edition)");
}

TEST_F(InventoryTest, RealRootReadsThisMachine) {
  NodeInventory inventory = collectInventory({});
  EXPECT_FALSE(inventory.hostname.empty());
  EXPECT_NE(inventory.os.find("Linux"), std::string::npos);
  ASSERT_TRUE(inventory.cpuCores.has_value());
  EXPECT_EQ(*inventory.cpuCores, static_cast<uint32_t>(sysconf(_SC_NPROCESSORS_ONLN)));
  ASSERT_TRUE(inventory.memoryTotalMiB.has_value());
  EXPECT_GT(*inventory.memoryTotalMiB, 0u);
}

TEST(InventoryParsers, OsReleasePrettyName) {
  EXPECT_EQ(parseOsReleasePrettyName("PRETTY_NAME=\"Ubuntu 24.04 LTS\"\n"), "Ubuntu 24.04 LTS");
  EXPECT_EQ(parseOsReleasePrettyName("ID=arch\nPRETTY_NAME=Arch\n"), "Arch");
  EXPECT_EQ(parseOsReleasePrettyName("PRETTY_NAME=\"say \\\"hi\\\"\"\n"), "say \"hi\"");
  EXPECT_FALSE(parseOsReleasePrettyName("NAME=Debian\n").has_value());
  EXPECT_FALSE(parseOsReleasePrettyName("PRETTY_NAME=\"\"\n").has_value());
}

TEST(InventoryParsers, CpuModel) {
  EXPECT_EQ(parseCpuModel("processor : 0\nmodel name : AMD EPYC 9654 96-Core Processor\n"),
            "AMD EPYC 9654 96-Core Processor");
  // aarch64 /proc/cpuinfo has no "model name".
  EXPECT_FALSE(parseCpuModel("processor : 0\nBogoMIPS : 50.00\nCPU part : 0xd4f\n").has_value());
}

TEST(InventoryParsers, CpuListCount) {
  EXPECT_EQ(parseCpuListCount("0-15\n"), 16u);
  EXPECT_EQ(parseCpuListCount("0"), 1u);
  EXPECT_EQ(parseCpuListCount("0-3,8,10-11\n"), 7u);
  EXPECT_FALSE(parseCpuListCount("").has_value());
  EXPECT_FALSE(parseCpuListCount("3-1").has_value());
  EXPECT_FALSE(parseCpuListCount("a-b").has_value());
}

TEST(InventoryParsers, MeminfoKiB) {
  const std::string meminfo = "MemTotal:  1000 kB\nMemAvailable:   250 kB\nMemTotalX: 7 kB\n";
  EXPECT_EQ(parseMeminfoKiB(meminfo, "MemTotal"), 1000u);
  EXPECT_EQ(parseMeminfoKiB(meminfo, "MemAvailable"), 250u);
  EXPECT_FALSE(parseMeminfoKiB(meminfo, "MemFree").has_value());
  EXPECT_FALSE(parseMeminfoKiB(meminfo, "Mem").has_value());
}

}  // namespace
}  // namespace ringside::agent
