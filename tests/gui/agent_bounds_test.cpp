// agent_bounds.h: every reply and event from an agent bounded to the protocol's limits
// (docs/protocol.md#limits) before it reaches the GUI thread, and clipped_text.h: the one-line
// labels and wrapped tooltips an agent's text is shown in.
#include <QtTest>

#include <string>

#include "ringside/common/protocol_limits.h"
#include "ringside/common/run_spec_limits.h"
#include "ringside/gui/agent_bounds.h"
#include "ringside/gui/clipped_text.h"

using namespace ringside;
using namespace ringside::gui;

namespace {

const std::string kEllipsis = "\xE2\x80\xA6";

bool contains(const BoundsReport& report, const std::string& needle) {
  return report.summary().find(needle) != std::string::npos;
}

v1::Envelope runState(const v1::RunInfo& run) {
  v1::Envelope event;
  event.set_protocol_version(2);
  event.mutable_run_state()->set_seq(1);
  *event.mutable_run_state()->mutable_run() = run;
  return event;
}

}  // namespace

class AgentBoundsTest : public QObject {
  Q_OBJECT

 private slots:
  void clipTextCutsAtACharacterAndEndsWithAnEllipsis() {
    std::string text = "short";
    QVERIFY(!clipText(text, 16));
    QCOMPARE(text, std::string("short"));
    // "é" is two bytes: a cut inside it steps back before it.
    text = "abcdé" + std::string(100, 'x');
    QVERIFY(clipText(text, 8));
    QCOMPARE(text, "abcd" + kEllipsis);
    QVERIFY(text.size() <= 8);
    text = std::string(5000, 'x');
    QVERIFY(clipText(text, kMaxRunReasonBytes));
    QCOMPARE(text.size(), kMaxRunReasonBytes);
    QVERIFY(text.ends_with(kEllipsis));
  }

  void runIdsAndSamples() {
    QVERIFY(isValidRunId("r20250101-120000-a1b2"));
    QVERIFY(!isValidRunId(""));
    QVERIFY(!isValidRunId(std::string(kMaxRunIdBytes + 1, 'r')));
    QVERIFY(!isValidRunId("r\n1"));
    v1::MetricSample sample;
    sample.set_name("train/loss");
    sample.set_rank(-1);
    QVERIFY(isValidSample(sample));
    sample.set_rank(static_cast<int32_t>(kMaxWorldSize));
    QVERIFY(!isValidSample(sample));
    sample.set_rank(0);
    sample.set_name(std::string(kMaxMetricNameBytes + 1, 'm'));
    QVERIFY(!isValidSample(sample));
    sample.set_name("");
    QVERIFY(!isValidSample(sample));
    sample.set_name("a\tb");
    QVERIFY(!isValidSample(sample));
  }

  // At the edge: the reason is clipped to 4 KiB, and so is a stall summary.
  void hugeReasonIsClipped() {
    v1::RunInfo run;
    run.set_run_id("r1");
    run.set_reason(std::string(4 * 1024 * 1024, 'x'));
    run.mutable_stall()->set_summary(std::string(100000, 'y'));
    v1::Envelope event = runState(run);
    BoundsReport report;
    boundAgentMessage(event, AgentChannel::kEvent, report);
    QCOMPARE(event.run_state().run().reason().size(), kMaxRunReasonBytes);
    QVERIFY(event.run_state().run().reason().ends_with(kEllipsis));
    QCOMPARE(event.run_state().run().stall().summary().size(), kMaxRunReasonBytes);
    QVERIFY(contains(report, "the reason of run r1 is 4194304 bytes, over the limit of 4096"));
    QCOMPARE(report.count(), size_t{2});
  }

  // A run name, a host list and a placement past their bounds.
  void oversizedRunSpecAndPlacementAreRefusedOrClipped() {
    v1::RunInfo run;
    run.set_run_id("r1");
    run.mutable_spec()->set_name(std::string(4 * 1024 * 1024, 'n'));
    run.mutable_spec()->add_tags("keep");
    run.mutable_spec()->mutable_command()->add_argv("true");
    for (int i = 0; i < 1000000; ++i) {
      v1::HostSlots* host = run.add_placement();
      host->set_host("h");
      host->set_ranks(1);
    }
    run.set_world_size(1000000);
    BoundsReport report;
    boundRunInfo(run, report);
    QCOMPARE(run.spec().name().size(), kMaxRunNameBytes);
    QCOMPARE(run.spec().command().argv_size(), 1);  // within its limits: kept
    QCOMPARE(run.placement_size(), 0);
    QCOMPARE(run.world_size(), 0u);
    QVERIFY(contains(report, "the placement of run r1 was refused: it has 1000000 hosts"));
    QVERIFY(contains(report, "the world size of run r1 is 1000000"));

    // A spec past its own limits keeps only its name and tags; a host list of too many ranks
    // is refused.
    v1::RunSpec spec;
    spec.set_name("big");
    spec.add_tags("t");
    for (size_t i = 0; i <= kMaxArgvWords; ++i) spec.mutable_command()->add_argv("x");
    BoundsReport specReport;
    boundRunSpec(spec, "r2", specReport);
    QCOMPARE(spec.name(), std::string("big"));
    QCOMPARE(spec.tags_size(), 1);
    QVERIFY(!spec.has_command());
    QVERIFY(contains(specReport, "the run spec of run r2 was refused"));
    v1::RunSpec ranks;
    ranks.add_hosts()->set_ranks(kMaxWorldSize);
    ranks.add_hosts()->set_ranks(1);
    BoundsReport ranksReport;
    boundRunSpec(ranks, "r3", ranksReport);
    QCOMPARE(ranks.hosts_size(), 0);
    QVERIFY(contains(ranksReport, "65537 ranks in all"));
  }

