// scale_bench: a simulated cluster of N nodes x 8 GPUs (default 64 x 8 = 512 ranks) watched from
// one GUI, on this machine (bench/README.md, "Scale"):
//
//  1. N real ringside-agent processes (agent_fleet.h): own state directories, loopback, any free
//     ports, CURVE on, the bench's fake NVML (8 GPUs with changing readings), each in UTS, PID
//     and mount namespaces of its own: the host name node-<i> and its own process list (/proc).
//  2. The GUI side is the GUI's own code: a gui::Controller (and its MetricsStore) on a fresh data
//     directory, no local agent, which learns of the nodes as a user adds them: each agent's key
//     with Controller::addNode, the GUI's own key allowed on every agent (`ringside-agent
//     authorize KEY`).
//  3. One run over all N nodes, launched by Controller::launch with a run form that chooses every
//     node (so: pre-flight of every node, the owner's mpirun with one app context per node, the
//     other nodes reached through the agents' --launcher, scale-rsh, which plays ssh), 8 ranks a
//     node. Its job is a placeholder: a "Python script" job whose interpreter is /bin/sh, using
//     GPUs (one per rank: a CUSTOM command would take CPU slots, and this machine has 2 cores a
//     node; GPU slots of the fake NVML are 8 a node), whose world rank 0 writes the environment
//     the owner gave the ranks and then every rank sleeps. The ranks' metrics are sent by W
//     simulated ranks (scale_ranks.h) in a child process, with that environment: the owner's CURVE
//     tcp:// rank endpoint, the agent's key and the run's own keypair, as ranks on other nodes
//     send them. What is not real: every node shares this machine's network stack, file system
//     and 2 cores, and the ranks that send are threads of one process, not the placeholder
//     processes mpirun started (those only hold the run's slots and keep it running).
//  4. Phases of step time (default 100, 20, 5 ms, 20 s each) in one run; a straggler from a known
//     step; after the last step a rank stalls while the others wait in the all-reduce.
//  5. Prints samples/s sent and stored, latency rank -> GUI store per phase, CPU of the owner
//     agent, the other agents and the GUI side per phase, RSS, the straggler verdict's and the
//     stall flag's time to detect as the GUI sees them, the longest GUI event-loop stall (split
//     into the GUI thread's work, its wait for a CPU and the rest; loop_watch.h), the
//     exactly-once check, and ratios against bench/telemetry's raw SQLite reference.
//
// Exit status: 0 every check passed and every target met; 1 a sample was lost, duplicated or
// altered, the straggler or the stall was not reported (--checks-only), or the harness failed;
// 3 a target was missed with a correct answer; 77 not run as root (skipped).
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QTimer>
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "agent_fleet.h"
#include "build_paths.h"
#include "loop_watch.h"
#include "pipeline/gui_harness.h"
#include "pipeline/store_check.h"
#include "ringside/common/protocol.h"
#include "ringside/gui/controller.h"
#include "ringside/gui/metrics_store.h"
#include "scale_check.h"
#include "scale_ranks.h"
#include "telemetry/agent_harness.h"
#include "telemetry/noise_meter.h"
#include "telemetry/sqlite_reference.h"

extern char** environ;

