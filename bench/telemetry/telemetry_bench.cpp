// bench/telemetry: samples/s from simulated ranks through a real ringside-agent (ranks PULL ->
// journal -> events PUB) to a subscriber, with the ratio to raw batched SQLite inserts of the same
// rows measured in the same run. Checks the answer as nccl-tests' -c does: the subscriber must
// receive every sample with the values the ranks sent, and fetching the run from seq 0 must return
// every sample with gap-free seqs. bench/README.md has the command and figures.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <latch>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "ringside/common/agent_ready.h"
#include "ringside/common/metric_names.h"
#include "ringside/common/protocol.h"
#include "ringside/common/status.h"

extern char** environ;

namespace ringside::bench {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// The per-rank record the trainer sends at every log step (docs/metrics.md).
const std::array<const char*, 5> kMetricNames = {metric::kTrainLoss, metric::kStepMs,
                                                 metric::kComputeMs, metric::kAllreduceMs,
                                                 metric::kExposedCommMs};
constexpr double kFirstWallTime = 1.7e9;  // Unix seconds of step 0
constexpr uint32_t kFetchPageEntries = 50000;
constexpr std::chrono::milliseconds kPollInterval{100};

struct Options {
  std::string agentPath = RINGSIDE_AGENT_BIN;
  std::string mpirunPath = RINGSIDE_MPIEXEC;
  int ranks = 2;
  uint64_t samples = 2'000'000;
  uint32_t batchPoints = 1000;
  double timeoutS = 300;
  double targetSamplesPerS = 200'000;
  bool keepDir = false;
};

double secondsSince(Clock::time_point start, Clock::time_point end = Clock::now()) {
  return std::chrono::duration<double>(end - start).count();
}

// 1234567 -> "1,234,567".
std::string grouped(uint64_t value) {
  const std::string digits = std::to_string(value);
  std::string text;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) text += ',';
    text += digits[i];
  }
  return text;
}

// ---- Noise: CPU time other processes took while a phase was timed (2 cores are easily shared).

// Seconds the whole machine spent busy (user, nice, system, irq, softirq, steal in /proc/stat),
// summed over all CPUs. 0 when /proc/stat cannot be read.
double machineBusySeconds() {
  std::ifstream stat("/proc/stat");
  std::string cpu;
  uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  stat >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal;
  return static_cast<double>(user + nice + system + irq + softirq + steal) /
         static_cast<double>(::sysconf(_SC_CLK_TCK));
}

