// The GUI against a broken or hostile agent: the GUI's own Controller,
// MetricsStore, Dashboard, Nodes and History panels, connected over CURVE to a fake agent
// (hostile_agent.h) that sends what the reviewers sent: a 4 MiB run reason, a 4 MiB run
// name, a node claiming 100,000 GPUs, telemetry for 1,000 GPUs, a RunInfo with 1,000,000
// placement entries, 20,002 runs in one list, and metric samples for runs it never told of.
// Each case checks that the GUI clips or refuses what is over the protocol's limits
// (docs/protocol.md#limits), says so naming the node, keeps its database intact (PRAGMA
// integrity_check), and that no event the GUI thread handled took 100 ms of its CPU time (the
// stall one message causes); the longest gap of a 5 ms heartbeat timer is printed and held to a
// bound generous enough for a loaded 2-core machine (the reviewers saw gaps of 1 to 22 s).
#include <QLabel>
#include <QScrollArea>
#include <QScrollBar>
#include <QSignalSpy>
#include <QTableView>
#include <QtTest>

#include <atomic>
#include <functional>
#include <memory>

#include "gui_test_support.h"
#include "hostile_agent.h"
#include "ringside/common/protocol_limits.h"
#include "ringside/common/run_spec_limits.h"
#include "ringside/gui/clipped_text.h"
#include "ringside/gui/controller.h"
#include "ringside/gui/widgets/dashboard_tab.h"
#include "ringside/gui/widgets/history_panel.h"
#include "ringside/gui/widgets/node_detail_pane.h"
#include "ringside/gui/widgets/node_table_model.h"
#include "ringside/gui/widgets/nodes_panel.h"

using namespace ringside;
using namespace ringside::gui;
using namespace ringside::gui::testing;

namespace {

// The bound of the issue: no message keeps the GUI thread busy 100 ms (CPU time of one event).
constexpr double kMaxEventCpuMs = 100.0;
// The longest the GUI may not respond (heartbeat gap), wall time, on a machine shared with other
// builds and tests: generous, yet 1/20 of the stall a 4 MiB reason caused before.
constexpr int64_t kMaxHeartbeatGapMs = 1000;

TimedApplication* timedApp() { return static_cast<TimedApplication*>(qApp); }

v1::RunInfo runInfo(const std::string& runId, v1::RunState state, uint64_t lastSeq = 0) {
  v1::RunInfo run;
  run.set_run_id(runId);
  run.mutable_spec()->set_name("run " + runId);
  run.mutable_spec()->mutable_command()->add_argv("true");
  run.set_state(state);
  run.set_created_time(1.7e9);
  run.set_start_time(1.7e9);
  run.set_world_size(1);
  run.set_last_seq(lastSeq);
  return run;
}

v1::MetricSample sample(uint64_t seq, const char* name = "train/loss") {
  v1::MetricSample s;
  s.set_seq(seq);
  s.set_step(static_cast<int64_t>(seq));
  s.set_rank(-1);
  s.set_wall_time(1.7e9 + static_cast<double>(seq));
  s.set_name(name);
  s.set_value(1.0 / static_cast<double>(seq));
  return s;
}

// Text of `bytes` bytes in words of 9 letters, as a long message reads.
std::string longText(size_t bytes) {
  std::string text;
  text.reserve(bytes);
  while (text.size() < bytes) text += "abcdefgh ";
  text.resize(bytes);
  return text;
}

}  // namespace

class GuiHostileAgentTest : public QObject {
  Q_OBJECT

 private:
  std::unique_ptr<HostileAgent> agent_;
  std::unique_ptr<ControllerInTempDir> fixture_;
  Controller* controller_ = nullptr;
  QString nodeId_;
  HeartbeatMeter heartbeat_;
  std::unique_ptr<QSignalSpy> errors_;

