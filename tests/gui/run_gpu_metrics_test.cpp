// GPU telemetry stored with a run: which node's GPUs belong to a run (runGpuSamples, with the
// node's first rank), and MetricsStore::ingestTelemetry keeping them with a running run only, at
// its last step, without moving its last_seq, so History reads them after the run ended.
#include <QtTest/QtTest>

#include <QTemporaryDir>

#include "ringside/gui/metrics_store.h"
#include "ringside/gui/run_gpu_metrics.h"

using namespace ringside;
using namespace ringside::gui;

namespace {

template <typename T>
T await(QFuture<T> future) {
  future.waitForFinished();
  return future.result();
}

v1::HostSlots host(const char* name, uint32_t ranks, std::initializer_list<uint32_t> gpus) {
  v1::HostSlots entry;
  entry.set_host(name);
  entry.set_ranks(ranks);
  for (uint32_t gpu : gpus) entry.add_gpus(gpu);
  return entry;
}

// Two GPUs as the fake NVML reports them: GPU 1 without power, SM clock and NVLink.
v1::NodeTelemetry telemetry(double wallTime) {
  v1::NodeTelemetry t;
  t.set_wall_time(wallTime);
  v1::GpuTelemetry* gpu0 = t.add_gpus();
  gpu0->set_index(0);
  gpu0->set_util_pct(87);
  gpu0->set_mem_used_mib(1024);
  gpu0->set_mem_total_mib(81559);
  gpu0->set_power_w(312.5);
  gpu0->set_temp_c(71);
  gpu0->set_sm_clock_mhz(1980);
  gpu0->set_pcie_rx_mbps(25.6);
  gpu0->set_pcie_tx_mbps(12.8);
  gpu0->set_nvlink_rx_mbps(1.024);
  gpu0->set_nvlink_tx_mbps(0.512);
  v1::GpuTelemetry* gpu1 = t.add_gpus();
  gpu1->set_index(1);
  gpu1->set_util_pct(3);
  gpu1->set_mem_used_mib(512);
  gpu1->set_temp_c(35);
  gpu1->set_pcie_rx_mbps(0);
  gpu1->set_pcie_tx_mbps(0);
  return t;
}

QStringList names(const std::vector<v1::MetricSample>& samples) {
  QStringList result;
  for (const auto& s : samples) result << QString::fromStdString(s.name());
  return result;
}

}  // namespace

class RunGpuMetricsTest : public QObject {
  Q_OBJECT

 private slots:
  void nodeFirstRankFollowsThePlacementOrder() {
    const std::vector<v1::HostSlots> placement = {host("node-1", 2, {0, 1}),
                                                  host("node-2", 2, {2, 3})};
    QCOMPARE(nodeFirstRank(placement, QStringLiteral("node-1"), true), std::optional<int>(0));
    QCOMPARE(nodeFirstRank(placement, QStringLiteral("NODE-2"), false), std::optional<int>(2));
    QCOMPARE(nodeFirstRank(placement, QStringLiteral("node-3"), false), std::nullopt);
    QCOMPARE(nodeFirstRank({}, QStringLiteral("any"), true), std::optional<int>(0));
    QCOMPARE(nodeFirstRank({}, QStringLiteral("any"), false), std::nullopt);
  }

  void onlyTheRunsGpusBecomeSamplesAndAbsentValuesNone() {
    // The run holds GPU 1 of node-1 only.
    const std::vector<v1::HostSlots> placement = {host("node-1", 1, {1})};
    const auto samples = runGpuSamples(placement, QStringLiteral("node-1"), true, telemetry(10));
    QCOMPARE(names(samples), (QStringList{"gpu1/util_pct", "gpu1/mem_used_MiB", "gpu1/temp_C",
                                          "gpu1/pcie_rx_MBps", "gpu1/pcie_tx_MBps"}));
    for (const auto& s : samples) {
      QCOMPARE(s.rank(), 0);
      QCOMPARE(s.wall_time(), 10.0);
    }
    // Every field of a GPU that reports all of them.
    const auto all =
        runGpuSamples({host("node-1", 1, {0})}, QStringLiteral("node-1"), true, telemetry(10));
    QCOMPARE(names(all),
             (QStringList{"gpu0/util_pct", "gpu0/mem_used_MiB", "gpu0/power_W", "gpu0/temp_C",
                          "gpu0/sm_clock_MHz", "gpu0/pcie_rx_MBps", "gpu0/pcie_tx_MBps",
                          "gpu0/nvlink_rx_MBps", "gpu0/nvlink_tx_MBps"}));
    QCOMPARE(all[2].value(), 312.5);
    // A CPU run and a node outside the run give nothing.
    QVERIFY(runGpuSamples({host("node-1", 2, {})}, "node-1", true, telemetry(10)).empty());
    QVERIFY(runGpuSamples(placement, "node-9", false, telemetry(10)).empty());
  }

