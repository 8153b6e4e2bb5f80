// Controller::launch of a multi-node run against fake agents (CURVE ROUTER/PUB on loopback, driven
// by this test): the pre-flight goes to every node first and the Launch to the owner only when
// all are ready; a node's problem, another agent version, a node that does not answer and an
// offline node each fail the launch naming the node, with nothing launched; the other GPU nodes
// get the GPUs they reported free, the spec carries the nodes' interfaces and the owner's mpirun
// options. Stop reaches every node of the run, and a non-owner's NotFound is no failure.
#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTimer>
#include <QtTest>
#include <memory>
#include <zmq.hpp>

#include "gui_test_support.h"
#include "ringside/common/curve.h"
#include "ringside/common/protocol.h"
#include "ringside/gui/controller.h"

using namespace ringside;
using namespace ringside::gui;

namespace {

// One node's agent as far as the controller's requests go. Answers whatever is queued when
// serve() is called (the test calls it from a timer on its own thread).
class FakeAgent {
 public:
  FakeAgent(zmq::context_t& context, std::string hostname)
      : hostname_(std::move(hostname)),
        router_(context, zmq::socket_type::router),
        pub_(context, zmq::socket_type::pub) {
    auto keys = curve::generateKeyPair();
    keys_ = keys.isOk() ? *keys : curve::KeyPair{};
    for (zmq::socket_t* socket : {&router_, &pub_}) {
      socket->set(zmq::sockopt::linger, 0);
      // No ZAP handler in this context: every CURVE client gets in.
      if (!curve::configureServer(*socket, keys_).isOk()) return;
      socket->bind("tcp://127.0.0.1:*");
    }
    valid_ = keys.isOk();
  }

  bool valid() const { return valid_; }
  QString publicKey() const { return QString::fromStdString(keys_.publicKey); }
  int port(zmq::socket_t& socket) const {
    const std::string endpoint = socket.get(zmq::sockopt::last_endpoint);
    return std::stoi(endpoint.substr(endpoint.rfind(':') + 1));
  }
  int controlPort() { return port(router_); }
  int eventsPort() { return port(pub_); }

  // What the node answers.
  std::string slotKind = "cpu";
  std::string version = "0.1.0";
  std::vector<std::string> problems;
  std::vector<uint32_t> freeGpus;
  bool answersPreflight = true;
  v1::ErrorReply::Code stopError = v1::ErrorReply::CODE_UNSPECIFIED;  // none: the stop is done

  // What the node was asked.
  std::vector<v1::PreflightRequest> preflights;
  std::vector<v1::RunSpec> launches;
  std::vector<std::string> stops;
  std::vector<bool> drains;  // SetDrain requests; the last one is what hellos report

  void serve() {
    while (true) {
      zmq::message_t identity, frame;
      if (!router_.recv(identity, zmq::recv_flags::dontwait)) return;
      (void)router_.recv(frame);
      auto request = protocol::decodeEnvelope(frame.data(), frame.size());
      if (!request.isOk()) continue;
      v1::Envelope reply = protocol::newEnvelope(request->request_id());
      if (!answer(*request, reply)) continue;
      router_.send(identity, zmq::send_flags::sndmore);
      router_.send(zmq::buffer(protocol::encodeEnvelope(reply)));
    }
  }