namespace ringside::bench {
namespace {

struct ScaleOptions {
  std::string agentPath = ringside::test::agentBin();
  std::string mpirunPath = ringside::test::mpiexec();
  std::string nvmlLibrary = ringside::test::scaleNvml();
  std::string launcher = ringside::test::scaleRsh();
  int nodes = 64;
  int ranksPerNode = 8;
  std::vector<double> stepMs = {100, 20, 5};
  double phaseSeconds = 20;
  int stragglerRank = -1;   // default: W / 2 + 5
  double stragglerAtS = 5;  // seconds into the run
  int stallRank = -1;       // default: W / 4 + 3
  double stallHoldS = 15;
  double telemetryIntervalS = 1;
  // What only simulates the cluster (the ranks' process and the agents of nodes 2 to N) runs at
  // the idle scheduling policy (SCHED_IDLE, sched(7)): it takes the CPU the owner agent and the
  // GUI side leave, as on a cluster where it runs on other machines. Off: the same priority.
  bool simulationIdle = false;
  double timeoutS = 300;
  uint64_t referenceSamples = 1'000'000;
  double targetP99S = 1.0;
  double targetDetectS = 10.0;
  double targetLoopStallMs = 16.0;
  bool keep = false;
  // ctest's smoke run: the exit status says whether every sample arrived exactly once, the
  // straggler was named and the stall flagged, whatever the times (no timed test).
  bool checksOnly = false;
  // The child process's part (--ranks-child): the ranks, with the environment the owner gave.
  bool ranksChild = false;
  double t0Unix = 0;
  std::string outcomesPath;
};

double unixNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

Clock::time_point steadyOfUnix(double unix) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(
                            std::chrono::duration<double>(unix - unixNow()));
}

std::string thousands(uint64_t value) {
  std::string digits = std::to_string(value), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::vector<ScalePhase> phasesOf(const ScaleOptions& options) {
  std::vector<ScalePhase> phases;
  for (double ms : options.stepMs) {
    phases.push_back({ms, std::max<int64_t>(1, std::llround(options.phaseSeconds * 1000.0 / ms))});
  }
  return phases;
}

// The first step due at or after `seconds` into the run.
int64_t stepAt(const std::vector<ScalePhase>& phases, double seconds) {
  double at = 0;
  int64_t step = 0;
  for (const ScalePhase& phase : phases) {
    for (int64_t s = 0; s < phase.steps; ++s) {
      at += phase.stepMs / 1000.0;
      ++step;
      if (at >= seconds) return step;
    }
  }
  return step;
}

ScaleRanksOptions ranksOptions(const ScaleOptions& options) {
  ScaleRanksOptions out;
  out.ranks = options.nodes * options.ranksPerNode;
  out.phases = phasesOf(options);
  out.stragglerRank = options.stragglerRank;
  out.stragglerFromStep = stepAt(out.phases, options.stragglerAtS);
  out.stallRank = options.stallRank;
  out.stallHoldSeconds = options.stallHoldS;
  return out;
}

// --ranks-child: the ranks, in a process of their own. The run's environment is this process's
// (RINGSIDE_AGENT_ENDPOINT, RINGSIDE_RUN_ID, the CURVE keys), as a rank on another node has it.
int ranksChild(const ScaleOptions& options) {
  // Before any thread starts: threads take their creator's scheduling policy.
  if (options.simulationIdle) {
    const sched_param param{};
    if (::sched_setscheduler(0, SCHED_IDLE, &param) != 0) {
      std::perror("scale_bench: sched_setscheduler(SCHED_IDLE)");
    }
  }
  ScaleRanksOptions ro = ranksOptions(options);
  auto env = [](const char* name) {
    const char* value = std::getenv(name);
    return std::string(value != nullptr ? value : "");
  };
  ro.endpoint = env(protocol::kAgentEndpointEnv);
  ro.runId = env(protocol::kRunIdEnv);
  ro.sink.agentPublicKey = env(protocol::kAgentPublicKeyEnv);
  ro.sink.runKeys.publicKey = env(protocol::kRunPublicKeyEnv);
  ro.sink.runKeys.secretKey = env(protocol::kRunSecretKeyEnv);
  ScaleRanks ranks(ro);
  ranks.launch();
  ranks.start(steadyOfUnix(options.t0Unix));
  ranks.join();
  if (Status s = ranks.save(options.outcomesPath); !s.isOk()) {
    std::fprintf(stderr, "scale_bench ranks: %s\n", s.toString().c_str());
    return 1;
  }
  return 0;
}

// What the bench measures of a stretch of time: CPU seconds by process group, other load.
struct CpuMark {
  Clock::time_point at;
  double owner = 0, otherAgents = 0, gui = 0, ranks = 0, machine = 0;
  double watch = 0;  // the loop watch's own threads (left out of gui)
};

// The GUI side: the Controller, the ingest log, the stall flag and the event-loop watchdog.
class GuiSide {
 public:
  explicit GuiSide(const std::string& dataDir) {
    gui::ControllerOptions options;
    options.dataDir = QString::fromStdString(dataDir);
    options.startLocalAgent = false;
    controller_ = std::make_unique<gui::Controller>(options);
    QObject::connect(controller_.get(), &gui::Controller::errorMessage,
                     [this](const QString& message) { errors_.append(message); });
    QObject::connect(
        &controller_->store(), &gui::MetricsStore::samplesIngested, &controller_->store(),
        [this](const QString& runId, qint64 newSamples, quint64 lastSeq) {
          const IngestEvent event{unixNow(), Clock::now(), newSamples, lastSeq};
          std::lock_guard lock(mutex_);
          ingest_[runId].push_back(event);
          stored_[runId] += newSamples;
        },
        Qt::DirectConnection);
    QObject::connect(controller_.get(), &gui::Controller::runStallChanged,
                     [this](const QString& runId) {
                       if (runId != watchedRun_ || stallSeen_) return;
                       const auto verdict = controller_->stallOf(runId);
                       if (!verdict) return;
                       for (int rank : verdict->stuck_ranks()) {
                         if (rank == stallRank_) {
                           stallSeen_ = Clock::now();
                           stallSummary_ = verdict->summary();
                           stallThreshold_ = verdict->threshold_seconds();
                         }
                       }
                     });
  }

  gui::Controller& controller() { return *controller_; }
  QStringList errors() const { return errors_; }
  int64_t stored(const QString& runId) const {
    std::lock_guard lock(mutex_);
    auto it = stored_.find(runId);
    return it == stored_.end() ? 0 : it->second;
  }
  std::vector<IngestEvent> events(const QString& runId) const {
    std::lock_guard lock(mutex_);
    auto it = ingest_.find(runId);
    return it == ingest_.end() ? std::vector<IngestEvent>{} : it->second;
  }
  void watchStall(const QString& runId, int rank) {
    watchedRun_ = runId;
    stallRank_ = rank;
  }
  std::optional<Clock::time_point> stallSeen() const { return stallSeen_; }
  const std::string& stallSummary() const { return stallSummary_; }
  double stallThreshold() const { return stallThreshold_; }
  // The GUI thread's event loop (loop_watch.h): measured between measureLoop(true) and (false).
  void measureLoop(bool on) { on ? loop_.start() : loop_.stop(); }
  LoopWatchSummary loop() const { return loop_.summary(); }
  double loopWatchCpuSeconds() { return loop_.watcherCpuSeconds(); }

 private:
  std::unique_ptr<gui::Controller> controller_;
  QStringList errors_;
  mutable std::mutex mutex_;  // ingest_ and stored_: written on the store's thread
  std::map<QString, std::vector<IngestEvent>> ingest_;
  std::map<QString, int64_t> stored_;
  QString watchedRun_;
  int stallRank_ = -1;
  std::optional<Clock::time_point> stallSeen_;
  std::string stallSummary_;
  double stallThreshold_ = 0;
  LoopWatch loop_;  // constructed on the GUI thread
};

// The placeholder every rank runs (as "/bin/sh script envfile seconds"): world rank 0 writes the
// environment the owner agent gave the ranks, every rank appends its world rank to
// envfile.started (one short O_APPEND write each, so lines do not interleave), then sleeps until
// the run is stopped.
constexpr const char* kPlaceholderScript =
    "if [ \"$OMPI_COMM_WORLD_RANK\" = 0 ]; then\n"
    "  printf '%s\\n%s\\n%s\\n%s\\n%s\\n' \"$RINGSIDE_AGENT_ENDPOINT\" \"$RINGSIDE_RUN_ID\" \\\n"
    "    \"$RINGSIDE_AGENT_PUBLIC_KEY\" \"$RINGSIDE_RUN_PUBLIC_KEY\" \"$RINGSIDE_RUN_SECRET_KEY\" "
    "\\\n"
    "    > \"$1.tmp\" && mv \"$1.tmp\" \"$1\"\n"
    "fi\n"
    "echo \"$OMPI_COMM_WORLD_RANK\" >> \"$1.started\"\n"
    "exec sleep \"$2\"\n";

// The agents' process ids, for a signal that ends the bench early: they are sent SIGTERM.
std::array<std::atomic<pid_t>, 1024> gAgentPids{};

extern "C" void onSignal(int signal) {
  for (auto& pid : gAgentPids) {
    const pid_t p = pid.load();
    if (p > 0) ::kill(p, SIGTERM);
  }
  ::_exit(128 + signal);
}

double pct(double seconds, double wall) { return wall > 0 ? 100.0 * seconds / wall : 0; }

int runBench(const ScaleOptions& options, int argc, char** argv) {
  if (::geteuid() != 0) {
    std::fprintf(stderr,
                 "scale_bench: needs root (each node's agent gets its own host name with unshare "
                 "--uts); run it as root. Skipped.\n");
    return 77;
  }
  const int world = options.nodes * options.ranksPerNode;
  if (options.ranksPerNode > 8) {
    std::fprintf(stderr, "scale_bench: --ranks-per-node is at most 8 (the fake NVML's GPUs)\n");
    return 1;
  }
  auto dir = makeTempDir();
  if (!dir.isOk()) {
    std::fprintf(stderr, "scale_bench: %s\n", dir.status().toString().c_str());
    return 1;
  }
  TempDir temp{*dir, options.keep};
  ::setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 0);
  ::setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 0);
  std::printf("scale_bench: %d nodes x %d ranks = %d ranks; step times", options.nodes,
              options.ranksPerNode, world);
  for (double ms : options.stepMs) std::printf(" %g", ms);
  std::printf(" ms, %g s each", options.phaseSeconds);
  if (options.simulationIdle) {
    std::printf("; the simulation (ranks, nodes 2-%d's agents) at SCHED_IDLE", options.nodes);
  }
  std::printf("\n");

