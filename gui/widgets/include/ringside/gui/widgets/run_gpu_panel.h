// RunGpuPanel: the dashboard's GPU charts of one run (docs/dashboard.md, "GPUs of the run"):
// utilization (%), memory used (MiB; the GPUs' memory size under the x axis while live readings
// carry it),
// power (W), temperature (°C), SM clock (MHz), PCIe and NVLink throughput (MB/s, rx and tx), x =
// time since the run's start (s). One series per GPU of the run on every node of the run
// (RunInfo.placement, run_placement.h; every GPU of the owner's node when the placement is
// unknown), named "GPU <i>", or "<node> GPU <i>" for a run on several nodes. A value a GPU does not
// report has no series (no zeros); a chart no GPU of the run fills says why.
//
// Data: live telemetry of the run's nodes (Controller::telemetryReceived) merged with the samples
// stored with the run (gpu<i>/..., docs/metrics.md), which are read once when the run's record
// first arrives (setRun), so a finished or reopened run shows its GPU history and a live one
// starts with what was already stored; read again when the run ends, so that from then on the
// charts show exactly what is stored (as the same run reopened from History). Redraws are coalesced
// (at most 4 per second). GUI thread only.
#pragma once

#include <QList>
#include <QString>
#include <QStringList>
#include <QWidget>

#include <map>
#include <optional>
#include <vector>

#include "ringside/gui/metrics_store.h"
#include "ringside/gui/run_gpu_series.h"

class QTimer;

namespace ringside::gui {

class Controller;
class MetricChart;

class RunGpuPanel : public QWidget {
  Q_OBJECT

 public:
  // The charts of one run; `controller` must outlive the panel. Nothing is charted before the
  // first setRun().
  RunGpuPanel(Controller& controller, QString runId, QWidget* parent = nullptr);
  ~RunGpuPanel() override;

  // The run's record as the store has it now (owner, placement, start time, state); call it with
  // every new answer. The first call starts reading the GPU series stored with the run.
  void setRun(const RunRecord& run);

  // Every chart, in display order: utilization, memory, power, temperature, SM clock, PCIe,
  // NVLink.
  QList<MetricChart*> charts() const;
  // The file-name part of each chart's export (e.g. "gpu-power"), in charts() order.
  static QStringList exportNames();
  MetricChart* utilChart() const;
  MetricChart* memChart() const;
  MetricChart* powerChart() const;
  MetricChart* tempChart() const;
  MetricChart* smClockChart() const;
  MetricChart* pcieChart() const;
  MetricChart* nvlinkChart() const;

  // True once the series stored with the run have been read (or reading them failed).
  bool storedLoaded() const { return storedLoads_ > 0; }
  // How many reads of the stored series have finished (1 at first, 2 after the run ended).
  int storedLoadCount() const { return storedLoads_; }
  // Redraws the charts from the data now (the coalescing timer does it otherwise).
  void redrawNow();
  // The merged data (for tests).
  const RunGpuSeries& series() const { return series_; }

 private:
  struct Chart {
    MetricChart* widget = nullptr;
    GpuField rx;                 // the one field, or receive of a rx/tx pair
    std::optional<GpuField> tx;  // transmit of a rx/tx pair
  };

  void onTelemetry(const QString& nodeId, const v1::NodeTelemetry& telemetry);
  // Reads the GPU series stored with the run; `replace`: they replace what the charts hold
  // (the run ended) instead of being merged with it. A newer load supersedes an older one.
  void loadStored(bool replace);
  void scheduleRedraw();
  void redraw();
  // What an empty chart says: why there is nothing (no GPUs, nothing stored, N/A).
  void updatePlaceholders();
  // A GPU's name in the legends: "GPU 0", or "node-2 GPU 0" for a run on several nodes (its
  // rx/tx series add " rx", " tx").
  QString gpuName(RunGpu gpu) const;
  QString nodeName(int firstRank) const;
  double origin() const;
  void updateMemoryTitle();

  Controller& controller_;
  QString runId_;
  std::optional<RunRecord> run_;
  RunGpuSeries series_;
  QList<Chart> charts_;
  QTimer* redrawTimer_;
  bool storedRequested_ = false;
  int storedLoads_ = 0;
  int loadGeneration_ = 0;
  bool sawTelemetry_ = false;        // a reading of a node of the run came while it ran
  bool sawNodeWithoutGpus_ = false;  // such a reading had no GPU at all
  std::optional<double> drawnOrigin_;
  std::vector<RunGpu> drawnGpus_;
  std::map<std::pair<RunGpu, GpuField>, QString> drawnNames_;
};

}  // namespace ringside::gui
