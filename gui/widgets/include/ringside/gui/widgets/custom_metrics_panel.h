// CustomMetricsPanel: the dashboard's "Metrics" page. One chart per metric the run logs that the
// other pages do not chart (custom_metrics.h: whatever a PyTorch script logs with ringside.log(),
// or a custom command prints), grouped in boxes by the part of the name before '/'; each chart
// shows the run's global value, or, for a name logged per rank only, one series per rank (at
// most kMaxRankSeries). New names get a chart as they arrive; a live run's charts grow with it.
//
// refresh() reads the run's metric names and every charted series from the store
// asynchronously (no waiting on the GUI thread); a refresh while one is in flight is remembered
// and runs after it. GUI thread only.
#pragma once

#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>
#include <QWidget>

#include <cstdint>
#include <map>
#include <vector>

#include "ringside/gui/metrics_store.h"

class QLabel;
class QVBoxLayout;

namespace ringside::gui {

class MetricChart;

class CustomMetricsPanel : public QWidget {
  Q_OBJECT

 public:
  // Series of a name logged per rank only, charted as one series per rank: the lowest ranks.
  static constexpr int kMaxRankSeries = 8;

  // `store` must outlive the panel.
  CustomMetricsPanel(MetricsStore& store, QString runId, QWidget* parent = nullptr);

  // Re-reads the names and series. x: step (kStep), fractional epochs (kEpoch: by step, divided
  // by stepsPerEpoch when it is > 0, else the samples' own epochs) or seconds since `origin`
  // (kWallTime, Unix seconds).
  void refresh(SeriesX x, double origin, int64_t stepsPerEpoch);

  // The charted metric names, in display order, and the chart of one (nullptr when not charted).
  QStringList chartedNames() const;
  MetricChart* chart(const QString& name) const;
  QList<MetricChart*> charts() const;
  // True once a refresh has been answered completely.
  bool loaded() const { return loaded_; }

 signals:
  // A refresh's answers are charted.
  void refreshed();

 private:
  struct Answer {
    QString name;
    int rank = -1;
    std::vector<SeriesPoint> points;
  };
  void rebuild(const QStringList& names, int omitted);
  void fetchSeries();
  void apply(std::vector<Answer> answers);

  MetricsStore& store_;
  QString runId_;
  QVBoxLayout* groupsLayout_;
  QLabel* placeholder_;
  QLabel* omittedNote_;
  QStringList names_;  // charted, in display order
  QMap<QString, MetricChart*> charts_;
  QList<QWidget*> groupBoxes_;
  SeriesX x_ = SeriesX::kStep;
  double origin_ = 0.0;
  int64_t stepsPerEpoch_ = 0;
  bool inFlight_ = false;
  bool again_ = false;
  bool loaded_ = false;
};

}  // namespace ringside::gui
