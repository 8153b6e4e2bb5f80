#include "ringside/agent/run_manager.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <set>
#include <sstream>

#include "ringside/agent/failure_reason.h"
#include "ringside/common/file_io.h"
#include "ringside/common/protocol.h"
#include "ringside/common/run_spec.h"
#include "ringside/common/run_spec_limits.h"

namespace ringside::agent {

namespace fs = std::filesystem;

namespace {

constexpr const char* kExitStatusFile = "exit_status";
// Written by failHung(): the reason a run ended by its hang timeout fails with.
constexpr const char* kHangFailureFile = "hang_failure";
constexpr const char* kStdoutFile = "stdout.log";
constexpr const char* kStderrFile = "stderr.log";
constexpr const char* kSpecFile = "spec.json";
// A multi-node run's rank keypair (secret key, mode 0600), so that an agent that restarts keeps
// accepting the metrics of the run's ranks.
constexpr const char* kRunKeyFile = "rank.key_secret";
// Longest run spec passed on the command line (one argument may be 128 KiB on Linux).
constexpr size_t kMaxConfigArgBytes = 64 * 1024;

double wallSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

double steadySeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string newRunId() {
  const std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::gmtime(&now));
  std::random_device device;
  char suffix[8];
  std::snprintf(suffix, sizeof suffix, "%04x", device() & 0xffff);
  return std::string("r") + stamp + "-" + suffix;
}

// Single-quotes `word` for /bin/sh.
std::string shellQuote(const std::string& word) {
  std::string quoted = "'";
  for (char c : word) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

bool isExecutable(const std::string& path) { return ::access(path.c_str(), X_OK) == 0; }

// argv[0] as given (a path) or found in PATH.
bool commandExists(const std::string& name) {
  if (name.find('/') != std::string::npos) return isExecutable(name);
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path != nullptr ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (!dir.empty() && isExecutable(dir + "/" + name)) return true;
  }
  return false;
}

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Field 22 (starttime, clock ticks since boot) and the state letter of /proc/<pid>/stat.
bool procStat(pid_t pid, int64_t* startTicks, char* state) {
  const std::string stat = readFile("/proc/" + std::to_string(pid) + "/stat");
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return false;
  std::istringstream fields(stat.substr(close + 2));
  std::string field;
  fields >> *state;
  // After the state (field 3) come fields 4..; starttime is field 22.
  for (int i = 4; i <= 22 && fields >> field; ++i) {
    if (i == 22) *startTicks = std::stoll(field);
  }
  return true;
}

// "30 s", "0.5 s": a grace period in words (never an int cast of an unchecked double).
std::string secondsText(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%g s", seconds);
  return text;
}

}  // namespace

Status validateGraceSeconds(double graceSeconds) {
  if (std::isfinite(graceSeconds) && graceSeconds >= 0 && graceSeconds <= kMaxStopGraceSeconds) {
    return Status::ok();
  }
  char value[32];
  std::snprintf(value, sizeof value, "%g", graceSeconds);
  return Status::invalidArgument("grace_seconds " + std::string(value) +
                                 " is not a grace period: use 0 (the agent's default) or a number "
                                 "of seconds up to " +
                                 secondsText(kMaxStopGraceSeconds));
}

bool isEnded(v1::RunState state) {
  return state == v1::COMPLETED || state == v1::FAILED || state == v1::STOPPED;
}

RunManager::RunManager(RunManagerOptions options, RunStateCallback onStateChange)
    : options_(std::move(options)), onStateChange_(std::move(onStateChange)) {}

std::string RunManager::runDir(const std::string& runId) const {
  return (fs::path(options_.runsDir) / runId).string();
}

void RunManager::setState(Tracked& run, v1::RunState state, const std::string& reason) {
  run.info.set_state(state);
  if (!reason.empty()) run.info.set_reason(reason);
  if (state == v1::RUNNING && run.info.start_time() == 0) run.info.set_start_time(wallSeconds());
  if (isEnded(state)) {
    run.info.set_end_time(wallSeconds());
    // The ranks' connections stay open until they exit; no new ones for an ended run.
    if (options_.runKeys != nullptr && !run.runPublicKey.empty()) {
      options_.runKeys->remove(run.runPublicKey);
    }
  }
  if (onStateChange_) onStateChange_(run.info, run.ids);
}

