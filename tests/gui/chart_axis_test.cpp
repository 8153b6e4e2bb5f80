// The chart arithmetic of gui_core (chart_axis.h), without a display: nice tick steps and tick
// positions, fitted ranges, zoom and pan on linear and log axes, stacked sums, the value <-> pixel
// mapping, and polyline clipping.
#include <QtTest/QtTest>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "ringside/gui/chart_axis.h"

using namespace ringside::gui;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool near(double a, double b, double tolerance = 1e-9) {
  return std::abs(a - b) <= tolerance * std::max(1.0, std::abs(b));
}

bool nearRange(AxisRange a, AxisRange b) {
  return near(a.first, b.first) && near(a.second, b.second);
}

}  // namespace

class ChartAxisTest : public QObject {
  Q_OBJECT

 private slots:
  void niceStepsAreOneTwoTwoAndAHalfOrFive() {
    QCOMPARE(niceTickStep(1.66, 4), 0.5);  // 0.553 -> 0.5: ticks 0.5, 1, 1.5
    QCOMPARE(niceTickStep(10, 6), 2.0);
    QCOMPARE(niceTickStep(0.003, 6), 0.0005);
    QCOMPARE(niceTickStep(8e5, 4), 2.5e5);
    QCOMPARE(niceTickStep(100, 2), 100.0);
    QCOMPARE(niceTickStep(0, 6), 1.0);  // not a span
    QCOMPARE(niceTickStep(-1, 6), 1.0);
    QCOMPARE(niceTickStep(std::numeric_limits<double>::infinity(), 6), 1.0);
    std::mt19937 random(3);
    std::uniform_real_distribution<double> exponent(-8, 8);
    for (int trial = 0; trial < 500; ++trial) {
      const double span = std::pow(10.0, exponent(random));
      const int ticks = 3 + trial % 6;
      const double step = niceTickStep(span, ticks);
      const double mantissa = step / std::pow(10.0, std::floor(std::log10(step) + 1e-12));
      QVERIFY2(near(mantissa, 1) || near(mantissa, 2) || near(mantissa, 2.5) || near(mantissa, 5) ||
                   near(mantissa, 10),
               qPrintable(QStringLiteral("span %1: step %2").arg(span).arg(step)));
      // Within a factor of about two of the raw interval: about `ticks` ticks.
      const double raw = span / (ticks - 1);
      QVERIFY(step > raw / 1.6 && step < raw * 1.6);
    }
  }

  void ticksAreMultiplesInsideTheRange() {
    const std::vector<double> ticks = axisTicks(-0.3, 1.05, false, 6);
    QCOMPARE(ticks, (std::vector<double>{-0.25, 0.0, 0.25, 0.5, 0.75, 1.0}));
    // 0 is exactly 0, not 1e-17.
    for (double tick : axisTicks(-1.0, 1.0, false, 5))
      QVERIFY(tick == 0.0 || std::abs(tick) >= 0.5);
    QCOMPARE(axisTicks(3, 2000, true), (std::vector<double>{10, 100, 1000}));
    QVERIFY(axisTicks(0, 10, true).empty());  // a log axis needs low > 0
    QVERIFY(axisTicks(1, 1, false).empty());
    QVERIFY(axisTicks(kNaN, 1, false).empty());
    // Many ranges: every tick inside, evenly spaced, between 3 and 10 of them.
    for (const auto& [low, high] : std::vector<AxisRange>{
             {0.17, 1.83}, {0.0, 0.003}, {1e5, 9e5}, {-5, 5}, {0.865, 0.88}, {3.2, 3.4}}) {
      const std::vector<double> found = axisTicks(low, high, false, 6);
      QVERIFY2(
          found.size() >= 3 && found.size() <= 10,
          qPrintable(QStringLiteral("[%1, %2]: %3 ticks").arg(low).arg(high).arg(found.size())));
      for (size_t i = 0; i < found.size(); ++i) {
        QVERIFY(found[i] >= low - 1e-12 && found[i] <= high + 1e-12);
        if (i > 0) QVERIFY(near(found[i] - found[i - 1], found[1] - found[0], 1e-6));
      }
    }
  }

