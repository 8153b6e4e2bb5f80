#include "ringside/gui/widgets/bucket_timings_view.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <memory>

#include "ringside/gui/when_ready.h"
#include "ringside/gui/widgets/metric_chart.h"

namespace ringside::gui {

namespace {

enum Column { kBucketColumn, kBytesColumn, kMsColumn, kAlgbwColumn, kBusbwColumn, kColumns };

QString number(const std::optional<double>& value, int decimals) {
  return value ? QString::number(*value, 'f', decimals) : BucketTimingsView::tr("N/A");
}

// A bandwidth with 3 significant digits in fixed notation (6.53, 0.0383, 0.000833), so that a
// small bucket's figure does not read as 0.
QString bandwidth(const std::optional<double>& value) {
  if (!value) return BucketTimingsView::tr("N/A");
  if (!(*value > 0) || !std::isfinite(*value)) return QString::number(*value, 'f', 2);
  const int decimals = std::clamp(2 - static_cast<int>(std::floor(std::log10(*value))), 2, 9);
  return QString::number(*value, 'f', decimals);
}

QTableWidgetItem* cell(const QString& text, bool alignRight = true) {
  auto* item = new QTableWidgetItem(text);
  item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable);
  if (alignRight) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  return item;
}

}  // namespace

BucketTimingsView::BucketTimingsView(QWidget* parent) : QWidget(parent) {
  summary_ = new QLabel(this);
  summary_->setWordWrap(true);
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);

  chart_ = new MetricChart(tr("All-reduce time per gradient bucket"), this);
  chart_->setAxisTitles(tr("step"), tr("all-reduce (ms)"));
  chart_->setPlaceholderText(tr("no per-bucket timings"));
  chart_->setExportName(QStringLiteral("bucket-allreduce"));

  table_ = new QTableWidget(0, kColumns, this);
  table_->setHorizontalHeaderLabels(
      {tr("Bucket"), tr("Bytes"), tr("All-reduce (ms)"), tr("algbw (GB/s)"), tr("busbw (GB/s)")});
  table_->verticalHeader()->setVisible(false);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setSelectionMode(QAbstractItemView::NoSelection);
  table_->setToolTip(
      tr("Medians per bucket over the run (bucket 0 starts first: the last layers). All-reduce: "
         "the bucket's own duration, the smallest over ranks; algbw = bytes / duration; busbw = "
         "algbw × 2(n−1)/n (nccl-tests). Exposed: the time the step waited for communication "
         "after backward."));

  auto* body = new QHBoxLayout;
  body->addWidget(chart_, 3);
  body->addWidget(table_, 2);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(summary_);
  layout->addLayout(body, 1);
  setSamples({});
}

void BucketTimingsView::setXTitle(const QString& title) {
  chart_->setAxisTitles(title, tr("all-reduce (ms)"));
}

void BucketTimingsView::setSamples(const MetricSeriesMap& series) {
  timings_ = buildBucketTimings(series);
  QStringList shown;
  for (const BucketRow& row : timings_.buckets) {
    const QString name =
        row.median.bytes ? tr("bucket %1 (%2)").arg(row.bucket).arg(formatBytes(*row.median.bytes))
                         : tr("bucket %1").arg(row.bucket);
    chart_->setSeries(name, row.allreduceMs);
    shown << name;
  }
  for (const QString& name : chart_->seriesNames()) {
    if (!shown.contains(name)) chart_->removeSeries(name);
  }
  fillTable();
  updateSummary();
}

void BucketTimingsView::fetch(MetricsStore& store, const QString& runId, SeriesX x) {
  const int generation = ++fetchGeneration_;
  MetricsStore* storePtr = &store;
  whenReady(this, store.metricNames(runId),
            [this, generation, storePtr, runId, x](Result<QStringList> names) {
              if (generation != fetchGeneration_ || !names.isOk()) return;
              const QStringList wanted = bucketTimingMetricNames(names.value());
              if (wanted.isEmpty()) {
                setSamples({});
                return;
              }
              auto collected = std::make_shared<MetricSeriesMap>();
              auto pending = std::make_shared<int>(static_cast<int>(wanted.size()));
              auto failed = std::make_shared<bool>(false);
              for (const QString& name : wanted) {
                whenReady(this, storePtr->series(runId, name, -1, x),
                          [this, generation, collected, pending, failed,
                           name](Result<std::vector<SeriesPoint>> points) {
                            if (generation != fetchGeneration_) return;
                            if (points.isOk()) {
                              (*collected)[name] = std::move(points.value());
                            } else {
                              *failed = true;
                            }
                            if (--*pending == 0 && !*failed) setSamples(*collected);
                          });
              }
            });
}

