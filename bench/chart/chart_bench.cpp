// chart_bench: the GUI's chart redraw time and its store's SQLite ingest rate, each against a
// naive baseline measured in the same run (bench/README.md, "chart").
//
//  1. Redraw: one MetricChart (1200 x 700, offscreen) holding R runs x N points (default 8 x
//     1,000,000). A redraw is a zoom change (setXRange / resetZoom, a different range each time)
//     followed by replotNow() (indexed min/max decimation of every series to the plot's pixel
//     columns, new axis ranges) and a synchronous paint of the whole widget (QWidget::repaint(),
//     then processEvents() for anything the change posted): Qt Charts draws axes, grid and legend,
//     the chart's own item the decimated polylines. Median and p90
//     over 50 redraws. Baseline: the same data handed in full to QLineSeries (R x N points) in a
//     plain QChartView of the same size; a redraw is an axis range change plus repaint(), timed 3
//     times (it takes seconds). Checks: after each timed redraw, every series' drawn points are
//     exactly decimateMinMax(data, visible range, plot columns) (at most 2 points per column + 2).
//  2. Ingest: MetricsStore::ingest of batches of B samples (default 5,000; 1,000,000 samples in
//     total), from the first submission until the last batch is stored, into a fresh database.
//     Baseline: the same store with one sample per ingest call, i.e. one transaction per insert
//     (default 20,000 samples). Reference: raw SQLite (sqlite3 C API) inserting the same rows, in
//     the same order, into a fresh database with the store's metrics table, its partial index and
//     its pragmas: one prepared single-row INSERT OR IGNORE, one transaction per B rows, the rows
//     built before the clock starts. Checks: the stored sample count equals what was sent (and
//     the reference's row count).
//
// Exit status: 0 all passed, 1 a check failed, 2 usage error, 3 a target missed.
#include <QApplication>
#include <QChart>
#include <QChartView>
#include <QDir>
#include <QLineSeries>
#include <QPixmap>
#include <QTemporaryDir>
#include <QValueAxis>

#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "ringside/gui/decimation.h"
#include "ringside/gui/metrics_store.h"
#include "ringside/gui/widgets/metric_chart.h"

using namespace ringside;
using namespace ringside::gui;

namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

struct Options {
  int runs = 8;
  int64_t points = 1'000'000;
  int redraws = 50;
  int naiveRedraws = 3;
  int64_t samples = 1'000'000;
  int batch = 5'000;
  int64_t naiveSamples = 20'000;
  double targetRedrawMs = 16.0;
  double targetIngest = 1'000'000.0;
  bool redraw = true;  // --ingest-only: false
};

// ---- Noise: CPU time other processes took while a phase was timed.

double machineBusySeconds() {
  std::ifstream stat("/proc/stat");
  std::string cpu;
  uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  stat >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal;
  return static_cast<double>(user + nice + system + irq + softirq + steal) /
         static_cast<double>(::sysconf(_SC_CLK_TCK));
}

