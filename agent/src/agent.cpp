// The agent's start-up, its sockets and its main loop; the control requests are in
// agent_control.cpp, what the runs report in agent_ingest.cpp (Agent::Impl in agent_impl.h).
#include "ringside/agent/agent.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <thread>
#include <zmq.hpp>

#include "agent_impl.h"
#include "ringside/agent/inventory.h"
#include "ringside/common/agent_ready.h"
#include "ringside/common/private_dir.h"
#include "ringside/common/protocol.h"
#include "ringside/common/run_spec.h"

namespace ringside::agent {

namespace fs = std::filesystem;

namespace {

constexpr std::chrono::milliseconds kPollInterval{100};
constexpr size_t kMaxRankBurst = 256;  // rank batches journaled per commit
// Group commit: after a rank message, the agent waits this long for more (or until
// kMaxRankBurst) before it journals them in one transaction. Ranks' sinks send every 100 ms each,
// so many ranks' messages arrive one at a time: a commit per message cost more than the rows
// (bench/README.md, "scale"). Small beside the sinks' 100 ms flush interval.
constexpr std::chrono::milliseconds kRankGatherWindow{5};
constexpr auto kRetentionInterval = std::chrono::hours(1);
// How often the allowlist file is checked for changes (`ringside-agent authorize` / `revoke`).
constexpr std::chrono::milliseconds kAllowlistReloadInterval{1000};
// How long a TCP peer has to finish its ZeroMQ (CURVE) handshake before the agent closes the
// connection (ZMQ_HANDSHAKE_IVL; libzmq's default is 30 s). A client's handshake takes a round
// trip or two; a peer that connects and says nothing holds a descriptor only this long.
constexpr int kHandshakeTimeoutMs = 5000;
// The descriptor limit the agent raises its soft limit to (at most the hard limit): connections,
// run logs and sockets each take one, and a shortage must not reach the runs' liveness checks.
constexpr rlim_t kWantedDescriptors = 65536;
// How long a re-bind after a revocation retries while libzmq releases the old listener.
constexpr std::chrono::seconds kRebindTimeout{5};

// Messages below this level are not written (0 error, 1 warning, 2 info, 3 debug).
std::atomic<int> gLogThreshold{2};

int levelOf(const char* level) {
  const std::string name(level);
  return name == "error" ? 0 : name == "warning" ? 1 : name == "info" ? 2 : 3;
}

// Where other nodes reach this agent: --advertise-address, else the listen address unless it is
// a wildcard, else the host name.
std::string advertiseAddress(const AgentConfig& config) {
  if (!config.advertiseAddress.empty()) return config.advertiseAddress;
  const std::string& listen = config.listenAddress;
  if (listen != "0.0.0.0" && listen != "*" && listen != "::" && listen != "[::]") return listen;
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

}  // namespace

double wallSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

void logLine(const char* level, const std::string& text) {
  if (levelOf(level) > gLogThreshold.load(std::memory_order_relaxed)) return;
  std::fprintf(stderr, "ringside-agent %s: %s\n", level, text.c_str());
}

namespace {

// The agent's soft descriptor limit raised towards kWantedDescriptors, within the hard limit
// (getrlimit(2)); logged when it stays low.
void raiseDescriptorLimit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return;
  const rlim_t wanted = limit.rlim_max == RLIM_INFINITY ? kWantedDescriptors
                                                         : std::min(limit.rlim_max, kWantedDescriptors);
  if (limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < wanted) {
    limit.rlim_cur = wanted;
    (void)::setrlimit(RLIMIT_NOFILE, &limit);
    (void)::getrlimit(RLIMIT_NOFILE, &limit);
  }
  if (limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < 4096) {
    logLine("warning", "only " + std::to_string(limit.rlim_cur) +
                           " file descriptors (the hard limit): many client connections can "
                           "exhaust them; raise it (LimitNOFILE= in the service, ulimit -Hn)");
  }
}

// Holds the state directory's lock file (flock(2), released when the agent's process ends, also
// by kill -9): the descriptor, or FailedPrecondition naming the agent that holds it.
Result<int> lockStateDirectory(const std::string& stateDir) {
  const std::string path = stateDir + "/agent.lock";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    return Status::internal("cannot open " + path + ": " + std::strerror(errno));
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    char holder[32] = {};
    (void)::pread(fd, holder, sizeof holder - 1, 0);
    ::close(fd);
    if (error != EWOULDBLOCK) {
      return Status::internal("cannot lock " + path + ": " + std::strerror(error));
    }
    std::string pid(holder);
    while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
    return Status::failedPrecondition(
        "another ringside-agent" + (pid.empty() ? std::string() : " (pid " + pid + ")") +
        " is running on the state directory " + stateDir +
        ": two agents on one directory would both adopt and end the same runs. Stop it first, "
        "or give this agent its own --state-dir");
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) == 0) (void)::pwrite(fd, pid.data(), pid.size(), 0);
  return fd;
}

}  // namespace