void BucketTimingsView::fillTable() {
  const auto& buckets = timings_.buckets;
  const bool any = !buckets.empty();
  table_->setRowCount(any ? static_cast<int>(buckets.size()) + 2 : 0);
  if (!any) return;
  int row = 0;
  for (const BucketRow& bucket : buckets) {
    table_->setItem(row, kBucketColumn, cell(QString::number(bucket.bucket)));
    table_->setItem(row, kBytesColumn,
                    cell(bucket.median.bytes ? formatBytes(*bucket.median.bytes) : tr("N/A")));
    table_->setItem(row, kMsColumn, cell(number(bucket.median.allreduceMs, 3)));
    table_->setItem(row, kAlgbwColumn, cell(bandwidth(bucket.median.algbwGBps)));
    table_->setItem(row, kBusbwColumn, cell(bandwidth(bucket.median.busbwGBps)));
    ++row;
  }
  const BucketFigures& step = timings_.step;
  table_->setItem(row, kBucketColumn, cell(tr("all (sum)"), false));
  table_->setItem(row, kBytesColumn, cell(step.bytes ? formatBytes(*step.bytes) : tr("N/A")));
  table_->setItem(row, kMsColumn, cell(number(step.allreduceMs, 3)));
  table_->setItem(row, kAlgbwColumn, cell(bandwidth(step.algbwGBps)));
  table_->setItem(row, kBusbwColumn, cell(bandwidth(step.busbwGBps)));
  ++row;
  table_->setItem(row, kBucketColumn, cell(tr("exposed"), false));
  table_->setItem(row, kBytesColumn, cell(QString()));
  table_->setItem(row, kMsColumn, cell(number(timings_.exposedCommMs, 3)));
  table_->setItem(row, kAlgbwColumn, cell(QString()));
  table_->setItem(row, kBusbwColumn, cell(QString()));
  for (int c = 0; c < kColumns; ++c) {
    for (int r = row - 1; r <= row; ++r) {
      QFont font = table_->item(r, c)->font();
      font.setBold(true);
      table_->item(r, c)->setFont(font);
    }
  }
}

void BucketTimingsView::updateSummary() { summary_->setText(summaryText()); }

QString BucketTimingsView::summaryText() const {
  if (timings_.buckets.empty()) {
    return tr(
        "No per-bucket communication reported (a run of one rank, a custom command, or a "
        "run recorded before per-bucket metrics).");
  }
  QString text = tr("%1 gradient buckets, %2 per step; the buckets' own all-reduce time %3 ms")
                     .arg(timings_.buckets.size())
                     .arg(timings_.step.bytes ? formatBytes(*timings_.step.bytes) : tr("N/A"))
                     .arg(number(timings_.step.allreduceMs, 3));
  if (timings_.exposedCommMs) {
    text += tr("; the step waited %1 ms (p90 %2 ms) for communication after backward (exposed)")
                .arg(number(timings_.exposedCommMs, 3), number(timings_.exposedCommP90Ms, 3));
    if (timings_.stepMs && *timings_.stepMs > 0) {
      text += tr(", %1% of the %2 ms step")
                  .arg(100.0 * *timings_.exposedCommMs / *timings_.stepMs, 0, 'f', 1)
                  .arg(*timings_.stepMs, 0, 'f', 2);
    }
  }
  // Every figure is a median over the run's steps, never the last step's value.
  text += tr(" (medians over the run: %1 reports)").arg(timings_.steps);
  return text + QLatin1Char('.');
}

}  // namespace ringside::gui
