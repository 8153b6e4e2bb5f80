// stragglerText (straggler_text.h): the agent's verdict in the dashboard's words.
#include <QtTest>

#include "ringside/gui/straggler_text.h"

using namespace ringside::gui;

class StragglerTextTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { QLocale::setDefault(QLocale::c()); }

  void namesRankNodeStageAndTheWait() {
    const StragglerView v{1750, 3, 2, 14.1, 9.8, 4.2};
    QCOMPARE(stragglerText(v, QStringLiteral("node-2")),
             QStringLiteral("straggler: rank 3 on node-2, compute: 14.10 ms vs median 9.80 ms; the "
                            "other ranks wait 4.20 ms for it (step 1750)"));
    const StragglerView data{12, 0, 1, 3.0, 0.5, 2.4};
    QVERIFY(stragglerText(data, QString()).startsWith(QStringLiteral("straggler: rank 0, data:")));
  }

  void noneSaysSo() {
    QCOMPARE(stragglerText(StragglerView{40, -1, 0, 0, 0, 0}, QStringLiteral("vm")),
             QStringLiteral("straggler: none at step 40: no rank's data or compute time keeps the "
                            "others waiting"));
  }
};

QTEST_GUILESS_MAIN(StragglerTextTest)
#include "straggler_text_test.moc"