  void storeKeepsGpuTelemetryOfRunningRunsForHistory() {
    QTemporaryDir dir;
    MetricsStore store(dir.filePath("ringside.sqlite"));
    QVERIFY(await(store.open()).isOk());
    // run-a: 4 ranks, two on node-1 (GPUs 0, 1) and two on node-2 (GPUs 0, 1); owned by n1.
    v1::RunInfo run;
    run.set_run_id("run-a");
    run.set_state(v1::RUNNING);
    run.set_world_size(4);
    *run.add_placement() = host("node-1", 2, {0, 1});
    *run.add_placement() = host("node-2", 2, {0, 1});
    QVERIFY(await(store.upsertRun("n1", run)).isOk());
    IngestBatch batch;
    batch.runId = "run-a";
    v1::MetricSample loss;
    loss.set_seq(7);
    loss.set_step(120);
    loss.set_epoch(1);
    loss.set_rank(-1);
    loss.set_name("train/loss");
    loss.set_value(0.5);
    batch.samples.push_back(loss);
    QVERIFY(await(store.ingest(batch)).isOk());

    auto stored = await(store.ingestTelemetry("n1", "node-1", telemetry(1000.0)));
    QVERIFY(stored.isOk());
    QCOMPARE(*stored, QStringList{"run-a"});
    QVERIFY(await(store.ingestTelemetry("n2", "node-2", telemetry(1000.5))).isOk());
    QVERIFY(await(store.ingestTelemetry("n1", "node-1", telemetry(1001.0))).isOk());
    // A node that is not of the run adds nothing.
    auto other = await(store.ingestTelemetry("n3", "node-3", telemetry(1001.0)));
    QVERIFY(other.isOk());
    QVERIFY(other->isEmpty());

    QCOMPARE(*await(store.lastSeq("run-a")), uint64_t{7});  // catch-up is not disturbed
    auto power = await(store.series("run-a", "gpu0/power_W", 0, SeriesX::kWallTime));
    QVERIFY(power.isOk());
    QCOMPARE(power->size(), size_t{2});
    QCOMPARE((*power)[0].x, 1000.0);
    QCOMPARE((*power)[1].x, 1001.0);
    QCOMPARE((*power)[0].y, 312.5);
    auto ranks = await(store.metricRanks("run-a", "gpu0/util_pct"));
    QCOMPARE(*ranks, (std::vector<int>{0, 2}));  // node-1 is rank 0, node-2 rank 2
    auto atStep = await(store.series("run-a", "gpu1/temp_C", 2, SeriesX::kStep));
    QCOMPARE(atStep->size(), size_t{1});
    QCOMPARE((*atStep)[0].x, 120.0);  // the run's last step when the telemetry came
    auto metricNames = await(store.metricNames("run-a"));
    QVERIFY(metricNames->contains("gpu0/nvlink_rx_MBps"));
    QVERIFY(!metricNames->contains("gpu1/power_W"));  // never read: no series, not zeros

    // After the run ended, telemetry is no longer stored; what was stored stays.
    run.set_state(v1::COMPLETED);
    QVERIFY(await(store.upsertRun("n1", run)).isOk());
    auto after = await(store.ingestTelemetry("n1", "node-1", telemetry(1002.0)));
    QVERIFY(after->isEmpty());
    QCOMPARE(await(store.series("run-a", "gpu0/power_W", 0, SeriesX::kWallTime))->size(),
             size_t{2});
  }

  // The Controller hands live telemetry of several nodes to the store in one call (one
  // transaction): the rows are those of one call per message, each run named once, and a
  // message of a node outside every run adds nothing.
  void groupedTelemetryStoresWhatOneCallPerMessageStores() {
    auto stored = [](bool grouped) {
      QTemporaryDir dir;
      MetricsStore store(dir.filePath("ringside.sqlite"));
      if (!await(store.open()).isOk()) return std::make_pair(QStringList{"open failed"}, 0);
      v1::RunInfo run;
      run.set_run_id("run-g");
      run.set_state(v1::RUNNING);
      run.set_world_size(4);
      *run.add_placement() = host("node-1", 2, {0, 1});
      *run.add_placement() = host("node-2", 2, {0, 1});
      if (!await(store.upsertRun("n1", run)).isOk()) return std::make_pair(QStringList{}, 0);
      const std::vector<TelemetryReading> readings = {{"n1", "node-1", telemetry(1000.0)},
                                                      {"n2", "node-2", telemetry(1000.5)},
                                                      {"n3", "node-3", telemetry(1000.7)},
                                                      {"n1", "node-1", telemetry(1001.0)}};
      QStringList runs;
      if (grouped) {
        const Result<QStringList> all = await(store.ingestTelemetry(readings));
        if (!all.isOk()) return std::make_pair(QStringList{"ingest failed"}, 0);
        runs = *all;
      } else {
        for (const TelemetryReading& r : readings) {
          const Result<QStringList> one =
              await(store.ingestTelemetry(r.nodeId, r.hostName, r.telemetry));
          if (!one.isOk()) return std::make_pair(QStringList{"ingest failed"}, 0);
          for (const QString& id : *one) {
            if (!runs.contains(id)) runs.append(id);
          }
        }
      }
      int rows = 0;
      for (const char* name : {"gpu0/power_W", "gpu0/util_pct", "gpu1/temp_C"}) {
        for (int rank : {0, 1, 2, 3}) {
          rows += static_cast<int>(
              await(store.series("run-g", name, rank, SeriesX::kWallTime))->size());
        }
      }
      return std::make_pair(runs, rows);
    };
    const auto one = stored(false);
    const auto grouped = stored(true);
    QCOMPARE(one.first, QStringList{"run-g"});
    QCOMPARE(grouped.first, one.first);
    // Each of the three fields at node-1's first rank (0) twice and node-2's (2) once.
    QCOMPARE(one.second, 9);
    QCOMPARE(grouped.second, one.second);
  }