  // Starts the controller and connects it to agent_ (configured by the test before).
  bool connectToAgent() {
    fixture_ = std::make_unique<ControllerInTempDir>();
    controller_ = &fixture_->controller;
    errors_ = std::make_unique<QSignalSpy>(controller_, &Controller::errorMessage);
    QSignalSpy started(controller_, &Controller::started);
    if (!controller_->start().isOk()) return false;
    if (!QTest::qWaitFor([&] { return started.count() == 1; }, 10000)) return false;
    if (!controller_
             ->addNode(QStringLiteral("hostile"), QStringLiteral("127.0.0.1"),
                       agent_->controlPort(), agent_->eventsPort(), agent_->publicKey())
             .isOk()) {
      return false;
    }
    nodeId_ = controller_->nodes().value(0).record.nodeId;
    if (!QTest::qWaitFor(
            [&] {
              const auto node = controller_->node(nodeId_);
              return node && node->state == NodeState::Online && node->info.has_value();
            },
            15000)) {
      return false;
    }
    // PUB drops what it publishes before the GUI's subscription reached it: events flow once a
    // telemetry message arrived.
    QSignalSpy telemetry(controller_, &Controller::telemetryReceived);
    agent_->setPeriodic(50, [] {
      v1::Envelope event = protocol::newEnvelope(0);
      event.mutable_node_telemetry()->set_node_id("hostile");
      event.mutable_node_telemetry()->set_wall_time(1.7e9);
      return event;
    });
    const bool flowing = QTest::qWaitFor([&] { return !telemetry.isEmpty(); }, 15000);
    agent_->clearPeriodic();
    return flowing;
  }

  void startMeasuring() {
    timedApp()->start();
    heartbeat_.start();
  }

  // Stops measuring, prints the figures under `what`, and checks the bounds.
  void checkStalls(const char* what) {
    heartbeat_.stop();
    timedApp()->stop();
    qInfo(
        "%s: longest GUI-thread event %.1f ms CPU (%.1f ms wall; %s, ended at %.3f s), "
        "longest heartbeat gap %lld ms",
        what, timedApp()->longestCpuMs(), timedApp()->longestWallMs(),
        qPrintable(timedApp()->longestEvent()), timedApp()->longestEndS(),
        static_cast<long long>(heartbeat_.longestGapMs()));
    QVERIFY2(timedApp()->longestCpuMs() < kMaxEventCpuMs, qPrintable(timedApp()->longestEvent()));
    QVERIFY(heartbeat_.longestGapMs() < kMaxHeartbeatGapMs);
  }

  // The node's problems (what the GUI clipped or refused), joined.
  QString problems() const {
    const auto node = controller_->node(nodeId_);
    return node ? node->problems.join(QLatin1Char('\n')) : QString();
  }
  // A QTRY condition: the store holds run `runId` and `accept` holds for it (never blocks).
  std::function<bool()> storedRun(const char* runId, std::function<bool(const RunRecord&)> accept) {
    auto probe = std::make_shared<FutureProbe<Result<RunRecord>>>(
        [this, id = QString::fromLatin1(runId)] { return controller_->store().run(id); },
        [accept](const Result<RunRecord>& run) { return run.isOk() && accept(*run); });
    return [probe] { return (*probe)(); };
  }

  bool reportedNamingTheNode(const QString& needle) const {
    for (const QList<QVariant>& error : *errors_) {
      const QString message = error.value(0).toString();
      if (message.contains(QStringLiteral("hostile")) && message.contains(needle)) return true;
    }
    return false;
  }

  void checkDatabase() {
    QCOMPARE(integrityCheck(controller_->store().databasePath()), QStringLiteral("ok"));
  }

 private slots:
  void init() {
    agent_ = std::make_unique<HostileAgent>();
    QVERIFY(agent_->valid());
  }

  void cleanup() {
    controller_ = nullptr;
    errors_.reset();
    fixture_.reset();
    agent_.reset();
  }