  void nodeAndTelemetryGpuListsAreBounded() {
    v1::Envelope hello;
    v1::NodeInfo* node = hello.mutable_hello_reply()->mutable_node();
    node->set_hostname(std::string(300, 'h'));
    node->set_cpu_model(std::string(1000, 'c'));
    node->set_gpu_slots_total(100000);
    for (uint32_t i = 0; i < 100000; ++i) node->add_gpus()->set_index(i);
    BoundsReport report;
    boundAgentMessage(hello, AgentChannel::kReply, report);
    QCOMPARE(node->gpus_size(), static_cast<int>(kMaxGpusPerNode));
    QVERIFY(node->hostname().empty());  // refused: a cut host name names another host
    QCOMPARE(node->cpu_model().size(), kMaxNodeTextBytes);
    QCOMPARE(node->gpu_slots_total(), kMaxSlotsPerNode);

    v1::Envelope event;
    v1::NodeTelemetry* telemetry = event.mutable_node_telemetry();
    telemetry->add_gpus()->set_index(999);  // past the per-node bound: dropped
    for (uint32_t i = 0; i < 1000; ++i) telemetry->add_gpus()->set_index(i % 8);
    for (uint32_t i = 0; i < 1000; ++i) telemetry->add_gpus_in_use(i);
    BoundsReport telemetryReport;
    boundAgentMessage(event, AgentChannel::kEvent, telemetryReport);
    QCOMPARE(telemetry->gpus_size(), static_cast<int>(kMaxGpusPerNode) - 1);
    QCOMPARE(telemetry->gpus_in_use_size(), static_cast<int>(kMaxGpusPerNode));
    QVERIFY(contains(telemetryReport, "the telemetry's GPU list: 1001 entries"));
  }

  void badSamplesAreDroppedAndBadRunIdsIgnored() {
    v1::Envelope event;
    v1::MetricBatch* batch = event.mutable_metric_batch();
    batch->set_run_id("r1");
    batch->add_samples()->set_name("train/loss");
    batch->add_samples()->set_name(std::string(300, 'm'));
    v1::MetricSample* rank = batch->add_samples();
    rank->set_name("time/step_ms");
    rank->set_rank(1 << 30);
    BoundsReport report;
    boundAgentMessage(event, AgentChannel::kEvent, report);
    QCOMPARE(event.metric_batch().samples_size(), 1);
    QVERIFY(contains(report, "2 metric samples of run r1"));

    v1::Envelope nameless;
    nameless.mutable_metric_batch()->set_run_id(std::string(1000, 'r'));
    nameless.mutable_metric_batch()->add_samples()->set_name("train/loss");
    BoundsReport namelessReport;
    boundAgentMessage(nameless, AgentChannel::kEvent, namelessReport);
    QCOMPARE(nameless.body_case(), v1::Envelope::BODY_NOT_SET);

    v1::Envelope log;
    log.mutable_log_batch()->set_run_id("r1");
    log.mutable_log_batch()->add_lines()->set_text(std::string(kMaxLogLineBytes + 10, 'l'));
    BoundsReport logReport;
    boundAgentMessage(log, AgentChannel::kEvent, logReport);
    QCOMPARE(log.log_batch().lines(0).text().size(), kMaxLogLineBytes);
  }

