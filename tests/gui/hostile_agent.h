// Test helpers for the GUI against a broken or hostile agent (gui_hostile_agent_test.cpp):
//  - HostileAgent: a fake node agent that speaks the protocol over CURVE (ROUTER and PUB bound on
//    127.0.0.1:*) from a thread of its own, so that building and sending its huge messages costs
//    the GUI thread nothing. It answers hello, list_runs and fetch_run_data with what the test
//    set, answers other requests with UNKNOWN_MESSAGE, and publishes what the test queues,
//    journaling the run entries it publishes as an agent does (fetch_run_data returns them).
//  - GuiThreadMeter: how long the GUI thread was busy. It times every event the GUI thread's
//    event loop dispatches (QApplication::notify at the outermost level: a delivery from a
//    connection, a timer, a paint), in the thread's CPU time and in wall time, and runs a 5 ms
//    heartbeat timer whose longest gap is the longest the GUI did not respond.
//  - integrityCheck: PRAGMA integrity_check of a database file, through a connection of its own.
//
// Thread-safety: HostileAgent's setters and publish() may be called from any thread; the meter
// and integrityCheck belong to the GUI thread.
#pragma once

#include <time.h>

#include <QApplication>
#include <QElapsedTimer>
#include <QFuture>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QString>
#include <QThread>
#include <QTimer>
#include <QUuid>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "ringside/common/curve.h"
#include "ringside/common/protocol.h"

namespace ringside::gui::testing {

class HostileAgent {
 public:
  // Answers a fetch_run_data request: fills `page` (its run_id and last_seq are preset to the
  // request's run id and after_seq).
  using FetchAnswer = std::function<void(const v1::FetchRunDataRequest&, v1::FetchRunDataReply&)>;

  HostileAgent()
      : router_(context_, zmq::socket_type::router), pub_(context_, zmq::socket_type::pub) {
    auto keys = curve::generateKeyPair();
    if (!keys.isOk()) return;
    keys_ = *keys;
    for (zmq::socket_t* socket : {&router_, &pub_}) {
      socket->set(zmq::sockopt::linger, 0);
      socket->set(zmq::sockopt::maxmsgsize, protocol::kTransportMaxMessageBytes);
      // No ZAP handler in this context: every CURVE client gets in.
      if (!curve::configureServer(*socket, keys_).isOk()) return;
      socket->bind("tcp://127.0.0.1:*");
    }
    pub_.set(zmq::sockopt::sndhwm, 100000);
    hello_.set_node_id("hostile");
    hello_.set_hostname("hostile-node");
    hello_.set_agent_version("0.1.0");
    valid_ = true;
    thread_ = std::thread([this] { run(); });
  }
  ~HostileAgent() {
    stopping_ = true;
    if (thread_.joinable()) thread_.join();
  }

  bool valid() const { return valid_; }
  QString publicKey() const { return QString::fromStdString(keys_.publicKey); }
  int controlPort() { return port(router_); }
  int eventsPort() { return port(pub_); }

  // What hello answers (NodeInfo), what list_runs answers (every run, `pageRuns` per page; 0: all
  // on one page), and how fetch_run_data is answered (default: an empty page up to the listed
  // run's last_seq).
  void setNode(v1::NodeInfo node) {
    std::lock_guard lock(mutex_);
    hello_ = std::move(node);
  }
  // Hello answered with this error instead of the node (an agent of another protocol version);
  // an empty message answers hello again.
  void setHelloRefusal(v1::ErrorReply::Code code, std::string message) {
    std::lock_guard lock(mutex_);
    helloRefusalCode_ = code;
    helloRefusal_ = std::move(message);
  }
  void setRuns(std::vector<v1::RunInfo> runs, size_t pageRuns = 0) {
    std::lock_guard lock(mutex_);
    runs_ = std::move(runs);
    pageRuns_ = pageRuns;
  }
  void setFetchAnswer(FetchAnswer answer) {
    std::lock_guard lock(mutex_);
    fetchAnswer_ = std::move(answer);
  }
  // Publishes `event` (protocol_version set here) on the events socket, from the agent's thread.
  void publish(v1::Envelope event) {
    event.set_protocol_version(protocol::kProtocolVersion);
    std::lock_guard lock(mutex_);
    outbox_.push_back(protocol::encodeEnvelope(event));
  }
  // Publishes a frame encoded before (a huge message is built and encoded before the GUI is
  // measured: the test's thread is the GUI thread).
  void publishFrame(std::string frame) {
    std::lock_guard lock(mutex_);
    outbox_.push_back(std::move(frame));
  }
  // `event` as publish() sends it.
  static std::string encodeEvent(v1::Envelope event) {
    event.set_protocol_version(protocol::kProtocolVersion);
    return protocol::encodeEnvelope(event);
  }
  // Calls `makeEvent` every `intervalMs` on the agent's thread and publishes what it returns
  // (until clearPeriodic()).
  void setPeriodic(int intervalMs, std::function<v1::Envelope()> makeEvent) {
    std::lock_guard lock(mutex_);
    periodicMs_ = intervalMs;
    periodic_ = std::move(makeEvent);
  }
  void clearPeriodic() { setPeriodic(0, {}); }