 private:
  // Fills `reply`; false: no reply at all.
  bool answer(const v1::Envelope& request, v1::Envelope& reply) {
    switch (request.body_case()) {
      case v1::Envelope::kHello: {
        v1::NodeInfo* node = reply.mutable_hello_reply()->mutable_node();
        node->set_node_id(hostname_);
        node->set_hostname(hostname_);
        node->set_agent_version(version);
        node->set_slot_kind(slotKind);
        node->set_slots_total(8);
        node->set_cpu_slots_total(8);
        node->set_gpu_slots_total(slotKind == "gpu" ? static_cast<uint32_t>(freeGpus.size()) : 0);
        node->set_draining(!drains.empty() && drains.back());
        reply.mutable_hello_reply()->set_protocol_version(protocol::kProtocolVersion);
        return true;
      }
      case v1::Envelope::kListRuns:
        reply.mutable_list_runs_reply();
        return true;
      case v1::Envelope::kPreflight: {
        preflights.push_back(request.preflight());
        if (!answersPreflight) return false;
        v1::PreflightReply* out = reply.mutable_preflight_reply();
        out->set_hostname(hostname_);
        out->set_agent_version(version);
        out->set_slot_kind(slotKind);
        out->set_free_slots(8);
        out->set_free_cpu_slots(8);
        for (uint32_t gpu : freeGpus) out->add_free_gpus(gpu);
        for (const std::string& problem : problems) out->add_problems(problem);
        return true;
      }
      case v1::Envelope::kLaunchRun: {
        launches.push_back(request.launch_run().spec());
        v1::RunInfo* run = reply.mutable_launch_run_reply()->mutable_run();
        run->set_run_id("r-" + std::to_string(launches.size()));
        *run->mutable_spec() = request.launch_run().spec();
        run->set_state(v1::STARTING);
        return true;
      }
      case v1::Envelope::kStopRun:
        stops.push_back(request.stop_run().run_id());
        if (stopError != v1::ErrorReply::CODE_UNSPECIFIED) {
          reply = protocol::makeErrorReply(request.request_id(), stopError,
                                           "no run " + request.stop_run().run_id() + " here");
        } else {
          reply.mutable_stop_run_reply()->mutable_run()->set_run_id(request.stop_run().run_id());
        }
        return true;
      case v1::Envelope::kSetDrain:
        drains.push_back(request.set_drain().draining());
        reply.mutable_set_drain_reply()->mutable_node()->set_draining(drains.back());
        return true;
      case v1::Envelope::kFetchRunData:
        reply.mutable_fetch_run_data_reply()->set_run_id(request.fetch_run_data().run_id());
        return true;
      default:
        reply = protocol::makeErrorReply(request.request_id(), v1::ErrorReply::UNKNOWN_MESSAGE,
                                         "not faked");
        return true;
    }
  }

  std::string hostname_;
  curve::KeyPair keys_;
  zmq::socket_t router_;
  zmq::socket_t pub_;
  bool valid_ = false;
};

}  // namespace

class ControllerPreflightTest : public QObject {
  Q_OBJECT

 private:
  zmq::context_t context_;
  std::unique_ptr<testing::ControllerInTempDir> fixture_;  // a fresh data folder per test
  Controller* controller_ = nullptr;                       // fixture_'s
  std::unique_ptr<FakeAgent> owner_, second_;
  QString ownerId_, secondId_;
  QTimer serveTimer_;

  static bool online(const Controller& controller, const QString& nodeId) {
    const auto node = controller.node(nodeId);
    return node && node->state == NodeState::Online && node->info.has_value();
  }

  // True once `agent` has received everything the controller sent it before this call: the
  // controller sends it a SetDrain(false) now, on the same connection (which keeps order), and
  // the agent receives that. Draining off changes nothing on a node that was not draining.
  bool earlierRequestsArrived(const FakeAgent& agent, const QString& nodeId) {
    const size_t before = agent.drains.size();
    controller_->setDrain(nodeId, false);
    return QTest::qWaitFor([&] { return agent.drains.size() > before; }, 5000);
  }

  // True once the controller has handled the replies to everything it sent `nodeId` before this
  // call: it drains the node now, and a heartbeat answered after the SetDrain (one connection,
  // answered and read in order) reports the node draining.
  bool earlierRepliesHandled(const QString& nodeId) {
    controller_->setDrain(nodeId, true);
    return QTest::qWaitFor(
        [&] {
          const auto node = controller_->node(nodeId);
          return node && node->info && node->info->draining();
        },
        5000);
  }

  RunForm twoNodeForm() const {
    RunForm form;
    form.name = QStringLiteral("two nodes");
    form.backend = QStringLiteral("nccl");
    form.nodeIds = {ownerId_, secondId_};
    form.ranksPerNode = 2;
    return form;
  }

