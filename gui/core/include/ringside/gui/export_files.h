// File names that exports suggest: one rule for every per-run CSV (History, Compare, a run's
// dashboard) and every chart image. The CSV itself has one writer, MetricsStore::exportCsv
// (every sample of the run at full resolution from SQLite, docs/gui-database.md).
//
// Thread-safety: pure functions; safe from any thread.
#pragma once

#include <QString>

namespace ringside::gui {

// `text` with every run of characters other than A-Z, a-z, 0-9, '.', '_' and '-' replaced by
// one '_', so it is a file name on every system: "fmnist baseline/2" -> "fmnist_baseline_2".
QString fileSafeName(const QString& text);

// The CSV file of one run: "<name>-<run id>.csv" with the name made file-safe, or
// "<run id>.csv" for a run without a name: "fmnist baseline" + "r-1234" ->
// "fmnist_baseline-r-1234.csv".
QString runCsvFileName(const QString& runName, const QString& runId);

// The image file of one chart without its extension: "<prefix>-<chart>" file-safe, with a
// metric's '/' as '-': ("compare", "train/loss") -> "compare-train-loss".
QString chartFileBaseName(const QString& prefix, const QString& chart);

}  // namespace ringside::gui