  // 2. The GUI side; the nodes are added as a user adds them, below.
  QCoreApplication app(argc, argv);
  GuiSide gui(*dir + "/gui");
  bool started = false;
  QString startFailure;
  QObject::connect(&gui.controller(), &gui::Controller::started, [&] { started = true; });
  QObject::connect(&gui.controller(), &gui::Controller::startFailed,
                   [&](const QString& message) { startFailure = message; });
  if (Status s = gui.controller().start(); !s.isOk()) {
    std::fprintf(stderr, "scale_bench: Controller::start: %s\n", s.toString().c_str());
    return 1;
  }
  GuiHarness::spinUntil([&] { return started || !startFailure.isEmpty(); }, 60000);
  if (!started) {
    std::fprintf(stderr, "scale_bench: the Controller did not start: %s\n",
                 startFailure.toStdString().c_str());
    return 1;
  }
  // 1. The nodes, each allowing the GUI's key before it starts (`ringside-agent authorize KEY`
  // on each node, as a user sets a node up).
  const auto fleetStart = Clock::now();
  AgentFleet fleet({options.agentPath, options.mpirunPath, options.nvmlLibrary, options.launcher,
                    *dir + "/nodes", options.nodes, options.telemetryIntervalS,
                    options.simulationIdle});
  if (Status s = fleet.start(gui.controller().guiPublicKey().toStdString()); !s.isOk()) {
    std::fprintf(stderr, "scale_bench: %s\n", s.toString().c_str());
    return 1;
  }
  for (size_t i = 0; i < fleet.agents().size() && i < gAgentPids.size(); ++i) {
    gAgentPids[i] = fleet.agents()[i].pid;
  }
  ::signal(SIGINT, onSignal);
  ::signal(SIGTERM, onSignal);
  std::printf("  %d agents serving after %.1f s\n", options.nodes, secondsSince(fleetStart));
  const auto connectStart = Clock::now();
  for (const FleetAgent& agent : fleet.agents()) {
    if (Status s = gui.controller().addNode(
            QString::fromStdString(agent.name), QStringLiteral("127.0.0.1"), agent.controlPort,
            agent.eventsPort, QString::fromStdString(agent.publicKey));
        !s.isOk()) {
      std::fprintf(stderr, "scale_bench: addNode %s: %s\n", agent.name.c_str(),
                   s.toString().c_str());
      return 1;
    }
  }
  // Node ids by host name, in node order.
  QStringList nodeIds;
  auto allOnline = [&] {
    QMap<QString, QString> byName;
    for (const gui::NodeView& node : gui.controller().nodes()) {
      if (node.state != gui::NodeState::Online || !node.info.has_value()) return false;
      byName[QString::fromStdString(node.info->hostname())] = node.record.nodeId;
    }
    nodeIds.clear();
    for (const FleetAgent& agent : fleet.agents()) {
      const QString id = byName.value(QString::fromStdString(agent.name));
      if (id.isEmpty()) return false;
      nodeIds.append(id);
    }
    return true;
  };
  if (!GuiHarness::spinUntil(allOnline, 120000)) {
    std::fprintf(stderr, "scale_bench: not every node came online within 120 s: %s\n",
                 gui.errors().join(QStringLiteral("; ")).toStdString().c_str());
    for (const gui::NodeView& node : gui.controller().nodes()) {
      std::fprintf(stderr, "  %s: %s, host %s\n", node.record.name.toStdString().c_str(),
                   node.state == gui::NodeState::Online ? "online" : "not online",
                   node.info ? node.info->hostname().c_str() : "(no hello)");
    }
    return 1;
  }
  std::printf("  the GUI's Controller has every node online after %.1f s\n",
              secondsSince(connectStart));

