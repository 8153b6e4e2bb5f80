// DashboardTab: the live dashboard of one run (one tab per open run). Charts of train loss (raw,
// faint, behind an EMA-smoothed line, with test loss per epoch), test accuracy, samples/s, step
// time split into compute and exposed communication (stacked), all-reduce time and bus bandwidth
// on the "Training" page; the run's GPUs on every node of the run on the "GPUs" page
// (RunGpuPanel: utilization, memory, power, temperature, SM clock, PCIe and NVLink, live and as
// stored with the run); every other metric the run logs on the "Metrics" page
// (CustomMetricsPanel: a chart per name, grouped by the part before '/'); a per-rank view; a header
// with the run's name, state, elapsed time, ETA, a Stop button and, once a trainer run stopped
// or failed with a checkpoint, a Resume button (Controller::resumeRun; "resumed from <run>" on
// the resumed run); and the log tail. The ETA comes
// from runProgress() over the run's own facts (run/total_steps, run/steps_per_epoch), its last step
// and its throughput. The per-rank view holds a table of each rank's latest times and a rank ×
// step heatmap of the whole run (RankHeatmapView). The x axis shows steps, fractional epochs (step
// / run/steps_per_epoch; whole epochs for a run that does not report it) or time since the start.
// Export: any chart as PNG or SVG (the "Export chart" menu, or a chart's context menu), and the
// run's metrics as CSV at full resolution from the store (every metric and rank, not the decimated
// chart data).
//
// Data flow (docs/design.md decision 7): Controller::runDataChanged only marks the tab dirty; a
// timer (15 Hz) re-queries the store asynchronously (QFuture continuations on this object) when
// dirty and no query is in flight, and the charts decimate on their own coalesced replot. The GPU
// page reads the GPU series stored with the run and adds Controller::telemetryReceived of the run's
// nodes itself (RunGpuPanel). GUI thread only.
#pragma once

#include <QElapsedTimer>
#include <QHash>
#include <QString>
#include <QWidget>

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "ringside/gui/duration_format.h"
#include "ringside/gui/metrics_store.h"
#include "ringside/gui/rank_heatmap.h"
#include "ringside/gui/rank_stats.h"
#include "ringside/gui/run_progress.h"

class QCheckBox;
class QComboBox;
class QToolButton;
class QLabel;
class QPlainTextEdit;
class QPushButton;
class QSlider;
class QTabWidget;
class QTimer;

namespace ringside::gui {

class Controller;
class MetricChart;
class RankView;
class BucketTimingsView;
class RunGpuPanel;
class CustomMetricsPanel;

class DashboardTab : public QWidget {
  Q_OBJECT

 public:
  DashboardTab(Controller& controller, const QString& runId, QWidget* parent = nullptr);
  ~DashboardTab() override;

  const QString& runId() const { return runId_; }
  // The run's name once known, else its id (for the tab's title).
  QString title() const;

  // Marks the data stale; the next timer tick re-queries the store.
  void refresh();

  // For tests and screenshots.
  MetricChart* lossChart() const { return loss_; }
  MetricChart* stepTimeChart() const { return stepTime_; }
  MetricChart* gpuUtilChart() const;
  MetricChart* gpuMemChart() const;
  RunGpuPanel* gpuPanel() const { return gpuPanel_; }
  // The "Metrics" page: a chart per metric the other pages do not chart (custom_metrics.h).
  CustomMetricsPanel* customMetrics() const { return customMetrics_; }
  // The chart pages: "Training", "GPUs" and "Metrics".
  QTabWidget* chartPages() const { return chartPages_; }
  RankView* rankView() const { return rankView_; }
  QComboBox* xModeBox() const { return xMode_; }
  // The stall banner (hidden while the run makes progress), for tests and the screenshot tour.
  QLabel* stallBanner() const { return stall_; }
  QToolButton* exportChartButton() const { return exportChart_; }
  QPushButton* exportCsvButton() const { return exportCsv_; }
  // Shown once the run ended with a checkpoint to resume from (hasResumableCheckpoint).
  QPushButton* resumeButton() const { return resume_; }
  // "resumed from <run id>" for a run that continues another ("" otherwise).
  QString resumedFromText() const;
  // Every chart, in display order.
  QList<MetricChart*> charts() const;
  QString etaText() const;
  QString stateText() const;
  QString logText() const;
  // Series display names of the loss chart.
  static QString rawLossName();
  static QString smoothedLossName();
  static QString testLossName();