  int listRequests() const { return listRequests_.load(); }
  int helloRequests() const { return helloRequests_.load(); }
  int fetchRequests() const { return fetchRequests_.load(); }
  bool queueEmpty() {
    std::lock_guard lock(mutex_);
    return outbox_.empty();
  }

 private:
  static int port(zmq::socket_t& socket) {
    const std::string endpoint = socket.get(zmq::sockopt::last_endpoint);
    return std::stoi(endpoint.substr(endpoint.rfind(':') + 1));
  }

  void run() {
    auto lastPeriodic = std::chrono::steady_clock::now();
    while (!stopping_) {
      zmq::pollitem_t item{router_.handle(), 0, ZMQ_POLLIN, 0};
      (void)zmq::poll(&item, 1, std::chrono::milliseconds(5));
      for (int i = 0; i < 100 && serveOne(); ++i) {
      }
      std::deque<std::string> out;
      std::function<v1::Envelope()> periodic;
      int periodicMs = 0;
      {
        std::lock_guard lock(mutex_);
        out.swap(outbox_);
        periodic = periodic_;
        periodicMs = periodicMs_;
      }
      const auto now = std::chrono::steady_clock::now();
      if (periodic && now - lastPeriodic >= std::chrono::milliseconds(periodicMs)) {
        lastPeriodic = now;
        v1::Envelope event = periodic();
        event.set_protocol_version(protocol::kProtocolVersion);
        out.push_back(protocol::encodeEnvelope(event));
      }
      for (const std::string& frame : out) {
        journal(frame);
        (void)pub_.send(zmq::buffer(frame));
      }
    }
  }

  // An agent journals every run entry before it publishes it, so fetch_run_data answers with it.
  void journal(const std::string& frame) {
    auto event = protocol::decodeEnvelope(frame.data(), frame.size());
    if (!event.isOk()) return;
    std::lock_guard lock(mutex_);
    switch (event->body_case()) {
      case v1::Envelope::kRunState:
        *journal_[event->run_state().run().run_id()].add_states() = event->run_state();
        return;
      case v1::Envelope::kMetricBatch:
        for (const v1::MetricSample& sample : event->metric_batch().samples()) {
          *journal_[event->metric_batch().run_id()].add_samples() = sample;
        }
        return;
      case v1::Envelope::kLogBatch:
        for (const v1::LogLine& line : event->log_batch().lines()) {
          *journal_[event->log_batch().run_id()].add_log_lines() = line;
        }
        return;
      default:
        return;
    }
  }

  bool serveOne() {
    zmq::message_t identity, frame;
    if (!router_.recv(identity, zmq::recv_flags::dontwait)) return false;
    (void)router_.recv(frame);
    auto request = protocol::decodeEnvelope(frame.data(), frame.size());
    if (!request.isOk()) return true;
    v1::Envelope reply = protocol::newEnvelope(request->request_id());
    answer(*request, reply);
    router_.send(identity, zmq::send_flags::sndmore);
    router_.send(zmq::buffer(protocol::encodeEnvelope(reply)));
    return true;
  }