bool RunManager::isLocalHost(const std::string& host) const {
  if (host == "localhost" || host == "127.0.0.1" || host == "::1") return true;
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  if (host == name) return true;
  return std::find(options_.localNames.begin(), options_.localNames.end(), host) !=
         options_.localNames.end();
}

uint32_t RunManager::localRanks(const v1::RunSpec& spec) const {
  if (spec.hosts().empty()) return spec.ranks_per_node();
  uint64_t ranks = 0;  // 64-bit: host counts of an unchecked spec (a pre-flight) cannot wrap
  for (const auto& host : spec.hosts()) {
    if (isLocalHost(host.host())) ranks += host.ranks();
  }
  return static_cast<uint32_t>(std::min<uint64_t>(ranks, UINT32_MAX));
}

Status RunManager::checkJob(v1::RunSpec* spec, std::vector<std::string>* argv) const {
  RINGSIDE_RETURN_IF_ERROR(validateRunSpecLimits(*spec));
  RINGSIDE_RETURN_IF_ERROR(validateHangTimeout(*spec));
  for (const auto& [name, value] : spec->env()) RINGSIDE_RETURN_IF_ERROR(validateRunEnvName(name));
  if (spec->has_trainer()) {
    const std::string trainer = spec->trainer().trainer_path().empty()
                                    ? options_.trainerPath
                                    : spec->trainer().trainer_path();
    if (trainer.empty() || !isExecutable(trainer)) {
      return Status::invalidArgument("trainer binary '" + trainer +
                                     "' does not exist or is not executable: build "
                                     "ringside-trainer or set trainer_path");
    }
    // The typed run spec, or the deprecated config_json of an old client converted to it.
    auto config = trainerConfigOf(spec->trainer());
    if (!config.isOk()) return config.status().withContext("trainer run spec");
    RINGSIDE_RETURN_IF_ERROR(validateTrainerConfig(*config).withContext("trainer run spec"));
    const std::string dataDir = withTrainerDefaults(*config).data();
    std::error_code ec;
    if (!fs::is_directory(dataDir, ec)) {
      return Status::invalidArgument("dataset directory " + dataDir +
                                     " does not exist on this node: install "
                                     "dataset-fashion-mnist or set \"data\" in the run spec");
    }
    // The journal, the replies and the GUI see the typed spec only; config_json is never written.
    *spec->mutable_trainer()->mutable_config() = *config;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    spec->mutable_trainer()->clear_config_json();
#pragma GCC diagnostic pop
    const std::string json = trainerConfigToJson(*config);
    if (json.size() > kMaxConfigArgBytes) {
      return Status::invalidArgument("the trainer run spec is " + std::to_string(json.size()) +
                                     " bytes as JSON, more than the " +
                                     std::to_string(kMaxConfigArgBytes) +
                                     " a command line carries: shorten it");
    }
    *argv = {trainer, "--config-json", json};
    return Status::ok();
  }
  if (spec->has_command()) {
    if (spec->command().argv().empty()) {
      return Status::invalidArgument("custom command has an empty argv: name the program to run");
    }
    argv->assign(spec->command().argv().begin(), spec->command().argv().end());
    const std::string& workDir = spec->command().working_dir();
    std::error_code ec;
    if (!workDir.empty() && !fs::is_directory(workDir, ec)) {
      return Status::invalidArgument("working directory " + workDir +
                                     " does not exist on this node: create it, or change the "
                                     "run's working directory (empty: the run's own directory)");
    }
    if (!workDir.empty() && ::access(workDir.c_str(), X_OK) != 0) {
      return Status::invalidArgument(
          "working directory " + workDir +
          " cannot be entered by the agent's user: " + std::strerror(errno));
    }
    if (!commandExists((*argv)[0])) {
      return Status::invalidArgument("custom command '" + (*argv)[0] +
                                     "' is not an executable file nor found in PATH");
    }
    return Status::ok();
  }
  return Status::invalidArgument("run spec has no job: set trainer or command");
}