 signals:
  // The run's name became known or changed (the main window renames the tab).
  void titleChanged(const QString& title);

 public slots:
  // Asks for confirmation, then Controller::stopRun.
  void requestStop();
  // Controller::resumeRun: a new run continues this one from its last checkpoint (its
  // dashboard opens when it launched; a failure comes as Controller::launchFailed).
  void requestResume();
  // Asks for a file (askExportRunsCsv) and writes every sample of the run to it as CSV.
  void exportMetricsCsv();

 private:
  struct Request {
    QString name;
    int rank = -1;
    SeriesX x = SeriesX::kStep;
  };

  void buildUi();
  void onTick();
  void fetch();
  // The ranks that report per-rank timings, then fetchRankSeries() for them.
  void fetchRanks();
  // Reads the agent's latest straggler verdict of the run into the rank view.
  void fetchStraggler();
  // Each rank's step, exposed-communication and compute series (`perRank`: ranks >= 0).
  void fetchRankSeries(const std::vector<int>& perRank);
  // Shows a round of per-rank answers: the table at once, the heatmap once it is built.
  void applyRanks(const std::vector<RankStat>& stats, std::vector<RankTimingSeries> timings);
  void applySeries();
  void applyRun(const RunRecord& run);
  void applySmoothing();
  void updateClock();
  void setXMode(int index);
  // What the x axis shows (the combo box): kStep, kEpoch (fractional) or kWallTime.
  SeriesX xMode() const;
  // A charted series from the last answers, its x as the x axis shows it.
  std::vector<SeriesPoint> take(const QString& name);
  double xOrigin() const;
  // The charts' export file names: "<run>-<chart>".
  void updateExportNames();

  static constexpr int kLogTailLines = 300;
  // Per-rank values change once per log step: re-read them at most once a second.
  static constexpr qint64 kRankFetchEveryMs = 1000;

  Controller& controller_;
  QString runId_;
  std::optional<RunRecord> run_;

  QLabel* name_;
  QLabel* state_;
  QLabel* elapsed_;
  QLabel* eta_;
  QLabel* message_;
  QLabel* stall_;  // the stall verdict's banner (stall_text.h), hidden while the run progresses
  void updateStall();
  QPushButton* stop_;
  QPushButton* resume_;
  QLabel* resumedFrom_;
  // Shows Resume for a run that ended with a checkpoint, enabled while resumeProblem() is empty.
  void updateResume();
  QComboBox* xMode_;
  QCheckBox* logX_;
  QCheckBox* logY_;
  QSlider* smoothing_;
  QLabel* smoothingValue_;
  QToolButton* exportChart_;
  QPushButton* exportCsv_;
  MetricChart* loss_;
  MetricChart* accuracy_;
  MetricChart* throughput_;
  MetricChart* stepTime_;
  MetricChart* allreduce_;
  MetricChart* busbw_;
  RunGpuPanel* gpuPanel_;
  CustomMetricsPanel* customMetrics_;
  bool customDirty_ = true;  // names or values to re-read (at most once a second)
  QElapsedTimer sinceCustomFetch_;
  QTabWidget* chartPages_;
  RankView* rankView_;
  BucketTimingsView* buckets_;  // per-bucket all-reduce timings (the "Per bucket" tab)
  QPlainTextEdit* log_;
  QTimer* timer_;

  bool dirty_ = true;
  int inFlight_ = 0;       // store queries not answered yet
  int generation_ = 0;     // bumped when the x mode changes: older answers are dropped
  bool rankDirty_ = true;  // per-rank values to re-query (at most every rankFetchEveryMs_)
  QElapsedTimer sinceRankFetch_;
  // 1 s, or 4 times the last round's duration when a long run's series take longer to read.
  qint64 rankFetchEveryMs_ = kRankFetchEveryMs;
  std::map<std::pair<QString, int>, std::vector<SeriesPoint>> fetched_;  // (name, SeriesX)
  // The x the charted series were last queried with: kStep also for fractional epochs.
  SeriesX chartX_ = SeriesX::kStep;
  std::vector<SeriesPoint> rawLoss_;
  // For the ETA: the run's facts and its last step from the store, the global batch from its
  // spec; runningSeconds is filled in on every clock tick.
  ProgressFacts progress_;
};

}  // namespace ringside::gui