  void fittedRanges() {
    QCOMPARE(fitXRange(AxisRange{2, 8}, false), AxisRange(2, 8));
    QCOMPARE(fitXRange(AxisRange{5, 5}, false), AxisRange(4.5, 5.5));  // one point
    QCOMPARE(fitXRange(AxisRange{5, 5}, true), AxisRange(2.5, 10));
    QCOMPARE(fitXRange(std::nullopt, false), AxisRange(0, 1));  // no data
    QCOMPARE(fitXRange(std::nullopt, true), AxisRange(1, 10));

    QVERIFY(nearRange(fitYRange(AxisRange{0, 10}, false, false), {-0.5, 10.5}));  // 5 % air
    QVERIFY(nearRange(fitYRange(AxisRange{4, 4}, false, false), {3.5, 4.5}));     // at least 0.5
    QVERIFY(nearRange(fitYRange(AxisRange{100, 100}, false, false), {95, 105}));
    // Stacked areas start at 0; negative stacks keep their air.
    QVERIFY(nearRange(fitYRange(AxisRange{2, 10}, false, true), {0, 10.5}));
    QVERIFY(nearRange(fitYRange(AxisRange{-2, 10}, false, true), {-2.6, 10.6}));
    // Log: 5 % of the decades on either side, at least 0.05 decades.
    QVERIFY(nearRange(fitYRange(AxisRange{1, 1e4}, true, false),
                      {std::pow(10.0, -0.2), std::pow(10.0, 4.2)}));
    QVERIFY(nearRange(fitYRange(AxisRange{10, 10}, true, false),
                      {std::pow(10.0, 0.95), std::pow(10.0, 1.05)}));
    QCOMPARE(fitYRange(std::nullopt, false, false), AxisRange(0, 1));
    QCOMPARE(fitYRange(std::nullopt, true, true), AxisRange(1, 10));
  }

  void zoomAndPan() {
    // Linear: about the centre, by the factor.
    QVERIFY(nearRange(zoomedRange({0, 100}, 0.5, 50, false), {25, 75}));
    QVERIFY(nearRange(zoomedRange({0, 100}, 0.5, 0, false), {0, 50}));
    QVERIFY(nearRange(zoomedRange({0, 100}, 2, 50, false), {-50, 150}));
    QVERIFY(nearRange(zoomedRange({0, 100}, 0.5, kNaN, false), {25, 75}));  // about the middle
    // Log: by decades; a centre <= 0 zooms about the middle decade.
    QVERIFY(nearRange(zoomedRange({1, 1e4}, 0.5, 100, true), {10, 1000}));
    QVERIFY(nearRange(zoomedRange({1, 1e4}, 0.5, -3, true), {10, 1000}));
    QVERIFY(nearRange(pannedRange({0, 100}, 0.1, false), {10, 110}));
    QVERIFY(nearRange(pannedRange({0, 100}, -0.25, false), {-25, 75}));
    QVERIFY(nearRange(pannedRange({1, 100}, 0.5, true), {10, 1000}));

    QVERIFY(usableRange({0, 1}, false));
    QVERIFY(!usableRange({1, 1}, false));
    QVERIFY(!usableRange({2, 1}, false));
    QVERIFY(!usableRange({0, 1}, true));
    QVERIFY(!usableRange({0, std::numeric_limits<double>::infinity()}, false));
  }

  void stackedSums() {
    const std::vector<SeriesPoint> compute{{1, 2}, {2, 3}, {3, 4}};
    const std::vector<SeriesPoint> exposed{{1, 1}, {2, 1}, {3, 0.5}};
    const std::vector<SeriesPoint> top = stackedOnto(exposed, compute);
    QCOMPARE(top.size(), size_t{3});
    QCOMPARE(top[0].y, 3.0);
    QCOMPARE(top[1].y, 4.0);
    QCOMPARE(top[2].y, 4.5);
    // The nearest earlier x of the series below; none (or a non-finite value) adds 0.
    const std::vector<SeriesPoint> below{{2, 10}, {4, kNaN}};
    const std::vector<SeriesPoint> sparse =
        stackedOnto(std::vector<SeriesPoint>{{1, 1}, {3, 1}, {5, 1}}, below);
    QCOMPARE(sparse[0].y, 1.0);
    QCOMPARE(sparse[1].y, 11.0);
    QCOMPARE(sparse[2].y, 1.0);
    QCOMPARE(stackedOnto(compute, {})[1].y, 3.0);  // the bottom series is itself
  }

