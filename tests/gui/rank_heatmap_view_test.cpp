// RankHeatmapView paints what buildRankHeatmap() returns: a straggler's cells are red in the
// compute layer and blue in the wait layer (the box above switches), the others white; a hover
// names the rank, its node, the window's steps and the values against the median; an empty
// heatmap shows a placeholder and no tooltip.
#include <QComboBox>
#include <QImage>
#include <QLocale>
#include <QtTest>

#include "ringside/gui/rank_heatmap.h"
#include "ringside/gui/widgets/rank_heatmap_view.h"

using namespace ringside::gui;

namespace {

// 4 ranks on 2 nodes over 10,000 steps logged every 10; rank 3 computes 50 % longer from step
// 5,000 on and the others wait 5 ms a step for it.
RankHeatmap stragglerFrom5000() {
  std::vector<RankTimingSeries> ranks;
  for (int rank = 0; rank < 4; ++rank) {
    RankTimingSeries series;
    series.rank = rank;
    series.node = rank < 2 ? QStringLiteral("node-a") : QStringLiteral("node-b");
    for (int64_t step = 10; step <= 10'000; step += 10) {
      const bool late = step >= 5'000;
      const auto x = static_cast<double>(step);
      series.computeMs.push_back({x, rank == 3 && late ? 15.0 : 10.0});
      series.waitMs.push_back({x, late && rank != 3 ? 5.0 : 0.2});
    }
    ranks.push_back(std::move(series));
  }
  return buildRankHeatmap(ranks);
}

// A point of the canvas inside cell (row, window); (-1, -1) when none is found.
QPoint pointIn(const RankHeatmapView& view, size_t row, size_t window) {
  const QWidget* canvas = view.canvas();
  for (int y = 0; y < canvas->height(); ++y) {
    for (int x = 0; x < canvas->width(); ++x) {
      const auto cell = view.cellAt({x, y});
      if (cell && cell->row == row && cell->window == window) {
        // The middle of the cell: move on until it ends.
        int right = x;
        while (right + 1 < canvas->width()) {
          const auto next = view.cellAt({right + 1, y});
          if (!next || next->window != window) break;
          ++right;
        }
        int bottom = y;
        while (bottom + 1 < canvas->height()) {
          const auto next = view.cellAt({x, bottom + 1});
          if (!next || next->row != row) break;
          ++bottom;
        }
        return {(x + right) / 2, (y + bottom) / 2};
      }
    }
  }
  return {-1, -1};
}

}  // namespace

class RankHeatmapViewTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { QLocale::setDefault(QLocale(QLocale::English, QLocale::UnitedStates)); }

  void aStragglerIsRedInComputeAndBlueInWait() {
    RankHeatmapView view;
    view.resize(800, 320);
    view.setHeatmap(stragglerFrom5000());
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QCOMPARE(view.heatmap().rows.size(), size_t{4});
    QCOMPARE(view.layer(), HeatmapLayer::kCompute);

    const QPoint late = pointIn(view, 3, 80);  // rank 3, steps 8,000..8,099
    const QPoint early = pointIn(view, 3, 10);
    const QPoint other = pointIn(view, 0, 80);
    QVERIFY(late.x() >= 0 && early.x() >= 0 && other.x() >= 0);

    QImage image = view.canvas()->grab().toImage();
    const QColor hot = image.pixelColor(late);
    QVERIFY2(hot.red() > hot.blue() + 100, qPrintable(hot.name()));
    QCOMPARE(image.pixelColor(early), QColor(Qt::white));
    QCOMPARE(image.pixelColor(other), QColor(Qt::white));

    const QString tip = view.toolTipAt(late);
    QVERIFY2(tip.contains(QStringLiteral("Rank 3 on node-b")), qPrintable(tip));
    QVERIFY2(tip.contains(QStringLiteral("Steps 8,000 to 8,099")), qPrintable(tip));
    QVERIFY2(tip.contains(QStringLiteral("Compute: 15.00 ms, median 10.00 ms (+50%)")),
             qPrintable(tip));
    QVERIFY2(tip.contains(QStringLiteral("All-reduce wait: 0.20 ms, median 5.00 ms")),
             qPrintable(tip));

    // The switch: the straggler waits least (blue), the others at the median (white).
    view.layerBox()->setCurrentIndex(1);
    QCOMPARE(view.layer(), HeatmapLayer::kWait);
    image = view.canvas()->grab().toImage();
    const QColor cold = image.pixelColor(late);
    QVERIFY2(cold.blue() > cold.red() + 100, qPrintable(cold.name()));
    QCOMPARE(image.pixelColor(other), QColor(Qt::white));
    view.setLayer(HeatmapLayer::kCompute);
    QCOMPARE(view.layerBox()->currentIndex(), 0);

    // Outside the cells: no cell, no tooltip.
    QVERIFY(!view.cellAt({0, 0}));
    QVERIFY(view.toolTipAt({0, 0}).isEmpty());
  }

  void anEmptyHeatmapShowsAPlaceholder() {
    RankHeatmapView view;
    view.resize(400, 200);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    const QImage image = view.canvas()->grab().toImage();
    QVERIFY(!image.isNull());
    QVERIFY(!view.cellAt({100, 50}));
    QVERIFY(view.toolTipAt({100, 50}).isEmpty());
  }
};

QTEST_MAIN(RankHeatmapViewTest)
#include "rank_heatmap_view_test.moc"
