// AgentConnection against a real agent (CURVE, loopback) and against a fake one that sends bad
// frames: a 2-rank trainer run followed live through batched events; a second connection that
// catches up from seq 0 through fetch pages gets exactly the same samples; malformed frames and
// bad endpoints are survived; stop() is prompt.
#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <map>
#include <set>
#include <zmq.hpp>

#include "build_paths.h"
#include "ringside/common/protocol.h"
#include "ringside/gui/agent_connection.h"
#include "ringside/gui/gui_keys.h"
#include "ringside/gui/local_agent.h"

using namespace ringside;
using namespace ringside::gui;

namespace {

// Everything one connection delivered for one run, through live batches and fetch pages.
struct Received {
  std::map<uint64_t, v1::MetricSample> samples;  // by seq
  std::set<uint64_t> seqs;                       // all kinds
  size_t sampleDeliveries = 0;                   // duplicates would make this > samples.size()
  size_t pages = 0;
  size_t batches = 0;  // live batches that held samples of the run
  bool completed = false;

  void addSample(const v1::MetricSample& sample) {
    ++sampleDeliveries;
    samples[sample.seq()] = sample;
    seqs.insert(sample.seq());
  }
  void addState(const v1::RunStateEvent& state) {
    seqs.insert(state.seq());
    completed |= state.run().state() == v1::COMPLETED;
  }
};

// Collects every run's entries, so that nothing delivered before the run id is known is missed.
// A fake plaintext agent for the tests to script: a ROUTER (control) and a PUB (events) socket
// bound on free loopback ports.
struct FakeAgentSockets {
  zmq::context_t context;
  zmq::socket_t router{context, zmq::socket_type::router};
  zmq::socket_t pub{context, zmq::socket_type::pub};

  FakeAgentSockets() {
    for (zmq::socket_t* socket : {&router, &pub}) {
      socket->set(zmq::sockopt::linger, 0);
      socket->bind("tcp://127.0.0.1:*");
    }
  }
  QString control() { return QString::fromStdString(router.get(zmq::sockopt::last_endpoint)); }
  QString events() { return QString::fromStdString(pub.get(zmq::sockopt::last_endpoint)); }
};

void collect(AgentConnection& connection, std::map<std::string, Received>& runs) {
  QObject::connect(&connection, &AgentConnection::eventsReceived, &connection,
                   [&runs](const EventBatch& batch) {
                     for (const auto& metrics : batch.metrics) {
                       Received& into = runs[metrics.run_id()];
                       ++into.batches;
                       for (const auto& sample : metrics.samples()) into.addSample(sample);
                     }
                     for (const auto& logs : batch.logs) {
                       for (const auto& line : logs.lines())
                         runs[logs.run_id()].seqs.insert(line.seq());
                     }
                     for (const auto& state : batch.states)
                       runs[state.run().run_id()].addState(state);
                   });
  QObject::connect(&connection, &AgentConnection::runDataFetched, &connection,
                   [&runs](const v1::FetchRunDataReply& page) {
                     Received& into = runs[page.run_id()];
                     ++into.pages;
                     for (const auto& sample : page.samples()) into.addSample(sample);
                     for (const auto& line : page.log_lines()) into.seqs.insert(line.seq());
                     for (const auto& state : page.states()) into.addState(state);
                   });
}

bool gapFree(const std::set<uint64_t>& seqs) {
  return !seqs.empty() && *seqs.begin() == 1 && *seqs.rbegin() == seqs.size();
}

}  // namespace

class AgentConnectionProcessTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    qputenv("OMPI_ALLOW_RUN_AS_ROOT", "1");
    qputenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    qputenv("OMPI_MCA_rmaps_base_oversubscribe", "1");
    auto keys = curve::generateKeyPair();
    QVERIFY(keys.isOk());
    keys_ = *keys;
  }

  void badEndpointsAndKeysAreReported() {
    AgentConnection connection(keys_);
    QSignalSpy errors(&connection, &AgentConnection::connectionError);
    connection.connectTo("tcp://10.1.2.3:47600", "tcp://10.1.2.3:47601", "");
    QTRY_COMPARE_WITH_TIMEOUT(errors.size(), 1, 2000);
    QVERIFY(errors.first().first().toString().contains("loopback"));
    connection.connectTo("tcp://127.0.0.1:1", "tcp://127.0.0.1:2", "not a key");
    QTRY_COMPARE_WITH_TIMEOUT(errors.size(), 2, 2000);
    connection.connectTo("bogus://x", "bogus://y", "");
    QTRY_COMPARE_WITH_TIMEOUT(errors.size(), 3, 2000);
    QCOMPARE(connection.state(), NodeState::Offline);
  }

  // A fake plaintext agent sends garbage on both sockets; the connection counts it, keeps
  // working, and still delivers the good frames.
  void malformedFramesAreSurvived() {
    FakeAgentSockets fake;
    zmq::socket_t& router = fake.router;
    zmq::socket_t& pub = fake.pub;
    const QString control = fake.control();
    const QString events = fake.events();

    AgentConnection connection(keys_);
    QSignalSpy batches(&connection, &AgentConnection::eventsReceived);
    QSignalSpy replies(&connection, &AgentConnection::replyReceived);
    connection.connectTo(control, events, "");
    quint64 helloId = 0;  // sent once online: a request while not connected fails at once

    // Answer every request: garbage, a multi-part message, a reply to nobody, then the real reply
    // (heartbeat hellos get a garbage answer only).
    v1::Envelope telemetry = protocol::newEnvelope(0);
    telemetry.mutable_node_telemetry()->set_node_id("fake");
    const std::string telemetryFrame = protocol::encodeEnvelope(telemetry);
    QElapsedTimer timer;
    timer.start();
    while (timer.elapsed() < 10000 && (replies.isEmpty() || batches.isEmpty())) {
      zmq::pollitem_t item{router.handle(), 0, ZMQ_POLLIN, 0};
      if (zmq::poll(&item, 1, std::chrono::milliseconds(20)) > 0) {
        zmq::message_t routingId, frame;
        (void)router.recv(routingId);
        (void)router.recv(frame);
        auto request = protocol::decodeEnvelope(frame.data(), frame.size());
        QVERIFY(request.isOk());
        const std::string id = routingId.to_string();
        auto reply = [&](const std::string& body, zmq::send_flags flags = zmq::send_flags::none) {
          router.send(zmq::buffer(id), zmq::send_flags::sndmore);
          router.send(zmq::buffer(body), flags);
        };
        reply("\xff\xfe garbage");
        reply(std::string());
        router.send(zmq::buffer(id), zmq::send_flags::sndmore);
        router.send(zmq::str_buffer("part one"), zmq::send_flags::sndmore);
        router.send(zmq::str_buffer("part two"));
        v1::Envelope stray = protocol::newEnvelope(987654321);
        stray.mutable_hello_reply();
        reply(protocol::encodeEnvelope(stray));
        v1::Envelope answer = protocol::newEnvelope(request->request_id());
        answer.mutable_hello_reply()->mutable_node()->set_hostname("fake");
        answer.mutable_hello_reply()->set_protocol_version(1);
        reply(protocol::encodeEnvelope(answer));
      }
      if (helloId == 0 && connection.state() == NodeState::Online) helloId = connection.hello();
      pub.send(zmq::str_buffer("\x08\x01 not an envelope"));
      pub.send(zmq::str_buffer(""));
      pub.send(zmq::buffer(telemetryFrame));
      QCoreApplication::processEvents();
    }
    QVERIFY(helloId != 0);
    QTRY_VERIFY_WITH_TIMEOUT(!replies.isEmpty(), 1000);
    bool sawHello = false;
    for (const auto& args : replies) {
      sawHello |= args.at(0).toULongLong() == helloId &&
                  args.at(1).value<v1::Envelope>().hello_reply().node().hostname() == "fake";
    }
    QVERIFY(sawHello);
    QVERIFY(!batches.isEmpty());
    const auto batch = batches.first().first().value<EventBatch>();
    QVERIFY(!batch.telemetry.empty() && batch.telemetry.front().node_id() == "fake");
    QVERIFY(connection.malformedFrames() >= 4);
    QCOMPARE(connection.state(), NodeState::Online);

    QElapsedTimer stopping;
    stopping.start();
    connection.stop();
    QVERIFY2(stopping.elapsed() < 1000, "stop() joins the network thread promptly");
    QCOMPARE(connection.request(protocol::newEnvelope(0)), quint64{0});
  }

  // A reply over the protocol's 16 MiB limit was dropped by the socket without
  // a word (the node showed N/A). Both ends now take frames up to the transport cap, and the GUI
  // refuses one over the protocol limit saying so, and stays connected.
  void aReplyOverTheFrameLimitIsRefusedAndSaid() {
    FakeAgentSockets fake;
    zmq::socket_t& router = fake.router;
    AgentConnection connection(keys_);
    QSignalSpy errors(&connection, &AgentConnection::connectionError);
    connection.connectTo(fake.control(), fake.events(), "");
    const std::string oversized(protocol::kMaxMessageBytes + 1024, 'x');
    QElapsedTimer timer;
    timer.start();
    while (timer.elapsed() < 10000 &&
           (errors.isEmpty() || connection.state() != NodeState::Online)) {
      zmq::pollitem_t item{router.handle(), 0, ZMQ_POLLIN, 0};
      if (zmq::poll(&item, 1, std::chrono::milliseconds(20)) > 0) {
        zmq::message_t routingId, frame;
        (void)router.recv(routingId);
        (void)router.recv(frame);
        auto request = protocol::decodeEnvelope(frame.data(), frame.size());
        QVERIFY(request.isOk());
        const std::string id = routingId.to_string();  // (sending a message_t empties it)
        router.send(zmq::buffer(id), zmq::send_flags::sndmore);
        router.send(zmq::buffer(oversized));
        v1::Envelope answer = protocol::newEnvelope(request->request_id());
        answer.mutable_hello_reply()->set_protocol_version(1);
        router.send(zmq::buffer(id), zmq::send_flags::sndmore);
        router.send(zmq::buffer(protocol::encodeEnvelope(answer)));
      }
      QCoreApplication::processEvents();
    }
    QVERIFY(!errors.isEmpty());
    const QString message = errors.first().first().toString();
    QVERIFY2(message.contains(
                 QStringLiteral("refused a %1-byte message from the agent").arg(oversized.size())),
             qPrintable(message));
    // The reply after it was taken: the connection went online on it and stayed so.
    QCOMPARE(connection.state(), NodeState::Online);
    connection.stop();
  }

  // PUB drops a message (seq 2 never arrives live): the connection sees the gap, fetches from
  // the last seq it delivered, and delivers each seq exactly once (a repeated seq 1 is dropped).
  void gapInLiveSeqsIsFetchedAndDuplicatesDropped() {
    FakeAgentSockets fake;
    zmq::socket_t& router = fake.router;
    zmq::socket_t& pub = fake.pub;
    AgentConnection connection(keys_);
    std::map<std::string, Received> runs;
    collect(connection, runs);
    bool sawTelemetry = false;
    QObject::connect(&connection, &AgentConnection::eventsReceived, &connection,
                     [&](const EventBatch& batch) { sawTelemetry |= !batch.telemetry.empty(); });
    connection.connectTo(fake.control(), fake.events(), "");

    auto sample = [](uint64_t seq) {
      v1::MetricSample s;
      s.set_seq(seq);
      s.set_step(static_cast<int64_t>(seq));
      s.set_name("train/loss");
      s.set_value(1.0 / static_cast<double>(seq));
      return s;
    };
    auto publishSamples = [&](std::vector<uint64_t> seqs) {
      v1::Envelope event = protocol::newEnvelope(0);
      event.mutable_metric_batch()->set_run_id("r1");
      for (uint64_t seq : seqs) *event.mutable_metric_batch()->add_samples() = sample(seq);
      pub.send(zmq::buffer(protocol::encodeEnvelope(event)));
    };
    std::vector<uint64_t> fetchedAfter;
    int published = 0;
    QElapsedTimer timer;
    timer.start();
    while (timer.elapsed() < 15000 && runs["r1"].seqs.size() < 3) {
      zmq::pollitem_t item{router.handle(), 0, ZMQ_POLLIN, 0};
      if (zmq::poll(&item, 1, std::chrono::milliseconds(10)) > 0) {
        zmq::message_t routingId, frame;
        (void)router.recv(routingId);
        (void)router.recv(frame);
        auto request = protocol::decodeEnvelope(frame.data(), frame.size());
        QVERIFY(request.isOk());
        v1::Envelope answer = protocol::newEnvelope(request->request_id());
        if (request->has_hello()) {
          answer.mutable_hello_reply()->set_protocol_version(1);
        } else if (request->has_list_runs()) {
          // The run is listed: live entries of runs the agent never told of are not delivered.
          v1::RunInfo* run = answer.mutable_list_runs_reply()->add_runs();
          run->set_run_id("r1");
          run->set_state(v1::RUNNING);
          run->set_last_seq(published > 0 ? 3 : 0);
        } else if (request->has_fetch_run_data()) {
          const uint64_t after = request->fetch_run_data().after_seq();
          fetchedAfter.push_back(after);
          auto* page = answer.mutable_fetch_run_data_reply();
          page->set_run_id("r1");
          for (uint64_t seq = after + 1; seq <= 3; ++seq) *page->add_samples() = sample(seq);
          page->set_last_seq(std::max<uint64_t>(after, 3));
        }
        router.send(routingId, zmq::send_flags::sndmore);
        router.send(zmq::buffer(protocol::encodeEnvelope(answer)));
      }
      if (!sawTelemetry) {
        v1::Envelope telemetry = protocol::newEnvelope(0);
        telemetry.mutable_node_telemetry()->set_node_id("fake");
        pub.send(zmq::buffer(protocol::encodeEnvelope(telemetry)));
      } else if (published == 0) {
        publishSamples({1});
        publishSamples({1});  // a duplicate
        publishSamples({3});  // seq 2 was "dropped"
        published = 1;
      }
      QCoreApplication::processEvents();
    }
    const Received& r1 = runs["r1"];
    QVERIFY(r1.seqs == (std::set<uint64_t>{1, 2, 3}));
    QCOMPARE(r1.sampleDeliveries, size_t{3});
    QVERIFY(!fetchedAfter.empty());
    QVERIFY(fetchedAfter.front() <= 1);
  }

  void runIsFollowedLiveAndCaughtUpByAnotherConnection() {
    QTemporaryDir dir;
    LocalAgentOptions options;
    options.agentBinary = QString::fromUtf8(ringside::test::agentBin());
    options.trainerBinary = QString::fromUtf8(ringside::test::trainerBin());
    options.mpirun = QString::fromUtf8(ringside::test::mpiexec());
    options.stateDir = dir.path() + "/local-agent";
    options.guiPublicKey = QString::fromStdString(keys_.publicKey);
    options.telemetryIntervalS = 0.2;
    LocalAgent agent(options);
    QSignalSpy ready(&agent, &LocalAgent::ready);
    QSignalSpy failed(&agent, &LocalAgent::failed);
    agent.start();
    QTRY_VERIFY_WITH_TIMEOUT(!ready.isEmpty() || !failed.isEmpty(), 30000);
    QVERIFY2(failed.isEmpty(), qPrintable(failed.value(0).value(0).toString()));

    AgentConnection live(keys_);
    std::map<std::string, Received> liveRuns;
    collect(live, liveRuns);
    QSignalSpy liveReplies(&live, &AgentConnection::replyReceived);
    live.connectTo(agent.controlEndpoint(), agent.eventsEndpoint(), agent.agentPublicKey());
    QTRY_COMPARE_WITH_TIMEOUT(live.state(), NodeState::Online, 10000);

    v1::RunSpec spec;
    spec.set_name("gui-connection-e2e");
    spec.set_ranks_per_node(2);
    v1::TrainerConfig* config = spec.mutable_trainer()->mutable_config();
    config->set_backend("mpi");
    config->set_epochs(1);
    config->set_train_samples(5000);
    config->set_test_samples(1000);
    const quint64 launchId = live.launchRun(spec);
    QTRY_VERIFY_WITH_TIMEOUT(!liveReplies.isEmpty(), 10000);
    QCOMPARE(liveReplies.first().at(0).toULongLong(), launchId);
    const auto launched = liveReplies.first().at(1).value<v1::Envelope>();
    QVERIFY2(launched.has_launch_run_reply(), launched.DebugString().c_str());
    const std::string runId = launched.launch_run_reply().run().run_id();
    live.trackRun(QString::fromStdString(runId), 0);

    Received& first = liveRuns[runId];
    QTRY_VERIFY_WITH_TIMEOUT(first.completed, 240000);
    // The COMPLETED state is the run's last entry: wait until everything before it arrived too.
    QTRY_VERIFY_WITH_TIMEOUT(gapFree(first.seqs), 20000);
    QVERIFY(!first.samples.empty());
    QCOMPARE(first.sampleDeliveries, first.samples.size());  // no duplicates delivered
    QVERIFY(first.batches < first.sampleDeliveries);         // batched, not one by one

    // Catch-up: a second connection that knows the run from seq 0 gets it all through pages.
    AgentConnectionOptions small;
    small.fetchPageEntries = 25;  // several pages
    small.autoTrackRuns = false;
    AgentConnection catchUp(keys_, small);
    std::map<std::string, Received> catchUpRuns;
    collect(catchUp, catchUpRuns);
    Received& second = catchUpRuns[runId];
    QSignalSpy caughtUp(&catchUp, &AgentConnection::runCaughtUp);
    catchUp.trackRun(QString::fromStdString(runId), 0);
    catchUp.connectTo(agent.controlEndpoint(), agent.eventsEndpoint(), agent.agentPublicKey());
    QTRY_VERIFY_WITH_TIMEOUT(!caughtUp.isEmpty(), 30000);
    QCOMPARE(caughtUp.first().at(0).toString(), QString::fromStdString(runId));
    QCOMPARE(caughtUp.first().at(1).toULongLong(), quint64{*first.seqs.rbegin()});
    qInfo() << "run" << runId.c_str() << "journaled" << first.seqs.size() << "entries,"
            << first.samples.size() << "samples; live batches" << first.batches << ", pages"
            << first.pages << "; catch-up pages" << second.pages;
    QVERIFY(second.pages >= (first.seqs.size() + 24) / 25);
    QVERIFY(gapFree(second.seqs));
    QVERIFY(second.seqs == first.seqs);
    QCOMPARE(second.samples.size(), first.samples.size());
    QCOMPARE(second.sampleDeliveries, second.samples.size());
    for (const auto& [seq, sample] : first.samples) {
      const auto it = second.samples.find(seq);
      QVERIFY(it != second.samples.end());
      QVERIFY(it->second.name() == sample.name());
      QCOMPARE(it->second.value(), sample.value());
      QCOMPARE(it->second.step(), sample.step());
      QCOMPARE(it->second.rank(), sample.rank());
    }

    // Nothing more arrives for a run that is complete (no re-fetch loop).
    const size_t pages = second.pages;
    QTest::qWait(1500);
    QCOMPARE(second.pages, pages);

    QElapsedTimer stopping;
    stopping.start();
    live.stop();
    catchUp.stop();
    QVERIFY2(stopping.elapsed() < 1000, "stop() joins the network threads promptly");
  }

 private:
  curve::KeyPair keys_;
};

QTEST_GUILESS_MAIN(AgentConnectionProcessTest)
#include "agent_connection_process_test.moc"
