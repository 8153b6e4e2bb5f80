// TelemetrySampler: exact rates from two known /proc readings under a fixture root and an
// injected clock; absent values on the first sample, on counters that go back, on missing files.
#include "ringside/agent/telemetry.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

namespace ringside::agent {
namespace {

namespace fs = std::filesystem;

// /proc/stat with the aggregate line "cpu user nice system idle iowait irq softirq steal guest
// guest_nice" and one per-CPU line that the sampler must ignore.
std::string procStat(uint64_t user, uint64_t nice, uint64_t system, uint64_t idle, uint64_t iowait,
                     uint64_t irq, uint64_t softirq, uint64_t steal) {
  return "cpu  " + std::to_string(user) + " " + std::to_string(nice) + " " +
         std::to_string(system) + " " + std::to_string(idle) + " " + std::to_string(iowait) + " " +
         std::to_string(irq) + " " + std::to_string(softirq) + " " + std::to_string(steal) +
         " 500 0\ncpu0 1 2 3 4 5 6 7 8 0 0\nintr 12345\nctxt 999\n";
}

// /proc/net/dev with loopback, eth0 and ib0 (rx bytes first, tx bytes ninth after the colon).
std::string netDev(uint64_t loBytes, uint64_t eth0Rx, uint64_t eth0Tx, uint64_t ib0Rx,
                   uint64_t ib0Tx) {
  auto line = [](const std::string& name, uint64_t rx, uint64_t tx) {
    return name + ": " + std::to_string(rx) + " 10 0 0 0 0 0 0 " + std::to_string(tx) +
           " 20 0 0 0 0 0 0\n";
  };
  return "Inter-|   Receive                                                |  Transmit\n"
         " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs "
         "drop fifo colls carrier compressed\n" +
         line("    lo", loBytes, loBytes) + line("  eth0", eth0Rx, eth0Tx) +
         line("   ib0", ib0Rx, ib0Tx);
}

class TelemetryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    root_ = fs::temp_directory_path() /
            ("ringside-telemetry-" + std::string(test->name()) + "-" + std::to_string(getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_ / "proc/net");
  }
  void TearDown() override { fs::remove_all(root_); }

  void write(const std::string& relative, const std::string& text) {
    std::ofstream(root_ / relative) << text;
  }

  TelemetryOptions options(GpuProbe* probe = nullptr) {
    TelemetryOptions result;
    result.root = root_;
    result.gpuProbe = probe;
    result.monotonicSeconds = [this] { return now_; };
    result.wallSeconds = [this] { return 1700000000.0 + now_; };
    return result;
  }