  // 3. The run, launched as the run form launches it.
  const std::string script = *dir + "/placeholder.sh";
  const std::string envFile = *dir + "/rank.env";
  std::ofstream(script) << kPlaceholderScript;
  gui::RunForm form;
  form.name = QStringLiteral("scale-bench");
  form.job = gui::RunForm::Job::kPython;
  form.pythonInterpreter = QStringLiteral("/bin/sh");
  form.pythonScript = QString::fromStdString(script);
  // The ranks sleep until the run is stopped, or at the latest this long after (should the bench
  // die before it stops the run: an agent's exit does not end its runs).
  double runSeconds = options.stallHoldS + options.timeoutS + 600;
  for (double ms : options.stepMs) runSeconds += options.phaseSeconds + ms / 1000.0;
  form.pythonArgs = QString::fromStdString(envFile) + QStringLiteral(" ") +
                    QString::number(std::llround(runSeconds));
  form.pythonUseGpus = true;
  form.nodeIds = nodeIds;
  form.ranksPerNode = options.ranksPerNode;
  QString runId, launchFailure;
  QObject::connect(&gui.controller(), &gui::Controller::runLaunched,
                   [&](const QString& id) { runId = id; });
  QObject::connect(&gui.controller(), &gui::Controller::launchFailed,
                   [&](const QString& message) { launchFailure = message; });
  const auto launchStart = Clock::now();
  gui.controller().launch(form);
  GuiHarness::spinUntil([&] { return !runId.isEmpty() || !launchFailure.isEmpty(); }, 120000);
  if (runId.isEmpty()) {
    std::fprintf(stderr, "scale_bench: the launch failed: %s\n",
                 (launchFailure.isEmpty() ? QStringLiteral("no answer in 120 s") : launchFailure)
                     .toStdString()
                     .c_str());
    return 1;
  }
  const double acceptedS = secondsSince(launchStart);  // pre-flight of every node, then launch
  if (!GuiHarness::spinUntil([&] { return QFile::exists(QString::fromStdString(envFile)); },
                             180000)) {
    std::fprintf(stderr,
                 "scale_bench: run %s: world rank 0 did not start within 180 s (the owner's "
                 "run directory under %s/nodes/node-1/runs has mpirun's stderr.log)\n",
                 runId.toStdString().c_str(), dir->c_str());
    return 1;
  }
  std::vector<std::string> rankEnv;
  {
    std::ifstream in(envFile);
    for (std::string line; std::getline(in, line);) rankEnv.push_back(line);
  }
  if (rankEnv.size() < 5 || rankEnv[1] != runId.toStdString() ||
      !rankEnv[0].starts_with("tcp://")) {
    std::fprintf(stderr,
                 "scale_bench: the ranks got no multi-node environment (a tcp:// endpoint and "
                 "CURVE keys): %s\n",
                 rankEnv.empty() ? "(empty)" : rankEnv[0].c_str());
    return 1;
  }
  const double rankZeroS = secondsSince(launchStart);
  // Every placeholder rank up before the simulated ranks send: on a cluster mpirun starts each
  // node's ranks on that node's CPUs, but here the 512 fork-execs share the 2 cores with the
  // owner and the GUI side, and a phase that overlapped them measured the launch (on a slow
  // machine the last ranks started 8-20 s after world rank 0).
  const std::string startedFile = envFile + ".started";
  auto ranksUp = [&startedFile] {
    std::ifstream in(startedFile);
    return static_cast<int>(std::count(std::istreambuf_iterator<char>(in),
                                       std::istreambuf_iterator<char>(), '\n'));
  };
  if (!GuiHarness::spinUntil([&] { return ranksUp() >= world; }, 300000)) {
    std::fprintf(stderr,
                 "scale_bench: run %s: %d of %d ranks started within 300 s (the owner's run "
                 "directory under %s/nodes/node-1/runs has mpirun's stderr.log)\n",
                 runId.toStdString().c_str(), ranksUp(), world, dir->c_str());
    return 1;
  }
  std::printf(
      "  run %s launched on %d nodes: the owner accepted it after %.1f s, world rank 0 started "
      "after %.1f s, all %d ranks after %.1f s; ranks push to %s (CURVE, the run's key)\n",
      runId.toStdString().c_str(), options.nodes, acceptedS, rankZeroS, world,
      secondsSince(launchStart), rankEnv[0].c_str());

