#include "ringside/gui/widgets/compare_metric_chart.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QVBoxLayout>

#include <algorithm>
#include <memory>
#include <set>

#include "ringside/gui/custom_metrics.h"
#include "ringside/gui/export_files.h"
#include "ringside/gui/when_ready.h"
#include "ringside/gui/widgets/metric_chart.h"

namespace ringside::gui {

namespace {

// GPU and node telemetry are charted against time by Compare's GPU chart; run/ is the run's size.
bool offeredHere(const QString& name) {
  if (name.startsWith(QLatin1String("node/")) || name.startsWith(QLatin1String("run/"))) {
    return false;
  }
  // gpu<i>/... (not a user's "gpu_mem/..."): isChartedElsewhere knows the form.
  return !(name.startsWith(QLatin1String("gpu")) && isChartedElsewhere(name) &&
           !name.startsWith(QLatin1String("gpu_")));
}

}  // namespace

CompareMetricChart::CompareMetricChart(MetricsStore& store, QWidget* parent)
    : QWidget(parent), store_(store), metricBox_(new QComboBox(this)) {
  metricBox_->setToolTip(tr("Any metric the compared runs logged (docs/metrics.md, "
                            "docs/pytorch.md)"));
  metricBox_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  chart_ = new MetricChart(tr("Metric"), this);
  chart_->setExportName(chartFileBaseName(QStringLiteral("compare"), QStringLiteral("metric")));
  chart_->setMinimumSize(320, 220);
  chart_->setLegendForSingleSeries(true);
  chart_->setAxisTitles(tr("step"), QString());
  auto* label = new QLabel(tr("&Metric:"), this);
  label->setBuddy(metricBox_);
  auto* row = new QHBoxLayout;
  row->addWidget(label);
  row->addWidget(metricBox_);
  row->addStretch(1);
  auto* column = new QVBoxLayout(this);
  column->setContentsMargins(0, 0, 0, 0);
  column->addLayout(row);
  column->addWidget(chart_, 1);
  connect(metricBox_, &QComboBox::currentIndexChanged, this, [this] { loadSeries(); });
}

QString CompareMetricChart::currentMetric() const { return metricBox_->currentText(); }

QStringList CompareMetricChart::metricNames() const {
  QStringList names;
  for (int i = 0; i < metricBox_->count(); ++i) names << metricBox_->itemText(i);
  return names;
}

void CompareMetricChart::setRuns(QList<Run> runs) {
  runs_ = std::move(runs);
  loadNames();
}

void CompareMetricChart::setMetric(const QString& name) {
  const int index = metricBox_->findText(name);
  if (index >= 0 && index != metricBox_->currentIndex()) {
    metricBox_->setCurrentIndex(index);  // loads
  } else {
    loadSeries();
  }
}

void CompareMetricChart::loadNames() {
  const int generation = ++generation_;
  auto names = std::make_shared<std::set<QString>>();
  pending_ = static_cast<int>(runs_.size());
  if (runs_.isEmpty()) {
    emit loadFinished();
    return;
  }
  for (const Run& run : runs_) {
    whenReady(this, store_.metricNames(run.runId),
              [this, generation, names](Result<QStringList> answer) {
                if (generation != generation_) return;
                if (answer.isOk()) {
                  for (const QString& name : answer.value()) {
                    if (offeredHere(name)) names->insert(name);
                  }
                }
                if (--pending_ > 0) return;
                const QString chosen = metricBox_->currentText();
                {
                  const QSignalBlocker blocker(metricBox_);
                  metricBox_->clear();
                  for (const QString& name : *names) metricBox_->addItem(name);
                }
                int index = metricBox_->findText(chosen);
                if (index < 0) {
                  for (int i = 0; i < metricBox_->count() && index < 0; ++i) {
                    if (!isChartedElsewhere(metricBox_->itemText(i))) index = i;
                  }
                }
                {
                  const QSignalBlocker blocker(metricBox_);
                  metricBox_->setCurrentIndex(std::max(0, index));
                }
                loadSeries();
              });
  }
}

void CompareMetricChart::loadSeries() {
  const int generation = ++generation_;
  const QString name = metricBox_->currentText();
  chart_->clearSeries();
  chart_->setAxisTitles(tr("step"), name);
  chart_->setPlaceholderText(name.isEmpty() ? tr("The runs logged no metric") : tr("Loading…"));
  chart_->setExportName(chartFileBaseName(QStringLiteral("compare"),
                                          name.isEmpty() ? QStringLiteral("metric") : name));
  if (name.isEmpty() || runs_.isEmpty()) {
    pending_ = 0;
    emit loadFinished();
    return;
  }
  pending_ = static_cast<int>(runs_.size());
  auto finish = [this, generation] {
    if (generation != generation_ || --pending_ > 0) return;
    chart_->setPlaceholderText(chart_->seriesNames().isEmpty()
                                   ? tr("None of the runs logged this metric")
                                   : QString());
    emit loadFinished();
  };
  for (const Run& run : runs_) {
    // The global value; for a name logged per rank only, rank 0's.
    whenReady(this, store_.metricRanks(run.runId, name),
              [this, generation, name, run, finish](Result<std::vector<int>> ranks) {
                if (generation != generation_) return;
                if (!ranks.isOk() || ranks->empty()) return finish();
                const int rank = std::find(ranks->begin(), ranks->end(), -1) != ranks->end()
                                     ? -1
                                     : ranks->front();
                whenReady(this, store_.series(run.runId, name, rank, SeriesX::kStep),
                          [this, generation, run, rank, finish](
                              Result<std::vector<SeriesPoint>> points) {
                            if (generation != generation_) return;
                            if (points.isOk() && !points->empty()) {
                              const QString series =
                                  rank < 0 ? run.label : tr("%1 (rank %2)").arg(run.label).arg(rank);
                              chart_->setSeries(series, std::move(points).value(), run.color);
                            }
                            finish();
                          });
              });
  }
}

}  // namespace ringside::gui