  void mappingRoundTrips() {
    const PlotMapping linear{.plot = QRectF(10, 20, 400, 200),
                             .x = {0, 100},
                             .y = {-1, 1},
                             .logX = false,
                             .logY = false};
    QCOMPARE(linear.toPixel({0, -1}), QPointF(10, 220));   // bottom left
    QCOMPARE(linear.toPixel({100, 1}), QPointF(410, 20));  // top right
    QCOMPARE(linear.toPixel({50, 0}), QPointF(210, 120));
    const PlotMapping log{
        .plot = QRectF(0, 0, 300, 300), .x = {1, 1000}, .y = {0.1, 10}, .logX = true, .logY = true};
    QVERIFY(near(log.toPixel({10, 1}).x(), 100));
    QVERIFY(near(log.toPixel({10, 1}).y(), 150));
    for (const PlotMapping& map : {linear, log}) {
      for (const SeriesPoint point :
           {SeriesPoint{1, 0.5}, SeriesPoint{70, 0.2}, SeriesPoint{5, 2}}) {
        const SeriesPoint back = map.fromPixel(map.toPixel(point));
        QVERIFY(near(back.x, point.x, 1e-9) && near(back.y, point.y, 1e-9));
      }
    }
    const PlotMapping empty{
        .plot = QRectF(5, 5, 0, 0), .x = {3, 4}, .y = {7, 8}, .logX = false, .logY = false};
    QCOMPARE(empty.fromPixel({100, 100}).x, 3.0);
  }

  void polylinesAreCutToTheRectangle() {
    const QRectF rect(0, 0, 10, 10);
    // Inside: unchanged.
    const QPolygonF inside{{1, 1}, {5, 5}, {9, 2}};
    QCOMPARE(clipPolyline(inside, rect), std::vector<QPolygonF>{inside});
    // Leaves at the top and comes back: two parts, cut at the edge.
    const QPolygonF outAndBack{{1, 5}, {5, -5}, {9, 5}};
    const std::vector<QPolygonF> parts = clipPolyline(outAndBack, rect);
    QCOMPARE(parts.size(), size_t{2});
    QCOMPARE(parts[0], (QPolygonF{{1, 5}, {3, 0}}));
    QCOMPARE(parts[1], (QPolygonF{{7, 0}, {9, 5}}));
    // Crosses the whole rectangle from outside to outside.
    const std::vector<QPolygonF> across = clipPolyline(QPolygonF{{-5, 5}, {15, 5}}, rect);
    QCOMPARE(across, std::vector<QPolygonF>{(QPolygonF{{0, 5}, {10, 5}})});
    // Entirely outside, a single point, nothing.
    QVERIFY(clipPolyline(QPolygonF{{-5, -5}, {-1, 20}}, rect).empty());
    QVERIFY(clipPolyline(QPolygonF{{5, 5}}, rect).empty());
    QVERIFY(clipPolyline(QPolygonF{}, rect).empty());
    // Every point of every part lies inside, for random lines.
    std::mt19937 random(11);
    std::uniform_real_distribution<double> coordinate(-20, 30);
    for (int trial = 0; trial < 200; ++trial) {
      QPolygonF line;
      for (int i = 0; i < 20; ++i) line << QPointF(coordinate(random), coordinate(random));
      for (const QPolygonF& part : clipPolyline(line, rect)) {
        QVERIFY(part.size() >= 2);
        for (const QPointF& at : part) {
          QVERIFY(at.x() >= -1e-9 && at.x() <= 10 + 1e-9 && at.y() >= -1e-9 && at.y() <= 10 + 1e-9);
        }
      }
    }
  }
};

QTEST_GUILESS_MAIN(ChartAxisTest)
#include "chart_axis_test.moc"
