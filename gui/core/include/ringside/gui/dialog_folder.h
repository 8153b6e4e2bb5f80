// Where the GUI's file dialogs open: the folder last used for the same purpose, else the user's
// documents, never the working directory of the process (which, started from a source checkout,
// is the repository: Enter would save an export into it).
//
// The folders are kept with QSettings (the application's organization and name) under
// "dialogs/<purpose>".
// Thread-safety: GUI thread (QSettings of the default scope).
#pragma once

#include <QString>

namespace ringside::gui {

// Purposes of the GUI's dialogs: exports (CSV, chart images), run presets, dataset folders.
inline constexpr const char* kExportDialog = "export";
inline constexpr const char* kPresetDialog = "presets";
inline constexpr const char* kDatasetDialog = "dataset";

// The folder a dialog for `purpose` opens in: the one rememberDialogFolder() kept for it when it
// still exists; else the user's documents (QStandardPaths::DocumentsLocation) when it exists;
// else the home folder. An absolute path.
QString dialogFolder(const char* purpose);

// Keeps the folder of `path` for `purpose`: `path` itself when it is an existing folder, else its
// parent folder (a file chosen to open or to save). An empty path (the dialog was cancelled) keeps
// nothing.
void rememberDialogFolder(const char* purpose, const QString& path);

}  // namespace ringside::gui