  // 4. The ranks, in a child process with the ranks' environment.
  ScaleRanksOptions ro = ranksOptions(options);
  ScaleRanks expected(ro);  // the same schedule and values, for the check (no threads)
  const double t0Unix = unixNow() + 3.0 + world / 200.0;  // the sinks connect meanwhile
  const std::string outcomes = *dir + "/ranks.bin";
  std::vector<std::string> childArgs = {"/proc/self/exe",   "--ranks-child",
                                        "--nodes",          std::to_string(options.nodes),
                                        "--ranks-per-node", std::to_string(options.ranksPerNode),
                                        "--seconds",        std::to_string(options.phaseSeconds),
                                        "--straggler-rank", std::to_string(options.stragglerRank),
                                        "--straggler-at",   std::to_string(options.stragglerAtS),
                                        "--stall-rank",     std::to_string(options.stallRank),
                                        "--stall-hold",     std::to_string(options.stallHoldS),
                                        "--t0-unix",        std::to_string(t0Unix),
                                        "--outcomes",       outcomes};
  if (options.simulationIdle) childArgs.push_back("--simulation-idle");
  std::string steps;
  for (double ms : options.stepMs) steps += (steps.empty() ? "" : ",") + std::to_string(ms);
  childArgs.insert(childArgs.end(), {"--step-ms", steps});
  std::vector<std::string> childEnv;
  for (char** e = environ; *e != nullptr; ++e) childEnv.emplace_back(*e);
  childEnv.push_back(std::string(protocol::kAgentEndpointEnv) + "=" + rankEnv[0]);
  childEnv.push_back(std::string(protocol::kRunIdEnv) + "=" + rankEnv[1]);
  childEnv.push_back(std::string(protocol::kAgentPublicKeyEnv) + "=" + rankEnv[2]);
  childEnv.push_back(std::string(protocol::kRunPublicKeyEnv) + "=" + rankEnv[3]);
  childEnv.push_back(std::string(protocol::kRunSecretKeyEnv) + "=" + rankEnv[4]);
  std::vector<char*> cargv, cenv;
  for (std::string& a : childArgs) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  for (std::string& e : childEnv) cenv.push_back(e.data());
  cenv.push_back(nullptr);
  pid_t child = -1;
  if (posix_spawn(&child, cargv[0], nullptr, nullptr, cargv.data(), cenv.data()) != 0) {
    std::fprintf(stderr, "scale_bench: cannot start the ranks' process\n");
    return 1;
  }
  gui.watchStall(runId, ro.stallRank);

  const std::string ownerPid = std::to_string(fleet.agents()[0].pid);
  const std::string childPid = std::to_string(child);
  auto mark = [&] {
    CpuMark m;
    m.at = Clock::now();
    m.owner = processCpuSeconds(ownerPid);
    for (size_t i = 1; i < fleet.agents().size(); ++i) m.otherAgents += fleet.cpuSeconds(i);
    m.watch = gui.loopWatchCpuSeconds();
    m.gui = processCpuSeconds("self") - m.watch;  // the GUI side's, less the measurement's
    m.ranks = processCpuSeconds(childPid);
    m.machine = machineBusySeconds();
    return m;
  };
  const Clock::time_point t0 = steadyOfUnix(t0Unix);
  expected.start(t0);  // its clock: stallTime()
  GuiHarness::spinUntil([&] { return Clock::now() >= t0; }, 120000);
  std::vector<CpuMark> marks = {mark()};
  double ownerRssPeak = 0, guiRssPeak = 0;
  gui.measureLoop(true);
  const double stealBefore = machineStealSeconds();
  const Clock::time_point loopStart = Clock::now();
  for (size_t p = 0; p < ro.phases.size(); ++p) {
    int64_t lastStep = 0;
    for (size_t q = 0; q <= p; ++q) lastStep += ro.phases[q].steps;
    const Clock::time_point end = t0 + expected.dueOffset(lastStep);
    while (Clock::now() < end) {
      GuiHarness::spinUntil([&] { return Clock::now() >= end; }, 500);
      ownerRssPeak = std::max(ownerRssPeak, fleet.rssMiB(0));
      guiRssPeak = std::max(guiRssPeak, processRssMiB("self"));
    }
    marks.push_back(mark());
  }
  // The stall: wait for the flag (or the hold), then for every sample.
  const auto holdEnd =
      expected.stallTime() + std::chrono::duration_cast<Clock::duration>(
                                 std::chrono::duration<double>(options.stallHoldS));
  GuiHarness::spinUntil([&] { return Clock::now() >= holdEnd; }, 600000);
  const auto expectedCount = static_cast<int64_t>(expected.expectedSamples());
  // The run's stored samples include the agent's verdicts and the nodes' GPU telemetry: wait
  // for at least the ranks' count and then for the store to go quiet (no commit for 1 s); the
  // check below counts exactly.
  auto quiet = [&] {
    const auto events = gui.events(runId);
    return !events.empty() && secondsSince(events.back().steady) >= 1.0;
  };
  const bool timedOut =
      !GuiHarness::spinUntil([&] { return gui.stored(runId) >= expectedCount && quiet(); },
                             std::llround(options.timeoutS * 1000));
  const double drainS = secondsSince(holdEnd);
  gui.measureLoop(false);
  // The hypervisor's steal while the loop was watched, in cores (the machine %busy's unit / 100).
  const double stealCores =
      (machineStealSeconds() - stealBefore) / secondsSince(loopStart, Clock::now());
  marks.push_back(mark());
  ownerRssPeak = std::max(ownerRssPeak, fleet.rssMiB(0));
  guiRssPeak = std::max(guiRssPeak, processRssMiB("self"));
  int childStatus = 0;
  ::waitpid(child, &childStatus, 0);
  const double guiRssHwm = processRssMiB("self", true);
  const double ownerRssHwm = processRssMiB(ownerPid, true);

