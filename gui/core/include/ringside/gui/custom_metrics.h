// Custom metrics: the names a run logs beyond what the dashboard's fixed charts show (a user's
// PyTorch script logs whatever it likes with ringside.log(); a custom command prints any name in
// its JSON Lines records). The dashboard's "Metrics" page and Compare's metric chart chart these.
// Pure functions, thread-safe.
#pragma once

#include <QList>
#include <QString>
#include <QStringList>

namespace ringside::gui {

// At most this many custom metrics are charted per run (the first ones by name): a chart costs
// a store query per refresh and a widget, and a run's names are whatever its program sends.
inline constexpr int kMaxCustomCharts = 48;

// Whether the dashboard shows `name` elsewhere: on its Training page (train/loss, test/loss,
// test/accuracy, train/samples_per_s, time/compute_ms, time/exposed_comm_ms, time/allreduce_ms,
// comm/busbw_GBps), in its per-rank, per-bucket or GPU views (time/step_ms, time/data_ms,
// time/wait_ms, comm/bytes, comm/algbw_GBps, comm/bucket<b>/..., gpu<i>/..., node/...), or as the
// agent's own facts (run/..., straggler/...).
bool isChartedElsewhere(const QString& name);

// One group of custom metrics: the part of the names before the first '/' ("" for names
// without one), and the names in it, sorted.
struct MetricGroup {
  QString prefix;
  QStringList names;
};

// The custom metrics among `names` (those !isChartedElsewhere), at most kMaxCustomCharts of them
// (the first by name; *omitted, when not null, gets how many more there were), grouped by the
// part before the first '/', groups in name order with the group without a prefix last.
QList<MetricGroup> groupCustomMetrics(QStringList names, int* omitted = nullptr);

}  // namespace ringside::gui