  void answer(const v1::Envelope& request, v1::Envelope& reply) {
    std::lock_guard lock(mutex_);
    switch (request.body_case()) {
      case v1::Envelope::kHello:
        ++helloRequests_;
        if (!helloRefusal_.empty()) {
          reply.mutable_error()->set_code(helloRefusalCode_);
          reply.mutable_error()->set_message(helloRefusal_);
          return;
        }
        *reply.mutable_hello_reply()->mutable_node() = hello_;
        reply.mutable_hello_reply()->set_protocol_version(protocol::kProtocolVersion);
        return;
      case v1::Envelope::kListRuns: {
        ++listRequests_;
        const size_t first =
            request.list_runs().page_token().empty()
                ? 0
                : static_cast<size_t>(std::stoull(request.list_runs().page_token()));
        const size_t count = pageRuns_ == 0 ? runs_.size() : pageRuns_;
        v1::ListRunsReply* list = reply.mutable_list_runs_reply();
        for (size_t i = first; i < runs_.size() && i < first + count; ++i) {
          *list->add_runs() = runs_[i];
        }
        if (first + count < runs_.size()) list->set_next_page_token(std::to_string(first + count));
        return;
      }
      case v1::Envelope::kFetchRunData: {
        ++fetchRequests_;
        const v1::FetchRunDataRequest& fetch = request.fetch_run_data();
        v1::FetchRunDataReply* page = reply.mutable_fetch_run_data_reply();
        page->set_run_id(fetch.run_id());
        page->set_last_seq(fetch.after_seq());
        if (fetchAnswer_) {
          fetchAnswer_(fetch, *page);
          return;
        }
        for (const v1::RunInfo& run : runs_) {
          if (run.run_id() == fetch.run_id()) {
            page->set_last_seq(std::max(fetch.after_seq(), run.last_seq()));
          }
        }
        // What it journaled after after_seq (a test's runs are small: one page).
        if (auto it = journal_.find(fetch.run_id()); it != journal_.end()) {
          const v1::FetchRunDataReply& entries = it->second;
          uint64_t last = page->last_seq();
          for (const v1::MetricSample& sample : entries.samples()) {
            if (sample.seq() <= fetch.after_seq()) continue;
            *page->add_samples() = sample;
            last = std::max(last, sample.seq());
          }
          for (const v1::LogLine& line : entries.log_lines()) {
            if (line.seq() <= fetch.after_seq()) continue;
            *page->add_log_lines() = line;
            last = std::max(last, line.seq());
          }
          for (const v1::RunStateEvent& state : entries.states()) {
            if (state.seq() <= fetch.after_seq()) continue;
            *page->add_states() = state;
            last = std::max(last, state.seq());
          }
          page->set_last_seq(last);
        }
        return;
      }
      default:
        reply = protocol::makeErrorReply(request.request_id(), v1::ErrorReply::UNKNOWN_MESSAGE,
                                         "not faked");
        return;
    }
  }

  zmq::context_t context_;
  curve::KeyPair keys_;
  zmq::socket_t router_;  // the agent's thread only, after construction
  zmq::socket_t pub_;
  bool valid_ = false;
  std::atomic<bool> stopping_{false};
  std::atomic<int> listRequests_{0};
  std::atomic<int> helloRequests_{0};
  std::atomic<int> fetchRequests_{0};
  std::mutex mutex_;
  v1::NodeInfo hello_;              // guarded by mutex_
  v1::ErrorReply::Code helloRefusalCode_ = v1::ErrorReply::UNSUPPORTED_VERSION;  // guarded by mutex_
  std::string helloRefusal_;        // guarded by mutex_
  std::vector<v1::RunInfo> runs_;   // guarded by mutex_
  size_t pageRuns_ = 0;             // guarded by mutex_
  FetchAnswer fetchAnswer_;         // guarded by mutex_
  std::deque<std::string> outbox_;  // guarded by mutex_
  // Run id -> the entries published for it; guarded by mutex_.
  std::map<std::string, v1::FetchRunDataReply> journal_;
  std::function<v1::Envelope()> periodic_;  // guarded by mutex_
  int periodicMs_ = 0;                      // guarded by mutex_
  std::thread thread_;                      // last: started when everything else exists
};

// The GUI thread's CPU time, ns.
inline int64_t threadCpuNs() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return int64_t{now.tv_sec} * 1000000000 + now.tv_nsec;
}

// A QApplication that times each event the GUI thread dispatches at the outermost level (see
// the file comment). Measures only between start() and stop().
class TimedApplication : public QApplication {
 public:
  TimedApplication(int& argc, char** argv) : QApplication(argc, argv) {}

  void start() {
    longestCpuNs_ = longestWallNs_ = 0;
    longestEvent_.clear();
    measuring_ = true;
  }
  void stop() { measuring_ = false; }
  double longestCpuMs() const { return static_cast<double>(longestCpuNs_) / 1e6; }
  double longestWallMs() const { return static_cast<double>(longestWallNs_) / 1e6; }
  // "QMetaCallEvent to ringside::gui::AgentConnection": what the longest (CPU) event was.
  const QString& longestEvent() const { return longestEvent_; }
  // When the longest event ended, CLOCK_MONOTONIC seconds (to find it in a profile).
  double longestEndS() const { return longestEndS_; }