// User + system CPU seconds of process `pid` ("self" for this one), all its threads; 0 when gone.
double processCpuSeconds(const std::string& pid) {
  std::ifstream in("/proc/" + pid + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t comm = text.rfind(')');  // the command name may hold spaces
  if (comm == std::string::npos) return 0;
  std::istringstream fields(text.substr(comm + 2));
  std::string field;
  uint64_t utime = 0, stime = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {  // fields 14 and 15: utime, stime
    if (i == 14) utime = std::stoull(field);
    if (i == 15) stime = std::stoull(field);
  }
  return static_cast<double>(utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

// CPU time the rest of the machine took during a phase: busy time minus this process's and the
// agent's own.
class NoiseMeter {
 public:
  explicit NoiseMeter(std::string agentPid = "") : agentPid_(std::move(agentPid)) {
    start_ = Clock::now();
    busy_ = machineBusySeconds();
    own_ = ownSeconds();
  }
  // Other processes' CPU seconds since construction, and their share of all cores' time, %.
  std::pair<double, double> otherCpu() const {
    const double other = std::max(0.0, machineBusySeconds() - busy_ - (ownSeconds() - own_));
    const double capacity = secondsSince(start_) *
                            static_cast<double>(std::max(1u, std::thread::hardware_concurrency()));
    return {other, capacity > 0 ? 100.0 * other / capacity : 0.0};
  }

 private:
  double ownSeconds() const {
    return processCpuSeconds("self") + (agentPid_.empty() ? 0.0 : processCpuSeconds(agentPid_));
  }
  std::string agentPid_;
  Clock::time_point start_;
  double busy_ = 0, own_ = 0;
};

constexpr double kDisturbedPct = 5.0;  // more than this share of the cores: rerun

// ---- What the ranks send: a deterministic stream, so the receiving side can check every field.

struct Point {
  int64_t step = 0;
  int64_t epoch = 0;
  double wallTime = 0;
  const char* name = "";
  double value = 0;
};

// The `index`-th point (from 0) that `rank` sends: one record of kMetricNames per step.
Point pointOf(int rank, uint64_t index) {
  const auto step = static_cast<int64_t>(index / kMetricNames.size());
  return {step, step / 10000, kFirstWallTime + static_cast<double>(step) * 1e-3,
          kMetricNames[index % kMetricNames.size()],
          rank * 1e9 + static_cast<double>(index) * 0.25};
}

uint64_t samplesOfRank(const Options& options, int rank) {
  const uint64_t share = options.samples / options.ranks;
  return share + (static_cast<uint64_t>(rank) < options.samples % options.ranks ? 1 : 0);
}

// Every message of one rank, encoded up front: the encoding is the rank's cost, not the agent's.
std::vector<std::string> encodeRankMessages(const Options& options, const std::string& runId,
                                            int rank) {
  std::vector<std::string> messages;
  const uint64_t total = samplesOfRank(options, rank);
  uint64_t batchSeq = 0;
  for (uint64_t first = 0; first < total; first += options.batchPoints) {
    v1::Envelope envelope = protocol::newEnvelope(0);
    v1::RankMetrics* batch = envelope.mutable_rank_metrics();
    batch->set_run_id(runId);
    batch->set_rank(rank);
    batch->set_batch_seq(++batchSeq);
    for (uint64_t i = first; i < std::min<uint64_t>(total, first + options.batchPoints); ++i) {
      const Point point = pointOf(rank, i);
      v1::RankMetricPoint* out = batch->add_points();
      out->set_step(point.step);
      out->set_epoch(point.epoch);
      out->set_wall_time(point.wallTime);
      out->set_global(false);
      out->set_name(point.name);
      out->set_value(point.value);
    }
    messages.push_back(protocol::encodeEnvelope(envelope));
  }
  return messages;
}

// Checks journaled/published samples against what the ranks sent. Samples of one rank arrive in
// the order that rank sent them (one PUSH socket per rank, one agent thread).
class StreamChecker {
 public:
  explicit StreamChecker(int ranks) : nextIndex_(ranks, 0) {}

  void check(const v1::MetricSample& sample) {
    ++samples_;
    if (sample.seq() <= lastSeq_)
      fail("seq " + std::to_string(sample.seq()) + " after " + std::to_string(lastSeq_));
    lastSeq_ = sample.seq();
    if (sample.rank() < 0 || sample.rank() >= static_cast<int>(nextIndex_.size())) {
      fail("seq " + std::to_string(sample.seq()) + " has rank " + std::to_string(sample.rank()));
      return;
    }
    const uint64_t index = nextIndex_[sample.rank()]++;
    const Point want = pointOf(sample.rank(), index);
    if (sample.step() != want.step || sample.epoch() != want.epoch ||
        sample.wall_time() != want.wallTime || sample.name() != want.name ||
        sample.value() != want.value) {
      fail("seq " + std::to_string(sample.seq()) + " is not point " + std::to_string(index) +
           " of rank " + std::to_string(sample.rank()) + " (" + sample.name() + " step " +
           std::to_string(sample.step()) + ")");
    }
  }

  uint64_t samples() const { return samples_; }
  uint64_t errors() const { return errors_; }
  const std::string& firstError() const { return firstError_; }

 private:
  void fail(const std::string& what) {
    if (errors_++ == 0) firstError_ = what;
  }

  std::vector<uint64_t> nextIndex_;
  uint64_t samples_ = 0;
  uint64_t lastSeq_ = 0;
  uint64_t errors_ = 0;
  std::string firstError_;
};

// ---- The agent process

class AgentProcess {
 public:
  ~AgentProcess() { terminate(); }

  // Starts `options.agentPath` on loopback (plaintext, any free ports) with its state in
  // `stateDir`, stderr and stdout to `logPath`, and waits up to 30 s for its ready file.
  // Errors: kInternal when it cannot be started or exits or does not serve in time (the message
  // holds its log).
  Status start(const Options& options, const std::string& stateDir, const std::string& logPath) {
    logPath_ = logPath;
    const std::string readyFile = stateDir + "/ready.json";
    ::unlink(readyFile.c_str());
    const std::vector<std::string> args = {
        options.agentPath, "--insecure",     "--state-dir", stateDir,   "--control-port",
        "0",               "--events-port",  "0",           "--mpirun", options.mpirunPath,
        "--ready-file",    readyFile};
    std::vector<char*> argv;
    for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, logPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0600);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    const int spawned = posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (spawned != 0) {
      pid_ = -1;
      return Status::internal("cannot start " + options.agentPath + ": " + std::strerror(spawned) +
                              " (pass --agent PATH)");
    }
    const auto deadline = Clock::now() + std::chrono::seconds(30);
    while (Clock::now() < deadline) {
      const Result<v1::AgentReady> ready = readAgentReady(readyFile);
      if (ready.isOk()) {
        controlEndpoint_ = ready->control_endpoint();
        eventsEndpoint_ = ready->events_endpoint();
        rankEndpoint_ = "ipc://" + stateDir + "/run/ranks.sock";
        return Status::ok();
      }
      if (ready.status().code() != Status::Code::kNotFound) return ready.status();
      if (!alive()) return Status::internal("ringside-agent exited at start:\n" + log());
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return Status::internal("ringside-agent did not serve within 30 s:\n" + log());
  }

  // True while the process runs (reaps it when it has exited).
  bool alive() {
    if (pid_ <= 0) return false;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      exitStatus_ = status;
      pid_ = -1;
      return false;
    }
    return true;
  }

  // SIGTERM, then SIGKILL after 10 s. Returns true when it exited 0 on SIGTERM.
  bool terminate() {
    if (pid_ <= 0) return exitStatus_ && WIFEXITED(*exitStatus_) && WEXITSTATUS(*exitStatus_) == 0;
    ::kill(pid_, SIGTERM);
    const auto deadline = Clock::now() + std::chrono::seconds(10);
    while (alive() && Clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (alive()) {
      ::kill(pid_, SIGKILL);
      int status = 0;
      ::waitpid(pid_, &status, 0);
      pid_ = -1;
      return false;
    }
    return exitStatus_ && WIFEXITED(*exitStatus_) && WEXITSTATUS(*exitStatus_) == 0;
  }

  std::string log() const {
    std::ifstream in(logPath_);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  pid_t pid() const { return pid_; }
  const std::string& controlEndpoint() const { return controlEndpoint_; }
  const std::string& eventsEndpoint() const { return eventsEndpoint_; }
  const std::string& rankEndpoint() const { return rankEndpoint_; }

 private:
  pid_t pid_ = -1;
  std::optional<int> exitStatus_;
  std::string logPath_, controlEndpoint_, eventsEndpoint_, rankEndpoint_;
};

// A DEALER on the agent's control socket: one request at a time.
class ControlClient {
 public:
  ControlClient(zmq::context_t& context, const std::string& endpoint)
      : dealer_(context, zmq::socket_type::dealer) {
    dealer_.set(zmq::sockopt::linger, 0);
    dealer_.connect(endpoint);
  }

  // Sends `envelope` and returns its reply, or an ErrorReply as kInternal. Errors: kAborted when
  // no reply came within `timeout`.
  Result<v1::Envelope> request(v1::Envelope envelope,
                               std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
    envelope.set_protocol_version(protocol::kProtocolVersion);
    envelope.set_request_id(++requestId_);
    dealer_.send(zmq::buffer(protocol::encodeEnvelope(envelope)));
    zmq::pollitem_t item{dealer_.handle(), 0, ZMQ_POLLIN, 0};
    const auto deadline = Clock::now() + timeout;
    while (Clock::now() < deadline) {
      if (zmq::poll(&item, 1, kPollInterval) == 0) continue;
      zmq::message_t message;
      if (!dealer_.recv(message, zmq::recv_flags::dontwait)) continue;
      auto reply = protocol::decodeEnvelope(message.data(), message.size());
      if (!reply.isOk() || reply->request_id() != requestId_) continue;
      if (reply->has_error()) {
        return Status::internal(std::string(protocol::bodyName(envelope)) +
                                " refused: " + protocol::errorCodeName(reply->error().code()) +
                                ": " + reply->error().message());
      }
      return std::move(reply).value();
    }
    return Status::aborted(std::string("no reply to ") + protocol::bodyName(envelope) + " within " +
                           std::to_string(timeout.count()) + " ms");
  }

 private:
  zmq::socket_t dealer_;
  uint64_t requestId_ = 0;
};

// ---- The subscriber

struct SubscriberReport {
  uint64_t samples = 0;
  uint64_t otherEvents = 0;  // telemetry, run states, log lines, other runs
  std::vector<uint64_t> seqs;
  uint64_t errors = 0;
  std::string firstError;
  std::optional<Clock::time_point> lastSampleAt;  // when the expected count was reached
};

// Receives events until `expected` samples of `runId` arrived, `stop` is set or `deadline` passed.
SubscriberReport subscribe(zmq::socket_t& sub, const std::string& runId, int ranks,
                           uint64_t expected, const std::atomic<bool>& stop,
                           Clock::time_point deadline) {
  SubscriberReport report;
  report.seqs.reserve(expected);
  StreamChecker checker(ranks);
  zmq::pollitem_t item{sub.handle(), 0, ZMQ_POLLIN, 0};
  zmq::message_t message;
  while (checker.samples() < expected && !stop.load() && Clock::now() < deadline) {
    if (zmq::poll(&item, 1, kPollInterval) == 0) continue;
    while (checker.samples() < expected && sub.recv(message, zmq::recv_flags::dontwait)) {
      auto event = protocol::decodeEnvelope(message.data(), message.size());
      if (!event.isOk() || !event->has_metric_batch() || event->metric_batch().run_id() != runId) {
        ++report.otherEvents;
        continue;
      }
      for (const v1::MetricSample& sample : event->metric_batch().samples()) {
        checker.check(sample);
        report.seqs.push_back(sample.seq());
      }
    }
  }
  if (checker.samples() >= expected) report.lastSampleAt = Clock::now();
  report.samples = checker.samples();
  report.errors = checker.errors();
  report.firstError = checker.firstError();
  return report;
}

// Waits until the SUB socket receives any event (the agent publishes node telemetry every
// second), so that the subscription is in place before the ranks send.
bool waitForFirstEvent(zmq::socket_t& sub, std::chrono::seconds timeout) {
  zmq::pollitem_t item{sub.handle(), 0, ZMQ_POLLIN, 0};
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    if (zmq::poll(&item, 1, kPollInterval) > 0) return true;
  }
  return false;
}

// ---- Catch-up check: fetch_run_data from seq 0

struct FetchReport {
  uint64_t samples = 0;
  uint64_t entries = 0;  // samples + log lines + state events
  uint64_t lastSeq = 0;
  uint64_t pages = 0;
  bool gapFree = false;          // the union of all kinds is exactly 1..lastSeq
  bool sameAsPublished = false;  // the metric seqs equal the subscriber's
  uint64_t errors = 0;
  std::string firstError;
  double seconds = 0;
};

Result<FetchReport> fetchAll(ControlClient& control, const std::string& runId, int ranks,
                             const std::vector<uint64_t>& publishedSeqs) {
  FetchReport report;
  StreamChecker checker(ranks);
  std::vector<uint64_t> sampleSeqs, allSeqs;
  const auto start = Clock::now();
  uint64_t after = 0;
  bool more = true;
  while (more) {
    v1::Envelope envelope;
    envelope.mutable_fetch_run_data()->set_run_id(runId);
    envelope.mutable_fetch_run_data()->set_after_seq(after);
    envelope.mutable_fetch_run_data()->set_max_entries(kFetchPageEntries);
    auto reply = control.request(envelope);
    if (!reply.isOk()) return reply.status();
    const v1::FetchRunDataReply& page = reply->fetch_run_data_reply();
    for (const v1::MetricSample& sample : page.samples()) {
      checker.check(sample);
      sampleSeqs.push_back(sample.seq());
      allSeqs.push_back(sample.seq());
    }
    for (const v1::LogLine& line : page.log_lines()) allSeqs.push_back(line.seq());
    for (const v1::RunStateEvent& state : page.states()) allSeqs.push_back(state.seq());
    ++report.pages;
    if (page.last_seq() <= after && page.more()) {
      return Status::internal("fetch_run_data did not advance past seq " + std::to_string(after));
    }
    after = page.last_seq();
    more = page.more();
  }
  report.seconds = secondsSince(start);
  std::sort(allSeqs.begin(), allSeqs.end());
  report.samples = checker.samples();
  report.entries = allSeqs.size();
  report.lastSeq = after;
  report.gapFree = allSeqs.size() == after;
  for (size_t i = 0; report.gapFree && i < allSeqs.size(); ++i) {
    report.gapFree = allSeqs[i] == i + 1;
  }
  report.sameAsPublished = sampleSeqs == publishedSeqs;
  report.errors = checker.errors();
  report.firstError = checker.firstError();
  return report;
}

// ---- The reference: raw batched SQLite inserts

struct SqliteReport {
  double seconds = 0;
  uint64_t rowsStored = 0;
};

Status sqliteCheck(sqlite3* db, int rc, const char* what) {
  if (rc == SQLITE_OK || rc == SQLITE_DONE || rc == SQLITE_ROW) return Status::ok();
  return Status::ioError(std::string("SQLite reference: ") + what + ": " + sqlite3_errmsg(db));
}

// Inserts the same rows the journal stores (docs/journal.md's metric_samples: the narrow shape,
// PRIMARY KEY (run_key, seq), WITHOUT ROWID; no foreign keys) into a fresh WAL database with
// synchronous=NORMAL, through one prepared INSERT, one transaction per `batchPoints` rows.
Result<SqliteReport> rawSqliteInserts(const Options& options, const std::string& path) {
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) {
    sqlite3_close(db);
    return Status::ioError("SQLite reference: cannot open " + path);
  }
  std::unique_ptr<sqlite3, decltype(&sqlite3_close)> owner(db, sqlite3_close);
  RINGSIDE_RETURN_IF_ERROR(sqliteCheck(
      db,
      sqlite3_exec(db,
                   "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;"
                   "CREATE TABLE metric_samples (run_key INTEGER NOT NULL, seq INTEGER NOT NULL,"
                   " step INTEGER NOT NULL, epoch INTEGER NOT NULL, wall_time REAL NOT NULL,"
                   " rank INTEGER NOT NULL, key_id INTEGER NOT NULL, value REAL,"
                   " PRIMARY KEY (run_key, seq)) WITHOUT ROWID;",
                   nullptr, nullptr, nullptr),
      "schema"));
  sqlite3_stmt* insert = nullptr;
  RINGSIDE_RETURN_IF_ERROR(sqliteCheck(
      db,
      sqlite3_prepare_v2(db,
                         "INSERT INTO metric_samples (run_key, seq, step, epoch, wall_time, rank,"
                         " key_id, value) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                         -1, &insert, nullptr),
      "prepare"));
  std::unique_ptr<sqlite3_stmt, decltype(&sqlite3_finalize)> statement(insert, sqlite3_finalize);

  const auto start = Clock::now();
  uint64_t seq = 0;
  // Rank by rank, batch by batch, as the journal sees them (interleaving does not change the cost:
  // seqs are appended in order either way).
  for (int rank = 0; rank < options.ranks; ++rank) {
    const uint64_t total = samplesOfRank(options, rank);
    for (uint64_t first = 0; first < total; first += options.batchPoints) {
      RINGSIDE_RETURN_IF_ERROR(
          sqliteCheck(db, sqlite3_exec(db, "BEGIN", nullptr, nullptr, nullptr), "BEGIN"));
      for (uint64_t i = first; i < std::min<uint64_t>(total, first + options.batchPoints); ++i) {
        const Point point = pointOf(rank, i);
        sqlite3_bind_int64(insert, 1, 1);
        sqlite3_bind_int64(insert, 2, static_cast<int64_t>(++seq));
        sqlite3_bind_int64(insert, 3, point.step);
        sqlite3_bind_int64(insert, 4, point.epoch);
        sqlite3_bind_double(insert, 5, point.wallTime);
        sqlite3_bind_int64(insert, 6, rank);
        sqlite3_bind_int64(insert, 7, static_cast<int64_t>(i % kMetricNames.size()) + 1);
        sqlite3_bind_double(insert, 8, point.value);
        RINGSIDE_RETURN_IF_ERROR(sqliteCheck(db, sqlite3_step(insert), "INSERT"));
        sqlite3_reset(insert);
      }
      RINGSIDE_RETURN_IF_ERROR(
          sqliteCheck(db, sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr), "COMMIT"));
    }
  }
  SqliteReport report;
  report.seconds = secondsSince(start);

  sqlite3_stmt* count = nullptr;
  RINGSIDE_RETURN_IF_ERROR(sqliteCheck(
      db, sqlite3_prepare_v2(db, "SELECT count(*) FROM metric_samples", -1, &count, nullptr),
      "count"));
  std::unique_ptr<sqlite3_stmt, decltype(&sqlite3_finalize)> counter(count, sqlite3_finalize);
  if (sqlite3_step(count) == SQLITE_ROW) {
    report.rowsStored = static_cast<uint64_t>(sqlite3_column_int64(count, 0));
  }
  return report;
}

// ---- The run

struct TempDir {
  std::string path;
  bool keep = false;
  ~TempDir() {
    if (path.empty()) return;
    if (keep) {
      std::fprintf(stderr, "telemetry_bench: kept %s\n", path.c_str());
      return;
    }
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

Result<std::string> makeTempDir() {
  std::string pattern = (fs::temp_directory_path() / "ringside-telemetry-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    return Status::ioError("cannot create a temporary directory like " + pattern + ": " +
                           std::strerror(errno) + " (set TMPDIR)");
  }
  return pattern;
}

int failWith(const Status& status) {
  std::fprintf(stderr, "telemetry_bench: %s\n", status.toString().c_str());
  return 1;
}

int runBenchmark(const Options& options) {
  // mpirun refuses root unless told (scripts/env.sh); the placeholder run needs one slot.
  if (::geteuid() == 0) {
    ::setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 0);
    ::setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 0);
  }
  ::setenv("OMPI_MCA_rmaps_base_oversubscribe", "1", 0);

  auto tempPath = makeTempDir();
  if (!tempPath.isOk()) return failWith(tempPath.status());
  TempDir temp{*tempPath, options.keepDir};
  const std::string stateDir = temp.path + "/state";

  AgentProcess agent;
  if (Status s = agent.start(options, stateDir, temp.path + "/agent.log"); !s.isOk()) {
    return failWith(s);
  }
  zmq::context_t context;
  ControlClient control(context, agent.controlEndpoint());
  zmq::socket_t sub(context, zmq::socket_type::sub);
  sub.set(zmq::sockopt::linger, 0);
  sub.set(zmq::sockopt::rcvhwm, 0);  // the check is about the agent, not this process's queue
  sub.set(zmq::sockopt::subscribe, "");
  sub.connect(agent.eventsEndpoint());
  if (!waitForFirstEvent(sub, std::chrono::seconds(10))) {
    return failWith(Status::internal("no event from the agent's PUB within 10 s:\n" + agent.log()));
  }

  // The journal takes batches only for a run it knows: a placeholder run that just sleeps.
  v1::Envelope launch;
  v1::RunSpec* spec = launch.mutable_launch_run()->mutable_spec();
  spec->set_name("telemetry-bench");
  spec->set_ranks_per_node(1);
  for (const char* arg : {"sleep", "600"}) spec->mutable_command()->add_argv(arg);
  auto launched = control.request(launch);
  if (!launched.isOk()) return failWith(launched.status());
  const std::string runId = launched->launch_run_reply().run().run_id();

  std::vector<std::vector<std::string>> messages(options.ranks);
  for (int rank = 0; rank < options.ranks; ++rank) {
    messages[rank] = encodeRankMessages(options, runId, rank);
  }

  // Ranks: one PUSH socket each, connected before the clock starts, blocking sends.
  std::latch go(1);
  std::vector<double> sendSeconds(options.ranks, 0);
  std::vector<std::string> sendErrors(options.ranks);
  Clock::time_point start;
  std::vector<std::thread> senders;
  for (int rank = 0; rank < options.ranks; ++rank) {
    senders.emplace_back([&, rank] {
      try {
        zmq::socket_t push(context, zmq::socket_type::push);
        push.set(zmq::sockopt::linger, 10000);
        push.connect(agent.rankEndpoint());
        go.wait();
        for (const std::string& message : messages[rank]) push.send(zmq::buffer(message));
        sendSeconds[rank] = secondsSince(start);
      } catch (const zmq::error_t& error) {
        sendErrors[rank] = error.what();
      }
    });
  }
  std::atomic<bool> stopSubscriber{false};
  SubscriberReport published;
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // let the PUSH sockets connect
  const NoiseMeter endToEndNoise(std::to_string(agent.pid()));
  start = Clock::now();
  const auto deadline = start + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(options.timeoutS));
  std::thread subscriber([&] {
    published = subscribe(sub, runId, options.ranks, options.samples, stopSubscriber, deadline);
  });
  go.count_down();
  subscriber.join();
  for (std::thread& sender : senders) sender.join();
  const auto [endToEndOtherCpu, endToEndOtherPct] = endToEndNoise.otherCpu();
  const double endToEndSeconds =
      published.lastSampleAt ? secondsSince(start, *published.lastSampleAt) : 0.0;
  const double sentSeconds = *std::max_element(sendSeconds.begin(), sendSeconds.end());
  bool agentAlive = agent.alive();

  Result<FetchReport> fetched = Status::aborted("the agent is not running");
  if (agentAlive) fetched = fetchAll(control, runId, options.ranks, published.seqs);

  v1::Envelope stop;
  stop.mutable_stop_run()->set_run_id(runId);
  stop.mutable_stop_run()->set_grace_seconds(2);
  auto stopped = control.request(stop);
  agentAlive = agentAlive && agent.alive();
  // Give the run time to end before the agent goes (the agent does not kill runs on exit).
  for (int i = 0; i < 50 && stopped.isOk(); ++i) {
    v1::Envelope list;
    list.mutable_list_runs()->set_include_ended(false);
    auto runs = control.request(list);
    if (!runs.isOk() || runs->list_runs_reply().runs_size() == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const bool agentExitedCleanly = agent.terminate();
  const std::string agentLog = agent.log();

  const NoiseMeter referenceNoise;
  auto reference = rawSqliteInserts(options, temp.path + "/reference.sqlite");
  const auto [referenceOtherCpu, referenceOtherPct] = referenceNoise.otherCpu();

  // ---- Report
  const double ours = endToEndSeconds > 0 ? options.samples / endToEndSeconds : 0.0;
  const double raw =
      reference.isOk() && reference->seconds > 0 ? options.samples / reference->seconds : 0.0;
  const bool subscriberOk = published.samples == options.samples && published.errors == 0;
  const bool fetchOk = fetched.isOk() && fetched->samples == options.samples && fetched->gapFree &&
                       fetched->sameAsPublished && fetched->errors == 0;
  bool sendOk = true;
  for (const std::string& error : sendErrors) sendOk = sendOk && error.empty();
  const bool lossOk = subscriberOk && fetchOk && sendOk;
  const bool agentOk = agentAlive && agentExitedCleanly && stopped.isOk();
  const bool referenceOk = reference.isOk() && reference->rowsStored == options.samples;
  const bool targetOk = lossOk && ours >= options.targetSamplesPerS;

  std::printf("telemetry_bench: %d ranks, %s samples in batches of %u points, agent %s\n\n",
              options.ranks, grouped(options.samples).c_str(), options.batchPoints,
              options.agentPath.c_str());
  std::printf("| measure | value |\n|---|---|\n");
  std::printf(
      "| end to end: ranks -> agent journal -> PUB -> subscriber | %s samples/s (%.2f s) |\n",
      grouped(static_cast<uint64_t>(ours)).c_str(), endToEndSeconds);
  std::printf("| ranks done sending after | %.2f s |\n", sentSeconds);
  std::printf(
      "| raw batched SQLite inserts (WAL, synchronous=NORMAL, %u rows per transaction) | %s "
      "samples/s (%.2f s) |\n",
      options.batchPoints, grouped(static_cast<uint64_t>(raw)).c_str(),
      reference.isOk() ? reference->seconds : 0.0);
  std::printf("| ratio ours / raw SQLite | %.2f |\n", raw > 0 ? ours / raw : 0.0);
  std::printf("| subscriber received | %s of %s samples, %s |\n",
              grouped(published.samples).c_str(), grouped(options.samples).c_str(),
              published.errors == 0 ? "seqs increasing, every field as sent"
                                    : ("BAD: " + published.firstError).c_str());
  if (fetched.isOk()) {
    std::printf(
        "| fetch_run_data from seq 0 | %s samples, entries 1..%s %s, %s the published seqs, %s "
        "(%" PRIu64 " pages, %.2f s) |\n",
        grouped(fetched->samples).c_str(), grouped(fetched->lastSeq).c_str(),
        fetched->gapFree ? "gap-free" : "WITH GAPS", fetched->sameAsPublished ? "same as" : "NOT",
        fetched->errors == 0 ? "every field as sent" : ("BAD: " + fetched->firstError).c_str(),
        fetched->pages, fetched->seconds);
  } else {
    std::printf("| fetch_run_data from seq 0 | FAILED: %s |\n",
                fetched.status().toString().c_str());
  }
  std::printf("| raw SQLite rows stored | %s%s |\n",
              grouped(reference.isOk() ? reference->rowsStored : 0).c_str(),
              reference.isOk() ? "" : (" (" + reference.status().toString() + ")").c_str());
  const bool disturbed = endToEndOtherPct > kDisturbedPct || referenceOtherPct > kDisturbedPct;
  std::printf(
      "| other processes' CPU while timed (end to end; SQLite) | %.2f CPU-s, %.1f%% of the "
      "cores; %.2f CPU-s, %.1f%%%s |\n",
      endToEndOtherCpu, endToEndOtherPct, referenceOtherCpu, referenceOtherPct,
      disturbed ? " <- disturbed" : "");
  std::printf("| loss check | %s |\n", lossOk ? "PASS" : "FAIL");
  std::printf("| target >= %s samples/s end to end | %s |\n",
              grouped(static_cast<uint64_t>(options.targetSamplesPerS)).c_str(),
              targetOk ? "PASS" : "FAIL");
  std::printf("| agent | %s |\n", agentOk ? "ran and stopped cleanly" : "FAILED (log below)");
  for (int rank = 0; rank < options.ranks; ++rank) {
    if (!sendErrors[rank].empty()) {
      std::printf("rank %d send failed: %s\n", rank, sendErrors[rank].c_str());
    }
  }
  if (!stopped.isOk()) std::printf("stop_run: %s\n", stopped.status().toString().c_str());
  if (!agentOk || !lossOk) std::printf("\nagent log:\n%s\n", agentLog.c_str());
  if (disturbed) {
    std::printf(
        "warning: other processes took over %.0f%% of the cores while a phase was timed; "
        "rerun on an idle machine\n",
        kDisturbedPct);
  }
  if (!lossOk || !agentOk || !referenceOk) return 1;
  return targetOk ? 0 : 3;
}

}  // namespace
}  // namespace ringside::bench