Status setLogLevel(const std::string& level) {
  if (level != "error" && level != "warning" && level != "info" && level != "debug") {
    return Status::invalidArgument("unknown log level '" + level +
                                   "': use error, warning, info or debug");
  }
  gLogThreshold.store(levelOf(level.c_str()));
  return Status::ok();
}

std::string defaultStateDir() {
  if (::geteuid() == 0) return "/var/lib/ringside-agent";
  const char* state = std::getenv("XDG_STATE_HOME");
  if (state != nullptr && *state != '\0') return std::string(state) + "/ringside-agent";
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr ? home : ".") + "/.local/state/ringside-agent";
}

Status Agent::Impl::bindServerSockets(const std::string& control, const std::string& events,
                                      std::chrono::milliseconds retryFor) {
  const auto deadline = Clock::now() + retryFor;
  for (;;) {
    try {
      this->control = zmq::socket_t(context, zmq::socket_type::router);
      this->events = zmq::socket_t(context, zmq::socket_type::pub);
      for (zmq::socket_t* socket : {&this->control, &this->events}) {
        socket->set(zmq::sockopt::linger, 0);
        socket->set(zmq::sockopt::handshake_ivl, kHandshakeTimeoutMs);
        socket->set(zmq::sockopt::maxmsgsize, protocol::kTransportMaxMessageBytes);
        RINGSIDE_RETURN_IF_ERROR(config.insecure ? curve::configureInsecureServer(*socket)
                                                 : curve::configureServer(*socket, keys));
      }
      this->events.set(zmq::sockopt::sndhwm, 100000);
      this->control.bind(control);
      controlEndpoint = this->control.get(zmq::sockopt::last_endpoint);
      this->events.bind(events);
      eventsEndpoint = this->events.get(zmq::sockopt::last_endpoint);
      return Status::ok();
    } catch (const zmq::error_t& error) {
      if (error.num() != EADDRINUSE || Clock::now() >= deadline) {
        return Status::internal(std::string("cannot bind the agent's sockets on ") +
                                config.listenAddress + ": " + error.what() +
                                " (is another agent running?)");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
}

void Agent::Impl::reloadAllowlist() {
  const std::vector<std::string> before = allowlist.keys();
  const Status status = allowlist.reloadIfChanged();
  if (!status.isOk()) {
    if (status.message() != allowlistError) {
      logLine("error", "the allowlist was not reloaded, the previous " +
                           std::to_string(before.size()) +
                           " key(s) stay in force: " + status.message());
      allowlistError = status.message();
    }
    return;
  }
  allowlistError.clear();
  const std::vector<std::string> after = allowlist.keys();
  if (after == before) return;
  std::vector<std::string> revoked;
  std::set_difference(before.begin(), before.end(), after.begin(), after.end(),
                      std::back_inserter(revoked));
  logLine("info", "allowlist reloaded: " + std::to_string(after.size()) + " key(s)");
  if (revoked.empty()) return;
  std::string names;
  for (const std::string& key : revoked) names += (names.empty() ? "" : ", ") + key;
  logLine("info", "revoked " + names +
                      ": closing every client connection (authorized clients "
                      "reconnect)");
  const Status bound =
      bindServerSockets(controlEndpoint, eventsEndpoint,
                        std::chrono::duration_cast<std::chrono::milliseconds>(kRebindTimeout));
  if (!bound.isOk()) logLine("error", bound.message());
}

void Agent::Impl::sampleTelemetry() {
  v1::Envelope envelope = protocol::newEnvelope(0);
  v1::NodeTelemetry& reading = *envelope.mutable_node_telemetry();
  const TelemetrySample sample = telemetry->sample();
  // The GPUs' compute processes: a GPU another process computes on counts as taken, unless the
  // node shares its GPUs (--share-gpus).
  if (!config.shareGpus) {
    std::map<uint32_t, std::vector<GpuProcess>> gpuProcesses;
    for (const GpuSample& gpu : sample.gpus) {
      if (gpu.computeProcesses) gpuProcesses.emplace(gpu.index, *gpu.computeProcesses);
    }
    runs->setGpuProcesses(gpuProcesses);
  }
  reading = toProto(sample);
  reading.set_node_id(node.node_id());
  const uint32_t cpuUsed = runs->usedCpuSlots();
  const std::vector<uint32_t> gpusInUse = runs->gpusInUse();
  reading.set_cpu_slots_used(cpuUsed);
  reading.set_gpu_slots_used(static_cast<uint32_t>(gpusInUse.size()));
  reading.set_slots_used(node.slot_kind() == "gpu" ? static_cast<uint32_t>(gpusInUse.size())
                                                   : cpuUsed);
  for (uint32_t gpu : gpusInUse) reading.add_gpus_in_use(gpu);
  reading.set_draining(draining);
  // Journal before publish (decision 2): a GUI that misses it fetches it by its seq.
  if (telemetryJournal) {
    Status journaled = telemetryJournal->append(reading);
    if (!journaled.isOk() && journaled.message() != telemetryJournalError) {
      logLine("error", journaled.message() + " (published unjournaled)");
    }
    telemetryJournalError = journaled.isOk() ? std::string() : journaled.message();
  }
  publish(envelope);
}

void Agent::Impl::applyRetention() {
  if (telemetryJournal) {
    auto trimmed = telemetryJournal->applyRetention(wallSeconds());
    if (!trimmed.isOk()) {
      logLine("warning", "telemetry retention: " + trimmed.status().toString());
    } else if (trimmed->byAge + trimmed->bySize > 0) {
      logLine("info", "telemetry retention deleted " + std::to_string(trimmed->byAge) +
                          " reading(s) older than " +
                          std::to_string(config.telemetryRetentionDays) + " days and " +
                          std::to_string(trimmed->bySize) + " past the size bound of " +
                          std::to_string(config.telemetryMaxMiB) + " MiB");
    }
  }
  if (config.retentionDays <= 0 && config.retentionMaxRuns == 0) return;
  RetentionPolicy policy;
  if (config.retentionDays > 0) policy.maxAgeDays = config.retentionDays;
  if (config.retentionMaxRuns > 0) policy.maxEndedRuns = config.retentionMaxRuns;
  auto report = journal->applyRetention(policy, wallSeconds());
  if (!report.isOk()) {
    logLine("warning", "retention: " + report.status().toString());
  } else if (report->runsDeleted > 0) {
    std::string bounds;
    if (policy.maxAgeDays) bounds = "older than " + std::to_string(config.retentionDays) + " days";
    if (policy.maxEndedRuns) {
      bounds += (bounds.empty() ? "" : " or ") + std::string("beyond the newest ") +
                std::to_string(config.retentionMaxRuns) + " ended runs";
    }
    logLine("info",
            "retention deleted " + std::to_string(report->runsDeleted) + " ended run(s) " + bounds);
  }
}

void Agent::Impl::publish(const v1::Envelope& event) {
  const std::string bytes = protocol::encodeEnvelope(event);
  events.send(zmq::buffer(bytes), zmq::send_flags::dontwait);
}

Agent::Agent(AgentConfig config) : impl_(std::make_unique<Impl>(std::move(config))) {}

Agent::~Agent() {
  if (!impl_) return;
  // Sockets close before the ZAP handler stops (curve.h): no connection slips through.
  impl_->control.close();
  impl_->events.close();
  impl_->ranks.close();
  impl_->remoteRanks.close();
  if (impl_->zap) impl_->zap->stop();
  if (impl_->stateLockFd >= 0) ::close(impl_->stateLockFd);  // another agent may start now
}

std::string Agent::controlEndpoint() const { return impl_->controlEndpoint; }
std::string Agent::eventsEndpoint() const { return impl_->eventsEndpoint; }
std::string Agent::publicKey() const { return impl_->keys.publicKey; }

Status Agent::start() {
  Impl& d = *impl_;
  AgentConfig& c = d.config;
  if (c.stateDir.empty()) c.stateDir = defaultStateDir();
  if (c.runtimeDir.empty()) c.runtimeDir = c.stateDir + "/run";
  const std::string tcpBase = "tcp://" + c.listenAddress + ":";
  if (c.insecure && !curve::isLoopbackEndpoint(tcpBase + "1")) {
    return Status::invalidArgument("--insecure is refused on " + c.listenAddress +
                                   ": plaintext is allowed on loopback only (127.0.0.1, ::1)");
  }
  // Created 0700 when missing; an existing one is checked, never chmod-ed (private_dir.h).
  RINGSIDE_RETURN_IF_ERROR(preparePrivateDirectory(c.stateDir, "--state-dir"));
  auto lock = lockStateDirectory(c.stateDir);
  if (!lock.isOk()) return lock.status();
  d.stateLockFd = *lock;
  raiseDescriptorLimit();
  RINGSIDE_RETURN_IF_ERROR(preparePrivateDirectory(c.runtimeDir, "--runtime-dir"));
  auto keys = curve::loadOrCreateKeyPair(c.stateDir, "agent");
  if (!keys.isOk()) return keys.status();
  d.keys = *keys;
  RINGSIDE_RETURN_IF_ERROR(d.allowlist.load(c.stateDir + "/allowlist"));
  auto journal = Journal::open(c.stateDir + "/journal.sqlite");
  if (!journal.isOk()) return journal.status();
  d.journal = std::move(journal).value();
  std::error_code ec;
  d.draining = fs::exists(c.stateDir + "/draining", ec);

  d.nvml = std::make_unique<NvmlProbe>(c.nvmlLibrary);
  if (Status s = d.nvml->init(); s.isOk()) {
    d.gpuProbe = d.nvml.get();
  } else {
    logLine("info", "no GPUs reported: " + s.message());
  }
  InventoryOptions inventory;
  inventory.gpuProbe = d.gpuProbe;
  inventory.agentVersion = kAgentVersion;
  inventory.labels = c.labels;
  d.node = toProto(collectInventory(inventory));
  d.node.set_node_id(d.keys.publicKey.substr(0, 16));
  TelemetryOptions telemetry;
  telemetry.gpuProbe = d.gpuProbe;
  d.telemetry = std::make_unique<TelemetrySampler>(telemetry);
  TelemetryJournalOptions telemetryJournal;
  telemetryJournal.maxAgeDays = c.telemetryRetentionDays;
  telemetryJournal.maxBytes =
      c.telemetryMaxMiB > 0 ? static_cast<uint64_t>(c.telemetryMaxMiB * 1024 * 1024) : 0;
  std::string telemetryQuarantine;
  auto telemetryFile = TelemetryJournal::open(c.stateDir + "/telemetry.sqlite", telemetryJournal,
                                              &telemetryQuarantine);
  if (telemetryFile.isOk()) {
    d.telemetryJournal = std::move(telemetryFile).value();
    if (!telemetryQuarantine.empty()) {
      logLine("error", "telemetry journal " + d.telemetryJournal->path() +
                           " was damaged: moved it to " + telemetryQuarantine +
                           " and started an empty one (the node's earlier telemetry is there)");
    }
  } else {
    // Telemetry is still published live; GUIs then see only what they receive.
    logLine("error", "no telemetry journal: " + telemetryFile.status().message() +
                         "; GPU charts of runs will hold only what a connected GUI received");
  }

  // ZAP first: libzmq lets connections through unauthenticated while no handler is bound.
  d.zap = std::make_unique<curve::ZapHandler>(d.context, d.allowlist,
                                              curve::ZapHandler::Options{.allowNull = c.insecure});
  RINGSIDE_RETURN_IF_ERROR(d.zap->addDomain(curve::kRankZapDomain, d.runKeys));
  RINGSIDE_RETURN_IF_ERROR(d.zap->start());
  auto portText = [](int port) { return port == 0 ? std::string("*") : std::to_string(port); };
  RINGSIDE_RETURN_IF_ERROR(d.bindServerSockets(tcpBase + portText(c.controlPort),
                                               tcpBase + portText(c.eventsPort),
                                               std::chrono::milliseconds(0)));
  try {
    d.rankEndpoint = "ipc://" + c.runtimeDir + "/ranks.sock";
    d.ranks.set(zmq::sockopt::linger, 0);
    d.ranks.set(zmq::sockopt::rcvhwm, 100000);
    d.ranks.set(zmq::sockopt::maxmsgsize, protocol::kTransportMaxMessageBytes);
    if (!c.insecure) {
      // Each run's ranks connect with the run's own key (RunManagerOptions::curveRankEndpoint).
      RINGSIDE_RETURN_IF_ERROR(curve::configureServer(d.ranks, d.keys, curve::kRankZapDomain));
    }
    d.ranks.bind(d.rankEndpoint);
    if (!c.insecure) {
      RINGSIDE_RETURN_IF_ERROR(
          curve::configureServer(d.remoteRanks, d.keys, curve::kRankZapDomain));
      d.remoteRanks.set(zmq::sockopt::linger, 0);
      d.remoteRanks.set(zmq::sockopt::handshake_ivl, kHandshakeTimeoutMs);
      d.remoteRanks.set(zmq::sockopt::rcvhwm, 100000);
      d.remoteRanks.set(zmq::sockopt::maxmsgsize, protocol::kTransportMaxMessageBytes);
      const int rankPort = c.rankPort >= 0      ? c.rankPort
                           : c.controlPort == 0 ? 0
                                                : c.controlPort + 2;
      d.remoteRanks.bind(tcpBase + portText(rankPort));
      const std::string bound = d.remoteRanks.get(zmq::sockopt::last_endpoint);
      d.rankTcpEndpoint = "tcp://" + advertiseAddress(c) + bound.substr(bound.rfind(':'));
    }
  } catch (const zmq::error_t& error) {
    return Status::internal(std::string("cannot bind the agent's sockets on ") + c.listenAddress +
                            ": " + error.what() + " (is another agent running?)");
  }

  RunManagerOptions runOptions;
  runOptions.runsDir = c.stateDir + "/runs";
  runOptions.mpirunPath = c.mpirunPath;
  runOptions.trainerPath = c.trainerPath;
  runOptions.pythonPackageDir = c.pythonPackageDir;
  runOptions.rankEndpoint = d.rankEndpoint;
  runOptions.curveRankEndpoint = !c.insecure;
  runOptions.defaultGraceSeconds = c.stopGraceS;
  runOptions.mpirunArgs.insert(runOptions.mpirunArgs.end(), c.mpirunArgs.begin(),
                               c.mpirunArgs.end());
  runOptions.rankTcpEndpoint = d.rankTcpEndpoint;
  runOptions.agentPublicKey = d.keys.publicKey;
  runOptions.runKeys = &d.runKeys;
  if (c.engine == "slurm") {
    if (c.insecure) {
      return Status::invalidArgument(
          "--engine slurm needs CURVE: the ranks report from the compute nodes over the rank "
          "endpoint; leave --insecure out");
    }
    d.slurm = std::make_unique<slurm::SlurmTracker>();
    d.slurm->start();
    runOptions.slurm = d.slurm.get();
  } else if (c.engine != "local") {
    return Status::invalidArgument("--engine " + c.engine + " is not an engine: use local or slurm");
  }
  runOptions.launcher = c.launcher;
  runOptions.networkInterface = c.networkInterface;
  runOptions.localNames = {d.node.hostname(), c.listenAddress, advertiseAddress(c)};
  for (const auto& gpu : d.node.gpus()) runOptions.gpuIndices.push_back(gpu.index());
  runOptions.cpuSlots = d.node.cpu_slots_total();
  runOptions.remainingSeconds = [&d](const v1::RunInfo& run) -> std::optional<double> {
    int64_t globalBatch = 0;  // samples per step, for the throughput; a trainer run's spec has it
    if (run.spec().has_trainer()) {
      auto config = trainerConfigOf(run.spec().trainer());
      if (config.isOk()) globalBatch = withTrainerDefaults(*config).global_batch();
    }
    return d.etas.remainingSeconds(run.run_id(), globalBatch, wallSeconds());
  };
  d.runs = std::make_unique<RunManager>(
      runOptions,
      [&d](const v1::RunInfo& run, const RunProcessIds& ids) { d.onRunState(run, ids); });

  // Re-adopt what an earlier agent left running (docs/design.md decision 5).
  auto active = d.journal->loadRuns(true);
  if (!active.isOk()) return active.status();
  for (const StoredRun& run : *active) {
    if (run.info.spec().has_trainer()) d.adoptedActive.insert(run.info.run_id());
    d.runs->adopt(run.info);
    d.tailers.emplace(run.info.run_id(),
                      LogTailer(run.info.run_dir(), stdoutRecordsOf(run.info.spec())));
    logLine("info",
            "adopted run " + run.info.run_id() + " (" + v1::RunState_Name(run.info.state()) + ")");
  }
  RINGSIDE_RETURN_IF_ERROR(d.startSweeps());
  d.applyRetention();
  logLine("info", "serving control on " + d.controlEndpoint + ", events on " + d.eventsEndpoint +
                      (c.insecure ? " (INSECURE: plaintext)" : " (CURVE)") + "; public key " +
                      d.keys.publicKey);
  if (!c.readyFile.empty()) {
    v1::AgentReady ready;
    ready.set_control_endpoint(d.controlEndpoint);
    ready.set_events_endpoint(d.eventsEndpoint);
    ready.set_public_key(d.keys.publicKey);
    ready.set_node_id(d.node.node_id());
    ready.set_agent_version(kAgentVersion);
    ready.set_protocol_version(protocol::kProtocolVersion);
    ready.set_pid(::getpid());
    ready.set_insecure(c.insecure);
    ready.set_rank_endpoint(d.rankTcpEndpoint);
    RINGSIDE_RETURN_IF_ERROR(
        writeAgentReady(c.readyFile, ready).withContext("--ready-file " + c.readyFile));
  }
  return Status::ok();
}

Status Agent::run() {
  Impl& d = *impl_;
  auto nextTelemetry = Clock::now();
  auto nextPoll = Clock::now();
  auto nextRetention = Clock::now() + kRetentionInterval;
  auto nextAllowlistCheck = Clock::now() + kAllowlistReloadInterval;
  auto nextHangCheck = Clock::now() + kHangCheckInterval;
  zmq::pollitem_t items[] = {{nullptr, 0, ZMQ_POLLIN, 0},
                             {d.ranks.handle(), 0, ZMQ_POLLIN, 0},
                             {d.remoteRanks.handle(), 0, ZMQ_POLLIN, 0}};
  const int itemCount = d.rankTcpEndpoint.empty() ? 2 : 3;
  while (!stopRequested_.load()) {
    items[0].socket = d.control.handle();  // replaced when a revocation re-binds it
    try {
      zmq::poll(items, itemCount, kPollInterval);
    } catch (const zmq::error_t& error) {
      if (error.num() == EINTR) continue;  // a signal (SIGTERM: stop) interrupted the wait
      return Status::internal(std::string("polling the agent's sockets: ") + error.what());
    }
    if (items[0].revents & ZMQ_POLLIN) d.serveControl();
    for (int i = 1; i < itemCount; ++i) {
      if ((items[i].revents & ZMQ_POLLIN) == 0) continue;
      // A bounded burst, so control requests are not starved by a flood of metrics.
      zmq::socket_t& socket = i == 1 ? d.ranks : d.remoteRanks;
      std::vector<zmq::message_t> burst;
      zmq::message_t message;
      const auto gatherEnd = Clock::now() + kRankGatherWindow;
      while (burst.size() < kMaxRankBurst) {
        if (socket.recv(message, zmq::recv_flags::dontwait)) {
          burst.push_back(std::move(message));
          continue;
        }
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(gatherEnd - Clock::now());
        if (left <= std::chrono::milliseconds::zero()) break;
        zmq::pollitem_t more{socket.handle(), 0, ZMQ_POLLIN, 0};
        try {
          if (zmq::poll(&more, 1, left) == 0) break;
        } catch (const zmq::error_t&) {
          break;  // EINTR (SIGTERM): journal what came; the outer loop sees the stop
        }
      }
      d.ingestRankMessages(burst, /*remote=*/i == 2);
    }
    const auto now = Clock::now();
    if (now >= nextPoll) {
      d.runs->poll();
      // A draining node starts nothing new: its queue waits until it is undrained.
      if (!d.draining) d.runs->dispatchQueue();
      d.sweeps->tick(/*canLaunch=*/!d.draining);
      d.tailLogs();
      d.finishEndedRuns();
      nextPoll = now + kPollInterval;
    }
    if (now >= nextHangCheck) {
      d.checkHangs();
      nextHangCheck = now + kHangCheckInterval;
    }
    if (now >= nextAllowlistCheck) {
      d.reloadAllowlist();
      nextAllowlistCheck = now + kAllowlistReloadInterval;
    }
    if (now >= nextRetention) {
      d.applyRetention();
      nextRetention = now + kRetentionInterval;
    }
    if (now >= nextTelemetry) {
      d.sampleTelemetry();
      nextTelemetry = now + std::chrono::duration_cast<Clock::duration>(
                                std::chrono::duration<double>(d.config.telemetryIntervalS));
    }
  }
  d.finishEndedRuns(/*all=*/true);  // the final states held back (agent_run_end.cpp)
  if (!d.config.readyFile.empty()) ::unlink(d.config.readyFile.c_str());  // no longer serving
  return Status::ok();
}

}  // namespace ringside::agent
