// MetricChart: decimation reaches what is drawn (a 1,000,000-point series is drawn with about
// two points per pixel column, spikes kept), the indexed decimation equals decimateMinMax, log
// axes, EMA smoothing, stacked areas, the painted pixels (lines, areas, markers, legend entries),
// hover read-out, zoom, PNG/SVG export (the SVG drawn back and compared with the chart) and the
// context menu.
#include <QApplication>
#include <QChart>
#include <QChartView>
#include <QFile>
#include <QImage>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLocale>
#include <QLogValueAxis>
#include <QMenu>
#include <QMouseEvent>
#include <QPainter>
#include <QScopeGuard>
#include <QSvgRenderer>
#include <QTemporaryDir>
#include <QValueAxis>
#include <QXmlStreamReader>
#include <QtTest>

#include <cmath>
#include <limits>
#include <random>

#include "ringside/gui/widgets/metric_chart.h"

using ringside::gui::AxisScale;
using ringside::gui::decimateMinMax;
using ringside::gui::emaSmooth;
using ringside::gui::MetricChart;
using ringside::gui::MinMaxIndex;
using ringside::gui::SeriesPoint;

namespace {

std::vector<SeriesPoint> longSeries(size_t count) {
  std::vector<SeriesPoint> points(count);
  for (size_t i = 0; i < count; ++i) {
    points[i] = {static_cast<double>(i + 1), std::sin(static_cast<double>(i) * 1e-4)};
  }
  return points;
}

bool samePoints(const std::vector<SeriesPoint>& drawn, const std::vector<SeriesPoint>& expected) {
  if (drawn.size() != expected.size()) return false;
  for (size_t i = 0; i < expected.size(); ++i) {
    if (drawn[i].x != expected[i].x || drawn[i].y != expected[i].y) return false;
  }
  return true;
}

// Whether `image` has a pixel of `colour` (within `tolerance` per channel) within `radius` pixels
// of `at`.
bool hasColourNear(const QImage& image, QPoint at, QColor colour, int radius = 2,
                   int tolerance = 40) {
  for (int dy = -radius; dy <= radius; ++dy) {
    for (int dx = -radius; dx <= radius; ++dx) {
      const QPoint p = at + QPoint(dx, dy);
      if (!image.rect().contains(p)) continue;
      const QColor c = image.pixelColor(p);
      if (std::abs(c.red() - colour.red()) <= tolerance &&
          std::abs(c.green() - colour.green()) <= tolerance &&
          std::abs(c.blue() - colour.blue()) <= tolerance) {
        return true;
      }
    }
  }
  return false;
}

bool sameSeries(const std::vector<SeriesPoint>& a, const std::vector<SeriesPoint>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].x != b[i].x) return false;
    if (!(a[i].y == b[i].y || (std::isnan(a[i].y) && std::isnan(b[i].y)))) return false;
  }
  return true;
}

}  // namespace

class MetricChartTest : public QObject {
  Q_OBJECT

