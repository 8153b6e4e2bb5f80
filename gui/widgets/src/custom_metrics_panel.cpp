#include "ringside/gui/widgets/custom_metrics_panel.h"

#include <QGridLayout>
#include <QGroupBox>
#include <QLabel>
#include <QVBoxLayout>

#include <algorithm>
#include <memory>

#include "ringside/gui/custom_metrics.h"
#include "ringside/gui/export_files.h"
#include "ringside/gui/run_progress.h"
#include "ringside/gui/when_ready.h"
#include "ringside/gui/widgets/metric_chart.h"

namespace ringside::gui {

CustomMetricsPanel::CustomMetricsPanel(MetricsStore& store, QString runId, QWidget* parent)
    : QWidget(parent), store_(store), runId_(std::move(runId)) {
  auto* column = new QVBoxLayout(this);
  placeholder_ = new QLabel(
      tr("No other metrics yet. Every value the run logs under a name the other pages do not "
         "chart (with ringside.log() in a PyTorch script, or printed by a custom command) gets a "
         "chart here, grouped by the part of its name before \"/\"."),
      this);
  placeholder_->setWordWrap(true);
  omittedNote_ = new QLabel(this);
  omittedNote_->setWordWrap(true);
  omittedNote_->hide();
  groupsLayout_ = new QVBoxLayout;
  column->addWidget(placeholder_);
  column->addWidget(omittedNote_);
  column->addLayout(groupsLayout_);
  column->addStretch(1);
}

QStringList CustomMetricsPanel::chartedNames() const { return names_; }

MetricChart* CustomMetricsPanel::chart(const QString& name) const {
  return charts_.value(name, nullptr);
}

QList<MetricChart*> CustomMetricsPanel::charts() const {
  QList<MetricChart*> list;
  for (const QString& name : names_) list << charts_.value(name);
  return list;
}

void CustomMetricsPanel::refresh(SeriesX x, double origin, int64_t stepsPerEpoch) {
  x_ = x;
  origin_ = origin;
  stepsPerEpoch_ = stepsPerEpoch;
  if (inFlight_) {
    again_ = true;
    return;
  }
  inFlight_ = true;
  whenReady(this, store_.metricNames(runId_), [this](Result<QStringList> names) {
    if (!names.isOk()) {
      inFlight_ = false;
      return;
    }
    int omitted = 0;
    const QList<MetricGroup> groups = groupCustomMetrics(names.value(), &omitted);
    QStringList charted;
    for (const MetricGroup& group : groups) charted << group.names;
    if (charted != names_) rebuild(charted, omitted);
    fetchSeries();
  });
}

void CustomMetricsPanel::rebuild(const QStringList& names, int omitted) {
  // Charts of names still charted are kept (their zoom and export name with them).
  QMap<QString, MetricChart*> keep;
  for (const QString& name : names) {
    if (MetricChart* chart = charts_.take(name)) keep.insert(name, chart);
  }
  for (MetricChart* chart : std::as_const(charts_)) chart->deleteLater();
  for (QWidget* box : std::as_const(groupBoxes_)) {
    for (MetricChart* chart : std::as_const(keep)) {
      if (chart->parent() == box) chart->setParent(this);
    }
    box->deleteLater();
  }
  groupBoxes_.clear();
  charts_ = keep;
  names_ = names;
  QStringList all = names;
  for (const MetricGroup& group : groupCustomMetrics(all)) {
    auto* box = new QGroupBox(group.prefix.isEmpty() ? tr("Other") : group.prefix, this);
    auto* grid = new QGridLayout(box);
    for (int i = 0; i < group.names.size(); ++i) {
      const QString& name = group.names[i];
      MetricChart* chart = charts_.value(name, nullptr);
      if (chart == nullptr) {
        chart = new MetricChart(name, box);
        chart->setMinimumHeight(220);
        chart->setExportName(chartFileBaseName(runId_, name));
        charts_.insert(name, chart);
      } else {
        chart->setParent(box);
      }
      grid->addWidget(chart, i / 2, i % 2);
      chart->show();
    }
    groupsLayout_->addWidget(box);
    groupBoxes_ << box;
  }
  placeholder_->setVisible(names_.isEmpty());
  omittedNote_->setVisible(omitted > 0);
  omittedNote_->setText(tr("%Ln more metric(s) not charted (at most %1 per run); export the "
                           "run's metrics as CSV for all of them.",
                           nullptr, omitted)
                            .arg(kMaxCustomCharts));
}

void CustomMetricsPanel::fetchSeries() {
  if (names_.isEmpty()) {
    inFlight_ = false;
    loaded_ = true;
    emit refreshed();
    return;
  }
  const SeriesX queryX = x_ == SeriesX::kEpoch && stepsPerEpoch_ > 0 ? SeriesX::kStep : x_;
  auto answers = std::make_shared<std::vector<Answer>>();
  auto pending = std::make_shared<int>(static_cast<int>(names_.size()));
  auto finishOne = [this, answers, pending] {
    if (--*pending == 0) apply(std::move(*answers));
  };
  for (const QString& name : names_) {
    whenReady(this, store_.metricRanks(runId_, name),
              [this, name, queryX, answers, pending, finishOne](Result<std::vector<int>> ranks) {
                std::vector<int> wanted;
                if (ranks.isOk()) {
                  const std::vector<int>& all = ranks.value();
                  if (std::find(all.begin(), all.end(), -1) != all.end()) {
                    wanted = {-1};
                  } else {
                    for (int rank : all) {
                      if (static_cast<int>(wanted.size()) < kMaxRankSeries) wanted.push_back(rank);
                    }
                  }
                }
                if (wanted.empty()) {
                  finishOne();
                  return;
                }
                *pending += static_cast<int>(wanted.size()) - 1;
                for (int rank : wanted) {
                  whenReady(this, store_.series(runId_, name, rank, queryX),
                            [name, rank, answers, finishOne](Result<std::vector<SeriesPoint>> s) {
                              if (s.isOk()) answers->push_back({name, rank, std::move(s.value())});
                              finishOne();
                            });
                }
              });
  }
}

void CustomMetricsPanel::apply(std::vector<Answer> answers) {
  std::map<QString, QStringList> seen;
  for (Answer& answer : answers) {
    MetricChart* chart = charts_.value(answer.name, nullptr);
    if (chart == nullptr) continue;
    std::vector<SeriesPoint> points = std::move(answer.points);
    if (x_ == SeriesX::kEpoch && stepsPerEpoch_ > 0) {
      points = stepsToEpochs(std::move(points), stepsPerEpoch_);
    } else if (x_ == SeriesX::kWallTime && origin_ != 0) {
      for (SeriesPoint& point : points) point.x -= origin_;
    }
    const QString series = answer.rank < 0 ? answer.name : tr("rank %1").arg(answer.rank);
    chart->setLegendForSingleSeries(answer.rank >= 0);
    chart->setSeries(series, std::move(points));
    seen[answer.name] << series;
  }
  // A series no longer answered (the x mode changed its name) goes.
  for (auto it = charts_.begin(); it != charts_.end(); ++it) {
    for (const QString& series : it.value()->seriesNames()) {
      if (!seen[it.key()].contains(series)) it.value()->removeSeries(series);
    }
  }
  inFlight_ = false;
  loaded_ = true;
  emit refreshed();
  if (again_) {
    again_ = false;
    refresh(x_, origin_, stepsPerEpoch_);
  }
}

}  // namespace ringside::gui