double ownCpuSeconds() {
  std::ifstream in("/proc/self/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t comm = text.rfind(')');
  if (comm == std::string::npos) return 0;
  std::istringstream fields(text.substr(comm + 2));
  std::string field;
  uint64_t utime = 0, stime = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {
    if (i == 14) utime = std::stoull(field);
    if (i == 15) stime = std::stoull(field);
  }
  return static_cast<double>(utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

class NoiseMeter {
 public:
  NoiseMeter() : busy_(machineBusySeconds()), own_(ownCpuSeconds()), start_(Clock::now()) {}
  // "0.12 CPU-s, 2.6% of the cores" taken by other processes since construction.
  std::string report() const {
    const double other = std::max(0.0, (machineBusySeconds() - busy_) - (ownCpuSeconds() - own_));
    const double wall = msSince(start_) / 1000.0;
    const double share = wall > 0 ? 100.0 * other / (wall * ::sysconf(_SC_NPROCESSORS_ONLN)) : 0;
    char text[128];
    std::snprintf(text, sizeof text, "%.2f CPU-s, %.1f%% of the cores%s", other, share,
                  share > 5.0 ? " <- disturbed" : "");
    return text;
  }

 private:
  double busy_;
  double own_;
  Clock::time_point start_;
};

double percentile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  const double rank = p * static_cast<double>(values.size() - 1);
  const size_t low = static_cast<size_t>(std::floor(rank));
  const size_t high = std::min(values.size() - 1, low + 1);
  return values[low] + (values[high] - values[low]) * (rank - static_cast<double>(low));
}

// A training-loss-like random walk with spikes, x = step 1..n.
std::vector<SeriesPoint> syntheticRun(int run, int64_t count) {
  std::mt19937_64 random(static_cast<uint64_t>(run) * 7919 + 1);
  std::normal_distribution<double> noise(0.0, 0.05);
  std::vector<SeriesPoint> points(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    const double step = static_cast<double>(i + 1);
    double y = 2.3 * std::exp(-step / (count / 8.0)) + 0.2 + 0.05 * run + noise(random);
    if (i % 99'991 == 0) y += 1.0;  // rare spikes the decimation must keep
    points[static_cast<size_t>(i)] = {step, y};
  }
  return points;
}

// The i-th zoom of the timed loop: full view, halves, and narrower windows moving along x.
std::pair<double, double> zoomRange(int i, double xMax) {
  if (i % 5 == 0) return {1.0, xMax};
  const double width = xMax / static_cast<double>(1 << (i % 5));
  const double start = std::fmod(i * 0.137 * xMax, xMax - width) + 1.0;
  return {start, start + width};
}

struct RedrawReport {
  std::vector<double> oursMs;
  std::vector<double> oursPaintMs;  // grab() part
  std::vector<double> naiveMs;
  double naiveLoadMs = 0;  // handing all points to the QLineSeries once
  int columns = 0;
  size_t maxDrawnPoints = 0;
  bool exact = true;
  std::string noiseOurs;
  std::string noiseNaive;
};

RedrawReport benchRedraw(const Options& options) {
  RedrawReport report;
  std::vector<std::vector<SeriesPoint>> data;
  for (int run = 0; run < options.runs; ++run) data.push_back(syntheticRun(run, options.points));
  const double xMax = static_cast<double>(options.points);

  {
    MetricChart chart(QStringLiteral("train/loss, %1 runs").arg(options.runs));
    chart.resize(1200, 700);
    chart.setAxisTitles(QStringLiteral("step"), QStringLiteral("loss"));
    chart.show();
    for (int run = 0; run < options.runs; ++run) {
      chart.setSeries(QStringLiteral("run %1").arg(run), data[static_cast<size_t>(run)]);
    }
    QApplication::processEvents();
    chart.forceReplot();
    chart.repaint();
    QApplication::processEvents();
    chart.forceReplot();  // the plot area has its final size now
    if (chart.grab().isNull()) report.exact = false;
    report.columns = chart.plotColumns();

    NoiseMeter noise;
    for (int i = 0; i < options.redraws; ++i) {
      const auto [low, high] = zoomRange(i, xMax);
      const auto start = Clock::now();
      if (i % 5 == 0) {
        chart.resetZoom();
      } else {
        chart.setXRange(low, high);
      }
      chart.replotNow();
      const auto paintStart = Clock::now();
      chart.repaint();  // one synchronous paint of the whole widget
      QApplication::processEvents();
      report.oursPaintMs.push_back(msSince(paintStart));
      report.oursMs.push_back(msSince(start));
      // Check (untimed): every series drew exactly the min/max decimation.
      const auto [shownLow, shownHigh] = chart.visibleXRange();
      for (int run = 0; run < options.runs; ++run) {
        const std::vector<SeriesPoint> drawn = chart.drawnPoints(QStringLiteral("run %1").arg(run));
        const auto expected = decimateMinMax(data[static_cast<size_t>(run)], shownLow, shownHigh,
                                             chart.plotColumns());
        report.maxDrawnPoints = std::max(report.maxDrawnPoints, drawn.size());
        bool same = drawn.size() == expected.size() &&
                    drawn.size() <= 2 * static_cast<size_t>(chart.plotColumns()) + 2;
        for (size_t k = 0; same && k < drawn.size(); ++k) {
          same = drawn[k].x == expected[k].x && drawn[k].y == expected[k].y;
        }
        if (!same) report.exact = false;
      }
    }
    report.noiseOurs = noise.report();
  }

  {
    // Naive: every point in the QLineSeries, the chart clips and draws them all.
    auto* qchart = new QChart;
    qchart->setAnimationOptions(QChart::NoAnimation);
    QChartView view(qchart);
    view.resize(1200, 700);
    view.show();
    auto* axisX = new QValueAxis;
    auto* axisY = new QValueAxis;
    qchart->addAxis(axisX, Qt::AlignBottom);
    qchart->addAxis(axisY, Qt::AlignLeft);
    const auto loadStart = Clock::now();
    for (int run = 0; run < options.runs; ++run) {
      auto* line = new QLineSeries;
      QList<QPointF> points;
      points.reserve(static_cast<qsizetype>(options.points));
      for (const SeriesPoint& point : data[static_cast<size_t>(run)]) {
        points.append(QPointF(point.x, point.y));
      }
      line->replace(points);
      qchart->addSeries(line);
      line->attachAxis(axisX);
      line->attachAxis(axisY);
    }
    axisY->setRange(0, 4);
    axisX->setRange(1, xMax);
    view.repaint();
    QApplication::processEvents();
    report.naiveLoadMs = msSince(loadStart);
    NoiseMeter noise;
    for (int i = 0; i < options.naiveRedraws; ++i) {
      const auto [low, high] = zoomRange(i + 1, xMax);
      const auto start = Clock::now();
      axisX->setRange(low, high);
      view.repaint();
      QApplication::processEvents();
      report.naiveMs.push_back(msSince(start));
    }
    report.noiseNaive = noise.report();
  }
  return report;
}

struct IngestReport {
  double batchedRate = 0;
  double batchedSeconds = 0;
  int64_t batchedStored = 0;
  double naiveRate = 0;
  double naiveSeconds = 0;
  int64_t naiveStored = 0;
  bool ok = true;
  std::string error;
  std::string noiseBatched;
  std::string noiseNaive;
  double rawRate = 0;
  double rawSeconds = 0;
  int64_t rawStored = 0;
  std::string noiseRaw;
};

const char* const kNames[] = {"train/loss", "time/step_ms", "time/compute_ms", "time/allreduce_ms",
                              "time/exposed_comm_ms"};

std::vector<IngestBatch> makeBatches(const QString& runId, int64_t samples, int batchSize) {
  std::vector<IngestBatch> batches;
  uint64_t seq = 1;
  for (int64_t done = 0; done < samples;) {
    IngestBatch batch;
    batch.runId = runId;
    batch.nodeId = QStringLiteral("bench-node");
    const int64_t count = std::min<int64_t>(batchSize, samples - done);
    batch.samples.reserve(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i, ++seq) {
      v1::MetricSample sample;
      sample.set_seq(seq);
      sample.set_step(static_cast<int64_t>(seq / 10));
      sample.set_epoch(static_cast<int64_t>(seq / 100'000));
      sample.set_wall_time(1.8e9 + static_cast<double>(seq) * 1e-4);
      sample.set_rank(static_cast<int32_t>(seq % 3) - 1);
      sample.set_name(kNames[seq % std::size(kNames)]);
      sample.set_value(1.0 / static_cast<double>(seq));
      batch.samples.push_back(std::move(sample));
    }
    done += count;
    batches.push_back(std::move(batch));
  }
  return batches;
}

// Submits every batch (the store runs them in order on its thread) and waits for the last.
// Returns the seconds from the first submission until the last batch is stored.
double ingestAll(MetricsStore& store, std::vector<IngestBatch> batches, IngestReport& report) {
  const auto start = Clock::now();
  QFuture<Result<IngestResult>> last;
  std::vector<QFuture<Result<IngestResult>>> futures;
  futures.reserve(batches.size());
  for (IngestBatch& batch : batches) futures.push_back(store.ingest(std::move(batch)));
  futures.back().waitForFinished();
  const double seconds = msSince(start) / 1000.0;
  for (auto& future : futures) {
    future.waitForFinished();
    if (!future.result().isOk()) {
      report.ok = false;
      report.error = future.result().status().toString();
    }
  }
  return seconds;
}

// The reference: the batches' rows inserted with the sqlite3 C API into `path` (a fresh file) with
// the store's metrics table, partial index and pragmas (gui/core/src/store_schema.cpp), one
// prepared single-row INSERT OR IGNORE, one transaction per batch. Sets report.raw*.
void rawSqliteIngest(const std::vector<IngestBatch>& batches, const std::string& path,
                     IngestReport& report) {
  struct Row {
    int64_t keyId, rank, step, seq, epoch;
    double wallTime, value;
  };
  std::vector<std::vector<Row>> rows;
  for (const IngestBatch& batch : batches) {
    auto& out = rows.emplace_back();
    out.reserve(batch.samples.size());
    for (const v1::MetricSample& sample : batch.samples) {
      const auto name = std::find(std::begin(kNames), std::end(kNames), sample.name());
      out.push_back(Row{name - std::begin(kNames) + 1, sample.rank(), sample.step(),
                        static_cast<int64_t>(sample.seq()), sample.epoch(), sample.wall_time(),
                        sample.value()});
    }
  }
  sqlite3* db = nullptr;
  auto failed = [&](const char* what) {
    report.ok = false;
    report.error = std::string("raw SQLite reference: ") + what + ": " + sqlite3_errmsg(db);
  };
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) {
    failed("open");
    sqlite3_close(db);
    return;
  }
  std::unique_ptr<sqlite3, decltype(&sqlite3_close)> owner(db, sqlite3_close);
  if (sqlite3_exec(db,
                   "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA cache_size=-65536;"
                   "PRAGMA temp_store=MEMORY;"
                   "CREATE TABLE metrics (run_key INTEGER NOT NULL, key_id INTEGER NOT NULL,"
                   " rank INTEGER NOT NULL, step INTEGER NOT NULL, seq INTEGER NOT NULL,"
                   " epoch INTEGER NOT NULL, wall_time REAL NOT NULL, value REAL,"
                   " PRIMARY KEY (run_key, key_id, rank, step, seq)) WITHOUT ROWID;"
                   "CREATE INDEX metrics_telemetry ON metrics (run_key, key_id, rank, seq)"
                   " WHERE seq < 0;",
                   nullptr, nullptr, nullptr) != SQLITE_OK) {
    return failed("schema");
  }
  sqlite3_stmt* insert = nullptr;
  if (sqlite3_prepare_v2(db,
                         "INSERT OR IGNORE INTO metrics (run_key, key_id, rank, step, seq, epoch,"
                         " wall_time, value) VALUES (1, ?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                         -1, &insert, nullptr) != SQLITE_OK) {
    return failed("prepare");
  }
  std::unique_ptr<sqlite3_stmt, decltype(&sqlite3_finalize)> statement(insert, sqlite3_finalize);
  NoiseMeter noise;
  const auto start = Clock::now();
  for (const auto& batch : rows) {
    if (sqlite3_exec(db, "BEGIN", nullptr, nullptr, nullptr) != SQLITE_OK) return failed("BEGIN");
    for (const Row& row : batch) {
      sqlite3_bind_int64(insert, 1, row.keyId);
      sqlite3_bind_int64(insert, 2, row.rank);
      sqlite3_bind_int64(insert, 3, row.step);
      sqlite3_bind_int64(insert, 4, row.seq);
      sqlite3_bind_int64(insert, 5, row.epoch);
      sqlite3_bind_double(insert, 6, row.wallTime);
      sqlite3_bind_double(insert, 7, row.value);
      if (sqlite3_step(insert) != SQLITE_DONE) return failed("INSERT");
      sqlite3_reset(insert);
    }
    if (sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK) return failed("COMMIT");
  }
  report.rawSeconds = msSince(start) / 1000.0;
  report.noiseRaw = noise.report();
  sqlite3_stmt* count = nullptr;
  if (sqlite3_prepare_v2(db, "SELECT count(*) FROM metrics", -1, &count, nullptr) == SQLITE_OK &&
      sqlite3_step(count) == SQLITE_ROW) {
    report.rawStored = sqlite3_column_int64(count, 0);
  }
  sqlite3_finalize(count);
  int64_t sent = 0;
  for (const auto& batch : rows) sent += static_cast<int64_t>(batch.size());
  report.rawRate = static_cast<double>(sent) / report.rawSeconds;
}

IngestReport benchIngest(const Options& options) {
  IngestReport report;
  QTemporaryDir dir;
  MetricsStore store(QDir(dir.path()).filePath(QStringLiteral("ringside.sqlite")));
  if (Status opened = store.open().result(); !opened.isOk()) {
    report.ok = false;
    report.error = opened.toString();
    return report;
  }
  // The reference first: the store's run then starts on a machine in the same state.
  rawSqliteIngest(makeBatches(QStringLiteral("raw"), options.samples, options.batch),
                  QDir(dir.path()).filePath(QStringLiteral("raw.sqlite")).toStdString(), report);
  {
    auto batches = makeBatches(QStringLiteral("batched"), options.samples, options.batch);
    NoiseMeter noise;
    report.batchedSeconds = ingestAll(store, std::move(batches), report);
    report.noiseBatched = noise.report();
    report.batchedRate = static_cast<double>(options.samples) / report.batchedSeconds;
    auto count = store.sampleCount(QStringLiteral("batched")).result();
    report.batchedStored = count.isOk() ? count.value() : -1;
  }
  {
    auto batches = makeBatches(QStringLiteral("naive"), options.naiveSamples, 1);
    NoiseMeter noise;
    report.naiveSeconds = ingestAll(store, std::move(batches), report);
    report.noiseNaive = noise.report();
    report.naiveRate = static_cast<double>(options.naiveSamples) / report.naiveSeconds;
    auto count = store.sampleCount(QStringLiteral("naive")).result();
    report.naiveStored = count.isOk() ? count.value() : -1;
  }
  return report;
}

std::string thousands(double value) {
  const std::string digits = std::to_string(std::llabs(std::llround(value)));
  std::string out = value < 0 ? "-" : "";
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

bool parse(int argc, char** argv, Options& options) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto next = [&](auto& out) {
      if (i + 1 >= argc) return false;
      std::istringstream in(argv[++i]);
      return static_cast<bool>(in >> out);
    };
    bool ok = true;
    if (arg == "--runs") {
      ok = next(options.runs) && options.runs > 0;
    } else if (arg == "--points") {
      ok = next(options.points) && options.points > 1;
    } else if (arg == "--redraws") {
      ok = next(options.redraws) && options.redraws > 0;
    } else if (arg == "--naive-redraws") {
      ok = next(options.naiveRedraws) && options.naiveRedraws > 0;
    } else if (arg == "--samples") {
      ok = next(options.samples) && options.samples > 0;
    } else if (arg == "--batch") {
      ok = next(options.batch) && options.batch > 0;
    } else if (arg == "--naive-samples") {
      ok = next(options.naiveSamples) && options.naiveSamples > 0;
    } else if (arg == "--ingest-only") {
      options.redraw = false;
    } else if (arg == "--help" || arg == "-h") {
      std::printf(
          "usage: chart_bench [--runs 8] [--points 1000000] [--redraws 50] [--naive-redraws 3]\n"
          "                   [--samples 1000000] [--batch 5000] [--naive-samples 20000]\n"
          "                   [--ingest-only]\n");
      std::exit(0);
    } else {
      ok = false;
    }
    if (!ok) {
      std::fprintf(stderr, "chart_bench: bad or unknown argument %s (see --help)\n", arg.c_str());
      return false;
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (!parse(argc, argv, options)) return 2;
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);

  std::printf("chart_bench: %d runs x %s points per chart; ingest %s samples in batches of %d\n",
              options.runs, thousands(static_cast<double>(options.points)).c_str(),
              thousands(static_cast<double>(options.samples)).c_str(), options.batch);
  const RedrawReport redraw = options.redraw ? benchRedraw(options) : RedrawReport{};
  const IngestReport ingest = benchIngest(options);

  const double median = options.redraw ? percentile(redraw.oursMs, 0.5) : 0.0;
  const double p90 = options.redraw ? percentile(redraw.oursMs, 0.9) : 0.0;
  const double paintMedian = options.redraw ? percentile(redraw.oursPaintMs, 0.5) : 0.0;
  const double naiveMedian = options.redraw ? percentile(redraw.naiveMs, 0.5) : 0.0;
  const bool ingestChecked = ingest.ok && ingest.batchedStored == options.samples &&
                             ingest.naiveStored == options.naiveSamples &&
                             ingest.rawStored == options.samples;
  const bool redrawPass = !options.redraw || median <= options.targetRedrawMs;
  const bool ingestPass = ingest.batchedRate >= options.targetIngest;

  std::printf("\n| measure | value |\n|---|---|\n");
  if (options.redraw) {
    std::printf(
        "| redraw, decimated (zoom change + replot + repaint), median of %d | %.2f ms (p90 %.2f, "
        "of which paint %.2f) |\n",
        options.redraws, median, p90, paintMedian);
    std::printf("| redraw, naive (all %s points in QLineSeries), median of %d | %.0f ms |\n",
                thousands(static_cast<double>(options.points) * options.runs).c_str(),
                options.naiveRedraws, naiveMedian);
    std::printf("| naive: handing the points to QLineSeries + first paint | %.0f ms |\n",
                redraw.naiveLoadMs);
    std::printf("| speed-up decimated / naive | %.0fx |\n", naiveMedian / median);
    std::printf("| plot columns; most points drawn for one series | %d; %zu |\n", redraw.columns,
                redraw.maxDrawnPoints);
  }
  std::printf("| ingest, batches of %d (MetricsStore::ingest) | %s samples/s (%.2f s) |\n",
              options.batch, thousands(ingest.batchedRate).c_str(), ingest.batchedSeconds);
  std::printf(
      "| ingest, naive: one sample per ingest = one insert per transaction | %s samples/s "
      "(%.2f s for %s) |\n",
      thousands(ingest.naiveRate).c_str(), ingest.naiveSeconds,
      thousands(static_cast<double>(options.naiveSamples)).c_str());
  std::printf("| ratio batched / naive ingest | %.0fx |\n", ingest.batchedRate / ingest.naiveRate);
  std::printf(
      "| ingest, raw SQLite reference: same rows, table, index and pragmas, prepared single-row "
      "INSERT, a transaction per %d rows | %s samples/s (%.2f s) |\n",
      options.batch, thousands(ingest.rawRate).c_str(), ingest.rawSeconds);
  std::printf("| ratio MetricsStore::ingest / raw SQLite | %.2f |\n",
              ingest.batchedRate / ingest.rawRate);
  std::printf(
      "| other processes' CPU (ours redraw; naive redraw; batched; naive ingest; raw SQLite) | "
      "%s; %s; %s; %s; %s |\n",
      redraw.noiseOurs.c_str(), redraw.noiseNaive.c_str(), ingest.noiseBatched.c_str(),
      ingest.noiseNaive.c_str(), ingest.noiseRaw.c_str());
  std::printf("| check: every series drew decimateMinMax, <= 2 points per column + 2 | %s |\n",
              redraw.exact ? "PASS" : "FAIL");
  std::printf("| check: samples stored = sent (%s + %s; raw SQLite %s) | %s%s |\n",
              thousands(static_cast<double>(options.samples)).c_str(),
              thousands(static_cast<double>(options.naiveSamples)).c_str(),
              thousands(static_cast<double>(options.samples)).c_str(),
              ingestChecked ? "PASS" : "FAIL", ingest.error.empty() ? "" : ingest.error.c_str());
  if (options.redraw) {
    std::printf("| target: median redraw <= %.0f ms | %s |\n", options.targetRedrawMs,
                redrawPass ? "PASS" : "FAIL");
  }
  std::printf("| target: ingest >= %s samples/s | %s |\n", thousands(options.targetIngest).c_str(),
              ingestPass ? "PASS" : "FAIL");
  if (!redraw.exact || !ingestChecked) return 1;
  return redrawPass && ingestPass ? 0 : 3;
}
