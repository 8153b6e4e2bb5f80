// Min/max decimation: every pixel column keeps its exact vertical extent, the output stays within
// 2 points per column (+2 edge points), and degenerate inputs give sensible results.
#include <QtTest/QtTest>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "ringside/gui/decimation.h"

using ringside::gui::AxisScale;
using ringside::gui::decimateMinMax;
using ringside::gui::SeriesPoint;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The column of x as an independent reference computes it (same definition as the header's).
int referenceColumn(double x, double xMin, double xMax, int columns, AxisScale scale) {
  double t = scale == AxisScale::kLog
                 ? (std::log10(x) - std::log10(xMin)) / (std::log10(xMax) - std::log10(xMin))
                 : (x - xMin) / (xMax - xMin);
  return std::clamp(static_cast<int>(t * columns), 0, columns - 1);
}

std::vector<SeriesPoint> randomWalk(size_t count, double firstX, unsigned seed, double nanShare) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> gap(0.0, 2.0);
  std::normal_distribution<double> noise(0.0, 1.0);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<SeriesPoint> points(count);
  double x = firstX;
  double y = 0.0;
  for (auto& point : points) {
    x += gap(rng);
    y += noise(rng);
    point = {x, unit(rng) < nanShare ? kNaN : y};
  }
  return points;
}

// Brute force: for each column, the min and max y of the visible non-NaN points must appear in
// the output at an x inside that column; every output point must be an input point; sorted.
void checkExtremesKept(const std::vector<SeriesPoint>& points, double xMin, double xMax,
                       int columns, AxisScale scale) {
  const auto out = decimateMinMax(points, xMin, xMax, columns, scale);
  QVERIFY(out.size() <= 2 * static_cast<size_t>(columns) + 2);
  QVERIFY(std::is_sorted(out.begin(), out.end(),
                         [](const SeriesPoint& a, const SeriesPoint& b) { return a.x < b.x; }));

  std::vector<double> wantMin(columns, std::numeric_limits<double>::infinity());
  std::vector<double> wantMax(columns, -std::numeric_limits<double>::infinity());
  std::vector<bool> wantAny(columns, false);
  for (const auto& point : points) {
    if (std::isnan(point.y) || point.x < xMin || point.x > xMax) continue;
    const int c = referenceColumn(point.x, xMin, xMax, columns, scale);
    wantMin[c] = std::min(wantMin[c], point.y);
    wantMax[c] = std::max(wantMax[c], point.y);
    wantAny[c] = true;
  }
  std::vector<double> gotMin(columns, std::numeric_limits<double>::infinity());
  std::vector<double> gotMax(columns, -std::numeric_limits<double>::infinity());
  std::vector<bool> gotAny(columns, false);
  for (const auto& point : out) {
    QVERIFY(!std::isnan(point.y));
    const auto it = std::lower_bound(points.begin(), points.end(), point.x,
                                     [](const SeriesPoint& p, double x) { return p.x < x; });
    QVERIFY(it != points.end() && it->x == point.x && it->y == point.y);
    if (point.x < xMin || point.x > xMax) continue;
    const int c = referenceColumn(point.x, xMin, xMax, columns, scale);
    gotMin[c] = std::min(gotMin[c], point.y);
    gotMax[c] = std::max(gotMax[c], point.y);
    gotAny[c] = true;
  }
  for (int c = 0; c < columns; ++c) {
    QCOMPARE(gotAny[c], wantAny[c]);
    if (!wantAny[c]) continue;
    QCOMPARE(gotMin[c], wantMin[c]);
    QCOMPARE(gotMax[c], wantMax[c]);
  }
}

}  // namespace

class DecimationTest : public QObject {
  Q_OBJECT

 private slots:
  void everyColumnKeepsMinAndMaxOfAMillionPoints() {
    const auto points = randomWalk(1'000'000, 0.0, 42, 0.01);
    const double last = points.back().x;
    checkExtremesKept(points, 0.0, last, 1000, AxisScale::kLinear);
    if (QTest::currentTestFailed()) return;
    // A zoomed view inside the data, and a view wider than the data.
    checkExtremesKept(points, last * 0.25, last * 0.5, 777, AxisScale::kLinear);
    if (QTest::currentTestFailed()) return;
    checkExtremesKept(points, -last, 2 * last, 1920, AxisScale::kLinear);
  }