std::vector<std::string> RunManager::preflight(const v1::RunSpec& request, uint32_t ranks,
                                               uint32_t freeSlots) {
  std::vector<std::string> problems;
  v1::RunSpec spec = request;
  std::vector<std::string> argv;
  if (Status job = checkJob(&spec, &argv); !job.isOk()) problems.push_back(job.message());
  if (ranks > freeSlots) {
    problems.push_back("the run needs " + std::to_string(ranks) + " slots here but " +
                       std::to_string(freeSlots) +
                       " are free: lower the ranks on this node or stop a run");
  }
  const size_t gpus = freeGpus().size();
  if (!options_.gpuIndices.empty() && gpus < ranks) {
    problems.push_back("the run needs " + std::to_string(ranks) + " GPUs here but " +
                       std::to_string(gpus) + " are free");
  }
  return problems;
}

Reservation RunManager::reserve(uint32_t ranks, double seconds) {
  std::vector<uint32_t> gpus;
  if (!options_.gpuIndices.empty()) {
    const std::vector<uint32_t> free = freeGpus();
    gpus.assign(free.begin(), free.begin() + std::min<size_t>(free.size(), ranks));
  }
  return reservations_.hold(ranks, std::move(gpus), seconds, steadySeconds());
}

void RunManager::loadRunKey(Tracked& run) {
  // None for a one-node run (or a run directory that lost it: its remote ranks' metrics are then
  // refused, and counted as dropped by them).
  auto keys = curve::readKeyPairFromSecretFile(
      (fs::path(runDir(run.info.run_id())) / kRunKeyFile).string());
  if (!keys.isOk()) return;
  run.runPublicKey = keys->publicKey;
  if (options_.runKeys != nullptr && !isEnded(run.info.state())) {
    (void)options_.runKeys->add(run.runPublicKey, "run " + run.info.run_id());
  }
}

