// Where the GUI's file dialogs open (dialog_folder.h).
#include "ringside/gui/dialog_folder.h"

#include <QDir>
#include <QFileInfo>
#include <QSettings>
#include <QStandardPaths>

namespace ringside::gui {
namespace {

QString key(const char* purpose) { return QStringLiteral("dialogs/") + QLatin1String(purpose); }

}  // namespace

QString dialogFolder(const char* purpose) {
  const QString kept = QSettings().value(key(purpose)).toString();
  if (!kept.isEmpty() && QFileInfo(kept).isDir()) return QDir(kept).absolutePath();
  const QString documents = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
  if (!documents.isEmpty() && QFileInfo(documents).isDir()) return documents;
  return QDir::homePath();
}

void rememberDialogFolder(const char* purpose, const QString& path) {
  if (path.isEmpty()) return;
  const QFileInfo info(path);
  const QString folder = info.isDir() ? info.absoluteFilePath() : info.absolutePath();
  QSettings().setValue(key(purpose), folder);
}

}  // namespace ringside::gui
