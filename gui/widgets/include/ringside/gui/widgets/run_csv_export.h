// The one per-run CSV export of the GUI (History, Compare and a run's dashboard): asks where to
// write, then MetricsStore::exportCsv writes every sample of each run at full resolution from
// SQLite (never the decimated chart data). GUI thread only.
#pragma once

#include <QList>
#include <QString>

class QWidget;

namespace ringside::gui {

class MetricsStore;

struct RunToExport {
  QString runId;
  QString name;  // the run's display name; may be empty
};

// One run: a save dialog suggesting runCsvFileName(name, runId) in the documents folder. Several:
// a folder dialog, then one runCsvFileName(...) file per run in it. The writes run on the store's
// thread; a failure is shown in a message box on `parent` naming the file and the reason.
// Nothing happens when the dialog is cancelled or `runs` is empty. `store` must outlive the
// writes' answers (the controller's store does).
void askExportRunsCsv(QWidget* parent, MetricsStore& store, const QList<RunToExport>& runs);

}  // namespace ringside::gui
