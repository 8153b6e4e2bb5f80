// stragglerText (straggler_text.h): the agent's verdict in the dashboard's words; and the verdicts
// read back from their stored series (straggler_history.h): the latest one and the spans of the
// run's timeline.
#include <QtTest>

#include "ringside/gui/straggler_history.h"
#include "ringside/gui/straggler_text.h"

using namespace ringside::gui;

namespace {

StragglerView view(int64_t step, int rank, int stage, double stageMs, double medianMs,
                   double othersWaitMs, std::optional<double> cost = std::nullopt,
                   std::optional<double> confidence = std::nullopt) {
  StragglerView v;
  v.step = step;
  v.rank = rank;
  v.stage = stage;
  v.stageMs = stageMs;
  v.medianMs = medianMs;
  v.othersWaitMs = othersWaitMs;
  v.costShare = cost;
  v.confidence = confidence;
  return v;
}

// Verdicts at the given steps: rank, stage and cost per verdict (the other series follow).
StragglerSeries verdicts(const std::vector<std::tuple<double, int, double>>& points) {
  StragglerSeries series;
  for (const auto& [step, rank, cost] : points) {
    series.series[0].push_back({step, double(rank)});
    series.series[1].push_back({step, rank < 0 ? 0.0 : 2.0});
    series.series[2].push_back({step, rank < 0 ? 0.0 : 3.0});
    series.series[3].push_back({step, rank < 0 ? 0.0 : 1.0});
    series.series[4].push_back({step, rank < 0 ? 0.0 : 2.0});
    series.series[5].push_back({step, cost});
    series.series[6].push_back({step, 0.9});
  }
  return series;
}

}  // namespace

class StragglerTextTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { QLocale::setDefault(QLocale::c()); }

  void namesRankNodeStageTheWaitItsCostAndConfidence() {
    QCOMPARE(stragglerText(view(1750, 3, 2, 14.1, 9.8, 4.2, 0.123, 0.9), QStringLiteral("node-2")),
             QStringLiteral("straggler: rank 3 on node-2, compute: 14.10 ms vs median 9.80 ms; the "
                            "other ranks wait 4.20 ms for it: 12 % of the step time (confidence "
                            "90 %, step 1750)"));
    QVERIFY(stragglerText(view(12, 0, 1, 3.0, 0.5, 2.4, 0.5, 1.0), QString())
                .startsWith(QStringLiteral("straggler: rank 0, data:")));
    // Stage 3: another process had its CPU; the times are its run-queue delay per step.
    QCOMPARE(stragglerText(view(900, 1, 3, 0.61, 0.01, 2.5, 0.32, 1.0), QStringLiteral("node-b")),
             QStringLiteral("straggler: rank 1 on node-b, waiting for a CPU: 0.61 ms vs median "
                            "0.01 ms; the other ranks wait 2.50 ms for it: 32 % of the step time "
                            "(confidence 100 %, step 900)"));
  }

  void aVerdictRecordedWithoutCostLeavesItOut() {
    QCOMPARE(stragglerText(view(1750, 3, 2, 14.1, 9.8, 4.2), QStringLiteral("node-2")),
             QStringLiteral("straggler: rank 3 on node-2, compute: 14.10 ms vs median 9.80 ms; the "
                            "other ranks wait 4.20 ms for it (step 1750)"));
    QCOMPARE(stragglerText(view(40, -1, 0, 0, 0, 0), QStringLiteral("vm")),
             QStringLiteral("straggler: none at step 40: no rank's data or compute time keeps the "
                            "others waiting"));
  }

  void noneSaysSoWithItsConfidence() {
    QCOMPARE(stragglerText(view(40, -1, 0, 0, 0, 0, 0.0, 1.0), QStringLiteral("vm")),
             QStringLiteral("straggler: none (confidence 100 %, step 40): no rank's data or "
                            "compute time keeps the others waiting"));
  }

  void latestVerdictIsTheLastStepsSamples() {
    StragglerSeries series = verdicts({{10, -1, 0.0}, {20, 1, 0.15}});
    auto latest = latestStraggler(series);
    QVERIFY(latest);
    QCOMPARE(latest->step, int64_t{20});
    QCOMPARE(latest->rank, 1);
    QCOMPARE(latest->stage, 2);
    QCOMPARE(latest->costShare.value_or(-1), 0.15);
    QCOMPARE(latest->confidence.value_or(-1), 0.9);
    // A run recorded before cost and confidence existed.
    series.series[5].clear();
    series.series[6].clear();
    latest = latestStraggler(series);
    QVERIFY(latest);
    QVERIFY(!latest->costShare);
    QVERIFY(!latest->confidence);
    // The last verdict's samples not all stored yet (stage_ms missing at step 20): none shown.
    series.series[2].pop_back();
    QVERIFY(!latestStraggler(series));
    QVERIFY(!latestStraggler(StragglerSeries{}));
  }

  void spansGroupVerdictsOfTheSameRank() {
    const auto spans = stragglerSpans(verdicts({{10, -1, 0.0},
                                                {20, -1, 0.0},
                                                {30, 1, 0.10},
                                                {40, 1, 0.18},
                                                {50, 1, 0.12},
                                                {60, -1, 0.0},
                                                {70, 0, 0.05}}));
    QCOMPARE(spans.size(), size_t{4});
    QCOMPARE(spans[0].rank, -1);
    QCOMPARE(spans[0].firstStep, int64_t{10});
    QCOMPARE(spans[0].endStep, int64_t{30});
    QCOMPARE(spans[0].verdicts, 2);
    QCOMPARE(spans[1].rank, 1);
    QCOMPARE(spans[1].firstStep, int64_t{30});
    QCOMPARE(spans[1].endStep, int64_t{60});
    QCOMPARE(spans[1].stage, 2);
    QCOMPARE(spans[1].maxCostShare.value_or(-1), 0.18);
    QCOMPARE(spans[1].verdicts, 3);
    QCOMPARE(spans[3].rank, 0);
    QCOMPARE(spans[3].firstStep, int64_t{70});
    QCOMPARE(spans[3].endStep, int64_t{70});
    QVERIFY(stragglerSpans(StragglerSeries{}).empty());
  }
};

QTEST_GUILESS_MAIN(StragglerTextTest)
#include "straggler_text_test.moc"