  bool notify(QObject* receiver, QEvent* event) override {
    // notify() runs on every thread with an event loop (the store's too): only the GUI thread's
    // events are timed, and only this thread touches the members below.
    if (QThread::currentThread() != thread()) return QApplication::notify(receiver, event);
    if (depth_ > 0 || !measuring_) {
      ++depth_;
      const bool result = QApplication::notify(receiver, event);
      --depth_;
      return result;
    }
    const QEvent::Type type = event->type();  // the event may not outlive its dispatch
    QString receiverClass = QString::fromLatin1(receiver->metaObject()->className());
    if (receiver->parent() != nullptr) {
      receiverClass += QStringLiteral(" in ") +
                       QString::fromLatin1(receiver->parent()->metaObject()->className());
    }
    const int64_t cpu = threadCpuNs();
    QElapsedTimer wall;
    wall.start();
    ++depth_;
    const bool result = QApplication::notify(receiver, event);
    --depth_;
    const int64_t cpuNs = threadCpuNs() - cpu;
    longestWallNs_ = std::max<int64_t>(longestWallNs_, wall.nsecsElapsed());
    if (cpuNs > longestCpuNs_) {
      longestCpuNs_ = cpuNs;
      timespec mono{};
      clock_gettime(CLOCK_MONOTONIC, &mono);
      longestEndS_ = static_cast<double>(mono.tv_sec) + static_cast<double>(mono.tv_nsec) / 1e9;
      longestEvent_ =
          QStringLiteral("event type %1 to %2").arg(static_cast<int>(type)).arg(receiverClass);
    }
    return result;
  }

 private:
  int depth_ = 0;
  bool measuring_ = false;
  int64_t longestCpuNs_ = 0;
  int64_t longestWallNs_ = 0;
  double longestEndS_ = 0;
  QString longestEvent_;
};

// The longest gap between the ticks of a 5 ms timer on the GUI thread, ms.
class HeartbeatMeter {
 public:
  HeartbeatMeter() {
    timer_.setTimerType(Qt::PreciseTimer);
    timer_.setInterval(5);
    QObject::connect(&timer_, &QTimer::timeout, [this] {
      longestGapMs_ = std::max<int64_t>(longestGapMs_, sinceTick_.restart());
    });
  }
  void start() {
    longestGapMs_ = 0;
    sinceTick_.start();
    timer_.start();
  }
  void stop() {
    longestGapMs_ = std::max<int64_t>(longestGapMs_, sinceTick_.elapsed());
    timer_.stop();
  }
  int64_t longestGapMs() const { return longestGapMs_; }

 private:
  QTimer timer_;
  QElapsedTimer sinceTick_;
  int64_t longestGapMs_ = 0;
};

// A condition for QTRY_VERIFY on the store's answers that never blocks the GUI thread (the
// heartbeat would count the wait): each call returns whether the latest answer satisfied
// `accept`, and asks again once that answer is in.
template <typename T>
class FutureProbe {
 public:
  FutureProbe(std::function<QFuture<T>()> ask, std::function<bool(const T&)> accept)
      : ask_(std::move(ask)), accept_(std::move(accept)) {}
  bool operator()() {
    if (!asked_) {
      future_ = ask_();
      asked_ = true;
      return false;
    }
    if (!future_.isFinished()) return false;
    if (accept_(future_.result())) return true;
    future_ = ask_();
    return false;
  }

 private:
  std::function<QFuture<T>()> ask_;
  std::function<bool(const T&)> accept_;
  QFuture<T> future_;
  bool asked_ = false;
};

// "ok" when SQLite finds the database at `path` intact; its first complaint otherwise.
inline QString integrityCheck(const QString& path) {
  const QString name = QUuid::createUuid().toString();
  QString answer;
  {
    QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), name);
    db.setDatabaseName(path);
    db.setConnectOptions(QStringLiteral("QSQLITE_OPEN_READONLY"));
    if (!db.open()) return QStringLiteral("cannot open ") + path;
    QSqlQuery query(db);
    answer = query.exec(QStringLiteral("PRAGMA integrity_check")) && query.next()
                 ? query.value(0).toString()
                 : QStringLiteral("PRAGMA integrity_check failed");
  }
  QSqlDatabase::removeDatabase(name);
  return answer;
}

}  // namespace ringside::gui::testing
