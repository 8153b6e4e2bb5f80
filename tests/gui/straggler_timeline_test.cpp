// StragglerTimeline (straggler_timeline.h) paints the verdict over the run: a band per span in the
// colour of its rank (grey for none) at the x of its steps; a hover says the steps, the rank, its
// node, the stage and the cost. The per-rank view shows the strip only once a verdict exists.
#include <QImage>
#include <QLocale>
#include <QtTest>

#include "ringside/gui/straggler_history.h"
#include "ringside/gui/widgets/rank_view.h"
#include "ringside/gui/widgets/straggler_timeline.h"

using namespace ringside::gui;

namespace {

// None for steps 0-400, rank 1 (compute, up to 14 %) for 400-800, none again until 1000.
std::vector<StragglerSpan> spans() {
  return {StragglerSpan{0, 400, -1, 0, 8, std::nullopt}, StragglerSpan{400, 800, 1, 2, 8, 0.14},
          StragglerSpan{800, 1000, -1, 0, 4, std::nullopt}};
}

// The first x on row `y` of `image` whose colour is `color` (-1: none).
int firstX(const QImage& image, int y, const QColor& color) {
  for (int x = 0; x < image.width(); ++x) {
    if (image.pixelColor(x, y).rgb() == color.rgb()) return x;
  }
  return -1;
}

}  // namespace

class StragglerTimelineTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { QLocale::setDefault(QLocale::c()); }

  void bandsAreWhereTheirStepsAre() {
    StragglerTimeline timeline;
    timeline.resize(800, timeline.sizeHint().height());
    timeline.setSpans(spans(), {{1, QStringLiteral("node-2")}});
    const QImage image = timeline.grab().toImage();
    const int y = 4;  // inside the band, above any label text
    const int noneStart = firstX(image, y, StragglerTimeline::colorOfRank(-1));
    const int rankStart = firstX(image, y, StragglerTimeline::colorOfRank(1));
    QVERIFY(noneStart >= 0);
    QVERIFY(rankStart > noneStart);
    // Rank 1's band starts at 40 % of the band (step 400 of 0-1000), give or take a pixel.
    const int bandWidth = 800 - noneStart - 2;
    QVERIFY2(std::abs(rankStart - (noneStart + 0.4 * bandWidth)) <= 2,
             qPrintable(QStringLiteral("%1 %2").arg(noneStart).arg(rankStart)));
    QCOMPARE(StragglerTimeline::colorOfRank(-1), QColor(0xe4, 0xe6, 0xe8));
    QVERIFY(StragglerTimeline::colorOfRank(0) != StragglerTimeline::colorOfRank(1));

    const auto hovered = timeline.spanAt({rankStart + 5, y});
    QVERIFY(hovered);
    QCOMPARE(*hovered, size_t{1});
    QCOMPARE(timeline.toolTipAt({rankStart + 5, y}),
             QStringLiteral("steps 400 to 800: rank 1 on node-2 held the group back (compute), up "
                            "to 14 % of the step time"));
    QCOMPARE(timeline.toolTipAt({noneStart + 2, y}),
             QStringLiteral("steps 0 to 400: no straggler"));
    QVERIFY(timeline.toolTipAt({rankStart + 5, timeline.height() - 1}).isEmpty());
    // A span whose rank waited for a CPU another process had (stage 3).
    auto cpu = spans();
    cpu[1].stage = 3;
    timeline.setSpans(cpu, {{1, QStringLiteral("node-2")}});
    QCOMPARE(timeline.toolTipAt({rankStart + 5, y}),
             QStringLiteral("steps 400 to 800: rank 1 on node-2 held the group back (waiting for a "
                            "CPU), up to 14 % of the step time"));
  }

  void rankViewShowsTheStripOnceThereIsAVerdict() {
    RankView view;
    view.resize(900, 500);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QVERIFY(!view.stragglerTimeline()->isVisible());
    view.setStragglerHistory(spans());
    QVERIFY(view.stragglerTimeline()->isVisible());
    QCOMPARE(view.stragglerTimeline()->spans().size(), size_t{3});
    view.setStragglerHistory({});
    QVERIFY(!view.stragglerTimeline()->isVisible());
  }

  // A finished run opened from History gets its ranks first and the verdict after: the sentence
  // must then say the verdict, and follow a newer one at the same rank (its cost changes).
  void verdictAfterTheRanksIsTheSentence() {
    RankView view;
    view.setRanks(
        {{0, QStringLiteral("node-a"), 10.0, 4.0}, {1, QStringLiteral("node-b"), 10.2, 0.1}});
    QVERIFY(view.summaryText().startsWith(QStringLiteral("slowest: rank 1")));
    StragglerView verdict;
    verdict.step = 100;
    verdict.rank = 1;
    verdict.stage = 2;
    verdict.stageMs = 14.0;
    verdict.medianMs = 10.0;
    verdict.othersWaitMs = 4.0;
    verdict.costShare = 0.25;
    verdict.confidence = 0.9;
    view.setStraggler(verdict);
    QVERIFY2(view.summaryText().startsWith(QStringLiteral("straggler: rank 1 on node-b")),
             qPrintable(view.summaryText()));
    QVERIFY2(view.summaryText().contains(QStringLiteral("25 %")), qPrintable(view.summaryText()));
    verdict.costShare = 0.31;  // the same rank and step, a newer figure
    view.setStraggler(verdict);
    QVERIFY2(view.summaryText().contains(QStringLiteral("31 %")), qPrintable(view.summaryText()));
    view.setStraggler(std::nullopt);
    QVERIFY(view.summaryText().startsWith(QStringLiteral("slowest: rank 1")));
  }
};

QTEST_MAIN(StragglerTimelineTest)
#include "straggler_timeline_test.moc"
