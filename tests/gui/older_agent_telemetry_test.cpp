// An agent from before the telemetry journal (DESIGN decision 12) answers FetchTelemetry with
// UNKNOWN_MESSAGE (the fake agent of hostile_agent.h answers every request it does not know so):
// the GUI says once in its log that the node keeps no telemetry journal, never asks it again
// (also not when live readings skip seqs, which would otherwise start a fetch), and stores the
// running run's live GPU readings as before.
#include <QSignalSpy>
#include <QtTest>

#include <atomic>

#include "gui_test_support.h"
#include "hostile_agent.h"
#include "ringside/gui/controller.h"

using namespace ringside;
using namespace ringside::gui;
using ringside::gui::testing::ControllerInTempDir;
using ringside::gui::testing::HostileAgent;

namespace {

std::atomic<int> gNoJournalLines{0};
QtMessageHandler gPreviousHandler = nullptr;

void countNoJournalLines(QtMsgType type, const QMessageLogContext& context, const QString& text) {
  if (text.contains(QStringLiteral("keeps no telemetry journal"))) ++gNoJournalLines;
  if (gPreviousHandler) gPreviousHandler(type, context, text);
}

double nowSeconds() { return static_cast<double>(QDateTime::currentMSecsSinceEpoch()) / 1000.0; }

}  // namespace

class OlderAgentTelemetryTest : public QObject {
  Q_OBJECT

 private slots:
  void agentWithoutTelemetryJournalIsSaidOnceAndLiveTelemetryStillStored() {
    gPreviousHandler = qInstallMessageHandler(countNoJournalLines);
    HostileAgent agent;
    QVERIFY(agent.valid());
    v1::RunInfo run;
    run.set_run_id("r-old-agent");
    run.set_state(v1::RUNNING);
    run.set_world_size(1);
    run.set_created_time(nowSeconds() - 10);
    run.set_start_time(nowSeconds() - 10);
    agent.setRuns({run});

    ControllerInTempDir fixture;
    Controller& controller = fixture.controller;
    QSignalSpy started(&controller, &Controller::started);
    QVERIFY(controller.start().isOk());
    QTRY_COMPARE_WITH_TIMEOUT(started.count(), 1, 10000);
    QVERIFY(controller
                .addNode(QStringLiteral("old-agent"), QStringLiteral("127.0.0.1"),
                         agent.controlPort(), agent.eventsPort(), agent.publicKey())
                .isOk());
    // Live readings of one GPU whose seqs skip ahead (each a gap the GUI would fetch).
    std::atomic<uint64_t> seq{1};
    agent.setPeriodic(100, [&seq] {
      v1::Envelope event = protocol::newEnvelope(0);
      v1::NodeTelemetry& telemetry = *event.mutable_node_telemetry();
      telemetry.set_node_id("hostile");
      telemetry.set_wall_time(nowSeconds());
      telemetry.set_seq(seq.fetch_add(2));
      v1::GpuTelemetry& gpu = *telemetry.add_gpus();
      gpu.set_index(0);
      gpu.set_util_pct(50);
      return event;
    });
    QTRY_COMPARE_WITH_TIMEOUT(gNoJournalLines.load(), 1, 20000);
    // Live GPU readings of the running run are stored as before.
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
          auto points = controller.store()
                            .series(QStringLiteral("r-old-agent"), QStringLiteral("gpu0/util_pct"),
                                    0, SeriesX::kWallTime)
                            .result();
          return points.isOk() && points->size() >= 5;
        }(),
        20000);
    QCOMPARE(gNoJournalLines.load(), 1);  // said once, whatever the gaps
    agent.clearPeriodic();
    qInstallMessageHandler(gPreviousHandler);
  }
};

QTEST_MAIN(OlderAgentTelemetryTest)
#include "older_agent_telemetry_test.moc"
