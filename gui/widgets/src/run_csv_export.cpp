#include "ringside/gui/widgets/run_csv_export.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileDialog>
#include <QMessageBox>
#include <QPair>
#include <QWidget>

#include "ringside/gui/dialog_folder.h"
#include "ringside/gui/export_files.h"
#include "ringside/gui/metrics_store.h"
#include "ringside/gui/when_ready.h"

namespace ringside::gui {

namespace {

// The translation context of this file's strings.
class RunCsvExport {
  Q_DECLARE_TR_FUNCTIONS(RunCsvExport)
};

}  // namespace

void askExportRunsCsv(QWidget* parent, MetricsStore& store, const QList<RunToExport>& runs) {
  if (runs.isEmpty()) return;
  const QString folder0 = dialogFolder(kExportDialog);
  QList<QPair<QString, QString>> targets;  // run id, file
  if (runs.size() == 1) {
    const RunToExport& run = runs.first();
    const QString path =
        QFileDialog::getSaveFileName(parent, RunCsvExport::tr("Export metrics as CSV"),
                                     QDir(folder0).filePath(runCsvFileName(run.name, run.runId)),
                                     RunCsvExport::tr("CSV files (*.csv);;All files (*)"));
    if (path.isEmpty()) return;
    rememberDialogFolder(kExportDialog, path);
    targets.append({run.runId, path});
  } else {
    const QString folder = QFileDialog::getExistingDirectory(
        parent, RunCsvExport::tr("Export metrics as CSV into folder"), folder0);
    if (folder.isEmpty()) return;
    rememberDialogFolder(kExportDialog, folder);
    for (const RunToExport& run : runs) {
      targets.append({run.runId, QDir(folder).filePath(runCsvFileName(run.name, run.runId))});
    }
  }
  for (const auto& target : targets) {
    // (Not a structured binding: clang 14 cannot capture one in a lambda.)
    const QString path = target.second;
    whenReady(parent, store.exportCsv(target.first, path), [parent, path](const Status& status) {
      if (status.isOk()) return;
      QMessageBox::warning(
          parent, RunCsvExport::tr("Export failed"),
          RunCsvExport::tr("Could not write %1: %2")
              .arg(QDir::toNativeSeparators(path), QString::fromStdString(status.message())));
    });
  }
}

}  // namespace ringside::gui
