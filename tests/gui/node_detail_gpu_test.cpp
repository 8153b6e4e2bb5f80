// NodeDetailPane shows every GPU value (utilization, memory used/total, power, temperature, SM
// clock, PCIe and NVLink throughput) as a chart and as the latest reading, "N/A" where the GPU
// does not report it. With RINGSIDE_TEST_PNG_DIR set it saves node_detail_gpu_telemetry.png.
#include <QtTest/QtTest>

#include <cmath>

#include "gui_test_support.h"
#include "ringside/gui/widgets/node_detail_pane.h"

using namespace ringside;
using namespace ringside::gui;
using ringside::gui::testing::ControllerInTempDir;

namespace {

// The fake NVML's two GPUs (tests/agent/fake_nvml.c) with values moving over time; GPU 1 has no
// power, SM clock or NVLink readings.
v1::NodeTelemetry fakeNvmlTelemetry(int i) {
  v1::NodeTelemetry sample;
  sample.set_wall_time(1.7e9 + i);
  sample.set_cpu_pct(30 + 10 * std::sin(i / 15.0));
  sample.set_mem_used_mib(12000);
  sample.set_net_rx_mbps(20);
  sample.set_net_tx_mbps(5);
  v1::GpuTelemetry* gpu0 = sample.add_gpus();
  gpu0->set_index(0);
  gpu0->set_util_pct(80 + 7 * std::sin(i / 8.0));
  gpu0->set_mem_used_mib(1024 + 20 * i);
  gpu0->set_mem_total_mib(81559);
  gpu0->set_power_w(280 + 30 * std::sin(i / 10.0));
  gpu0->set_temp_c(60 + i / 20.0);
  gpu0->set_sm_clock_mhz(1980 - (i % 60 > 45 ? 200 : 0));
  gpu0->set_pcie_rx_mbps(25.6 + 5 * std::sin(i / 6.0));
  gpu0->set_pcie_tx_mbps(12.8);
  gpu0->set_nvlink_rx_mbps(1.024 * (1 + i % 10));
  gpu0->set_nvlink_tx_mbps(0.512 * (1 + i % 10));
  v1::GpuTelemetry* gpu1 = sample.add_gpus();
  gpu1->set_index(1);
  gpu1->set_util_pct(3);
  gpu1->set_mem_used_mib(512);
  gpu1->set_mem_total_mib(81559);
  gpu1->set_temp_c(35);
  gpu1->set_pcie_rx_mbps(0);
  gpu1->set_pcie_tx_mbps(0);
  return sample;
}

}  // namespace

class NodeDetailGpuTest : public QObject {
  Q_OBJECT

 private slots:
  void readingShowsEveryFieldAndNaWhereAbsent() {
    const v1::NodeTelemetry sample = fakeNvmlTelemetry(0);
    const QString full = NodeDetailPane::gpuReadingHtml(sample.gpus(0));
    QVERIFY2(full.contains("SM clock 1980 MHz") || full.contains(QString("SM clock 1,980 MHz")),
             qPrintable(full));
    QVERIFY2(full.contains("power 280.0 W"), qPrintable(full));
    QVERIFY2(!full.contains("N/A"), qPrintable(full));
    const QString partial = NodeDetailPane::gpuReadingHtml(sample.gpus(1));
    QVERIFY2(partial.contains("power N/A W"), qPrintable(partial));
    QVERIFY2(partial.contains("SM clock N/A MHz"), qPrintable(partial));
    QVERIFY2(partial.contains("NVLink rx N/A, tx N/A MB/s"), qPrintable(partial));
    QVERIFY2(partial.contains("PCIe rx 0.0, tx 0.0 MB/s"), qPrintable(partial));
  }

  void chartsHaveALinePerGpuAndGapsForAbsentValues() {
    ControllerInTempDir fixture;
    Controller& controller = fixture.controller;
    QVERIFY(controller.start().isOk());
    NodeDetailPane pane(controller);
    pane.setNodeId(QStringLiteral("n-1"));
    for (int i = 0; i < 120; ++i) {
      emit controller.telemetryReceived(QStringLiteral("n-1"), fakeNvmlTelemetry(i));
    }
    QTRY_COMPARE(pane.chartPointCounts().value(QStringLiteral("GPU power (W)")),
                 (QList<int>{120, 0}));
    const auto counts = pane.chartPointCounts();
    QCOMPARE(counts.value(QStringLiteral("GPU temperature (°C)")), (QList<int>{120, 120}));
    QCOMPARE(counts.value(QStringLiteral("GPU SM clock (MHz)")), (QList<int>{120, 0}));
    QCOMPARE(counts.value(QStringLiteral("GPU PCIe (MB/s)")), (QList<int>{120, 120, 120, 120}));
    QCOMPARE(counts.value(QStringLiteral("GPU NVLink (MB/s)")), (QList<int>{120, 120, 0, 0}));
    if (const QString pngDir = qEnvironmentVariable("RINGSIDE_TEST_PNG_DIR"); !pngDir.isEmpty()) {
      pane.resize(1400, 900);
      pane.show();
      QTest::qWait(600);
      QVERIFY(pane.grab().save(pngDir + QStringLiteral("/node_detail_gpu_telemetry.png")));
    }
  }
};

QTEST_MAIN(NodeDetailGpuTest)
#include "node_detail_gpu_test.moc"
