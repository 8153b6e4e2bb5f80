// CompareGpuChart: Compare's chart of the GPU values stored with each run (docs/metrics.md, "GPU
// telemetry of a run"; docs/dashboard.md, "GPUs of the run"). A box picks the value (utilization,
// memory used, power, temperature, SM clock, PCIe or NVLink receive or transmit); the chart has
// one series per GPU of each run, "<run> GPU <i>" ("<run> <host> GPU <i>" for a run on several
// nodes), in the run's colour (further GPUs of a run in darker and lighter shades of it), with
// x = time since that run's start (s), so runs that started at different times line up. A run
// with no value of that kind stored has no series. Reads the store asynchronously on every
// setRuns() and value change; answers of an older load are dropped. GUI thread only.
#pragma once

#include <QColor>
#include <QList>
#include <QString>
#include <QWidget>

#include <map>
#include <vector>

#include "ringside/gui/metrics_store.h"
#include "ringside/gui/run_gpu_metrics.h"

class QComboBox;

namespace ringside::gui {

class MetricChart;

class CompareGpuChart : public QWidget {
  Q_OBJECT

 public:
  // One compared run.
  struct Run {
    QString runId;
    QString label;      // as the other charts' legends name it
    QColor color;       // the run's colour
    double origin = 0;  // Unix seconds that become x = 0: the run's start (or creation) time
    std::vector<v1::HostSlots> placement;  // hosts in rank order (names a multi-node run's GPUs)
  };

  // `store` must outlive the chart.
  explicit CompareGpuChart(MetricsStore& store, QWidget* parent = nullptr);
  ~CompareGpuChart() override;

  // Replaces the runs and reads their series of the chosen value.
  void setRuns(QList<Run> runs);
  // Chooses the value (also through the box) and reads it for every run.
  void setField(GpuField field);
  GpuField field() const;
  // The box's entry of a value ("Power") and its axis title with the unit ("power (W)").
  static QString fieldLabel(GpuField field);
  static QString fieldUnit(GpuField field);

  MetricChart* chart() const { return chart_; }
  QComboBox* fieldBox() const { return fieldBox_; }
  // True when the last load has finished.
  bool loaded() const { return pending_ == 0; }

 signals:
  // The series of the last setRuns() or setField() are charted.
  void loadFinished();

 private:
  // One GPU of one run: (run index, the node's first rank, NVML index).
  struct Key {
    int run = 0;
    int firstRank = 0;
    uint32_t index = 0;
    auto operator<=>(const Key&) const = default;
  };

  void load();
  void done(int generation);
  void apply();
  QString seriesName(const Key& key) const;

  MetricsStore& store_;
  QComboBox* fieldBox_;
  MetricChart* chart_;
  QList<Run> runs_;
  std::map<Key, std::vector<SeriesPoint>> data_;  // x = wall time
  int generation_ = 0;
  int pending_ = 0;
};

}  // namespace ringside::gui
