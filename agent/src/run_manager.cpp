#include "ringside/agent/run_manager.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>

#include "ringside/common/protocol.h"
#include "ringside/common/run_spec.h"

namespace ringside::agent {

namespace fs = std::filesystem;

namespace {

constexpr const char* kExitStatusFile = "exit_status";
constexpr const char* kStdoutFile = "stdout.log";
constexpr const char* kStderrFile = "stderr.log";
constexpr const char* kSpecFile = "spec.json";

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

// The number of ranks this node runs for `spec`.
uint32_t localRanks(const v1::RunSpec& spec) {
  if (spec.hosts().empty()) return spec.ranks_per_node();
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  uint32_t ranks = 0;
  for (const auto& host : spec.hosts()) {
    if (host.host() == name || host.host() == "localhost" || host.host() == "127.0.0.1") {
      ranks += host.ranks();
    }
  }
  return ranks;
}

uint32_t worldSize(const v1::RunSpec& spec) {
  if (spec.hosts().empty()) return spec.ranks_per_node();
  uint32_t ranks = 0;
  for (const auto& host : spec.hosts()) ranks += host.ranks();
  return ranks;
}

}  // namespace

bool isEnded(v1::RunState state) {
  return state == v1::COMPLETED || state == v1::FAILED || state == v1::STOPPED;
}

std::string failureReasonFromMpirunStderr(const std::string& stderrText) {
  // Open MPI 4.1: "mpirun noticed that process rank 1 with PID 0 on node vm exited on signal 9
  // (Killed)." or "... exited with status 3" style lines.
  static const std::regex signalled(
      R"(process rank (\d+) with PID (\d+) on node (\S+) exited on signal (\d+) \(([^)]*)\))");
  static const std::regex exited(
      R"(rank (\d+) with PID (\d+) on node (\S+) exited with\s+status (\d+))");
  std::smatch match;
  if (std::regex_search(stderrText, match, signalled)) {
    return "rank " + match[1].str() + " on node " + match[3].str() + " was killed by signal " +
           match[4].str() + " (" + match[5].str() + ")";
  }
  if (std::regex_search(stderrText, match, exited)) {
    return "rank " + match[1].str() + " on node " + match[3].str() + " exited with status " +
           match[4].str();
  }
  return "";
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
  if (isEnded(state)) run.info.set_end_time(wallSeconds());
  if (onStateChange_) onStateChange_(run.info, run.ids);
}

Result<v1::RunInfo> RunManager::launch(const v1::RunSpec& request, uint32_t freeSlots) {
  // Validation: say what is wrong and what to do.
  v1::RunSpec spec = request;
  std::vector<std::string> argv;
  std::string configJson;
  if (spec.has_trainer()) {
    const std::string trainer = spec.trainer().trainer_path().empty()
                                    ? options_.trainerPath
                                    : spec.trainer().trainer_path();
    if (trainer.empty() || !isExecutable(trainer)) {
      return Status::invalidArgument("trainer binary '" + trainer +
                                     "' does not exist or is not executable: build "
                                     "ringside-trainer or set trainer_path");
    }
    // The typed run spec, or the deprecated config_json of an old client converted to it.
    auto config = trainerConfigOf(spec.trainer());
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
    *spec.mutable_trainer()->mutable_config() = *config;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    spec.mutable_trainer()->clear_config_json();
#pragma GCC diagnostic pop
    configJson = trainerConfigToJson(*config, /*multiline=*/true);
    argv = {trainer, "--config", kSpecFile};
  } else if (spec.has_command()) {
    if (spec.command().argv().empty()) {
      return Status::invalidArgument("custom command has an empty argv: name the program to run");
    }
    argv.assign(spec.command().argv().begin(), spec.command().argv().end());
    if (!commandExists(argv[0])) {
      return Status::invalidArgument("custom command '" + argv[0] +
                                     "' is not an executable file nor found in PATH");
    }
  } else {
    return Status::invalidArgument("run spec has no job: set trainer or command");
  }
  const uint32_t world = worldSize(spec);
  if (world == 0) {
    return Status::invalidArgument("run spec asks for 0 ranks: set ranks_per_node (or hosts)");
  }
  const uint32_t local = localRanks(spec);
  if (local > freeSlots) {
    return Status::resourceExhausted("run asks for " + std::to_string(local) +
                                     " ranks on this node but only " + std::to_string(freeSlots) +
                                     " slots are free: lower ranks_per_node or stop a run");
  }

  Tracked run;
  run.info.set_run_id(newRunId());
  *run.info.mutable_spec() = spec;
  run.info.set_created_time(wallSeconds());
  run.info.set_world_size(world);
  const std::string dir = runDir(run.info.run_id());
  run.info.set_run_dir(dir);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Status::internal("cannot create run directory " + dir + ": " + ec.message());
  if (!configJson.empty()) {
    std::ofstream(fs::path(dir) / kSpecFile) << configJson << "\n";
  }
  run.info.set_state(v1::QUEUED);
  if (onStateChange_) onStateChange_(run.info, run.ids);

  // mpirun command line; -x exports the variables to ranks on other nodes too.
  std::vector<std::string> command = {options_.mpirunPath};
  command.insert(command.end(), options_.mpirunArgs.begin(), options_.mpirunArgs.end());
  command.insert(command.end(), {"-np", std::to_string(world)});
  if (!spec.hosts().empty()) {
    std::string hosts;
    for (const auto& host : spec.hosts()) {
      hosts += (hosts.empty() ? "" : ",") + host.host() + ":" + std::to_string(host.ranks());
    }
    command.insert(command.end(), {"--host", hosts});
  }
  std::vector<std::string> env = {
      std::string(protocol::kAgentEndpointEnv) + "=" + options_.rankEndpoint,
      std::string(protocol::kRunIdEnv) + "=" + run.info.run_id()};
  for (const auto& [name, value] : spec.env()) env.push_back(name + "=" + value);
  for (const std::string& entry : env) {
    command.insert(command.end(), {"-x", entry.substr(0, entry.find('='))});
  }
  command.insert(command.end(), argv.begin(), argv.end());

  std::string script;
  for (const std::string& word : command) script += shellQuote(word) + " ";
  const std::string quotedDir = shellQuote(dir);
  script += ">" + quotedDir + "/" + kStdoutFile + " 2>" + quotedDir + "/" + kStderrFile +
            " </dev/null; echo $? >" + quotedDir + "/" + kExitStatusFile + ".tmp && mv " +
            quotedDir + "/" + kExitStatusFile + ".tmp " + quotedDir + "/" + kExitStatusFile;
  const std::string workDir = spec.has_command() && !spec.command().working_dir().empty()
                                  ? spec.command().working_dir()
                                  : dir;

  const pid_t pid = fork();
  if (pid < 0) return Status::internal(std::string("fork failed: ") + std::strerror(errno));
  if (pid == 0) {
    // The shim: its own session and process group, so the run outlives the agent and a stop
    // can signal the group.
    setsid();
    if (chdir(workDir.c_str()) != 0) _exit(126);
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
  auto it = runs_.find(runId);
  if (it == runs_.end()) return Status::notFound("no run " + runId + " on this node");
  Tracked& run = it->second;
  if (isEnded(run.info.state())) {
    return Status::failedPrecondition("run " + runId + " already ended (" +
                                      v1::RunState_Name(run.info.state()) + ")");
  }
  if (!run.stopRequested) {
    run.stopRequested = true;
    std::ofstream(fs::path(runDir(runId)) / "stop_requested") << wallSeconds() << "\n";
  }
  const double grace = graceSeconds > 0 ? graceSeconds : options_.defaultGraceSeconds;
  run.killDeadline = steadySeconds() + grace;
  for (pid_t pid : rankPids(runId)) kill(pid, SIGTERM);
  run.info.set_reason("stop requested: SIGTERM sent to the ranks, SIGKILL after " +
                      std::to_string(static_cast<int>(grace)) + " s");
  if (onStateChange_) onStateChange_(run.info, run.ids);
  return run.info;
}

std::vector<pid_t> RunManager::rankPids(const std::string& runId) const {
  // Ranks carry RINGSIDE_RUN_ID and a rank variable from mpirun; mpirun itself has no rank.
  const std::string idEntry = std::string(protocol::kRunIdEnv) + "=" + runId;
  std::vector<pid_t> pids;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string environ = readFile(entry.path() / "environ");
    bool hasId = false, hasRank = false;
    for (size_t begin = 0; begin < environ.size();) {
      size_t end = environ.find('\0', begin);
      if (end == std::string::npos) end = environ.size();
      const std::string_view var(environ.data() + begin, end - begin);
      hasId |= var == idEntry;
      hasRank |= var.starts_with("OMPI_COMM_WORLD_RANK=") || var.starts_with("PMIX_RANK=");
      begin = end + 1;
    }
    if (hasId && hasRank) pids.push_back(std::stoi(name));
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
  const std::string stderrText = readFile(fs::path(runDir(run.info.run_id())) / kStderrFile);
  if (run.stopRequested) {
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
    std::string reason = failureReasonFromMpirunStderr(stderrText);
    if (reason.empty()) {
      reason = statusKnown ? "mpirun exited with status " + std::to_string(exitCode)
                           : "the run's processes disappeared without an exit status";
      // The last non-empty stderr line usually says why.
      std::istringstream lines(stderrText);
      std::string line, last;
      while (std::getline(lines, line)) {
        if (line.find_first_not_of(" -\t") != std::string::npos) last = line;
      }
      if (!last.empty()) reason += ": " + last;
    }
    setState(run, v1::FAILED, reason);
  }
}

void RunManager::poll() {
  // Reap children (shims this agent started) so they do not linger as zombies.
  while (waitpid(-1, nullptr, WNOHANG) > 0) {
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
  if (run.stopRequested) run.killDeadline = steadySeconds() + options_.defaultGraceSeconds;
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

uint32_t RunManager::usedSlots() const {
  uint32_t used = 0;
  for (const auto& [id, run] : runs_) {
    if (!isEnded(run.info.state())) used += localRanks(run.info.spec());
  }
  return used;
}

}  // namespace ringside::agent