  // Stop the run, and check what the store holds.
  bool ended = false;
  QObject::connect(&gui.controller(), &gui::Controller::runStateChanged,
                   [&](const QString& id, v1::RunState state) {
                     if (id == runId &&
                         (state == v1::COMPLETED || state == v1::FAILED || state == v1::STOPPED)) {
                       ended = true;
                     }
                   });
  gui.controller().stopRun(runId, 1.0);
  GuiHarness::spinUntil([&] { return ended; }, 60000);
  GuiHarness::spinUntil([] { return false; }, 1000);

  int status = 0;
  std::string harnessError;
  if (!WIFEXITED(childStatus) || WEXITSTATUS(childStatus) != 0) {
    harnessError = "the ranks' process failed";
  } else if (Status s = expected.load(outcomes); !s.isOk()) {
    harnessError = s.toString();
  }
  uint64_t dropped = 0;
  std::vector<int64_t> late(ro.phases.size(), 0);
  for (const ScaleRankOutcome& rank : expected.outcomes()) {
    if (!rank.error.empty() && harnessError.empty()) harnessError = "rank sink: " + rank.error;
    dropped += rank.stats.droppedPoints;
    for (size_t p = 0; p < late.size() && p < rank.lateSteps.size(); ++p) {
      late[p] += rank.lateSteps[p];
    }
  }
  if (!harnessError.empty()) {
    std::fprintf(stderr, "scale_bench: %s\n", harnessError.c_str());
    return 1;
  }
  const std::vector<IngestEvent> events = gui.events(runId);
  auto checked = checkScaleStore(gui.controller().store().databasePath().toStdString(),
                                 runId.toStdString(), expected, events);
  if (!checked.isOk()) {
    std::fprintf(stderr, "scale_bench: %s\n", checked.status().toString().c_str());
    return 1;
  }
  const ScaleCheck& check = *checked;

  // 5. The reference: raw batched SQLite inserts, in this process, now.
  Options refOptions;
  refOptions.samples = options.referenceSamples;
  refOptions.batchPoints = 1000;
  const double refCpu0 = processCpuSeconds("self");
  auto reference = rawSqliteInserts(refOptions, *dir + "/reference.db");
  const double refCpu = processCpuSeconds("self") - refCpu0;
  const double rawRate = reference.isOk() && reference->seconds > 0
                             ? static_cast<double>(reference->rowsStored) / reference->seconds
                             : 0;
  const double rawCpuUs =
      reference.isOk() && reference->rowsStored > 0 ? 1e6 * refCpu / reference->rowsStored : 0;

  // The table.
  std::printf(
      "\nphase  step  samples/s sent  stored/s  late steps  p50 s  p99 s   max s  "
      "owner %%cpu  agents %%cpu  GUI %%cpu  ranks %%cpu  machine %%busy\n");
  bool sustained = !timedOut && check.ok() && dropped == 0;
  double fastestSustained = 0;
  const uint64_t perStep = static_cast<uint64_t>(world) * kRankRecord.size() + kGlobalRecord.size();
  for (size_t p = 0; p < ro.phases.size(); ++p) {
    const ScalePhase& phase = ro.phases[p];
    const double wall = secondsSince(marks[p].at, marks[p + 1].at);
    const double sentRate = static_cast<double>(perStep * phase.steps) / wall;
    // Stored in the phase: commits between the phase's marks.
    int64_t storedInPhase = 0;
    for (const IngestEvent& e : events) {
      if (e.steady >= marks[p].at && e.steady < marks[p + 1].at) storedInPhase += e.newSamples;
    }
    const std::vector<double>& lat = check.latencies[p];
    const double p99 = quantile(lat, 0.99);
    const bool ok = p99 <= options.targetP99S && late[p] <= phase.steps * world / 20;
    if (ok && sustained) fastestSustained = phase.stepMs;
    std::printf("%5zu %5g  %14s %9s %11lld %6.3f %6.3f %7.3f %11.0f %12.0f %9.0f %11.0f %14.0f%s\n",
                p + 1, phase.stepMs, thousands(std::llround(sentRate)).c_str(),
                thousands(std::llround(storedInPhase / wall)).c_str(),
                static_cast<long long>(late[p]), quantile(lat, 0.5), p99,
                lat.empty() ? 0.0 : lat.back(), pct(marks[p + 1].owner - marks[p].owner, wall),
                pct(marks[p + 1].otherAgents - marks[p].otherAgents, wall),
                pct(marks[p + 1].gui - marks[p].gui, wall),
                pct(marks[p + 1].ranks - marks[p].ranks, wall),
                pct(marks[p + 1].machine - marks[p].machine, wall), ok ? "" : "  <- not sustained");
  }
  const size_t last = marks.size() - 1;
  const double tailWall = secondsSince(marks[last - 1].at, marks[last].at);
  std::printf(
      "  stall + drain (%.1f s): owner %.0f %%, other agents %.0f %%, GUI %.0f %% of a core\n",
      tailWall, pct(marks[last].owner - marks[last - 1].owner, tailWall),
      pct(marks[last].otherAgents - marks[last - 1].otherAgents, tailWall),
      pct(marks[last].gui - marks[last - 1].gui, tailWall));

