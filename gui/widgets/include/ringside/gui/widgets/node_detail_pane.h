// NodeDetailPane: one node's inventory (host name, OS, CPU, memory, GPUs with driver and CUDA
// versions, labels, and each GPU's latest reading) and live charts of its last kHistorySeconds of
// telemetry: CPU (%), memory used (GiB), network receive and transmit (MB/s), and per GPU
// utilization (%), memory (GiB), power (W), temperature (°C), SM clock (MHz), PCIe and NVLink
// receive and transmit (MB/s; the NVLink chart only where a GPU reports NVLink).
//
// It keeps a rolling in-memory series for every node from Controller::telemetryReceived (about
// one sample a second per node, so at most ~300 points per line: below the chart's pixel width,
// no decimation needed, DESIGN decision 8), so switching nodes shows their history at once.
// Values a node cannot read leave a gap, never a 0.
//
// Cost on the GUI thread (no event over 100 ms of CPU, for up to the protocol's
// kMaxGpusPerNode = 64 GPUs, i.e. 580 lines): the charts redraw on a 500 ms timer when something
// changed, not per message, and a redraw is done in steps of one chart (or the info column) per
// event; a hidden pane and charts scrolled out of view are not drawn until they are shown. Each
// GPU's latest reading is an item of a list (laid out only where in view), and each
// GPU keeps one color in every chart (transmit lines dashed), named in one compact legend above
// the GPU charts and in a tooltip when the mouse is on a line, instead of a legend per chart
// (Qt Charts' legend layout of 64 to 128 entries cost tens of ms each redraw). A y axis changes
// only when its rounded top changes.
// GUI thread only.
#pragma once

#include <QColor>
#include <QHash>
#include <QList>
#include <QWidget>
#include <deque>
#include <optional>

#include "ringside/gui/controller.h"
#include "ringside/proto/ringside.pb.h"

class QChart;
class QChartView;
class QLabel;
class QLineSeries;
class QListWidget;
class QScrollArea;
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
  // Points on the charts' lines as last drawn, by chart title (for tests): e.g. "CPU (%)" ->
  // {cpu line's count}. Draws nothing itself: a chart of a hidden pane, or scrolled out of view,
  // holds what it held when it was last drawn.
  QHash<QString, QList<int>> chartPointCounts() const;
  // Each GPU's latest reading as the info column lists it, one text per GPU (for tests).
  QStringList gpuReadingTexts() const;
  // The charts' line colors, one per GPU in every chart (Tableau 10, repeating): GPU `position`
  // in the node's list.
  static QColor gpuColor(int position);
  // One GPU's reading as the info column lists it: a line per field, "N/A" for each absent value.
  static QStringList gpuReadingLines(const ringside::v1::GpuTelemetry& gpu);

 protected:
  void changeEvent(QEvent* event) override;    // follows light / dark palette changes
  void showEvent(QShowEvent* event) override;  // draws what changed while hidden

 private:
  struct Chart {
    QChartView* view = nullptr;
    QChart* chart = nullptr;
    QValueAxis* x = nullptr;
    QValueAxis* y = nullptr;
    QList<QLineSeries*> lines;
    double top = 1.0;  // the y axis' range 0..top and tick step, as last set
    double step = 0.2;
    bool stale = true;   // data changed since it was drawn
    bool wanted = true;  // to be shown (the node has GPUs; NVLink: a GPU reports it)
  };

  void onTelemetry(const QString& nodeId, const ringside::v1::NodeTelemetry& telemetry);
  // Marks everything stale and starts the steps that draw it.
  void redraw();
  // One step of a redraw (see the file comment); schedules the next while work is left.
  void drawStep();
  void drawChart(Chart& chart);
  // The selected node's samples, oldest first (empty when none arrived).
  const std::deque<v1::NodeTelemetry>& samples() const;
  // node_'s inventory, nullptr when it has none (yet).
  const v1::NodeInfo* nodeInfo() const;
  bool isOnScreen(const Chart& chart) const;
  void updateInfo();
  void updateGpuReadings();
  // The GPU legend and which GPU charts show.
  void updateGpuCharts();
  Chart makeChart(const QString& title, const QString& yTitle);
  // Makes `chart` hold exactly `names.size()` lines, named `names`; lines per GPU (`perGpu`
  // lines each) take the GPU's color, the second of two dashed.
  void setLines(Chart& chart, const QStringList& names, int perGpu = 0);
  void applyLinePens(Chart& chart, int perGpu);
  // Sets the y axis to 0..top with 2 to 5 round ticks; `roundUp`: top raised to a tick, so the
  // axis moves only when the data crosses a tick. Does nothing when the range is unchanged.
  static void setYRange(Chart& chart, double top, bool roundUp);
  void applyTheme();
  QList<Chart*> allCharts();
  QList<const Chart*> allCharts() const;

  Controller& controller_;
  QString nodeId_;
  // The selected node as redraw() read it (Controller::node copies it): the steps of one redraw
  // read it from here, not once each.
  std::optional<NodeView> node_;
  QHash<QString, std::deque<v1::NodeTelemetry>> history_;  // by node id, oldest first
  bool dirty_ = false;
  bool infoStale_ = false;  // the title and inventory
  bool readingsStale_ = false;
  bool legendStale_ = false;  // the GPU legend and which GPU charts show
  int nextChart_ = 0;         // where drawStep() looks first
  QTimer* redrawTimer_;
  QTimer* stepTimer_;  // 0 ms: the next drawStep() after the events already queued
  QStackedWidget* pages_;
  QLabel* title_;
  QLabel* info_;
  QLabel* gpuReadingsTitle_;
  QListWidget* gpuReadings_;  // each GPU's latest reading, one item per GPU
  QLabel* gpuLegend_;
  QString gpuLegendHtml_;
  QScrollArea* chartScroll_;
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