 private slots:
  void init() {
    owner_ = std::make_unique<FakeAgent>(context_, "node-a");
    second_ = std::make_unique<FakeAgent>(context_, "node-b");
    QVERIFY(owner_->valid() && second_->valid());
    serveTimer_.setInterval(5);
    connect(&serveTimer_, &QTimer::timeout, this, [this] {
      owner_->serve();
      second_->serve();
    });
    serveTimer_.start();
    ControllerOptions options;
    options.startLocalAgent = false;
    options.preflightTimeoutMs = 1500;
    fixture_ = std::make_unique<testing::ControllerInTempDir>(options);
    controller_ = &fixture_->controller;
    QSignalSpy started(controller_, &Controller::started);
    QVERIFY(controller_->start().isOk());
    QTRY_COMPARE(started.count(), 1);
    NodeSettings ownerSettings;
    ownerSettings.networkInterface = QStringLiteral("lo");
    ownerSettings.mpirunOptions = QStringLiteral("--mca btl_tcp_links 2");
    QVERIFY(controller_
                ->addNode(QStringLiteral("A"), QStringLiteral("127.0.0.1"), owner_->controlPort(),
                          owner_->eventsPort(), owner_->publicKey(), ownerSettings)
                .isOk());
    NodeSettings secondSettings;
    secondSettings.networkInterface = QStringLiteral("127.0.0.0/8");
    secondSettings.mpirunOptions = QStringLiteral("--not-used-by-a-non-owner");
    QVERIFY(controller_
                ->addNode(QStringLiteral("B"), QStringLiteral("127.0.0.1"), second_->controlPort(),
                          second_->eventsPort(), second_->publicKey(), secondSettings)
                .isOk());
    for (const NodeView& node : controller_->nodes()) {
      (node.record.name == QStringLiteral("A") ? ownerId_ : secondId_) = node.record.nodeId;
    }
    QTRY_VERIFY_WITH_TIMEOUT(online(*controller_, ownerId_) && online(*controller_, secondId_),
                             10000);
  }

  void cleanup() {
    serveTimer_.stop();
    serveTimer_.disconnect();
    controller_ = nullptr;
    fixture_.reset();
    owner_.reset();
    second_.reset();
  }

  void aProblemOnTheSecondNodeFailsTheLaunchNamingIt() {
    second_->problems = {
        "dataset directory /nowhere does not exist on this node: install "
        "dataset-fashion-mnist or set \"data\" in the run spec"};
    QSignalSpy launched(controller_, &Controller::runLaunched);
    QSignalSpy failed(controller_, &Controller::launchFailed);
    QSignalSpy checking(controller_, &Controller::preflightStarted);
    controller_->launch(twoNodeForm());
    QCOMPARE(checking.count(), 1);  // at once; the answers come later
    QCOMPARE(checking.first().first().toStringList(), (QStringList{"A", "B"}));
    QCOMPARE(failed.count(), 0);
    QTRY_COMPARE(failed.count(), 1);
    const QString message = failed.first().first().toString();
    QVERIFY2(message.contains(QStringLiteral("B: dataset directory /nowhere")),
             qPrintable(message));
    QVERIFY(!message.contains(QStringLiteral("A:")));
    // Both nodes were asked, each for its own ranks; nobody was asked to launch.
    QCOMPARE(owner_->preflights.size(), size_t{1});
    QCOMPARE(second_->preflights.size(), size_t{1});
    QCOMPARE(second_->preflights[0].ranks(), 2u);
    QCOMPARE(second_->preflights[0].spec().hosts_size(), 2);
    QVERIFY(earlierRequestsArrived(*owner_, ownerId_));
    QVERIFY(earlierRequestsArrived(*second_, secondId_));
    QVERIFY(owner_->launches.empty() && second_->launches.empty());
    QCOMPARE(launched.count(), 0);
  }

  void anotherAgentVersionFailsTheLaunch() {
    second_->version = "0.0.9";
    QSignalSpy failed(controller_, &Controller::launchFailed);
    controller_->launch(twoNodeForm());
    QTRY_COMPARE(failed.count(), 1);
    const QString message = failed.first().first().toString();
    QVERIFY2(message.contains(QStringLiteral("0.0.9")) &&
                 message.contains(QStringLiteral("0.1.0")) &&
                 message.contains(QStringLiteral("B")) && message.contains(QStringLiteral("A")),
             qPrintable(message));
    QVERIFY(earlierRequestsArrived(*owner_, ownerId_));
    QVERIFY(owner_->launches.empty());
  }