  // Time to detect, as the GUI sees it.
  double stragglerDetect = -1, stragglerAgent = -1;
  const int64_t from = ro.stragglerFromStep;
  const double onset = expected.outcomes()[ro.stragglerRank].wallTimes[from - 1];
  for (const VerdictRow& row : check.verdicts) {
    if (row.step >= from && std::llround(row.rank) == ro.stragglerRank && row.storedTime > 0) {
      stragglerDetect = row.storedTime - onset;
      stragglerAgent = row.agentTime - onset;
      break;
    }
  }
  double stallDetect = -1;
  if (gui.stallSeen()) {
    stallDetect = std::chrono::duration<double>(*gui.stallSeen() - expected.stallTime()).count();
  }
  const uint64_t totalSamples = check.expected;
  const double ownerCpu = marks[last].owner - marks[0].owner;
  const double guiCpu = marks[last].gui - marks[0].gui;
  const double ownerUs = 1e6 * ownerCpu / static_cast<double>(totalSamples);
  const double guiUs = 1e6 * guiCpu / static_cast<double>(totalSamples);
  std::printf("\nsamples: %s sent, %s stored by the GUI (drained %.1f s after the stall hold)%s\n",
              thousands(totalSamples).c_str(), thousands(gui.stored(runId)).c_str(), drainS,
              timedOut ? "  <- timed out" : "");
  std::printf(
      "exactly once: %s (%s rows: %s matched, %s duplicated, %s altered or unknown, "
      "%s missing; sinks dropped %s; %s straggler verdict samples of the agent)%s%s\n",
      check.ok() && dropped == 0 ? "PASS" : "FAIL", thousands(check.rows).c_str(),
      thousands(check.matched).c_str(), thousands(check.duplicates).c_str(),
      thousands(check.wrong).c_str(), thousands(check.missing).c_str(), thousands(dropped).c_str(),
      thousands(check.agentRows).c_str(), check.firstError.empty() ? "" : ": ",
      check.firstError.c_str());
  std::printf("slowest row: %s (seq %llu), %.2f s; %s telemetry rows with the run\n",
              check.slowest.what.c_str(), static_cast<unsigned long long>(check.slowest.seq),
              check.slowest.latency, thousands(check.telemetryRows).c_str());
  if (stragglerDetect >= 0) {
    std::printf(
        "straggler: rank %d slow from step %lld; the GUI stored the verdict naming it "
        "%.2f s after (the agent judged at +%.2f s)\n",
        ro.stragglerRank, static_cast<long long>(from), stragglerDetect, stragglerAgent);
  } else {
    std::printf(
        "straggler: rank %d slow from step %lld: NOT named by any stored verdict (%zu "
        "verdicts)\n",
        ro.stragglerRank, static_cast<long long>(from), check.verdicts.size());
  }
  if (stallDetect >= 0) {
    std::printf(
        "stall: rank %d silent after the last step; the GUI's Controller had the stall "
        "verdict naming it %.2f s after the last progress, %.2f s after the rule's "
        "threshold (%.0f s) (\"%s\")\n",
        ro.stallRank, stallDetect, stallDetect - gui.stallThreshold(), gui.stallThreshold(),
        gui.stallSummary().substr(0, 160).c_str());
  } else {
    std::printf("stall: rank %d silent after the last step: NOT flagged to the GUI within %.0f s\n",
                ro.stallRank, options.stallHoldS);
  }
  const LoopWatchSummary loop = gui.loop();
  const LoopStall& longest = loop.longest;
  const LoopStall& longestOwn = loop.longestOwn;
  std::printf(
      "GUI event loop (1 ms timer): longest stall %.1f ms (%.1f ms on a CPU, %.1f ms waiting for "
      "one, %.1f ms neither, %ld voluntary context switches; seen: %s), %lld stalls over 16 ms\n",
      longest.lateMs, longest.cpuMs, longest.runQueueMs, longest.restMs(), longest.sleeps,
      loop.seenInLongest.c_str(), static_cast<long long>(loop.over16));
  std::printf(
      "  the GUI thread's own part (its work, and where it may have blocked outside the event "
      "loop's wait): longest %.1f ms (%.1f ms on a CPU, of a %.1f ms stall; %ld voluntary context "
      "switches, %ld major faults; seen: %s), %lld over 16 ms\n",
      longestOwn.ownMs(), longestOwn.cpuMs, longestOwn.lateMs, longestOwn.sleeps,
      longestOwn.faults, loop.seenInLongestOwn.c_str(), static_cast<long long>(loop.ownOver16));
  std::printf(
      "  control, a thread that only sleeps 1 ms at a time: longest %.1f ms late (%.1f ms on a "
      "CPU, %.1f ms waiting for one, %.1f ms neither), %lld over 16 ms\n",
      loop.control.lateMs, loop.control.cpuMs, loop.control.runQueueMs, loop.control.restMs(),
      static_cast<long long>(loop.controlOver16));
  std::printf("hypervisor steal while the loop was watched: %.0f %% of a core\n",
              stealCores * 100);
  std::printf(
      "the loop watch's own sampler and control threads: %.0f %% of a core (left out of the GUI "
      "side's CPU)\n",
      pct(marks[last].watch - marks[0].watch, secondsSince(marks[0].at, marks[last].at)));
  std::printf("memory: owner agent RSS %.0f MiB (peak %.0f), GUI side RSS %.0f MiB (peak %.0f)\n",
              ownerRssPeak, ownerRssHwm, guiRssPeak, guiRssHwm);
  std::printf(
      "CPU per sample: owner agent %.1f us, GUI side %.1f us; raw SQLite insert %.2f us "
      "(%s rows/s): ratios %.1fx and %.1fx\n",
      ownerUs, guiUs, rawCpuUs, thousands(std::llround(rawRate)).c_str(),
      rawCpuUs > 0 ? ownerUs / rawCpuUs : 0, rawCpuUs > 0 ? guiUs / rawCpuUs : 0);
  double fastestStored = 0;
  for (size_t p = 0; p < ro.phases.size(); ++p) {
    const double wall = secondsSince(marks[p].at, marks[p + 1].at);
    int64_t storedInPhase = 0;
    for (const IngestEvent& e : events) {
      if (e.steady >= marks[p].at && e.steady < marks[p + 1].at) storedInPhase += e.newSamples;
    }
    fastestStored = std::max(fastestStored, storedInPhase / wall);
  }
  std::printf("stored rate: best phase %s samples/s = %.3fx the raw SQLite reference (%s rows/s)\n",
              thousands(std::llround(fastestStored)).c_str(),
              rawRate > 0 ? fastestStored / rawRate : 0, thousands(std::llround(rawRate)).c_str());
  char fastest[32] = "none";
  if (fastestSustained > 0) std::snprintf(fastest, sizeof fastest, "%g ms", fastestSustained);
  std::printf("fastest step time sustained (p99 <= %g s, nothing lost, < 5 %% late steps): %s\n",
              options.targetP99S, fastest);
  const bool stepMet = fastestSustained > 0 && fastestSustained <= 100;
  const bool stragglerMet = stragglerDetect >= 0 && stragglerDetect <= options.targetDetectS;
  const bool stallMet = stallDetect >= 0 && stallDetect <= options.targetDetectS;
  const bool loopMet = longestOwn.ownMs() <= options.targetLoopStallMs;
  auto met = [](bool ok) { return ok ? "met" : "NOT MET"; };
  std::printf(
      "targets: 100 ms step sustained %s; straggler named within %g s %s; stall flagged "
      "within %g s of the last progress %s%s; GUI loop never over %g ms of its own %s\n",
      met(stepMet), options.targetDetectS, met(stragglerMet), options.targetDetectS, met(stallMet),
      stallMet || stallDetect < 0 ? ""
                                  : " (the stall rule's threshold is at least "
                                    "StallRule::minSeconds)",
      options.targetLoopStallMs, met(loopMet));
  const bool targets = stepMet && stragglerMet && stallMet && loopMet;
  const int failedAgents = fleet.terminate();
  if (failedAgents > 0) std::printf("agents not exiting 0 on SIGTERM: %d\n", failedAgents);
  if (!check.ok() || dropped > 0 || timedOut) {
    status = 1;
  } else if (options.checksOnly) {
    status = stragglerDetect >= 0 && stallDetect >= 0 ? 0 : 1;
  } else if (!targets) {
    status = 3;
  }
  return status;
}

}  // namespace
}  // namespace ringside::bench

