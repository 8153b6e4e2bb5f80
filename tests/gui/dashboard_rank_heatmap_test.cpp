// A run's dashboard fills its rank × step heatmap from the store: a finished
// 3-rank run whose rank 2 computes 50 % longer from step 500 on shows every rank with its node and
// rank 2's late windows hot; samples that land later extend it (live).
#include <QtTest>

#include <cmath>

#include "gui_test_support.h"
#include "ringside/common/metric_names.h"
#include "ringside/gui/controller.h"
#include "ringside/gui/widgets/dashboard_tab.h"
#include "ringside/gui/widgets/rank_heatmap_view.h"
#include "ringside/gui/widgets/rank_view.h"

using namespace ringside;
using namespace ringside::gui;

using ringside::gui::testing::ControllerInTempDir;

namespace {

const QString kRunId = QStringLiteral("run-heatmap");
const QString kNodeId = QStringLiteral("node-a");

v1::MetricSample sample(uint64_t seq, int64_t step, int rank, const char* name, double value) {
  v1::MetricSample s;
  s.set_seq(seq);
  s.set_step(step);
  s.set_epoch(0);
  s.set_wall_time(1'700'000'000.0 + 0.01 * static_cast<double>(step));
  s.set_rank(rank);
  s.set_name(name);
  s.set_value(value);
  return s;
}

// Per-rank timings of steps [firstStep, lastStep] every 10 steps, seqs from *seq on; with
// `withState`, the run's record too (3 ranks on one node, in `state`).
IngestBatch timings(uint64_t* seq, int64_t firstStep, int64_t lastStep, bool withState,
                    v1::RunState state) {
  IngestBatch batch;
  batch.runId = kRunId;
  batch.nodeId = kNodeId;
  if (withState) {
    v1::RunStateEvent event;
    event.set_seq((*seq)++);
    v1::RunInfo* run = event.mutable_run();
    run->set_run_id(kRunId.toStdString());
    run->mutable_spec()->set_name("heatmap run");
    run->mutable_spec()->set_ranks_per_node(3);
    run->mutable_spec()->mutable_trainer()->mutable_config()->set_epochs(1);
    run->set_state(state);
    run->set_start_time(1'700'000'000.0);
    run->set_world_size(3);
    batch.states.push_back(event);
  }
  for (int64_t step = firstStep; step <= lastStep; step += 10) {
    for (int rank = 0; rank < 3; ++rank) {
      const bool slow = rank == 2 && step >= 500;
      const double compute = slow ? 15.0 : 10.0;
      const double wait = step >= 500 && !slow ? 5.0 : 0.2;
      batch.samples.push_back(sample((*seq)++, step, rank, metric::kComputeMs, compute));
      batch.samples.push_back(sample((*seq)++, step, rank, metric::kExposedCommMs, wait));
      batch.samples.push_back(sample((*seq)++, step, rank, metric::kStepMs, compute + wait));
    }
  }
  return batch;
}

}  // namespace

class DashboardRankHeatmapTest : public QObject {
  Q_OBJECT

 private slots:
  void theHeatmapShowsAStragglerOfAFinishedRunAndGrowsLive() {
    ControllerInTempDir fixture;
    Controller& controller = fixture.controller;
    QVERIFY(controller.start().isOk());
    uint64_t seq = 1;
    auto ingested = controller.store().ingest(timings(&seq, 10, 1000, true, v1::RUNNING));
    ingested.waitForFinished();
    QVERIFY(ingested.result().isOk());

    DashboardTab tab(controller, kRunId);
    tab.resize(1200, 900);
    emit controller.runDataChanged(kRunId);
    RankHeatmapView* view = tab.rankView()->heatmapView();
    QTRY_COMPARE(view->heatmap().rows.size(), size_t{3});
    const RankHeatmap first = view->heatmap();
    QCOMPARE(first.windowSteps, int64_t{10});
    QCOMPARE(first.windows.back().firstStep, int64_t{1000});
    for (size_t row = 0; row < 3; ++row) {
      QCOMPARE(first.rows[row].rank, static_cast<int>(row));
      QCOMPARE(first.rows[row].node, kNodeId);
    }
    // Rank 2 from step 500 on: 15 ms against a median of 10.
    const size_t late = first.windows.size() - 1;
    QCOMPARE(*first.excess(2, late, HeatmapLayer::kCompute), 0.5);
    QCOMPARE(*first.excess(2, 0, HeatmapLayer::kCompute), 0.0);
    QVERIFY(*first.excess(2, late, HeatmapLayer::kWait) < -0.4);

    // Later samples extend it, and the finished run shows the same.
    auto more = controller.store().ingest(timings(&seq, 1010, 3000, true, v1::COMPLETED));
    more.waitForFinished();
    QVERIFY(more.result().isOk());
    emit controller.runDataChanged(kRunId);
    QTRY_VERIFY_WITH_TIMEOUT(
        !view->heatmap().empty() && view->heatmap().windows.back().lastStep >= 3000, 10000);
    const RankHeatmap grown = view->heatmap();
    QCOMPARE(grown.windowSteps, int64_t{50});  // steps 10..3,000 take 151 windows of 20
    QCOMPARE(*grown.excess(2, grown.windows.size() - 1, HeatmapLayer::kCompute), 0.5);
  }
};

QTEST_MAIN(DashboardRankHeatmapTest)
#include "dashboard_rank_heatmap_test.moc"