  void aNodeThatDoesNotAnswerFailsTheLaunchInTime() {
    second_->answersPreflight = false;
    QSignalSpy failed(controller_, &Controller::launchFailed);
    QElapsedTimer clock;
    clock.start();
    controller_->launch(twoNodeForm());
    QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 5000);
    QVERIFY(clock.elapsed() >= 1400);  // options.preflightTimeoutMs
    const QString message = failed.first().first().toString();
    QVERIFY2(message.startsWith(QStringLiteral("B did not answer")), qPrintable(message));
    QVERIFY(owner_->launches.empty());
    QCOMPARE(second_->preflights.size(), size_t{1});
  }

  void anOfflineNodeFailsTheLaunchAtOnce() {
    const auto key = curve::generateKeyPair();
    QVERIFY(key.isOk());
    QVERIFY(controller_
                ->addNode(QStringLiteral("C"), QStringLiteral("127.0.0.1"), 9, 10,
                          QString::fromStdString(key->publicKey))
                .isOk());
    QString offline;
    for (const NodeView& node : controller_->nodes()) {
      if (node.record.name == QStringLiteral("C")) offline = node.record.nodeId;
    }
    RunForm form = twoNodeForm();
    form.nodeIds << offline;
    QSignalSpy failed(controller_, &Controller::launchFailed);
    controller_->launch(form);
    QCOMPARE(failed.count(), 1);  // no waiting
    QVERIFY2(failed.first().first().toString().contains(QStringLiteral("Node C is not online")),
             qPrintable(failed.first().first().toString()));
    QVERIFY(earlierRequestsArrived(*owner_, ownerId_));
    QVERIFY(earlierRequestsArrived(*second_, secondId_));
    QVERIFY(owner_->preflights.empty() && second_->preflights.empty());
  }

  void readyNodesLaunchOnTheOwnerAndStopReachesEveryNode() {
    owner_->slotKind = "gpu";
    owner_->freeGpus = {0, 1};
    second_->slotKind = "gpu";
    second_->freeGpus = {2, 3, 5};
    QSignalSpy launched(controller_, &Controller::runLaunched);
    QSignalSpy failed(controller_, &Controller::launchFailed);
    controller_->launch(twoNodeForm());
    QTRY_VERIFY(launched.count() + failed.count() == 1);
    QVERIFY2(failed.isEmpty(),
             failed.isEmpty() ? "" : qPrintable(failed.first().first().toString()));
    QCOMPARE(launched.first().first().toString(), QStringLiteral("r-1"));
    QCOMPARE(controller_->nodeOfRun(QStringLiteral("r-1")), ownerId_);
    QCOMPARE(owner_->launches.size(), size_t{1});
    QVERIFY(second_->launches.empty());
    const v1::RunSpec& spec = owner_->launches.front();
    QCOMPARE(spec.hosts_size(), 2);
    QCOMPARE(spec.hosts(0).host(), std::string("node-a"));
    QCOMPARE(spec.hosts(0).gpus_size(), 0);  // the owner picks its own
    QCOMPARE(spec.hosts(0).network_interface(), std::string("lo"));
    QCOMPARE(spec.hosts(1).host(), std::string("node-b"));
    QCOMPARE(spec.hosts(1).gpus_size(), 2);  // the first two it reported free
    QCOMPARE(spec.hosts(1).gpus(0), 2u);
    QCOMPARE(spec.hosts(1).gpus(1), 3u);
    QCOMPARE(spec.hosts(1).network_interface(), std::string("127.0.0.0/8"));
    QCOMPARE(spec.mpirun_args_size(), 3);  // the owner's options only
    QCOMPARE(spec.mpirun_args(0), std::string("--mca"));

    // Stop goes to both nodes; the second node's ranks had already exited (NotFound): no failure.
    second_->stopError = v1::ErrorReply::NOT_FOUND;
    QSignalSpy stopFailed(controller_, &Controller::runStopFailed);
    controller_->stopRun(QStringLiteral("r-1"));
    QTRY_VERIFY(owner_->stops.size() == 1 && second_->stops.size() == 1);
    QCOMPARE(second_->stops.front(), std::string("r-1"));
    QVERIFY(earlierRepliesHandled(ownerId_));
    QVERIFY(earlierRepliesHandled(secondId_));
    QCOMPARE(stopFailed.count(), 0);
    // Any other error from a node is shown, naming it.
    second_->stopError = v1::ErrorReply::INTERNAL;
    controller_->stopRun(QStringLiteral("r-1"));
    QTRY_COMPARE(stopFailed.count(), 1);
    QCOMPARE(stopFailed.first().at(0).toString(), QStringLiteral("r-1"));
    QVERIFY2(stopFailed.first().at(1).toString().startsWith(QStringLiteral("B ")),
             qPrintable(stopFailed.first().at(1).toString()));
  }
};

QTEST_GUILESS_MAIN(ControllerPreflightTest)
#include "controller_preflight_test.moc"