  fs::path root_;
  double now_ = 100.0;
};

TEST_F(TelemetryTest, FirstSampleHasNoRatesButHasMemory) {
  write("proc/stat", procStat(100, 0, 50, 800, 50, 0, 0, 0));
  write("proc/net/dev", netDev(1000, 5000, 6000, 0, 0));
  write("proc/meminfo", "MemTotal: 2048000 kB\nMemFree: 100 kB\nMemAvailable: 1024000 kB\n");
  TelemetrySampler sampler(options());
  TelemetrySample sample = sampler.sample();
  EXPECT_EQ(sample.wallTime, 1700000100.0);
  EXPECT_FALSE(sample.cpuPct.has_value());
  EXPECT_FALSE(sample.netRxMBps.has_value());
  EXPECT_FALSE(sample.netTxMBps.has_value());
  EXPECT_EQ(sample.memUsedMiB, 1000.0);  // (2048000 - 1024000) kB / 1024
  EXPECT_TRUE(sample.gpus.empty());
}

TEST_F(TelemetryTest, ExactRatesFromTwoReadings) {
  write("proc/stat", procStat(1000, 100, 500, 8000, 400, 50, 50, 0));
  write("proc/net/dev", netDev(1000, 10'000'000, 2'000'000, 500'000, 0));
  TelemetrySampler sampler(options());
  sampler.sample();

  // busy +300 (user 200, system 60, irq 10, softirq 20, steal 10), idle +700 (idle 650,
  // iowait 50): 30 %. Guest (500 in both) is part of user already and not counted again.
  write("proc/stat", procStat(1200, 100, 560, 8650, 450, 60, 70, 10));
  // Over 2 s: rx +4e6 (eth0) +2e6 (ib0) = 6e6 B -> 3 MB/s; tx +1e6 B -> 0.5 MB/s. Loopback's
  // +9e6 is left out.
  write("proc/net/dev", netDev(9'001'000, 14'000'000, 3'000'000, 2'500'000, 0));
  now_ += 2.0;
  TelemetrySample sample = sampler.sample();
  ASSERT_TRUE(sample.cpuPct.has_value());
  EXPECT_DOUBLE_EQ(*sample.cpuPct, 30.0);
  ASSERT_TRUE(sample.netRxMBps.has_value());
  EXPECT_DOUBLE_EQ(*sample.netRxMBps, 3.0);
  ASSERT_TRUE(sample.netTxMBps.has_value());
  EXPECT_DOUBLE_EQ(*sample.netTxMBps, 0.5);
  EXPECT_FALSE(sample.memUsedMiB.has_value());  // no meminfo fixture
}

TEST_F(TelemetryTest, CounterGoingBackwardsIsAbsentThenRecovers) {
  write("proc/net/dev", netDev(0, 10'000'000, 2'000'000, 0, 0));
  write("proc/stat", procStat(1000, 0, 0, 1000, 0, 0, 0, 0));
  TelemetrySampler sampler(options());
  sampler.sample();

  // eth0 was reset: rx went back; tx still grew. CPU counters went back too (a new boot image
  // in the fixture).
  write("proc/net/dev", netDev(0, 1'000, 3'000'000, 0, 0));
  write("proc/stat", procStat(10, 0, 0, 10, 0, 0, 0, 0));
  now_ += 1.0;
  TelemetrySample reset = sampler.sample();
  EXPECT_FALSE(reset.netRxMBps.has_value());
  EXPECT_EQ(reset.netTxMBps, 1.0);
  EXPECT_FALSE(reset.cpuPct.has_value());

  // The reset reading is the new baseline.
  write("proc/net/dev", netDev(0, 1'001'000, 3'000'000, 0, 0));
  write("proc/stat", procStat(15, 0, 0, 25, 0, 0, 0, 0));
  now_ += 1.0;
  TelemetrySample after = sampler.sample();
  EXPECT_EQ(after.netRxMBps, 1.0);
  EXPECT_EQ(after.netTxMBps, 0.0);
  ASSERT_TRUE(after.cpuPct.has_value());
  EXPECT_DOUBLE_EQ(*after.cpuPct, 25.0);
}

TEST_F(TelemetryTest, InterfaceAppearingBetweenReadingsIsSkipped) {
  write("proc/net/dev", "Inter-|\n face |\n  eth0: 100 0 0 0 0 0 0 0 200 0 0 0 0 0 0 0\n");
  TelemetrySampler sampler(options());
  sampler.sample();
  write("proc/net/dev", netDev(0, 1'000'100, 200, 77'000'000, 88'000'000));
  now_ += 1.0;
  TelemetrySample sample = sampler.sample();
  EXPECT_EQ(sample.netRxMBps, 1.0);
  EXPECT_EQ(sample.netTxMBps, 0.0);
}

TEST_F(TelemetryTest, NoElapsedTimeGivesAbsentRates) {
  write("proc/net/dev", netDev(0, 100, 100, 0, 0));
  write("proc/stat", procStat(1, 0, 0, 1, 0, 0, 0, 0));
  TelemetrySampler sampler(options());
  sampler.sample();
  TelemetrySample sample = sampler.sample();  // same clock, same counters
  EXPECT_FALSE(sample.netRxMBps.has_value());
  EXPECT_FALSE(sample.cpuPct.has_value());
}

TEST_F(TelemetryTest, MissingFilesGiveAbsentValuesNotCrashes) {
  TelemetrySampler sampler(options());
  for (int i = 0; i < 2; ++i) {
    now_ += 1.0;
    TelemetrySample sample = sampler.sample();
    EXPECT_FALSE(sample.cpuPct.has_value());
    EXPECT_FALSE(sample.memUsedMiB.has_value());
    EXPECT_FALSE(sample.netRxMBps.has_value());
    EXPECT_FALSE(sample.netTxMBps.has_value());
  }
  write("proc/stat", "garbage\n");
  write("proc/net/dev", "Inter-|\n face |\n  eth0: not numbers\n");
  write("proc/meminfo", "MemTotal: 100 kB\n");  // no MemAvailable (Linux < 3.14)
  now_ += 1.0;
  TelemetrySample sample = sampler.sample();
  EXPECT_FALSE(sample.cpuPct.has_value());
  EXPECT_FALSE(sample.memUsedMiB.has_value());
  EXPECT_FALSE(sample.netRxMBps.has_value());
}

TEST_F(TelemetryTest, FailedReadKeepsTheOlderBaseline) {
  write("proc/net/dev", netDev(0, 0, 0, 0, 0));
  TelemetrySampler sampler(options());
  sampler.sample();
  fs::remove(root_ / "proc/net/dev");
  now_ += 1.0;
  EXPECT_FALSE(sampler.sample().netRxMBps.has_value());
  write("proc/net/dev", netDev(0, 4'000'000, 0, 0, 0));
  now_ += 1.0;
  EXPECT_EQ(sampler.sample().netRxMBps, 2.0);  // 4e6 B over the 2 s since the baseline
}

TEST_F(TelemetryTest, GpuValuesComeFromTheProbeAndAbsentStaysAbsentOnTheWire) {
  GpuStaticInfo gpu0, gpu1;
  gpu1.index = 1;
  GpuSample busy;
  busy.index = 0;
  busy.utilPct = 87;
  busy.memUsedMiB = 1024;
  busy.powerW = 312.5;
  busy.tempC = 71;
  busy.memTotalMiB = 81559;
  busy.smClockMHz = 1980;
  busy.pcieRxMBps = 25.6;
  busy.pcieTxMBps = 12.8;
  busy.nvlinkRxMBps = 1.024;
  busy.nvlinkTxMBps = 0.512;
  GpuSample partial;  // a GPU that reports only its utilization
  partial.index = 1;
  partial.utilPct = 3;
  StaticGpuProbe probe({gpu0, gpu1}, {busy, partial});
  ASSERT_TRUE(probe.init().isOk());
  write("proc/meminfo", "MemTotal: 2048 kB\nMemAvailable: 1024 kB\n");
  TelemetrySampler sampler(options(&probe));
  TelemetrySample sample = sampler.sample();
  ASSERT_EQ(sample.gpus.size(), 2u);

  v1::NodeTelemetry wire = toProto(sample);
  EXPECT_EQ(wire.wall_time(), 1700000100.0);
  EXPECT_FALSE(wire.has_cpu_pct());
  EXPECT_FALSE(wire.has_net_rx_mbps());
  EXPECT_FALSE(wire.has_net_tx_mbps());
  ASSERT_TRUE(wire.has_mem_used_mib());
  EXPECT_EQ(wire.mem_used_mib(), 1.0);
  ASSERT_EQ(wire.gpus_size(), 2);
  EXPECT_EQ(wire.gpus(0).util_pct(), 87.0);
  EXPECT_EQ(wire.gpus(0).power_w(), 312.5);
  EXPECT_EQ(wire.gpus(0).temp_c(), 71.0);
  EXPECT_EQ(wire.gpus(0).mem_total_mib(), 81559.0);
  EXPECT_EQ(wire.gpus(0).sm_clock_mhz(), 1980.0);
  EXPECT_EQ(wire.gpus(0).pcie_rx_mbps(), 25.6);
  EXPECT_EQ(wire.gpus(0).pcie_tx_mbps(), 12.8);
  EXPECT_EQ(wire.gpus(0).nvlink_rx_mbps(), 1.024);
  EXPECT_EQ(wire.gpus(0).nvlink_tx_mbps(), 0.512);
  EXPECT_EQ(wire.gpus(1).index(), 1u);
  EXPECT_TRUE(wire.gpus(1).has_util_pct());
  EXPECT_FALSE(wire.gpus(1).has_mem_used_mib());
  EXPECT_FALSE(wire.gpus(1).has_power_w());
  EXPECT_FALSE(wire.gpus(1).has_temp_c());
  EXPECT_FALSE(wire.gpus(1).has_mem_total_mib());
  EXPECT_FALSE(wire.gpus(1).has_sm_clock_mhz());
  EXPECT_FALSE(wire.gpus(1).has_pcie_rx_mbps());
  EXPECT_FALSE(wire.gpus(1).has_pcie_tx_mbps());
  EXPECT_FALSE(wire.gpus(1).has_nvlink_rx_mbps());
  EXPECT_FALSE(wire.gpus(1).has_nvlink_tx_mbps());
}

TEST_F(TelemetryTest, RealProcGivesPlausibleValues) {
  TelemetrySampler sampler(TelemetryOptions{});
  sampler.sample();
  usleep(50'000);
  TelemetrySample sample = sampler.sample();
  ASSERT_TRUE(sample.cpuPct.has_value());
  EXPECT_GE(*sample.cpuPct, 0.0);
  EXPECT_LE(*sample.cpuPct, 100.0);
  ASSERT_TRUE(sample.memUsedMiB.has_value());
  EXPECT_GT(*sample.memUsedMiB, 0.0);
  ASSERT_TRUE(sample.netRxMBps.has_value());
  EXPECT_GE(*sample.netRxMBps, 0.0);
  EXPECT_GT(sample.wallTime, 1.6e9);
}

TEST(TelemetryParsers, ProcStatCpu) {
  auto times = parseProcStatCpu("cpu  1 2 3 4 5 6 7 8 9 10\ncpu0 0 0 0 0\n");
  ASSERT_TRUE(times.has_value());
  EXPECT_EQ(times->busy, 1u + 2 + 3 + 6 + 7 + 8);
  EXPECT_EQ(times->idle, 4u + 5);
  auto old = parseProcStatCpu("cpu 1 2 3 4\n");  // pre-2.6 kernels: four fields
  ASSERT_TRUE(old.has_value());
  EXPECT_EQ(old->busy, 6u);
  EXPECT_FALSE(parseProcStatCpu("cpu 1 2 3\n").has_value());
  EXPECT_FALSE(parseProcStatCpu("cpu0 1 2 3 4\n").has_value());
}

TEST(TelemetryParsers, NetDevWithoutSpaceAfterColonAndLoopbackOnly) {
  // Large counters run into the colon: "eth0:123".
  auto interfaces = parseNetDev("h|\nh|\n  eth0:123 0 0 0 0 0 0 0 456 0 0 0 0 0 0 0\n");
  ASSERT_TRUE(interfaces.has_value());
  ASSERT_EQ(interfaces->count("eth0"), 1u);
  EXPECT_EQ(interfaces->at("eth0").rx, 123u);
  EXPECT_EQ(interfaces->at("eth0").tx, 456u);
  auto loopbackOnly = parseNetDev("h|\nh|\n    lo: 1 0 0 0 0 0 0 0 1 0 0 0 0 0 0 0\n");
  ASSERT_TRUE(loopbackOnly.has_value());
  EXPECT_TRUE(loopbackOnly->empty());
  EXPECT_FALSE(parseNetDev("h|\nh|\n  eth0: 1 2 3\n").has_value());
}

}  // namespace
}  // namespace ringside::agent
