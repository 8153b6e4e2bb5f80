// stallBannerText (stall_text.h) on verdicts as the agent writes them.
#include <QtTest>

#include "ringside/gui/stall_text.h"

using namespace ringside;
using namespace ringside::gui;

class StallTextTest : public QObject {
  Q_OBJECT

 private slots:
  void bannerCountsFromTheLastProgressAndDropsTheAgentsHead() {
    v1::StallVerdict verdict;
    verdict.set_since(1000.0);
    verdict.set_threshold_seconds(10.0);
    verdict.set_step(1751);
    verdict.set_summary(
        "no progress for 10 s (threshold 10 s): rank 1 on node-2 has not reported for 10 s "
        "(process stopped); rank 0 waits in the all-reduce of bucket 0 of step 1752");
    QCOMPARE(stallBannerText(verdict, 1014.2),
             QStringLiteral("Stalled: no progress for 14 s since step 1751 (threshold 10 s). rank "
                            "1 on node-2 has not reported for 10 s (process stopped); rank 0 "
                            "waits in the all-reduce of bucket 0 of step 1752"));
  }

  void summaryWithoutTheHeadIsKeptWhole() {
    v1::StallVerdict verdict;
    verdict.set_threshold_seconds(10.0);
    verdict.set_summary("every rank waits");
    QVERIFY(stallBannerText(verdict, 20.0).endsWith(QStringLiteral(". every rank waits")));
  }
};

QTEST_GUILESS_MAIN(StallTextTest)
#include "stall_text_test.moc"
