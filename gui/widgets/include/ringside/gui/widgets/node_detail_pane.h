// NodeDetailPane: one node's inventory (host name, OS, CPU, memory, GPUs with driver and CUDA
// versions, labels, and each GPU's latest reading) and live charts of its last kHistorySeconds of
// telemetry: CPU (%), memory used (GiB), network receive and transmit (MB/s), and per GPU
// utilization (%), memory (GiB), power (W), temperature (°C), SM clock (MHz), PCIe and NVLink
// receive and transmit (MB/s; the NVLink chart only where a GPU reports NVLink).
//
// It keeps a rolling in-memory series for every node from Controller::telemetryReceived (about
// one sample a second per node, so at most ~300 points per line: below the chart's pixel width,
// no decimation needed), so switching nodes shows their history at once. Values a node cannot
// read leave a gap, never a 0. The charts redraw on a 500 ms timer when something changed, not
// per message.
// GUI thread only.
#pragma once

#include <QHash>
#include <QList>
#include <QWidget>
#include <deque>

#include "ringside/proto/ringside.pb.h"

class QChart;
class QChartView;
class QLabel;
class QLineSeries;
class QStackedWidget;
class QTimer;
class QValueAxis;

namespace ringside::gui {

class Controller;

class NodeDetailPane : public QWidget {
  Q_OBJECT

 public:
  // Telemetry kept per node and shown on the charts' x axis, in seconds.
  static constexpr double kHistorySeconds = 300.0;

  // `controller` must outlive the pane.
  explicit NodeDetailPane(Controller& controller, QWidget* parent = nullptr);

  // Shows `nodeId` ("": a hint to select a node).
  void setNodeId(const QString& nodeId);
  QString nodeId() const { return nodeId_; }

  // Telemetry samples held for `nodeId` (for tests).
  int sampleCount(const QString& nodeId) const;
  // Points on the charts' lines, by chart title (for tests): e.g. "CPU (%)" -> {cpu line's count}.
  QHash<QString, QList<int>> chartPointCounts() const;
  // One GPU's reading as the info column shows it: HTML lines, "N/A" for each absent value.
  static QString gpuReadingHtml(const ringside::v1::GpuTelemetry& gpu);

 protected:
  void changeEvent(QEvent* event) override;  // follows light / dark palette changes

 private:
  struct Chart {
    QChartView* view = nullptr;
    QChart* chart = nullptr;
    QValueAxis* x = nullptr;
    QValueAxis* y = nullptr;
    QList<QLineSeries*> lines;
  };

  void onTelemetry(const QString& nodeId, const ringside::v1::NodeTelemetry& telemetry);
  void redraw();
  void updateInfo();
  Chart makeChart(const QString& title, const QString& yTitle);
  // Makes `chart` hold exactly `names.size()` lines, named `names`.
  void setLines(Chart& chart, const QStringList& names);
  void applyTheme();
  QList<Chart*> allCharts();
  QList<const Chart*> allCharts() const;

  Controller& controller_;
  QString nodeId_;
  QHash<QString, std::deque<v1::NodeTelemetry>> history_;  // by node id, oldest first
  bool dirty_ = false;
  QTimer* redrawTimer_;
  QStackedWidget* pages_;
  QLabel* title_;
  QLabel* info_;
  Chart gpuUtil_;
  Chart gpuMemory_;
  Chart gpuPower_;
  Chart gpuTemp_;
  Chart gpuClock_;
  Chart gpuPcie_;
  Chart gpuNvlink_;
  Chart cpu_;
  Chart memory_;
  Chart network_;
};

}  // namespace ringside::gui