int main(int argc, char** argv) {
  using namespace ringside::bench;
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  ScaleOptions options;
  CLI::App cli{"scale_bench: N agents x 8 GPUs, one GUI, one run of W ranks (bench/README.md)"};
  cli.add_option("--nodes", options.nodes, "agents (nodes)")->check(CLI::Range(2, 256));
  cli.add_option("--ranks-per-node", options.ranksPerNode, "ranks (GPUs) per node, <= 8")
      ->check(CLI::Range(1, 8));
  cli.add_option("--step-ms", options.stepMs, "step times of the phases, ms")->delimiter(',');
  cli.add_option("--seconds", options.phaseSeconds, "seconds per phase")
      ->check(CLI::PositiveNumber);
  cli.add_option("--straggler-rank", options.stragglerRank, "the straggler (default W/2+5)");
  cli.add_option("--straggler-at", options.stragglerAtS, "seconds into the run it turns slow");
  cli.add_option("--stall-rank", options.stallRank, "the rank that stalls (default W/4+3)");
  cli.add_option("--stall-hold", options.stallHoldS, "seconds the others wait after the stall");
  cli.add_option("--telemetry-interval", options.telemetryIntervalS, "agents' telemetry, s");
  cli.add_flag("--simulation-idle", options.simulationIdle,
               "the ranks' process and nodes 2-N's agents (what only simulates the cluster) at "
               "SCHED_IDLE, so the owner agent and the GUI side come first");
  cli.add_option("--timeout", options.timeoutS, "seconds to wait for the store to drain");
  cli.add_option("--reference-samples", options.referenceSamples, "rows of the raw reference");
  cli.add_option("--agent", options.agentPath, "ringside-agent");
  cli.add_option("--mpirun", options.mpirunPath, "mpirun");
  cli.add_flag("--keep", options.keep, "keep the temporary directory");
  cli.add_flag("--checks-only", options.checksOnly,
               "exit 0 when every sample arrived exactly once, the straggler was named and the "
               "stall flagged, whatever the times (ctest's smoke run)");
  cli.add_flag("--ranks-child", options.ranksChild)->group("");
  cli.add_option("--t0-unix", options.t0Unix)->group("");
  cli.add_option("--outcomes", options.outcomesPath)->group("");
  CLI11_PARSE(cli, argc, argv);
  const int world = options.nodes * options.ranksPerNode;
  if (options.stragglerRank < 0 || options.stragglerRank >= world) {
    options.stragglerRank = std::min(world - 1, world / 2 + 5);
  }
  if (options.stallRank < 0 || options.stallRank >= world ||
      options.stallRank == options.stragglerRank) {
    options.stallRank = (world / 4 + 3) % world;
    if (options.stallRank == options.stragglerRank)
      options.stallRank = (options.stallRank + 1) % world;
  }
  if (options.ranksChild) return ranksChild(options);
  return runBench(options, argc, argv);
}