  // DESIGN decision 12: readings fetched from a node's telemetry journal join what was stored
  // live, each reading once, and the windows still to fetch follow what the store holds.
  void fetchedTelemetryIsStoredOnceAndTheWindowsFollowWhatIsHeld() {
    QTemporaryDir dir;
    MetricsStore store(dir.filePath("ringside.sqlite"));
    QVERIFY(await(store.open()).isOk());
    // run-b: rank 0 on node-1 (GPU 0), rank 1 on node-2 (GPU 1); owned by n1.
    v1::RunInfo run;
    run.set_run_id("run-b");
    run.set_state(v1::RUNNING);
    run.set_world_size(2);
    run.set_start_time(1000);
    *run.add_placement() = host("node-1", 1, {0});
    *run.add_placement() = host("node-2", 1, {1});
    QVERIFY(await(store.upsertRun("n1", run)).isOk());
    auto windows = [&](const char* nodeId, const char* hostName) {
      auto listed = await(store.telemetryWindows(nodeId, hostName));
      std::vector<std::pair<double, double>> spans;
      for (const TelemetryWindow& window : listed.isOk() ? *listed : std::vector<TelemetryWindow>{})
        spans.emplace_back(window.from, window.to);
      return spans;
    };
    using Spans = std::vector<std::pair<double, double>>;
    QCOMPARE(windows("n1", "node-1"), (Spans{{1000, 0}}));  // running: no upper end
    QCOMPARE(windows("n2", "node-2"), (Spans{{1000, 0}}));
    QCOMPARE(windows("n3", "node-3"), Spans{});  // no rank there

    // One reading stored live, then the window fetched with it: stored once.
    QVERIFY(await(store.ingestTelemetry("n1", "node-1", telemetry(1001.0))).isOk());
    auto fetched = await(store.ingestFetchedTelemetry(
        "n1", "node-1", "run-b", {telemetry(1000.0), telemetry(1001.0), telemetry(1002.0)},
        1002.0));
    QVERIFY(fetched.isOk());
    QCOMPARE(*fetched, int64_t{2 * 9});  // two new readings of GPU 0, 9 values each
    auto power = await(store.series("run-b", "gpu0/power_W", 0, SeriesX::kWallTime));
    QCOMPARE(power->size(), size_t{3});
    QCOMPARE(*await(store.metricRanks("run-b", "gpu0/util_pct")), std::vector<int>{0});
    QCOMPARE(windows("n1", "node-1"), (Spans{{1002, 0}}));  // from where the fetch got to
    // The same page again stores nothing.
    fetched = await(store.ingestFetchedTelemetry("n1", "node-1", "run-b",
                                                 {telemetry(1001.0), telemetry(1002.0)}, 1002.0));
    QCOMPARE(*fetched, int64_t{0});

    // Ended: the windows end at its end; fetched to it, the run is complete from that node.
    run.set_state(v1::COMPLETED);
    run.set_end_time(1005);
    QVERIFY(await(store.upsertRun("n1", run)).isOk());
    QCOMPARE(windows("n1", "node-1"), (Spans{{1002, 1005}}));
    QVERIFY(
        await(store.ingestFetchedTelemetry("n1", "node-1", "run-b", {telemetry(1004.0)}, 1005.0))
            .isOk());
    QCOMPARE(windows("n1", "node-1"), Spans{});
    // node-2's GPU 1 at its first rank, 1.
    QCOMPARE(windows("n2", "node-2"), (Spans{{1000, 1005}}));
    fetched =
        await(store.ingestFetchedTelemetry("n2", "node-2", "run-b", {telemetry(1003.0)}, 1005.0));
    QCOMPARE(*fetched, int64_t{5});  // GPU 1: utilization, memory, temperature, PCIe rx, tx
    QCOMPARE(*await(store.metricRanks("run-b", "gpu1/temp_C")), std::vector<int>{1});
    QCOMPARE(windows("n2", "node-2"), Spans{});
    // A run not stored is NotFound.
    auto unknown = await(store.ingestFetchedTelemetry("n1", "node-1", "nope", {}, std::nullopt));
    QCOMPARE(unknown.status().code(), Status::Code::kNotFound);
  }
};

QTEST_MAIN(RunGpuMetricsTest)
#include "run_gpu_metrics_test.moc"