Result<v1::RunInfo> RunManager::launch(const v1::RunSpec& request, uint32_t freeSlots) {
  // Validation: say what is wrong and what to do.
  v1::RunSpec spec = request;
  std::vector<std::string> argv;
  RINGSIDE_RETURN_IF_ERROR(checkJob(&spec, &argv));
  auto worldSize = worldSizeOf(spec);
  if (!worldSize.isOk()) return worldSize.status();
  const uint32_t world = *worldSize;
  const bool multiNode = !spec.hosts().empty();
  std::vector<std::string> remoteHosts;
  for (const auto& host : spec.hosts()) {
    RINGSIDE_RETURN_IF_ERROR(validateHostName(host.host()));
    if (!isLocalHost(host.host())) remoteHosts.push_back(host.host());
  }
  if (multiNode && remoteHosts.size() == static_cast<size_t>(spec.hosts_size())) {
    return Status::invalidArgument(
        "the run's host list does not name this node: the node whose agent launches a run takes "
        "part in it; put this node's host name first");
  }
  if (multiNode && options_.rankTcpEndpoint.empty()) {
    return Status::failedPrecondition(
        "this agent has no rank endpoint for other nodes (it runs with --insecure): multi-node "
        "runs need CURVE; restart the agent without --insecure");
  }
  const uint32_t local = localRanks(spec);
  // This node's pre-flight hold is the run's own: its slots and GPUs are free for it.
  std::vector<uint32_t> heldGpus;
  for (const auto& host : spec.hosts()) {
    if (!isLocalHost(host.host()) || host.reservation_id().empty()) continue;
    if (auto held = reservations_.take(host.reservation_id(), steadySeconds())) {
      freeSlots += held->slots;
      heldGpus = held->gpus;
    }
  }
  if (local > freeSlots) {
    return Status::resourceExhausted("run asks for " + std::to_string(local) +
                                     " ranks on this node but only " + std::to_string(freeSlots) +
                                     " slots are free: lower ranks_per_node or stop a run");
  }
  std::vector<uint32_t> ownGpus;
  if (!options_.gpuIndices.empty()) {
    const std::vector<uint32_t> free = freeGpus();
    if (free.size() < local) {
      return Status::resourceExhausted("run asks for " + std::to_string(local) +
                                       " GPUs on this node but " + std::to_string(free.size()) +
                                       " are free: lower the ranks or stop a run");
    }
    ownGpus.assign(free.begin(), free.begin() + local);
    if (heldGpus.size() >= local) ownGpus.assign(heldGpus.begin(), heldGpus.begin() + local);
  }
  std::vector<HostPart> parts;
  for (const auto& host : spec.hosts()) {
    HostPart part;
    part.host = host.host();
    part.ranks = host.ranks();
    part.gpus.assign(host.gpus().begin(), host.gpus().end());
    if (part.gpus.empty() && isLocalHost(host.host())) part.gpus = ownGpus;
    part.networkInterface =
        host.network_interface().empty() ? options_.networkInterface : host.network_interface();
    if (!isLocalHost(host.host())) part.reservationId = host.reservation_id();
    parts.push_back(std::move(part));
  }

  Tracked run;
  run.info.set_run_id(newRunId());
  run.gpus = ownGpus;
  // Where the ranks run, for clients (RunInfo.placement): the hosts as given, with the GPUs
  // they were handed; a one-node run is this node.
  for (const HostPart& part : parts) {
    v1::HostSlots* placed = run.info.add_placement();
    placed->set_host(part.host);
    placed->set_ranks(part.ranks);
    for (uint32_t gpu : part.gpus) placed->add_gpus(gpu);
  }
  if (parts.empty()) {
    char name[256] = {};
    gethostname(name, sizeof name - 1);
    v1::HostSlots* placed = run.info.add_placement();
    placed->set_host(name);
    placed->set_ranks(local);
    for (uint32_t gpu : ownGpus) placed->add_gpus(gpu);
  }
  std::vector<std::string> env = {std::string(protocol::kRunIdEnv) + "=" + run.info.run_id()};
  curve::KeyPair runKeys;
  if (multiNode) {
    auto keys = curve::generateKeyPair();
    if (!keys.isOk()) return keys.status();
    runKeys = *keys;
    run.runPublicKey = runKeys.publicKey;
    env.push_back(std::string(protocol::kAgentEndpointEnv) + "=" + options_.rankTcpEndpoint);
    env.push_back(std::string(protocol::kAgentPublicKeyEnv) + "=" + options_.agentPublicKey);
    env.push_back(std::string(protocol::kRunPublicKeyEnv) + "=" + runKeys.publicKey);
    env.push_back(std::string(protocol::kRunSecretKeyEnv) + "=" + runKeys.secretKey);
  } else {
    env.push_back(std::string(protocol::kAgentEndpointEnv) + "=" + options_.rankEndpoint);
  }
  for (const auto& [name, value] : spec.env()) env.push_back(name + "=" + value);
  std::vector<std::string> exported;
  for (const std::string& entry : env) exported.push_back(entry.substr(0, entry.find('=')));
  MpirunSettings settings;
  settings.mpirunPath = options_.mpirunPath;
  settings.args = options_.mpirunArgs;
  settings.launcher = options_.launcher;
  settings.networkInterface = options_.networkInterface;
  auto command = buildMpirunCommand(settings, spec, parts, world,
                                    multiNode ? std::vector<uint32_t>{} : ownGpus, exported, argv);
  if (!command.isOk()) return command.status();
  // mpirun would fail on an unreachable node only after its own long time-out, with a message
  // about its daemons: ask the launcher first and name the node.
  RINGSIDE_RETURN_IF_ERROR(
      checkLauncherReaches(options_.launcher, remoteHosts, options_.launcherTimeout));

  *run.info.mutable_spec() = spec;
  run.info.set_created_time(wallSeconds());
  run.info.set_world_size(world);
  const std::string dir = runDir(run.info.run_id());
  run.info.set_run_dir(dir);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Status::internal("cannot create run directory " + dir + ": " + ec.message());
  if (spec.has_trainer()) {
    // For the user to read and re-run; the ranks get the same text on their command line.
    std::ofstream(fs::path(dir) / kSpecFile)
        << trainerConfigToJson(spec.trainer().config(), /*multiline=*/true) << "\n";
  }
  if (multiNode) {
    RINGSIDE_RETURN_IF_ERROR(
        writeFileAtomic((fs::path(dir) / kRunKeyFile).string(), runKeys.secretKey + "\n", 0600));
    if (options_.runKeys != nullptr) {
      RINGSIDE_RETURN_IF_ERROR(
          options_.runKeys->add(runKeys.publicKey, "run " + run.info.run_id()));
    }
  }
  run.info.set_state(v1::QUEUED);
  if (onStateChange_) onStateChange_(run.info, run.ids);

  std::string script;
  for (const std::string& word : *command) script += shellQuote(word) + " ";
  const std::string quotedDir = shellQuote(dir);
  script += ">" + quotedDir + "/" + kStdoutFile + " 2>" + quotedDir + "/" + kStderrFile +
            " </dev/null; echo $? >" + quotedDir + "/" + kExitStatusFile + ".tmp && mv " +
            quotedDir + "/" + kExitStatusFile + ".tmp " + quotedDir + "/" + kExitStatusFile;
  const std::string workDir = spec.has_command() && !spec.command().working_dir().empty()
                                  ? spec.command().working_dir()
                                  : dir;

  // Written by the shim when it cannot enter the working directory (removed since the check):
  // the run then fails with this line as its reason instead of vanishing without a status.
  const std::string chdirFailure = "cannot change to the run's working directory " + workDir +
                                   ": it does not exist or cannot be entered\n";
  const std::string stderrPath = dir + "/" + kStderrFile;
  const std::string exitStatusPath = dir + "/" + kExitStatusFile;

  const pid_t pid = fork();
  if (pid < 0) return Status::internal(std::string("fork failed: ") + std::strerror(errno));
  if (pid == 0) {
    // The shim: its own session and process group, so the run outlives the agent and a stop
    // can signal the group.
    setsid();
    if (chdir(workDir.c_str()) != 0) {
      // Only async-signal-safe calls between fork and exec.
      const int err = ::open(stderrPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (err >= 0) {
        [[maybe_unused]] ssize_t n = ::write(err, chdirFailure.data(), chdirFailure.size());
        ::close(err);
      }
      const int status =
          ::open(exitStatusPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (status >= 0) {
        [[maybe_unused]] ssize_t n = ::write(status, "126\n", 4);
        ::close(status);
      }
      _exit(126);
    }
    for (const std::string& entry : env) putenv(const_cast<char*>(entry.c_str()));
    // Close inherited descriptors (agent sockets, database) above stderr.
    for (int fd = 3; fd < 1024; ++fd) close(fd);
    execl("/bin/sh", "sh", "-c", script.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  run.ids.shimPid = pid;
  char state = 0;
  procStat(pid, &run.ids.shimStartTicks, &state);
  std::ofstream(fs::path(dir) / "shim") << pid << " " << run.ids.shimStartTicks << "\n";
  auto [it, inserted] = runs_.emplace(run.info.run_id(), std::move(run));
  setState(it->second, v1::STARTING, "");
  return it->second.info;
}

Result<v1::RunInfo> RunManager::stop(const std::string& runId, double graceSeconds) {
  RINGSIDE_RETURN_IF_ERROR(validateGraceSeconds(graceSeconds));
  const double grace = graceSeconds > 0 ? graceSeconds : options_.defaultGraceSeconds;
  auto it = runs_.find(runId);
  if (it == runs_.end()) {
    // A multi-node run owned by another node: stop its ranks here (the owner's agent stops the
    // ranks on its node; the GUI asks every node of the run).
    const std::vector<pid_t> pids = rankPids(runId);
    if (pids.empty()) return Status::notFound("no run " + runId + " on this node");
    for (pid_t pid : pids) kill(pid, SIGTERM);
    foreignStops_[runId].killDeadline = steadySeconds() + grace;
    v1::RunInfo info;
    info.set_run_id(runId);
    info.set_state(v1::RUNNING);
    info.set_reason("stop requested: SIGTERM sent to " + std::to_string(pids.size()) +
                    " rank(s) on this node of a run another node owns, SIGKILL after " +
                    secondsText(grace));
    return info;
  }
  Tracked& run = it->second;
  if (isEnded(run.info.state())) {
    return Status::failedPrecondition("run " + runId + " already ended (" +
                                      v1::RunState_Name(run.info.state()) + ")");
  }
  if (!run.stopRequested) {
    run.stopRequested = true;
    std::ofstream(fs::path(runDir(runId)) / "stop_requested") << wallSeconds() << "\n";
  }
  run.killDeadline = steadySeconds() + grace;
  for (pid_t pid : rankPids(runId)) kill(pid, SIGTERM);
  run.info.set_reason("stop requested: SIGTERM sent to the ranks, SIGKILL after " +
                      secondsText(grace));
  if (onStateChange_) onStateChange_(run.info, run.ids);
  return run.info;
}

Status RunManager::failHung(const std::string& runId, const std::string& reason) {
  auto it = runs_.find(runId);
  if (it == runs_.end()) return Status::notFound("no run " + runId + " owned by this node");
  Tracked& run = it->second;
  if (isEnded(run.info.state())) {
    return Status::failedPrecondition("run " + runId + " already ended");
  }
  run.hangFailure = reason.empty() ? "hung" : reason;
  std::ofstream(fs::path(runDir(runId)) / kHangFailureFile) << run.hangFailure << "\n";
  run.stopRequested = true;
  run.killDeadline = steadySeconds() + kHangStopGraceSeconds;
  for (pid_t pid : rankPids(runId)) kill(pid, SIGTERM);
  run.info.set_reason("hang timeout: SIGTERM sent to the ranks, SIGKILL after " +
                      secondsText(kHangStopGraceSeconds));
  if (onStateChange_) onStateChange_(run.info, run.ids);
  return Status::ok();
}

void RunManager::setStall(const std::string& runId, const v1::StallVerdict* verdict) {
  auto it = runs_.find(runId);
  if (it == runs_.end() || isEnded(it->second.info.state())) return;
  Tracked& run = it->second;
  if (verdict != nullptr) {
    *run.info.mutable_stall() = *verdict;
  } else if (run.info.has_stall()) {
    run.info.clear_stall();
  } else {
    return;
  }
  if (onStateChange_) onStateChange_(run.info, run.ids);
}

const std::vector<RankProcess>& RunManager::rankProcesses(bool fresh) const {
  const double now = steadySeconds();
  if (fresh || rankScanTime_ < 0 || now - rankScanTime_ >= 1.0) {
    rankScan_ = scanRankProcesses(options_.procDir);
    rankScanTime_ = now;
    reservations_.releaseSeen(rankScan_);
  }
  return rankScan_;
}

std::vector<pid_t> RunManager::rankPids(const std::string& runId) const {
  std::vector<pid_t> pids;
  for (const RankProcess& rank : rankProcesses(/*fresh=*/true)) {
    if (rank.runId == runId) pids.push_back(rank.pid);
  }
  return pids;
}

bool RunManager::shimAlive(const RunProcessIds& ids) const {
  if (ids.shimPid <= 0) return false;
  int64_t ticks = 0;
  char state = 0;
  if (!procStat(ids.shimPid, &ticks, &state)) return false;
  if (ids.shimStartTicks != 0 && ticks != ids.shimStartTicks) return false;  // pid reused
  return state != 'Z' && state != 'X';
}

void RunManager::finish(Tracked& run, int exitCode, bool statusKnown) {
  run.info.set_exit_code(statusKnown ? exitCode : -1);
  run.info.clear_stall();
  if (!run.hangFailure.empty()) {
    setState(run, v1::FAILED, run.hangFailure);
  } else if (run.stopRequested) {
    std::string reason;
    if (run.killed) {
      reason = "stopped on request; killed after the grace period";
    } else if (statusKnown && exitCode == 0) {
      reason = "stopped on request; the ranks checkpointed and exited";
    } else {
      reason = "stopped on request; the job exited with status " +
               (statusKnown ? std::to_string(exitCode) : std::string("unknown"));
    }
    setState(run, v1::STOPPED, reason);
  } else if (statusKnown && exitCode == 0) {
    setState(run, v1::COMPLETED, "");
  } else {
    // The end of a long run's stderr says why it ended; 8 MiB bounds the agent's memory and time.
    const std::string stderrText =
        readFileTail(fs::path(runDir(run.info.run_id())) / kStderrFile, size_t{8} << 20);
    setState(run, v1::FAILED,
             runFailureReason(stderrText, run.info.placement(), statusKnown, exitCode));
  }
}

void RunManager::poll() {
  // Reap children (shims this agent started) so they do not linger as zombies.
  while (waitpid(-1, nullptr, WNOHANG) > 0) {
  }
  for (auto it = foreignStops_.begin(); it != foreignStops_.end();) {
    if (steadySeconds() < it->second.killDeadline) {
      ++it;
      continue;
    }
    for (pid_t pid : rankPids(it->first)) kill(pid, SIGKILL);
    it = foreignStops_.erase(it);
  }
  for (auto& [id, run] : runs_) {
    if (isEnded(run.info.state())) continue;
    const fs::path statusPath = fs::path(runDir(id)) / kExitStatusFile;
    std::error_code ec;
    const bool alive = shimAlive(run.ids);
    if (fs::exists(statusPath, ec)) {
      finish(run, std::atoi(readFile(statusPath).c_str()), true);
      continue;
    }
    if (!alive) {
      // The shim writes the status before it exits: look once more, then it was killed.
      if (fs::exists(statusPath, ec)) {
        finish(run, std::atoi(readFile(statusPath).c_str()), true);
      } else {
        finish(run, -1, false);
      }
      continue;
    }
    if (run.info.state() == v1::STARTING && !rankPids(id).empty()) {
      setState(run, v1::RUNNING, "");
    }
    if (run.stopRequested && run.killDeadline > 0 && steadySeconds() >= run.killDeadline) {
      // The ranks too: Open MPI may put them in process groups of their own, and a stopped
      // (SIGSTOP) rank outlives mpirun otherwise.
      for (pid_t pid : rankPids(id)) kill(pid, SIGKILL);
      kill(-run.ids.shimPid, SIGKILL);
      run.killDeadline = 0;
      run.killed = true;
    }
  }
}

void RunManager::adopt(const v1::RunInfo& info) {
  Tracked run;
  run.info = info;
  std::istringstream shim(readFile(fs::path(runDir(info.run_id())) / "shim"));
  int64_t pid = 0;
  shim >> pid >> run.ids.shimStartTicks;
  run.ids.shimPid = static_cast<pid_t>(pid);
  std::error_code ec;
  run.stopRequested = fs::exists(fs::path(runDir(info.run_id())) / "stop_requested", ec);
  if (fs::exists(fs::path(runDir(info.run_id())) / kHangFailureFile, ec)) {
    run.hangFailure = readFile(fs::path(runDir(info.run_id())) / kHangFailureFile);
    while (!run.hangFailure.empty() && run.hangFailure.back() == '\n') run.hangFailure.pop_back();
    run.stopRequested = true;
  }
  if (run.stopRequested) run.killDeadline = steadySeconds() + options_.defaultGraceSeconds;
  loadRunKey(run);
  runs_[info.run_id()] = std::move(run);
}

const v1::RunInfo* RunManager::find(const std::string& runId) const {
  auto it = runs_.find(runId);
  return it == runs_.end() ? nullptr : &it->second.info;
}

std::vector<v1::RunInfo> RunManager::runs(bool includeEnded) const {
  std::vector<v1::RunInfo> list;
  for (const auto& [id, run] : runs_) {
    if (includeEnded || !isEnded(run.info.state())) list.push_back(run.info);
  }
  return list;
}

uint32_t RunManager::usedSlots(bool fresh) const {
  uint32_t used = 0;
  for (const auto& [id, run] : runs_) {
    if (!isEnded(run.info.state())) used += localRanks(run.info.spec());
  }
  // Ranks here of multi-node runs other nodes own (a one-node run here is always this agent's).
  // A rank's children inherit its environment: count ranks, not processes.
  std::set<std::pair<std::string, int>> foreign;
  for (const RankProcess& rank : rankProcesses(fresh)) {
    if (!rank.multiNode) continue;
    auto own = runs_.find(rank.runId);
    if (own == runs_.end() || isEnded(own->second.info.state())) {
      foreign.emplace(rank.runId, rank.rank);
    }
  }
  return used + static_cast<uint32_t>(foreign.size()) + reservations_.heldSlots(steadySeconds());
}

std::vector<uint32_t> RunManager::gpusInUse() const {
  std::set<uint32_t> used;
  for (const auto& [id, run] : runs_) {
    if (!isEnded(run.info.state())) used.insert(run.gpus.begin(), run.gpus.end());
  }
  for (const RankProcess& rank : rankProcesses()) {
    auto own = runs_.find(rank.runId);
    const bool active = own != runs_.end() && !isEnded(own->second.info.state());
    if (rank.multiNode || active) used.insert(rank.gpus.begin(), rank.gpus.end());
  }
  for (uint32_t gpu : reservations_.heldGpus(steadySeconds())) used.insert(gpu);
  return {used.begin(), used.end()};
}

std::vector<uint32_t> RunManager::freeGpus() const {
  const std::vector<uint32_t> used = gpusInUse();
  std::vector<uint32_t> free;
  for (uint32_t gpu : options_.gpuIndices) {
    if (!std::binary_search(used.begin(), used.end(), gpu)) free.push_back(gpu);
  }
  return free;
}

std::string RunManager::runPublicKey(const std::string& runId) const {
  auto it = runs_.find(runId);
  return it == runs_.end() ? std::string() : it->second.runPublicKey;
}

}  // namespace ringside::agent
