// CompareView: two or more runs side by side. Overlaid charts of train loss, test accuracy,
// samples/s and step time (global values, x = step; one colour per run, with a legend), a chart
// of a chosen GPU value stored with the runs (CompareGpuChart, x = time since each run's start),
// a chart of any other metric the runs logged (CompareMetricChart: a script's own names),
// the summary metrics per run, and the config diff with the differing settings highlighted. Each
// chart exports as PNG or SVG; the runs' metrics export as CSV at full resolution.
//
// Loads everything from the store asynchronously (QFutureWatcher) and hands the full series to
// MetricChart, which decimates them to min/max per pixel column and redraws on its timer (zoom,
// pan, hover read-out and SVG export come with it). Runs that are still live are re-read when the
// controller reports new data (at most once a second).
// GUI thread only.
#pragma once

#include <QHash>
#include <QStringList>
#include <QTimer>
#include <QVector>
#include <QWidget>

#include <optional>
#include <vector>

#include "ringside/common/status.h"
#include "ringside/gui/decimation.h"
#include "ringside/gui/metrics_store.h"

class QCheckBox;
class QTableWidget;

namespace ringside::gui {

class CompareGpuChart;
class CompareMetricChart;
class Controller;
class MetricChart;

class CompareView : public QWidget {
  Q_OBJECT

 public:
  // `controller` (its store) must outlive the view. Starts loading at once.
  CompareView(Controller& controller, QStringList runIds, QWidget* parent = nullptr);
  ~CompareView() override;

  const QStringList& runIds() const { return runIds_; }
  // The metrics charted, in display order (metric names as in docs/metrics.md).
  static QStringList chartedMetrics();
  // The colour of the i-th run (also its colour in every chart and table header).
  static QColor runColor(int index);

  // True once every run's record and every charted series has been read once.
  bool loaded() const { return pendingLoads_ == 0 && firstLoadDone_; }
  // The chart of a metric (nullptr for one not charted).
  MetricChart* chart(const QString& metric) const;
  // The GPU chart (its value box picks utilization, memory, power, ...); never nullptr.
  CompareGpuChart* gpuChart() const { return gpuChart_; }
  // The chart of any other metric the runs logged (its box picks the name); never nullptr.
  CompareMetricChart* metricChart() const { return metricChart_; }
  QTableWidget* configTable() const { return configTable_; }
  QTableWidget* summaryTable() const { return summaryTable_; }
  // Number of points of the run's series that the chart currently draws (after decimation).
  int drawnPointCount(const QString& metric, int runIndex) const;

  // Writes the chart as shown as PNG or SVG (MetricChart::exportPng/exportSvg). Errors:
  // kNotFound for a metric that is not charted, kIOError when the file cannot be written.
  Status exportChartPng(const QString& metric, const QString& path) const;
  Status exportChartSvg(const QString& metric, const QString& path) const;

 signals:
  // Every run's record and series have been read (after the first load and each reload).
  void loadFinished();
  void errorMessage(const QString& message);

 public slots:
  // Asks for a folder and writes <name>-<run id>.csv per run (every sample, full resolution;
  // askExportRunsCsv).
  void exportMetricsCsv();

 private:
  struct Chart {
    QString metric;
    QString title;
    double scale = 1.0;  // display = value * scale (accuracy as %)
    MetricChart* widget = nullptr;
    QVector<std::vector<SeriesPoint>> data;  // per run, full resolution
  };

  QWidget* buildCharts();
  QWidget* buildSummary();
  QWidget* buildConfig();
  void loadRun(int runIndex);
  void loadDone();
  void updateCharts();
  void fillSummary();
  void fillConfig();
  const Chart* chartOf(const QString& metric) const;
  QString runLabel(int runIndex) const;

  Controller& controller_;
  QStringList runIds_;
  QVector<std::optional<RunRecord>> records_;  // per run; nullopt until read (or unknown)
  QVector<Chart> charts_;
  CompareGpuChart* gpuChart_ = nullptr;
  CompareMetricChart* metricChart_ = nullptr;
  QTableWidget* summaryTable_ = nullptr;
  QTableWidget* configTable_ = nullptr;
  QCheckBox* onlyDifferences_ = nullptr;
  QTimer reloadTimer_;
  QVector<bool> reloadRun_;  // per run: re-read on the next reload tick
  int pendingLoads_ = 0;
  bool firstLoadDone_ = false;
};

}  // namespace ringside::gui