int main(int argc, char** argv) {
  ringside::bench::Options options;
  CLI::App app{
      "telemetry_bench: samples/s from simulated ranks through a real ringside-agent (journal, "
      "PUB) to a subscriber, against raw batched SQLite inserts in the same run. Exit status: 0 "
      "all passed; 1 a sample was lost or altered, or the agent or the reference failed; 3 the "
      "target was missed (the answer being right)."};
  app.option_defaults()->always_capture_default();
  app.add_option("--agent", options.agentPath, "ringside-agent binary")->check(CLI::ExistingFile);
  app.add_option("--mpirun", options.mpirunPath, "mpirun for the placeholder run");
  app.add_option("--ranks", options.ranks, "Simulated ranks (one PUSH socket each)")
      ->check(CLI::Range(1, 256));
  app.add_option("--samples", options.samples, "Samples in total, split across the ranks")
      ->check(CLI::PositiveNumber);
  app.add_option("--batch", options.batchPoints, "Points per RankMetrics batch")
      ->check(CLI::Range(1u, 100000u));
  app.add_option("--timeout", options.timeoutS,
                 "Seconds to wait for the subscriber to see every sample")
      ->check(CLI::PositiveNumber);
  app.add_option("--target", options.targetSamplesPerS, "Target end-to-end samples/s");
  app.add_flag("--keep", options.keepDir, "Keep the temporary directory (journal, agent log)");
  CLI11_PARSE(app, argc, argv);
  return ringside::bench::runBenchmark(options);
}