  void outputSizeIsBoundedByColumns() {
    const auto points = randomWalk(200'000, 0.0, 7, 0.0);
    for (int columns : {1, 2, 10, 640, 4096}) {
      const auto out = decimateMinMax(points, 0.0, points.back().x, columns);
      QVERIFY2(out.size() <= 2 * static_cast<size_t>(columns) + 2,
               qPrintable(QString("%1 points for %2 columns").arg(out.size()).arg(columns)));
      QVERIFY(out.size() >= std::min<size_t>(columns, 2));
    }
  }

  void fewPointsPassThroughUnchanged() {
    const std::vector<SeriesPoint> points = {{1, 5}, {2, 3}, {3, 4}};
    const auto out = decimateMinMax(points, 0.0, 10.0, 100);
    QCOMPARE(out.size(), points.size());
    for (size_t i = 0; i < out.size(); ++i) {
      QCOMPARE(out[i].x, points[i].x);
      QCOMPARE(out[i].y, points[i].y);
    }
  }

  void emptyOnePointAndAllNaN() {
    QVERIFY(decimateMinMax({}, 0.0, 1.0, 100).empty());

    const std::vector<SeriesPoint> one = {{0.5, 2.0}};
    const auto single = decimateMinMax(one, 0.0, 1.0, 100);
    QCOMPARE(single.size(), size_t{1});
    QCOMPARE(single[0].y, 2.0);

    const std::vector<SeriesPoint> nans = {{0.1, kNaN}, {0.2, kNaN}, {0.3, kNaN}};
    QVERIFY(decimateMinMax(nans, 0.0, 1.0, 100).empty());
  }

  void unusableArgumentsGiveNothing() {
    const std::vector<SeriesPoint> points = {{1, 1}, {2, 2}};
    QVERIFY(decimateMinMax(points, 0.0, 3.0, 0).empty());
    QVERIFY(decimateMinMax(points, 3.0, 3.0, 10).empty());
    QVERIFY(decimateMinMax(points, 3.0, 0.0, 10).empty());
    QVERIFY(decimateMinMax(points, kNaN, 3.0, 10).empty());
    QVERIFY(decimateMinMax(points, 0.0, 3.0, 10, AxisScale::kLog).empty());
  }

  void neighboursOutsideTheViewAreKept() {
    // NaN next to the view is skipped: the nearest real value on each side is the neighbour.
    const std::vector<SeriesPoint> points = {{0, 1}, {1, 9},    {2, kNaN}, {5, 3},
                                             {6, 4}, {9, kNaN}, {11, 7},   {12, 8}};
    const auto out = decimateMinMax(points, 4.0, 8.0, 4);
    QCOMPARE(out.size(), size_t{4});
    QCOMPARE(out.front().x, 1.0);
    QCOMPARE(out.front().y, 9.0);
    QCOMPARE(out[1].x, 5.0);
    QCOMPARE(out[2].x, 6.0);
    QCOMPARE(out.back().x, 11.0);
    QCOMPARE(out.back().y, 7.0);
  }

  void viewBesideTheDataGivesOnlyNeighbours() {
    const std::vector<SeriesPoint> points = {{1, 1}, {2, 2}, {3, 3}};
    const auto right = decimateMinMax(points, 10.0, 20.0, 50);
    QCOMPARE(right.size(), size_t{1});
    QCOMPARE(right[0].x, 3.0);
    const auto left = decimateMinMax(points, -20.0, -10.0, 50);
    QCOMPARE(left.size(), size_t{1});
    QCOMPARE(left[0].x, 1.0);
    // Between two points with nothing inside: the line crosses the view from one to the other.
    const auto between = decimateMinMax(points, 1.2, 1.8, 50);
    QCOMPARE(between.size(), size_t{2});
  }

  void minAndMaxComeInXOrder() {
    // The max comes first in x within the single column, so it is emitted first.
    const std::vector<SeriesPoint> points = {{1, 0}, {2, 10}, {3, 5}, {4, -10}, {5, 0}};
    const auto out = decimateMinMax(points, 0.0, 10.0, 1);
    QCOMPARE(out.size(), size_t{2});
    QCOMPARE(out[0].y, 10.0);
    QCOMPARE(out[1].y, -10.0);
  }

  void logScaleSpacesColumnsByDecade() {
    // 1..1e6 in log scale with 6 columns: one column per decade.
    std::vector<SeriesPoint> points;
    for (int i = 1; i <= 1'000'000; i *= 10) {
      for (int k = 1; k < 10; ++k) points.push_back({double(i) * k, double(k)});
    }
    const auto out = decimateMinMax(points, 1.0, 1e6, 6, AxisScale::kLog);
    // Per decade: min (k = 1) and max (k = 9); beyond 1e6 the neighbour 2e6.
    QCOMPARE(out.size(), size_t{13});
    for (int decade = 0; decade < 6; ++decade) {
      QCOMPARE(out[2 * decade].y, 1.0);
      QCOMPARE(out[2 * decade + 1].y, 9.0);
    }
    QCOMPARE(out.back().x, 2e6);

    // Non-positive x cannot be drawn on a log axis and is never a neighbour.
    const std::vector<SeriesPoint> withZero = {{-1, 5}, {0, 5}, {10, 1}, {100, 2}};
    const auto logOut = decimateMinMax(withZero, 1.0, 1000.0, 10, AxisScale::kLog);
    QCOMPARE(logOut.size(), size_t{2});
    QCOMPARE(logOut.front().x, 10.0);

    const auto random = randomWalk(300'000, 1.0, 3, 0.01);
    checkExtremesKept(random, 1.0, random.back().x, 800, AxisScale::kLog);
  }
};

QTEST_GUILESS_MAIN(DecimationTest)
#include "decimation_test.moc"