 private slots:
  void decimationReachesTheDrawing() {
    MetricChart chart(QStringLiteral("loss"));
    chart.resize(800, 500);
    chart.show();
    QVERIFY(QTest::qWaitForWindowExposed(&chart));
    std::vector<SeriesPoint> points = longSeries(1'000'000);
    points[500'000].y = 100.0;   // a spike up
    points[700'001].y = -100.0;  // and one down
    chart.setSeries(QStringLiteral("train/loss"), points);
    chart.replotNow();
    chart.forceReplot();  // once more, now that the plot area has its final size
    const int columns = chart.plotColumns();
    QVERIFY2(columns > 300 && columns <= 800, qPrintable(QString::number(columns)));
    const std::vector<SeriesPoint> drawn = chart.drawnPoints(QStringLiteral("train/loss"));
    QVERIFY(!drawn.empty());
    QVERIFY2(drawn.size() <= 2 * static_cast<size_t>(columns) + 2,
             qPrintable(QStringLiteral("%1 points for %2 columns").arg(drawn.size()).arg(columns)));
    bool up = false;
    bool down = false;
    for (const SeriesPoint& point : drawn) {
      up |= point.x == 500'001 && point.y == 100.0;
      down |= point.x == 700'002 && point.y == -100.0;
    }
    QVERIFY(up);
    QVERIFY(down);
    // Exactly what decimateMinMax gives for the drawn range and width.
    const auto [xMin, xMax] = chart.visibleXRange();
    QVERIFY(samePoints(drawn, decimateMinMax(points, xMin, xMax, columns)));
    // The y axis shows both spikes.
    const auto [yMin, yMax] = chart.visibleYRange();
    QVERIFY(yMin < -100.0 && yMax > 100.0);

    // Zoomed in: only the visible part, still decimated exactly.
    chart.setXRange(400'000, 450'000);
    chart.replotNow();
    const std::vector<SeriesPoint> zoomed = chart.drawnPoints(QStringLiteral("train/loss"));
    QVERIFY(zoomed.size() <= 2 * static_cast<size_t>(columns) + 2);
    QVERIFY(samePoints(zoomed, decimateMinMax(points, 400'000, 450'000, columns)));
    QCOMPARE(chart.visibleXRange(), std::make_pair(400'000.0, 450'000.0));
    chart.resetZoom();
    chart.replotNow();
    QCOMPARE(chart.visibleXRange(), std::make_pair(1.0, 1'000'000.0));
  }

  void indexedDecimationEqualsDecimateMinMax() {
    std::mt19937 random(7);
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    for (int trial = 0; trial < 40; ++trial) {
      const size_t count = 1000 + random() % 200'000;
      std::vector<SeriesPoint> points(count);
      double x = trial % 2 == 0 ? -50.0 : 0.5;
      for (size_t i = 0; i < count; ++i) {
        x += uniform(random) < 0.1 ? 0.0 : uniform(random);  // repeated x values too
        double y = std::round(uniform(random) * 20);         // many ties
        if (uniform(random) < 0.05) y = std::numeric_limits<double>::quiet_NaN();
        points[i] = {x, y};
      }
      const MinMaxIndex index(points);
      const AxisScale scale = trial % 3 == 0 ? AxisScale::kLog : AxisScale::kLinear;
      const double span = points.back().x - points.front().x;
      double low = points.front().x + span * uniform(random) * 0.5;
      double high = low + span * (0.01 + uniform(random));
      if (scale == AxisScale::kLog) low = std::max(low, 0.25);
      const int columns = 1 + static_cast<int>(random() % 1200);
      QVERIFY2(sameSeries(index.decimate(low, high, columns, scale),
                          decimateMinMax(points, low, high, columns, scale)),
               qPrintable(QStringLiteral("trial %1").arg(trial)));
    }
  }

  void logAxisToggle() {
    MetricChart chart(QStringLiteral("log"));
    chart.resize(600, 400);
    chart.setSeries(QStringLiteral("s"), {{0, -1}, {1, 0}, {10, 5}, {100, 50}, {1000, 500}});
    chart.replotNow();
    QVERIFY(qobject_cast<QValueAxis*>(chart.chart()->axes(Qt::Vertical).value(0)) != nullptr);
    chart.setLogY(true);
    chart.replotNow();
    auto* yAxis = qobject_cast<QLogValueAxis*>(chart.chart()->axes(Qt::Vertical).value(0));
    QVERIFY(yAxis != nullptr);
    QVERIFY(yAxis->min() > 0 && yAxis->min() <= 5 && yAxis->max() >= 500);
    const std::vector<SeriesPoint> onLog = chart.drawnPoints(QStringLiteral("s"));
    QCOMPARE(onLog.size(), size_t{3});
    for (const SeriesPoint& point : onLog) {
      QVERIFY(point.y > 0);  // y <= 0 cannot be drawn on a log axis
    }
    chart.setLogX(true);
    chart.replotNow();
    QVERIFY(qobject_cast<QLogValueAxis*>(chart.chart()->axes(Qt::Horizontal).value(0)) != nullptr);
    QVERIFY(chart.visibleXRange().first > 0);
    chart.setLogX(false);
    chart.setLogY(false);
    chart.replotNow();
    QVERIFY(qobject_cast<QValueAxis*>(chart.chart()->axes(Qt::Horizontal).value(0)) != nullptr);
    QCOMPARE(chart.drawnPoints(QStringLiteral("s")).size(), size_t{5});
  }

  void axisTicksAreNiceAndEnough() {
    // A small dashboard chart (the y axis asks for 4 ticks) over several value ranges: each axis
    // gets 3 to 10 ticks at a multiple of 1, 2, 2.5 or 5 times a power of ten.
    const std::vector<std::pair<double, double>> ranges{{0.17, 1.83}, {0.0, 0.003},  {1e5, 9e5},
                                                        {-5, 5},      {0.865, 0.88}, {3.2, 3.4}};
    for (const auto& [low, high] : ranges) {
      MetricChart chart(QStringLiteral("ticks"));
      chart.resize(600, 240);
      chart.show();
      QVERIFY(QTest::qWaitForWindowExposed(&chart));
      chart.setSeries(QStringLiteral("s"), {{0, low}, {1000, high}}, QColor(220, 0, 0));
      chart.setYRange(low, high);
      chart.forceReplot();
      QApplication::processEvents();
      chart.forceReplot();
      // The tick labels are drawn: dark text left of the plot (y) and below it (x); no axis
      // titles are set, so nothing else is drawn there.
      const QImage image = chart.chartView()->grab().toImage();
      const QRect plot = chart.chartView()
                             ->mapFromScene(chart.chart()->mapToScene(chart.chart()->plotArea()))
                             .boundingRect();
      const auto darkPixels = [&](QRect area) {
        int dark = 0;
        for (int y = std::max(0, area.top()); y <= std::min(image.height() - 1, area.bottom());
             ++y) {
          for (int x = std::max(0, area.left()); x <= std::min(image.width() - 1, area.right());
               ++x) {
            dark += qGray(image.pixel(x, y)) < 110;
          }
        }
        return dark;
      };
      QVERIFY2(darkPixels(QRect(0, plot.top(), plot.left() - 3, plot.height())) > 20,
               qPrintable(QStringLiteral("no y labels for [%1, %2]").arg(low).arg(high)));
      QVERIFY2(darkPixels(QRect(plot.left(), plot.bottom() + 3, plot.width(), 20)) > 20,
               qPrintable(QStringLiteral("no x labels for [%1, %2]").arg(low).arg(high)));
      for (auto orientation : {Qt::Horizontal, Qt::Vertical}) {
        auto* axis = qobject_cast<QValueAxis*>(chart.chart()->axes(orientation).value(0));
        QVERIFY(axis != nullptr);
        QCOMPARE(axis->tickType(), QValueAxis::TicksDynamic);
        const double interval = axis->tickInterval();
        const double ticks = std::floor(axis->max() / interval + 1e-9) -
                             std::ceil(axis->min() / interval - 1e-9) + 1;
        const QString what = QStringLiteral("[%1, %2] %3: interval %4, %5 ticks")
                                 .arg(axis->min())
                                 .arg(axis->max())
                                 .arg(orientation == Qt::Vertical ? "y" : "x")
                                 .arg(interval)
                                 .arg(ticks);
        QVERIFY2(ticks >= 3 && ticks <= 10, qPrintable(what));
        const double mantissa = interval / std::pow(10.0, std::floor(std::log10(interval)));
        QVERIFY2(std::abs(mantissa - 1) < 1e-9 || std::abs(mantissa - 2) < 1e-9 ||
                     std::abs(mantissa - 2.5) < 1e-9 || std::abs(mantissa - 5) < 1e-9,
                 qPrintable(what));
      }
    }
  }

  void emaMatchesHandComputedValues() {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const std::vector<SeriesPoint> points{{1, 1}, {2, 2}, {3, nan}, {4, 3}};
    const auto smoothed = emaSmooth(points, 0.5);
    QCOMPARE(smoothed.size(), size_t{4});
    // last = 0.5 -> 0.5 / 0.5; 1.25 / 0.75; NaN passed through; 2.125 / 0.875.
    QCOMPARE(smoothed[0].y, 1.0);
    QVERIFY(std::abs(smoothed[1].y - 1.25 / 0.75) < 1e-12);
    QVERIFY(std::isnan(smoothed[2].y));
    QVERIFY(std::abs(smoothed[3].y - 2.125 / 0.875) < 1e-12);
    QCOMPARE(smoothed[3].x, 4.0);
    // Weight 0 and a constant series are returned unchanged.
    QCOMPARE(emaSmooth(points, 0.0)[1].y, 2.0);
    const auto constant = emaSmooth(std::vector<SeriesPoint>{{1, 3}, {2, 3}, {3, 3}}, 0.9);
    QCOMPARE(constant[2].y, 3.0);
    // Weight 0.9: the first value is itself (debiased), then a slow approach.
    const auto slow = emaSmooth(std::vector<SeriesPoint>{{1, 10}, {2, 0}}, 0.9);
    QVERIFY(std::abs(slow[0].y - 10.0) < 1e-12);
    QVERIFY(std::abs(slow[1].y - (0.9 * 1.0) / (1 - 0.81)) < 1e-12);
  }

  void stackedAreasAddUp() {
    MetricChart chart(QStringLiteral("step time"));
    chart.resize(600, 400);
    chart.setStacked(true);
    chart.setSeries(QStringLiteral("compute"), {{1, 2}, {2, 3}, {3, 4}});
    chart.setSeries(QStringLiteral("exposed"), {{1, 1}, {2, 1}, {3, 0.5}});
    chart.replotNow();
    const std::vector<SeriesPoint> top = chart.drawnPoints(QStringLiteral("exposed"));
    QVERIFY(samePoints(top, {{1, 3}, {2, 4}, {3, 4.5}}));
    QCOMPARE(chart.visibleYRange().first, 0.0);
  }

  void paintsLinesAreasMarkersAndLegendEntries() {
    MetricChart chart(QStringLiteral("pixels"));
    chart.resize(640, 420);
    chart.show();
    QVERIFY(QTest::qWaitForWindowExposed(&chart));
    const QColor red(220, 0, 0);
    const QColor blue(0, 0, 220);
    chart.setSeries(QStringLiteral("line"), longSeries(20'000), red);
    chart.setSeries(QStringLiteral("sparse"), {{5'000, 0.5}, {15'000, -0.5}}, blue);
    chart.setSeries(QStringLiteral("gone"), {{1, 0.0}, {20'000, 0.0}}, QColor(0, 160, 0));
    chart.removeSeries(QStringLiteral("gone"));
    chart.forceReplot();
    QApplication::processEvents();
    chart.forceReplot();
    QImage image = chart.chartView()->grab().toImage();
    // The line passes through its drawn points; the sparse series is drawn as markers.
    for (const SeriesPoint& point : chart.drawnPoints(QStringLiteral("line"))) {
      if (point.x < 100 || point.x > 19'900) continue;  // at the frame
      QVERIFY2(hasColourNear(image, chart.positionOf(point).toPoint(), red),
               qPrintable(QStringLiteral("no line at x = %1").arg(point.x)));
    }
    QVERIFY(hasColourNear(image, chart.positionOf({5'000, 0.5}).toPoint(), blue, 1, 10));
    QVERIFY(hasColourNear(image, chart.positionOf({15'000, -0.5}).toPoint(), blue, 1, 10));
    // Nothing is drawn outside the plot area (the series are clipped to it).
    chart.setXRange(5'000, 6'000);
    chart.setYRange(0.4, 0.52);  // the line leaves the plot at the top
    chart.replotNow();
    QApplication::processEvents();  // the chart's layout follows the new axis labels
    chart.replotNow();
    const QRect plot = chart.chartView()
                           ->mapFromScene(chart.chart()->mapToScene(chart.chart()->plotArea()))
                           .boundingRect();
    // (The legend's markers carry the series' colours too.)
    const QRect legend =
        chart.chartView()
            ->mapFromScene(chart.chart()->legend()->mapToScene(chart.chart()->legend()->rect()))
            .boundingRect();
    image = chart.chartView()->grab().toImage();
    for (int x = 0; x < image.width(); x += 2) {
      for (int y = 0; y < image.height(); y += 2) {
        if (plot.adjusted(-2, -2, 2, 2).contains(x, y) || legend.contains(x, y)) continue;
        QVERIFY2(
            !hasColourNear(image, {x, y}, red, 0, 10) && !hasColourNear(image, {x, y}, blue, 0, 10),
            qPrintable(QStringLiteral("series colour outside the plot at %1,%2").arg(x).arg(y)));
      }
    }
    // A removed series leaves no legend entry.
    QStringList entries;
    for (QLegendMarker* marker : chart.chart()->legend()->markers()) {
      if (marker->isVisible()) entries << marker->label();
    }
    QCOMPARE(entries, (QStringList{QStringLiteral("line"), QStringLiteral("sparse")}));

    // Stacked: the lower area is filled between the zero line and its top.
    MetricChart stacked(QStringLiteral("stacked"));
    stacked.resize(640, 420);
    stacked.show();
    QVERIFY(QTest::qWaitForWindowExposed(&stacked));
    stacked.setStacked(true);
    stacked.setSeries(QStringLiteral("compute"), {{0, 2}, {10, 2}}, red);
    stacked.setSeries(QStringLiteral("exposed"), {{0, 1}, {10, 1}}, blue);
    stacked.forceReplot();
    QApplication::processEvents();
    stacked.forceReplot();
    const QImage areas = stacked.chartView()->grab().toImage();
    const QColor computeFill = areas.pixelColor(stacked.positionOf({5, 1}).toPoint());
    const QColor exposedFill = areas.pixelColor(stacked.positionOf({5, 2.5}).toPoint());
    QVERIFY2(computeFill.red() > computeFill.blue() + 50, qPrintable(computeFill.name()));
    QVERIFY2(exposedFill.blue() > exposedFill.red() + 50, qPrintable(exposedFill.name()));
  }

  void hoverFindsTheNearestPoint() {
    MetricChart chart(QStringLiteral("hover"));
    chart.resize(600, 400);
    chart.show();
    QVERIFY(QTest::qWaitForWindowExposed(&chart));
    chart.setSeries(QStringLiteral("acc"), {{0, 0}, {1, 1}, {2, 4}, {3, 9}, {4, 16}});
    chart.forceReplot();
    const QPointF near = chart.positionOf({2, 4}) + QPointF(3, -2);
    const auto found = chart.nearestPoint(near);
    QVERIFY(found.has_value());
    QCOMPARE(found->series, QStringLiteral("acc"));
    QCOMPARE(found->point.x, 2.0);
    QCOMPARE(found->point.y, 4.0);
    // Far from every point: nothing.
    QVERIFY(!chart.nearestPoint(chart.positionOf({0.5, 14}), 10).has_value());
    // A mouse move over the view shows it in the read-out.
    QMouseEvent move(QEvent::MouseMove, near, chart.chartView()->viewport()->mapToGlobal(near),
                     Qt::NoButton, Qt::NoButton, Qt::NoModifier);
    QApplication::sendEvent(chart.chartView()->viewport(), &move);
    QVERIFY2(chart.readoutText().contains(QStringLiteral("x = 2")) &&
                 chart.readoutText().contains(QStringLiteral("y = 4")),
             qPrintable(chart.readoutText()));
  }

  void readOutFollowsTheDefaultLocale() {
    QLocale::setDefault(QLocale(QLocale::German, QLocale::Germany));
    const auto restore = qScopeGuard([] { QLocale::setDefault(QLocale::c()); });
    MetricChart chart(QStringLiteral("de"));
    chart.resize(600, 400);
    chart.show();
    QVERIFY(QTest::qWaitForWindowExposed(&chart));
    chart.setSeries(QStringLiteral("acc"), {{1, 0.25}, {2, 0.5}, {3, 0.875}});
    chart.forceReplot();
    const QPointF at = chart.positionOf({2, 0.5});
    QMouseEvent move(QEvent::MouseMove, at, chart.chartView()->viewport()->mapToGlobal(at),
                     Qt::NoButton, Qt::NoButton, Qt::NoModifier);
    QApplication::sendEvent(chart.chartView()->viewport(), &move);
    QVERIFY2(chart.readoutText().contains(QStringLiteral("y = 0,5")),
             qPrintable(chart.readoutText()));
    QVERIFY(chart.chart()->localizeNumbers());
    QCOMPARE(chart.chart()->locale().decimalPoint(), QStringLiteral(","));
  }

  void exportsPngAndSvg() {
    QTemporaryDir dir;
    MetricChart chart(QStringLiteral("export"));
    chart.resize(640, 420);
    chart.show();
    QVERIFY(QTest::qWaitForWindowExposed(&chart));
    const QColor blue(0, 0, 220);
    chart.setAxisTitles(QStringLiteral("step"), QStringLiteral("loss"));
    chart.setSeries(QStringLiteral("raw"), longSeries(10'000), QColor(Qt::red), true);
    chart.setSeries(QStringLiteral("smoothed \"EMA\" & co"), emaSmooth(longSeries(10'000), 0.9),
                    blue);
    const QString png = dir.filePath(QStringLiteral("chart.png"));
    QVERIFY(chart.exportPng(png).isOk());
    const QImage image(png);
    QVERIFY(!image.isNull());
    QVERIFY(image.width() > 100 && image.height() > 100);
    QSet<QRgb> colours;
    for (int y = 0; y < image.height(); y += 7) {
      for (int x = 0; x < image.width(); x += 7) colours.insert(image.pixel(x, y));
    }
    QVERIFY(colours.size() > 3);  // not a blank image

    // SVG, zoomed so that the line leaves the plot at the top and the bottom.
    chart.setYRange(0.15, 0.55);
    chart.forceReplot();
    QApplication::processEvents();
    chart.forceReplot();
    const QString svg = dir.filePath(QStringLiteral("chart.svg"));
    QVERIFY(chart.exportSvg(svg).isOk());
    QFile file(svg);
    QVERIFY(file.open(QIODevice::ReadOnly));
    QXmlStreamReader xml(&file);
    QStringList texts;
    int polylines = 0;
    while (!xml.atEnd()) {
      xml.readNext();
      if (xml.isStartElement() && xml.name() == QLatin1String("polyline")) ++polylines;
      if (xml.isStartElement() && xml.name() == QLatin1String("text")) {
        texts << xml.readElementText(QXmlStreamReader::IncludeChildElements).trimmed();
      }
    }
    QVERIFY2(!xml.hasError(), qPrintable(xml.errorString()));
    QVERIFY(polylines >= 2);  // the raw and the smoothed line (each may be cut into parts)
    for (const QString& expected :
         {QStringLiteral("export"), QStringLiteral("smoothed \"EMA\" & co"), QStringLiteral("step"),
          QStringLiteral("loss")}) {
      QVERIFY2(texts.contains(expected), qPrintable(texts.join(QLatin1Char('|'))));
    }

    // Drawn back, the SVG shows the smoothed line where the chart draws it, and nothing of it
    // outside the plot area (QSvgGenerator writes no clip: the lines are cut to the plot).
    QSvgRenderer renderer(svg);
    QVERIFY(renderer.isValid());
    QCOMPARE(renderer.viewBox().size(), chart.chart()->size().toSize());
    QImage drawn(renderer.viewBox().size(), QImage::Format_ARGB32);
    drawn.fill(Qt::white);
    QPainter painter(&drawn);
    renderer.render(&painter);
    painter.end();
    const QPointF origin =
        chart.chart()->mapRectToScene(chart.chart()->rect()).topLeft();  // the SVG's (0, 0)
    const auto inSvg = [&](QPointF viewPosition) {
      return (chart.chartView()->mapToScene(viewPosition.toPoint()) - origin).toPoint();
    };
    // The renderer antialiases: a line between pixel centres is two lighter pixels.
    const auto bluish = [&drawn](QPoint at) {
      for (int dy = -2; dy <= 2; ++dy) {
        for (int dx = -2; dx <= 2; ++dx) {
          const QPoint p = at + QPoint(dx, dy);
          if (!drawn.rect().contains(p)) continue;
          const QColor c = drawn.pixelColor(p);
          if (c.blue() > c.red() + 60 && c.blue() > c.green() + 60) return true;
        }
      }
      return false;
    };
    int checked = 0;
    for (const SeriesPoint& point : chart.drawnPoints(QStringLiteral("smoothed \"EMA\" & co"))) {
      if (point.x < 200 || point.x > 9'800 || point.y < 0.17 || point.y > 0.53) continue;
      QVERIFY2(bluish(inSvg(chart.positionOf(point))),
               qPrintable(QStringLiteral("no line at x = %1 in the SVG").arg(point.x)));
      ++checked;
    }
    QVERIFY(checked > 20);
    const QRect plot =
        chart.chart()->mapRectToScene(chart.chart()->plotArea()).translated(-origin).toRect();
    const QRect legend = chart.chart()
                             ->legend()
                             ->mapRectToScene(chart.chart()->legend()->rect())
                             .translated(-origin)
                             .toRect();
    for (int x = 0; x < drawn.width(); x += 2) {
      for (int y = 0; y < drawn.height(); y += 2) {
        if (plot.adjusted(-2, -2, 2, 2).contains(x, y) || legend.contains(x, y)) continue;
        const QColor c = drawn.pixelColor(x, y);
        QVERIFY2(!(c.blue() > c.red() + 60 && c.blue() > c.green() + 60),
                 qPrintable(QStringLiteral("series outside the plot at %1,%2").arg(x).arg(y)));
      }
    }
    QVERIFY(!chart.exportPng(QStringLiteral("/nonexistent-dir/x.png")).isOk());
    QVERIFY(!chart.exportSvg(QStringLiteral("/nonexistent-dir/x.svg")).isOk());
    QVERIFY(!QFile::exists(QStringLiteral("/nonexistent-dir/x.svg")));
  }

  void contextMenuOffersExport() {
    MetricChart chart(QStringLiteral("Loss / run"));
    QStringList actions;
    for (QAction* action : chart.contextMenu()->actions()) {
      if (!action->isSeparator()) actions << action->text();
    }
    QCOMPARE(actions, (QStringList{QStringLiteral("Save as &PNG…"), QStringLiteral("Save as &SVG…"),
                                   QStringLiteral("&Reset zoom")}));
    QCOMPARE(chart.exportName(), QStringLiteral("Loss_run"));  // from the title, file-safe

    // A right click opens the menu; a right drag pans and does not.
    chart.resize(600, 400);
    chart.show();
    QVERIFY(QTest::qWaitForWindowExposed(&chart));
    chart.setSeries(QStringLiteral("s"), {{0, 0}, {10, 10}});
    chart.forceReplot();
    QWidget* viewport = chart.chartView()->viewport();
    const QPoint middle = viewport->rect().center();
    QTest::mousePress(viewport, Qt::RightButton, Qt::NoModifier, middle);
    QTest::mouseMove(viewport, middle + QPoint(60, 0));
    QTest::mouseRelease(viewport, Qt::RightButton, Qt::NoModifier, middle + QPoint(60, 0));
    QVERIFY(!chart.contextMenu()->isVisible());
    chart.replotNow();
    QVERIFY(chart.visibleXRange().first < 0);  // dragged to the right: the view moved left
    QTest::mousePress(viewport, Qt::RightButton, Qt::NoModifier, middle);
    QTest::mouseRelease(viewport, Qt::RightButton, Qt::NoModifier, middle);
    QTRY_VERIFY(chart.contextMenu()->isVisible());
    chart.contextMenu()->hide();
    chart.setExportName(QStringLiteral("my-run-loss"));
    QCOMPARE(chart.exportName(), QStringLiteral("my-run-loss"));
  }
};

QTEST_MAIN(MetricChartTest)
#include "metric_chart_test.moc"
