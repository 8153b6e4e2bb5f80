// The messages of gui_core's free functions (run form validation, node settings, pre-flight,
// local cluster) come out translated: compiled from translations/ringside_de.ts with lrelease and
// installed as the app installs it, each differs from its English source.
#include <QProcess>
#include <QTemporaryDir>
#include <QTranslator>
#include <QtTest>

#include "build_paths.h"
#include "ringside/gui/local_cluster.h"
#include "ringside/gui/node_settings.h"
#include "ringside/gui/preflight.h"
#include "ringside/gui/run_form.h"

using namespace ringside;
using namespace ringside::gui;

class CoreTranslationsTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir dir_;
  QTranslator translator_;

 private slots:
  void initTestCase() {
    const QString qm = dir_.filePath(QStringLiteral("ringside_de.qm"));
    QProcess lrelease;
    lrelease.start(
        QString::fromUtf8(ringside::test::lrelease()),
        {QStringLiteral("-silent"), QString::fromUtf8(ringside::test::translationDe()), QStringLiteral("-qm"), qm});
    QVERIFY(lrelease.waitForFinished(60000));
    QCOMPARE(lrelease.exitCode(), 0);
    QVERIFY(translator_.load(qm));
    QVERIFY(QCoreApplication::installTranslator(&translator_));
  }

  // Regression: run_form.cpp looked its messages up in context "RunForm" while lupdate files the
  // tr() calls of free functions under their namespace, so the German form showed English errors.
  void runFormMessagesAreTranslated() {
    RunForm form;
    form.name.clear();
    form.nodeIds = {QStringLiteral("n1")};
    NodeChoice node;
    node.nodeId = QStringLiteral("n1");
    node.online = true;
    const QList<FieldError> errors = validate(form, {node});
    QVERIFY(!errors.isEmpty());
    QCOMPARE(errors.first().field, QStringLiteral("name"));
    QVERIFY2(errors.first().message != QStringLiteral("Give the run a name."),
             qPrintable(errors.first().message));
  }

  void nodeSettingsMessagesAreTranslated() {
    const QString message = networkInterfaceError(QStringLiteral("-eth1"));
    QVERIFY(!message.isEmpty());
    QVERIFY2(!message.contains(QStringLiteral("is not a network interface name")),
             qPrintable(message));
  }

  void preflightMessagesAreTranslated() {
    v1::RunSpec spec;
    spec.add_hosts()->set_ranks(1);
    spec.add_hosts()->set_ranks(1);
    QList<PreflightAnswer> answers(2);
    answers[1].reply.add_problems("a problem");
    const QString message = applyPreflight(answers, &spec);
    QVERIFY2(!message.contains(QStringLiteral("nothing was launched")), qPrintable(message));
  }

  void localClusterMessagesAreTranslated() {
    auto cluster = parseLocalCluster("[", QStringLiteral("cluster.json"));
    QVERIFY(!cluster.isOk());
    const QString message = QString::fromStdString(cluster.status().message());
    QVERIFY2(!message.contains(QStringLiteral("not valid JSON")), qPrintable(message));
  }
};

QTEST_GUILESS_MAIN(CoreTranslationsTest)
#include "core_translations_test.moc"
