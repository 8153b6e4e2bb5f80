// BucketTimingsView: a run's per-bucket communication (docs/metrics.md, "Communication"). A chart
// of each gradient bucket's own all-reduce duration over the run (one series per bucket,
// comm/bucket<b>/allreduce_ms), a table of each bucket's latest bytes, duration, algbw and busbw
// with the step's totals and its exposed communication, and a line above both that says how much
// of the all-reduce time the step waited for. The figures come from buildBucketTimings
// (gui_core, bucket_timings.h); the view only shows them. GUI thread only.
#pragma once

#include <QString>
#include <QWidget>

#include "ringside/gui/bucket_timings.h"
#include "ringside/gui/metrics_store.h"

class QLabel;
class QTableWidget;

namespace ringside::gui {

class MetricChart;

class BucketTimingsView : public QWidget {
  Q_OBJECT

 public:
  explicit BucketTimingsView(QWidget* parent = nullptr);

  // Replaces what is shown with the figures of `series` (the run's global series by metric name,
  // x as the caller charts it; names other than bucketTimingMetricNames' are ignored). A run
  // without per-bucket metrics (one rank, a custom command, a run recorded before they existed)
  // shows a placeholder.
  void setSamples(const MetricSeriesMap& series);

  // Reads the run's metric names, then the global series of those it shows, from `store` and
  // calls setSamples with them; asynchronous (the store's futures), never blocking this thread.
  // A failed query leaves the view as it was. `store` must outlive the view's pending queries
  // (the dashboard's store does). A fetch answered after a newer one started is dropped.
  void fetch(MetricsStore& store, const QString& runId, SeriesX x = SeriesX::kStep);

  // The x axis' title ("step", "epoch" or "time (s)"), as the dashboard's other charts say it.
  void setXTitle(const QString& title);

  // The text of the line above the chart and table.
  QString summaryText() const;
  MetricChart* chart() const { return chart_; }
  QTableWidget* table() const { return table_; }
  const BucketTimings& timings() const { return timings_; }

 private:
  void fillTable();
  void updateSummary();

  QLabel* summary_;
  MetricChart* chart_;
  QTableWidget* table_;
  BucketTimings timings_;
  int fetchGeneration_ = 0;
};

}  // namespace ringside::gui