  // A 512 KiB RunInfo.reason went unclipped into the dashboard's message label
  // and the GUI crashed painting it; 4 MiB blocked the GUI thread 22 s.
  void huge_reason_is_clipped_not_crashing() {
    v1::RunInfo listed = runInfo("r-reason", v1::FAILED);
    listed.set_reason(longText(512 * 1024));
    agent_->setRuns({listed});
    QVERIFY(connectToAgent());
    DashboardTab dashboard(*controller_, QStringLiteral("r-reason"));
    dashboard.resize(1200, 800);
    dashboard.show();
    // The agent's state event: the same run with a 4 MiB reason.
    v1::Envelope event = protocol::newEnvelope(0);
    event.mutable_run_state()->set_seq(1);
    *event.mutable_run_state()->mutable_run() = listed;
    event.mutable_run_state()->mutable_run()->set_reason(longText(4 * 1024 * 1024));
    std::string frame = HostileAgent::encodeEvent(std::move(event));
    startMeasuring();
    agent_->publishFrame(std::move(frame));
    QTRY_VERIFY_WITH_TIMEOUT(reportedNamingTheNode(QStringLiteral("reason")), 15000);
    const auto reasonStored =
        storedRun("r-reason", [](const RunRecord& run) { return run.lastSeq == 1; });
    QTRY_VERIFY_WITH_TIMEOUT(reasonStored(), 15000);
    QLabel* reasonLabel = nullptr;
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
          for (QLabel* label : dashboard.findChildren<QLabel*>()) {
            if (label->text().startsWith(QStringLiteral("abcdefgh"))) reasonLabel = label;
          }
          return reasonLabel != nullptr;
        }(),
        15000);
    QTRY_VERIFY_WITH_TIMEOUT(
        problems().contains(QStringLiteral("the reason of run r-reason is 4194304 bytes")), 15000);
    (void)dashboard.grab();  // paints every label, the one that crashed included
    checkStalls("4 MiB reason");
    // The label shows one short line; the tooltip the protocol's 4 KiB, in lines.
    QVERIFY(reasonLabel->text().size() <= kLabelChars);
    QVERIFY(reasonLabel->text().endsWith(QChar(0x2026)));
    const QString tip = reasonLabel->toolTip();
    QVERIFY(tip.size() > 4000 && tip.size() < 4300);
    for (const QString& line : tip.split(QLatin1Char('\n'))) QVERIFY(line.size() <= 100);
    // Stored clipped, ending with the ellipsis.
    const auto stored = controller_->store().run(QStringLiteral("r-reason")).result();
    QVERIFY(stored.isOk());
    QVERIFY(stored->reason.toUtf8().size() <= static_cast<qsizetype>(kMaxRunReasonBytes));
    QVERIFY(stored->reason.endsWith(QChar(0x2026)));
    QVERIFY(controller_->node(nodeId_)->state == NodeState::Online);
    checkDatabase();
  }

  // A 4 MiB run name froze the GUI thread 6.4 s.
  void huge_run_name_is_clipped() {
    v1::RunInfo run = runInfo("r-name", v1::RUNNING);
    run.mutable_spec()->set_name(longText(4 * 1024 * 1024));
    QVERIFY(connectToAgent());
    HistoryPanel history(*controller_);
    history.show();
    DashboardTab dashboard(*controller_, QStringLiteral("r-name"));
    dashboard.show();
    v1::Envelope event = protocol::newEnvelope(0);
    event.mutable_run_state()->set_seq(1);
    *event.mutable_run_state()->mutable_run() = run;
    std::string frame = HostileAgent::encodeEvent(std::move(event));
    startMeasuring();
    agent_->publishFrame(std::move(frame));
    const auto nameStored =
        storedRun("r-name", [](const RunRecord& run) { return !run.name.isEmpty(); });
    QTRY_VERIFY_WITH_TIMEOUT(nameStored(), 15000);
    QTRY_VERIFY_WITH_TIMEOUT(dashboard.title().startsWith(QStringLiteral("abcdefgh")), 15000);
    (void)history.grab();
    (void)dashboard.grab();
    checkStalls("4 MiB run name");
    const auto stored = controller_->store().run(QStringLiteral("r-name")).result();
    QVERIFY(stored->name.toUtf8().size() <= static_cast<qsizetype>(kMaxRunNameBytes));
    QVERIFY(stored->name.endsWith(QChar(0x2026)));
    QVERIFY(reportedNamingTheNode(QStringLiteral("the name of run r-name")));
    checkDatabase();
  }

  // A node claiming 100,000 GPUs froze the GUI 10-14 s and took 1 GB.
  void node_claiming_100000_gpus_is_bounded() {
    // First an ordinary node with 8 GPUs, in the Nodes table.
    v1::NodeInfo node;
    node.set_node_id("hostile");
    node.set_hostname("hostile-node");
    node.set_agent_version("0.1.0");
    for (uint32_t i = 0; i < 8; ++i) node.add_gpus()->set_index(i);
    agent_->setNode(node);
    QVERIFY(connectToAgent());
    // The Nodes table with its GPU bars, as the Nodes panel shows it.
    NodeTableModel model;
    QTableView table;
    table.setModel(&model);
    table.setItemDelegateForColumn(NodeTableModel::kGpus, new GpuBarsDelegate(&table));
    table.resize(1200, 300);
    table.show();
    auto refresh = [&] { model.setNodes(controller_->nodes()); };
    connect(controller_, &Controller::nodesChanged, &table, refresh);
    connect(controller_, &Controller::telemetryReceived, &table, refresh);
    refresh();
    QTest::qWait(500);
    (void)table.grab();
    startMeasuring();
    node.clear_gpus();
    node.set_gpu_slots_total(100000);
    for (uint32_t i = 0; i < 100000; ++i) {
      v1::GpuInfo* gpu = node.add_gpus();
      gpu->set_index(i);
      gpu->set_name("NVIDIA H100 80GB HBM3");
      gpu->set_memory_total_mib(81559);
    }
    agent_->setNode(node);
    // Hellos go on every second: three of them with the claim.
    QTRY_COMPARE_WITH_TIMEOUT(controller_->node(nodeId_)->info->gpus_size(),
                              static_cast<int>(kMaxGpusPerNode), 15000);
    const int hellos = agent_->helloRequests();
    QTRY_VERIFY_WITH_TIMEOUT(agent_->helloRequests() >= hellos + 3, 15000);
    (void)table.grab();
    QCOMPARE(model.data(model.index(0, NodeTableModel::kGpus), NodeTableModel::kGpuUtilRole)
                 .toList()
                 .size(),
             static_cast<int>(kMaxGpusPerNode));
    checkStalls("100,000 GPUs, Nodes table");
    const auto view = controller_->node(nodeId_);
    QCOMPARE(view->info->gpu_slots_total(), kMaxSlotsPerNode);
    QVERIFY(problems().contains(QStringLiteral("the node's GPU list: 100000 entries")));
    QCOMPARE(view->state, NodeState::Online);

    // The Nodes panel, whose node details chart each GPU of the claim (kMaxGpusPerNode, 580
    // lines), with telemetry for each every 250 ms: the selection, the redraws (on a timer, in
    // steps of one chart per event), their layout and paint, each under the bound. Before, one
    // redraw of this node cost 80 to 350 ms, and the charts froze the GUI for minutes when the
    // first telemetry came after the selection (a y axis of 0..1 grown with its 0.2 tick step).
    NodesPanel nodes(*controller_);
    nodes.resize(1200, 800);
    nodes.show();
    QVERIFY(QTest::qWaitForWindowExposed(&nodes));
    startMeasuring();
    QTimer::singleShot(0, &nodes, [&] { nodes.selectNode(nodeId_); });  // as a click
    QTest::qWait(500);
    auto wallTime = std::make_shared<double>(1.7e9);  // the agent's thread only
    agent_->setPeriodic(250, [wallTime] {
      v1::Envelope event = protocol::newEnvelope(0);
      v1::NodeTelemetry* sample = event.mutable_node_telemetry();
      sample->set_node_id("hostile");
      sample->set_wall_time(*wallTime += 1);
      sample->set_cpu_pct(50);
      for (uint32_t i = 0; i < kMaxGpusPerNode; ++i) {
        v1::GpuTelemetry* gpu = sample->add_gpus();
        gpu->set_index(i);
        gpu->set_util_pct(i % 100);
        gpu->set_mem_used_mib(60000);
        gpu->set_power_w(300 + i);
        gpu->set_temp_c(60);
        gpu->set_sm_clock_mhz(1980);
        gpu->set_pcie_rx_mbps(20000);
        gpu->set_pcie_tx_mbps(15000);
        gpu->set_nvlink_rx_mbps(300000);
        gpu->set_nvlink_tx_mbps(280000);
      }
      return event;
    });
    NodeDetailPane* details = nodes.detailPane();
    QTRY_VERIFY_WITH_TIMEOUT(details->sampleCount(nodeId_) >= 12, 15000);
    const int more = agent_->helloRequests();
    QTRY_VERIFY_WITH_TIMEOUT(agent_->helloRequests() >= more + 2, 15000);
    QTest::qWait(700);  // the last redraw's steps and paint
    checkStalls("100,000 GPUs, node details");
    agent_->clearPeriodic();
    // The charts below the first screenful are drawn once scrolled into view.
    for (QScrollArea* area : details->findChildren<QScrollArea*>()) {
      area->verticalScrollBar()->setValue(area->verticalScrollBar()->maximum());
    }
    QTRY_COMPARE_WITH_TIMEOUT(
        details->chartPointCounts().value(QStringLiteral("GPU NVLink (MB/s)")).size(),
        2 * static_cast<int>(kMaxGpusPerNode), 15000);
    const auto counts = details->chartPointCounts();
    QCOMPARE(counts.value(QStringLiteral("GPU power (W)")).size(),
             static_cast<int>(kMaxGpusPerNode));
    QVERIFY(counts.value(QStringLiteral("GPU power (W)")).value(0) >= 12);
    checkDatabase();
  }

  // Telemetry for 1,000 GPUs every second saturated the GUI thread (5-7 s
  // stretches). Here ten times a second, for a running run placed on the node's GPUs.
  void telemetry_for_1000_gpus_is_bounded() {
    v1::NodeInfo node;
    node.set_node_id("hostile");
    node.set_hostname("hostile-node");
    node.set_agent_version("0.1.0");
    for (uint32_t i = 0; i < 8; ++i) node.add_gpus()->set_index(i);
    agent_->setNode(node);
    v1::RunInfo run = runInfo("r-gpus", v1::RUNNING);
    v1::HostSlots* placed = run.add_placement();
    placed->set_host("hostile-node");
    placed->set_ranks(1);
    placed->add_gpus(0);
    agent_->setRuns({run});
    QVERIFY(connectToAgent());
    NodeTableModel model;  // the Nodes table, as in node_claiming_100000_gpus_is_bounded
    QTableView table;
    table.setModel(&model);
    table.setItemDelegateForColumn(NodeTableModel::kGpus, new GpuBarsDelegate(&table));
    table.show();
    auto refresh = [&] { model.setNodes(controller_->nodes()); };
    connect(controller_, &Controller::nodesChanged, &table, refresh);
    connect(controller_, &Controller::telemetryReceived, &table, refresh);
    DashboardTab dashboard(*controller_, QStringLiteral("r-gpus"));
    dashboard.show();
    QTRY_VERIFY_WITH_TIMEOUT(storedRunState(*controller_, QStringLiteral("r-gpus")) == v1::RUNNING,
                             15000);
    QSignalSpy telemetry(controller_, &Controller::telemetryReceived);
    // Telemetry of the node's 8 GPUs first: the GPU charts appear (their first layout costs the
    // GUI thread 100 to 250 ms of Qt Charts, once), then the claim of 1,000 GPUs.
    auto gpus = std::make_shared<std::atomic<uint32_t>>(8);
    auto wallTime = std::make_shared<double>(1.7e9);  // the agent's thread only
    agent_->setPeriodic(100, [wallTime, gpus] {
      v1::Envelope event = protocol::newEnvelope(0);
      v1::NodeTelemetry* sample = event.mutable_node_telemetry();
      sample->set_node_id("hostile");
      sample->set_wall_time(*wallTime += 0.1);
      sample->set_cpu_pct(50);
      const uint32_t count = gpus->load();
      for (uint32_t i = 0; i < count; ++i) {
        v1::GpuTelemetry* gpu = sample->add_gpus();
        gpu->set_index(i);
        gpu->set_util_pct(i % 100);
        gpu->set_mem_used_mib(1000);
        gpu->set_power_w(300);
        gpu->set_temp_c(60);
      }
      for (uint32_t i = 0; i < count; ++i) sample->add_gpus_in_use(i);
      return event;
    });
    QTRY_VERIFY_WITH_TIMEOUT(telemetry.count() >= 10, 20000);
    QTest::qWait(1000);
    (void)table.grab();
    (void)dashboard.grab();
    startMeasuring();
    gpus->store(1000);
    telemetry.clear();
    QTRY_VERIFY_WITH_TIMEOUT(telemetry.count() >= 30, 20000);
    (void)table.grab();
    (void)dashboard.grab();
    checkStalls("telemetry for 1,000 GPUs, 10 per second");
    // The Nodes panel's node details chart every GPU of the node: when their count changes
    // (8 to 64 here) Qt Charts lays out 8 charts with a legend entry per GPU again, 150 to 350 ms
    // of CPU on this machine, at most twice a second (a redraw timer, not per message). Printed,
    // and held to twice the heartbeat bound.
    gpus->store(8);
    NodesPanel nodes(*controller_);
    nodes.show();
    nodes.selectNode(nodeId_);
    QTest::qWait(1500);
    startMeasuring();
    gpus->store(1000);
    telemetry.clear();
    QTRY_VERIFY_WITH_TIMEOUT(telemetry.count() >= 30, 20000);
    (void)nodes.grab();
    heartbeat_.stop();
    timedApp()->stop();
    qInfo(
        "telemetry for 1,000 GPUs, node details: longest GUI-thread event %.1f ms CPU (%s), "
        "longest heartbeat gap %lld ms",
        timedApp()->longestCpuMs(), qPrintable(timedApp()->longestEvent()),
        static_cast<long long>(heartbeat_.longestGapMs()));
    QVERIFY(heartbeat_.longestGapMs() < 2 * kMaxHeartbeatGapMs);
    agent_->clearPeriodic();
    const auto view = controller_->node(nodeId_);
    QVERIFY(view->telemetry.has_value());
    QCOMPARE(view->telemetry->gpus_size(), static_cast<int>(kMaxGpusPerNode));
    QVERIFY(view->telemetry->gpus_in_use_size() <= static_cast<int>(kMaxGpusPerNode));
    QVERIFY(reportedNamingTheNode(QStringLiteral("GPU")));
    // GPU 0's readings were stored with the run (docs/metrics.md), no other GPU's.
    QTRY_VERIFY_WITH_TIMEOUT(controller_->store()
                                 .metricNames(QStringLiteral("r-gpus"))
                                 .result()
                                 ->contains(QStringLiteral("gpu0/util_pct")),
                             10000);
    QVERIFY(!controller_->store()
                 .metricNames(QStringLiteral("r-gpus"))
                 .result()
                 ->contains(QStringLiteral("gpu999/util_pct")));
    checkDatabase();
  }

  // A RunInfo with 1,000,000 placement entries took 1.8 GB and slowed the
  // connection's hellos from 1/s to 7 in 25 s.
  void million_placement_entries_are_refused() {
    QVERIFY(connectToAgent());
    DashboardTab dashboard(*controller_, QStringLiteral("r-placed"));
    dashboard.show();
    v1::RunInfo run = runInfo("r-placed", v1::RUNNING);
    run.set_world_size(1000000);
    for (int i = 0; i < 1000000; ++i) {
      v1::HostSlots* host = run.add_placement();
      host->set_host("h");
      host->set_ranks(1);
    }
    std::vector<std::string> frames;
    for (uint64_t seq = 1; seq <= 3; ++seq) {
      v1::Envelope event = protocol::newEnvelope(0);
      event.mutable_run_state()->set_seq(seq);
      *event.mutable_run_state()->mutable_run() = run;
      frames.push_back(HostileAgent::encodeEvent(std::move(event)));
    }
    startMeasuring();
    const int hellos = agent_->helloRequests();
    for (std::string& frame : frames) agent_->publishFrame(std::move(frame));
    const auto placedStored =
        storedRun("r-placed", [](const RunRecord& run) { return run.lastSeq == 3; });
    QTRY_VERIFY_WITH_TIMEOUT(placedStored(), 30000);
    // The connection kept its heartbeat going: a hello a second.
    QTRY_VERIFY_WITH_TIMEOUT(agent_->helloRequests() >= hellos + 3, 15000);
    (void)dashboard.grab();
    checkStalls("1,000,000 placement entries");
    const auto stored = controller_->store().run(QStringLiteral("r-placed")).result();
    QVERIFY(stored->placement.empty());
    QCOMPARE(stored->worldSize, 0);
    QVERIFY(problems().contains(QStringLiteral("the placement of run r-placed was refused")));
    QCOMPARE(controller_->node(nodeId_)->state, NodeState::Online);
    checkDatabase();
  }

  // 20,002 runs in one list blocked the GUI thread 1.05 s.
  void list_of_20002_runs_is_paged_not_blocking() {
    // A node with one run, in the History table (its columns are fitted to the first rows once,
    // which Qt bounds to 1,000 rows), then the list grows to 20,002 runs.
    agent_->setRuns({runInfo("r-first", v1::COMPLETED)});
    QVERIFY(connectToAgent());
    HistoryPanel history(*controller_);
    history.resize(1200, 800);
    history.show();
    QTableView* table = history.table();
    QTRY_COMPARE_WITH_TIMEOUT(table->model()->rowCount(), 1, 15000);
    std::vector<v1::RunInfo> runs;
    for (int i = 0; i < 20002; ++i) {
      runs.push_back(runInfo("r-" + std::to_string(i), i % 2 == 0 ? v1::RUNNING : v1::COMPLETED));
    }
    agent_->setRuns(std::move(runs));
    startMeasuring();
    // Live entries of a run the GUI does not know make it list the node's runs again.
    v1::Envelope event = protocol::newEnvelope(0);
    event.mutable_metric_batch()->set_run_id("r-unlisted");
    *event.mutable_metric_batch()->add_samples() = sample(1);
    agent_->publish(event);
    // What the user sees: every run in the History table (the first one stays: the GUI keeps
    // the runs it stored).
    QTRY_COMPARE_WITH_TIMEOUT(table->model()->rowCount(), 20003, 60000);
    (void)history.grab();
    checkStalls("20,002 runs in one list");
    QCOMPARE(controller_->store().runs().result()->size(), size_t{20003});
    checkDatabase();
  }

  // Metric samples for a run id the agent never told of became a permanent row
  // in the GUI's database. They are dropped; the GUI asks for the run list, and a run the agent
  // does list is then fetched from its journal, so nothing of a real run is lost.
  // An agent of another protocol version refuses this GUI's hello; the user is
  // told which node and what to do, once (not at every heartbeat), and no node info is invented.
  void agent_of_another_protocol_version_is_named_with_what_to_do() {
    agent_->setHelloRefusal(v1::ErrorReply::UNSUPPORTED_VERSION,
                            "this agent speaks protocol version 3; this client speaks 2");
    fixture_ = std::make_unique<ControllerInTempDir>();
    controller_ = &fixture_->controller;
    errors_ = std::make_unique<QSignalSpy>(controller_, &Controller::errorMessage);
    QSignalSpy started(controller_, &Controller::started);
    QVERIFY(controller_->start().isOk());
    QTRY_COMPARE(started.count(), 1);
    QVERIFY(controller_
                ->addNode(QStringLiteral("hostile"), QStringLiteral("127.0.0.1"),
                          agent_->controlPort(), agent_->eventsPort(), agent_->publicKey())
                .isOk());
    nodeId_ = controller_->nodes().value(0).record.nodeId;
    QTRY_VERIFY_WITH_TIMEOUT(
        reportedNamingTheNode(QStringLiteral("another protocol version than this GUI")), 15000);
    QVERIFY(reportedNamingTheNode(QStringLiteral("install the same Ringside version")));
    QVERIFY(reportedNamingTheNode(QStringLiteral("this agent speaks protocol version 3")));
    // Said once while the agent keeps refusing the heartbeats' hellos.
    const int hellos = agent_->helloRequests();
    QTRY_VERIFY_WITH_TIMEOUT(agent_->helloRequests() >= hellos + 2, 20000);
    QCOMPARE(errors_->count(), 1);
    QVERIFY(!controller_->node(nodeId_)->info.has_value());
    // The node upgraded: its hello answers, and the node comes online with its info.
    agent_->setHelloRefusal(v1::ErrorReply::UNSUPPORTED_VERSION, {});
    QTRY_VERIFY_WITH_TIMEOUT(controller_->node(nodeId_)->info.has_value(), 20000);
  }

  void metrics_for_unknown_run_create_no_row() {
    QVERIFY(connectToAgent());
    HistoryPanel history(*controller_);
    history.show();
    startMeasuring();
    const int lists = agent_->listRequests();
    for (uint64_t seq = 1; seq <= 100; ++seq) {
      v1::Envelope event = protocol::newEnvelope(0);
      event.mutable_metric_batch()->set_run_id("r-ghost");
      *event.mutable_metric_batch()->add_samples() = sample(seq);
      agent_->publish(event);
      v1::Envelope log = protocol::newEnvelope(0);
      log.mutable_log_batch()->set_run_id("r-ghost");
      v1::LogLine* line = log.mutable_log_batch()->add_lines();
      line->set_seq(seq + 1000);
      line->set_text("ghost");
      agent_->publish(log);
    }
    // The GUI asked for the node's runs again, and said what it ignored.
    QTRY_VERIFY_WITH_TIMEOUT(agent_->listRequests() > lists, 10000);
    QTRY_VERIFY_WITH_TIMEOUT(reportedNamingTheNode(QStringLiteral("r-ghost")), 15000);
    QVERIFY(problems().contains(QStringLiteral("runs the node does not list (r-ghost)")));

    // A real run the GUI has not heard of yet (its state event was lost): its live samples are
    // dropped too, then the list shows it and its journal brings every sample.
    v1::RunInfo late = runInfo("r-late", v1::RUNNING, 50);
    agent_->setRuns({late});
    agent_->setFetchAnswer([](const v1::FetchRunDataRequest& fetch, v1::FetchRunDataReply& page) {
      if (fetch.run_id() != "r-late") return;
      for (uint64_t seq = fetch.after_seq() + 1; seq <= 50; ++seq)
        *page.add_samples() = sample(seq);
      page.set_last_seq(50);
    });
    for (uint64_t seq = 40; seq <= 50; ++seq) {
      v1::Envelope event = protocol::newEnvelope(0);
      event.mutable_metric_batch()->set_run_id("r-late");
      *event.mutable_metric_batch()->add_samples() = sample(seq);
      agent_->publish(event);
    }
    FutureProbe<Result<int64_t>> lateSamples(
        [this] { return controller_->store().sampleCount(QStringLiteral("r-late")); },
        [](const Result<int64_t>& count) { return count.isOk() && *count == 50; });
    QTRY_VERIFY_WITH_TIMEOUT(lateSamples(), 15000);
    checkStalls("samples of unknown runs");
    auto ghost = controller_->store().run(QStringLiteral("r-ghost")).result();
    QCOMPARE(ghost.status().code(), Status::Code::kNotFound);
    QCOMPARE(storedRunState(*controller_, QStringLiteral("r-late")), v1::RUNNING);
    QCOMPARE(controller_->store().runs().result()->size(), size_t{1});
    checkDatabase();
  }
};

int main(int argc, char** argv) {
  TimedApplication app(argc, argv);
  GuiHostileAgentTest test;
  QTEST_SET_MAIN_SOURCE_PATH
  return QTest::qExec(&test, argc, argv);
}

#include "gui_hostile_agent_test.moc"
