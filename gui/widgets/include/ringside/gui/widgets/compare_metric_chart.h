// CompareMetricChart: Compare's chart of any metric the compared runs logged (a PyTorch script's
// own names, a custom command's, train/lr, per-bucket figures, ...), beside the fixed charts of
// loss, accuracy, throughput and step time. A box lists every metric name any of the runs has
// (the union, sorted; GPU and node telemetry have the GPU chart), the chart has one series per
// run that has the metric: its global value, or rank 0's for a name logged per rank only, in the
// run's colour, x = step. Reads the store asynchronously on every setRuns() and choice; answers
// of an older load are dropped. GUI thread only.
#pragma once

#include <QColor>
#include <QList>
#include <QString>
#include <QStringList>
#include <QWidget>

#include "ringside/gui/metrics_store.h"

class QComboBox;

namespace ringside::gui {

class MetricChart;

class CompareMetricChart : public QWidget {
  Q_OBJECT

 public:
  struct Run {
    QString runId;
    QString label;  // as the other charts' legends name it
    QColor color;
  };

  // `store` must outlive the chart.
  explicit CompareMetricChart(MetricsStore& store, QWidget* parent = nullptr);

  // Replaces the runs, re-reads their metric names and charts the chosen one (kept when a run
  // still has it; else the first name the dashboard's fixed charts do not show, else the first).
  void setRuns(QList<Run> runs);
  // Chooses a metric (as the box does) and reads it for every run.
  void setMetric(const QString& name);
  // The chosen metric name (not metric(): that is QWidget's virtual metric()).
  QString currentMetric() const;
  QStringList metricNames() const;

  MetricChart* chart() const { return chart_; }
  QComboBox* metricBox() const { return metricBox_; }
  bool loaded() const { return pending_ == 0; }

 signals:
  void loadFinished();

 private:
  void loadNames();
  void loadSeries();

  MetricsStore& store_;
  QComboBox* metricBox_;
  MetricChart* chart_;
  QList<Run> runs_;
  int generation_ = 0;
  int pending_ = 0;
};

}  // namespace ringside::gui