  void unusableRepliesBecomeErrors() {
    // A catch-up page over its entry bound: refused whole (cutting it would skip entries).
    v1::Envelope page;
    page.set_request_id(7);
    page.mutable_fetch_run_data_reply()->set_run_id("r1");
    for (size_t i = 0; i <= kMaxFetchPageEntries; ++i) {
      page.mutable_fetch_run_data_reply()->add_samples()->set_name("train/loss");
    }
    BoundsReport report;
    boundAgentMessage(page, AgentChannel::kReply, report);
    QVERIFY(page.has_error());
    QCOMPARE(page.error().code(), v1::ErrorReply::TOO_LARGE);
    QCOMPARE(page.request_id(), uint64_t{7});
    // A telemetry page over its entry bound: refused whole too. One within it keeps its
    // readings, each bounded as a live one (a GPU index past the per-node bound dropped).
    v1::Envelope telemetry;
    for (size_t i = 0; i <= kMaxTelemetryPageEntries; ++i) {
      telemetry.mutable_fetch_telemetry_reply()->add_entries()->set_seq(i + 1);
    }
    BoundsReport telemetryReport;
    boundAgentMessage(telemetry, AgentChannel::kReply, telemetryReport);
    QCOMPARE(telemetry.error().code(), v1::ErrorReply::TOO_LARGE);
    v1::Envelope readings;
    v1::NodeTelemetry* reading = readings.mutable_fetch_telemetry_reply()->add_entries();
    reading->add_gpus()->set_index(0);
    reading->add_gpus()->set_index(kMaxGpusPerNode);
    BoundsReport readingsReport;
    boundAgentMessage(readings, AgentChannel::kReply, readingsReport);
    QVERIFY(readings.has_fetch_telemetry_reply());
    QCOMPARE(readings.fetch_telemetry_reply().entries(0).gpus_size(), 1);
    QCOMPARE(readingsReport.count(), size_t{1});
    // A launch reply without a valid run id; a request sent as a reply.
    v1::Envelope launch;
    launch.mutable_launch_run_reply()->mutable_run();
    BoundsReport launchReport;
    boundAgentMessage(launch, AgentChannel::kReply, launchReport);
    QCOMPARE(launch.error().code(), v1::ErrorReply::MALFORMED);
    v1::Envelope request;
    request.mutable_launch_run();
    BoundsReport requestReport;
    boundAgentMessage(request, AgentChannel::kReply, requestReport);
    QCOMPARE(request.error().code(), v1::ErrorReply::UNKNOWN_MESSAGE);
    // Long error messages and run lists with bad entries.
    v1::Envelope error;
    error.mutable_error()->set_message(std::string(100000, 'e'));
    BoundsReport errorReport;
    boundAgentMessage(error, AgentChannel::kReply, errorReport);
    QCOMPARE(error.error().message().size(), kMaxErrorMessageBytes);
    v1::Envelope list;
    list.mutable_list_runs_reply()->add_runs()->set_run_id("good");
    list.mutable_list_runs_reply()->add_runs()->set_run_id("");
    list.mutable_list_runs_reply()->set_next_page_token(std::string(5000, 't'));
    BoundsReport listReport;
    boundAgentMessage(list, AgentChannel::kReply, listReport);
    QCOMPARE(list.list_runs_reply().runs_size(), 1);
    QVERIFY(list.list_runs_reply().next_page_token().empty());
  }

  void withinBoundsNothingChanges() {
    v1::RunInfo run;
    run.set_run_id("r1");
    run.set_reason("rank 1 killed by signal 9");
    run.mutable_spec()->set_name("mnist");
    run.mutable_spec()->mutable_trainer();
    run.set_world_size(16);
    for (int i = 0; i < 2; ++i) {
      v1::HostSlots* host = run.add_placement();
      host->set_host("gpu0" + std::to_string(i));
      host->set_ranks(8);
      for (uint32_t gpu = 0; gpu < 8; ++gpu) host->add_gpus(gpu);
    }
    (*run.mutable_params())["lr"] = "0.1";
    v1::Envelope event = runState(run);
    const std::string before = event.SerializeAsString();
    BoundsReport report;
    boundAgentMessage(event, AgentChannel::kEvent, report);
    QVERIFY(report.empty());
    QCOMPARE(event.SerializeAsString(), before);
  }

  void reportKeepsTheFirstFindingsAndCountsAll() {
    BoundsReport report;
    for (int i = 0; i < 20; ++i) report.add("finding " + std::to_string(i));
    QCOMPARE(report.count(), size_t{20});
    QCOMPARE(report.findings().size(), BoundsReport::kMaxKept);
    QVERIFY(report.summary().ends_with("(and 12 more)"));
  }

  void labelsShowOneShortLineAndTooltipsWrap() {
    QCOMPARE(elidedLine(QStringLiteral("rank 1 killed by signal 9")),
             QStringLiteral("rank 1 killed by signal 9"));
    QCOMPARE(elidedLine(QStringLiteral("first line\nsecond")), QStringLiteral("first line…"));
    const QString longText(5000, QLatin1Char('x'));
    QCOMPARE(elidedLine(longText, 120).size(), 120);
    QVERIFY(elidedLine(longText, 120).endsWith(QChar(0x2026)));
    // A surrogate pair is never split.
    const QString emoji = QString(118, QLatin1Char('a')) + QString::fromUtf8("\xF0\x9F\x98\x80") +
                          QStringLiteral("tail");
    const QString cut = elidedLine(emoji, 120);
    QVERIFY(!cut.at(cut.size() - 2).isHighSurrogate());
    const QString tip = tooltipText(longText);
    for (const QString& line : tip.split(QLatin1Char('\n'))) {
      QVERIFY(line.size() <= kToolTipLineChars);
    }
    QCOMPARE(QString(tip).remove(QLatin1Char('\n')), longText);
    QCOMPARE(tooltipText(QStringLiteral("words of a sentence")),
             QStringLiteral("words of a sentence"));
  }
};

QTEST_GUILESS_MAIN(AgentBoundsTest)
#include "agent_bounds_test.moc"
