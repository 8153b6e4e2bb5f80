// dialogFolder (dialog_folder.h): a file dialog opens in the folder last used for its purpose, or
// in the user's documents, never in the process's working directory.
#include <QDir>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include "ringside/gui/dialog_folder.h"

using namespace ringside::gui;

class DialogFolderTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);  // settings under ~/.qttest, not the user's
    QCoreApplication::setOrganizationName(QStringLiteral("ringside-test"));
    QCoreApplication::setApplicationName(QStringLiteral("dialog-folder-test"));
  }

  void opensInTheLastFolderUsedForThePurposeElseInDocuments() {
    QTemporaryDir home;
    qputenv("HOME", home.path().toUtf8());  // no Documents folder there yet
    const QString documents = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
    QVERIFY(QDir().mkpath(documents));
    const QString workingDir = QDir::currentPath();
    QCOMPARE(dialogFolder(kPresetDialog), documents);
    QVERIFY(dialogFolder(kPresetDialog) != workingDir);

    QTemporaryDir chosen;
    rememberDialogFolder(kPresetDialog, chosen.filePath(QStringLiteral("run.json")));  // a file
    QCOMPARE(dialogFolder(kPresetDialog), chosen.path());
    QCOMPARE(dialogFolder(kExportDialog), documents);  // each purpose its own
    rememberDialogFolder(kExportDialog, chosen.path());  // a folder
    QCOMPARE(dialogFolder(kExportDialog), chosen.path());
    rememberDialogFolder(kExportDialog, QString());  // cancelled: kept as it was
    QCOMPARE(dialogFolder(kExportDialog), chosen.path());

    // A kept folder that is gone: documents again; without documents, home.
    const QString gone = chosen.path();
    chosen.remove();
    QCOMPARE(dialogFolder(kPresetDialog), documents);
    QVERIFY(QDir(documents).removeRecursively());
    QCOMPARE(dialogFolder(kPresetDialog), QDir::homePath());
    QVERIFY(gone != QDir::homePath());
  }
};

QTEST_MAIN(DialogFolderTest)
#include "dialog_folder_test.moc"
