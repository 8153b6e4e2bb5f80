// RunManager's admission of a job: the checks of its program and data (checkJob), pre-flights
// and their holds, and launch(), which starts the run's shim. The rest of RunManager is in
// run_manager.cpp.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "ringside/agent/run_ids.h"
#include "ringside/agent/run_manager.h"
#include "ringside/agent/sweep/trial_spec.h"
#include "ringside/common/file_io.h"
#include "ringside/common/protocol.h"
#include "ringside/common/run_spec.h"
#include "ringside/common/run_spec_limits.h"
#include "run_manager_detail.h"

namespace ringside::agent {

namespace fs = std::filesystem;

using run_manager_detail::kDispatchedFile;
using run_manager_detail::kExitStatusFile;
using run_manager_detail::kRunKeyFile;
using run_manager_detail::kStderrFile;
using run_manager_detail::kStdoutFile;
using run_manager_detail::procStat;
using run_manager_detail::steadySeconds;
using run_manager_detail::wallSeconds;
using run_manager_detail::copyTrialParams;

namespace {

constexpr const char* kSpecFile = "spec.json";
// Longest run spec passed on the command line (one argument may be 128 KiB on Linux).
constexpr size_t kMaxConfigArgBytes = 64 * 1024;



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

// `name`'s path as the agent's PATH finds it, for the shim's own commands: a run's env may set
// PATH for its ranks (even to ""), which the shim inherits. `name` itself when it holds a '/' or
// is not found (the shim then says so).
std::string onAgentPath(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path != nullptr ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (!dir.empty() && isExecutable(dir + "/" + name)) return dir + "/" + name;
  }
  return name;
}

// The interpreter of a PythonScript job without one (Debian's, which sees python3-torch).
constexpr const char* kDefaultPython = "/usr/bin/python3";

// The checks of a Python job on this node; sets *argv to `python script args...`.
Status checkPythonScript(const v1::PythonScript& job, std::vector<std::string>* argv);

// A TCP port free on this node now (bound to port 0 and released), for torch.distributed's
// rendezvous (MASTER_PORT), as torchrun's standalone mode picks one.
Result<uint16_t> freeTcpPort();

}  // namespace

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
  if (spec->has_python()) return checkPythonScript(spec->python(), argv);
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
  return Status::invalidArgument("run spec has no job: set trainer, python or command");
}

namespace {

Status checkPythonScript(const v1::PythonScript& job, std::vector<std::string>* argv) {
  const std::string python = job.python().empty() ? kDefaultPython : job.python();
  if (!commandExists(python)) {
    return Status::invalidArgument("Python interpreter '" + python +
                                   "' is not an executable file nor found in PATH on this node: "
                                   "install python3 (and python3-torch) or set the interpreter");
  }
  const std::string& workDir = job.working_dir();
  std::error_code ec;
  if (!workDir.empty() && !fs::is_directory(workDir, ec)) {
    return Status::invalidArgument("working directory " + workDir +
                                   " does not exist on this node: create it, or change the "
                                   "script's working directory (empty: the run's own directory)");
  }
  if (!workDir.empty() && ::access(workDir.c_str(), X_OK) != 0) {
    return Status::invalidArgument("working directory " + workDir +
                                   " cannot be entered by the agent's user: " +
                                   std::strerror(errno));
  }
  if (job.script().empty()) {
    return Status::invalidArgument("the Python job names no script: set its path");
  }
  const fs::path script(job.script());
  if (script.is_relative() && workDir.empty()) {
    return Status::invalidArgument("script path '" + job.script() +
                                   "' is relative and the run has no working directory: give "
                                   "an absolute path, or set the working directory it is in");
  }
  const fs::path resolved = script.is_relative() ? fs::path(workDir) / script : script;
  if (!fs::is_regular_file(resolved, ec)) {
    return Status::invalidArgument("script " + resolved.string() +
                                   " does not exist on this node (or is not a file): copy it to "
                                   "every node of the run at the same path");
  }
  if (::access(resolved.c_str(), R_OK) != 0) {
    return Status::invalidArgument("script " + resolved.string() +
                                   " cannot be read by the agent's user (" +
                                   std::strerror(errno) +
                                   "): make it readable, e.g. outside a private home directory "
                                   "(docs/pytorch.md#under-an-agent)");
  }
  *argv = {python, job.script()};
  argv->insert(argv->end(), job.args().begin(), job.args().end());
  return Status::ok();
}

}  // namespace

bool RunManager::usesGpus(const v1::RunSpec& spec) const {
  if (spec.has_python()) return spec.python().use_gpus();
  if (!spec.has_trainer()) return false;
  auto config = trainerConfigOf(spec.trainer());
  const std::string backend =
      config.isOk() && config->has_backend() ? config->backend() : std::string("auto");
  return backend == "nccl" || (backend == "auto" && !options_.gpuIndices.empty());
}

namespace {

Result<uint16_t> freeTcpPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::internal(std::string("socket failed: ") + std::strerror(errno));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  address.sin_port = 0;
  socklen_t length = sizeof address;
  const bool bound = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
                     ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0;
  const int err = errno;
  ::close(fd);
  if (!bound) {
    return Status::internal(std::string("cannot find a free TCP port for MASTER_PORT: ") +
                            std::strerror(err));
  }
  return static_cast<uint16_t>(ntohs(address.sin_port));
}

}  // namespace

std::vector<std::string> RunManager::preflight(const v1::RunSpec& request, uint32_t ranks,
                                               uint32_t freeCpuSlots) {
  std::vector<std::string> problems;
  v1::RunSpec spec = request;
  std::vector<std::string> argv;
  if (Status job = checkJob(&spec, &argv); !job.isOk()) problems.push_back(job.message());
  if (!usesGpus(spec)) {
    if (ranks > freeCpuSlots) {
      problems.push_back("the run needs " + std::to_string(ranks) + " CPU slots here but " +
                         std::to_string(freeCpuSlots) +
                         " are free: lower the ranks on this node or stop a run" +
                         reservations_.refusalNote(/*gpus=*/false, steadySeconds()));
    }
    return problems;
  }
  const size_t gpus = freeGpus().size();
  if (options_.gpuIndices.empty()) {
    problems.push_back("the run uses GPUs (one per rank) but this node has none: choose a GPU "
                       "node, or the mpi backend (a CPU script) here");
  } else if (gpus < ranks) {
    problems.push_back("the run needs " + std::to_string(ranks) + " GPUs here but " +
                       std::to_string(gpus) + " of " + std::to_string(options_.gpuIndices.size()) +
                       " are free: lower the ranks on this node or stop a run" +
                       reservations_.refusalNote(/*gpus=*/true, steadySeconds()));
  }
  return problems;
}

Reservation RunManager::reserve(const v1::RunSpec& spec, uint32_t ranks, double seconds) {
  if (!usesGpus(spec)) return reservations_.hold(ranks, {}, seconds, steadySeconds());
  const std::vector<uint32_t> free = freeGpus();
  std::vector<uint32_t> gpus(free.begin(), free.begin() + std::min<size_t>(free.size(), ranks));
  return reservations_.hold(0, std::move(gpus), seconds, steadySeconds());
}
Result<v1::RunInfo> RunManager::launch(const v1::RunSpec& request, uint32_t freeCpuSlots) {
  // Validation: say what is wrong and what to do.
  v1::RunSpec spec = request;
  std::vector<std::string> argv;
  RINGSIDE_RETURN_IF_ERROR(checkJob(&spec, &argv));
  if (options_.slurm != nullptr) return launchSlurm(std::move(spec), argv);
  if (spec.has_slurm()) {
    return Status::invalidArgument(
        "the run asks for a Slurm job (slurm options) but this node's engine is local: launch it "
        "on the agent of a Slurm login node (ringside-agent --engine slurm, docs/slurm.md), or "
        "leave the slurm options out");
  }
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
  const bool gpuJob = usesGpus(spec);
  RINGSIDE_RETURN_IF_ERROR(checkFitsNode(local, gpuJob));
  // This node's pre-flight hold is the run's own: its slots and GPUs are free for it.
  std::vector<uint32_t> heldGpus;
  for (const auto& host : spec.hosts()) {
    if (!isLocalHost(host.host()) || host.reservation_id().empty()) continue;
    if (auto held = reservations_.take(host.reservation_id(), steadySeconds())) {
      freeCpuSlots += held->slots;
      heldGpus = held->gpus;
    }
  }
  std::vector<uint32_t> ownGpus;
  std::string busy;
  if (!gpuJob && local > freeCpuSlots) {
    busy = "run asks for " + std::to_string(local) + " ranks on this node but only " +
           std::to_string(freeCpuSlots) + " CPU slots are free" +
           reservations_.refusalNote(/*gpus=*/false, steadySeconds());
  }
  if (gpuJob) {
    const std::vector<uint32_t> free = freeGpus();  // this run's own hold was taken above
    if (free.size() < local) {
      busy = "run asks for " + std::to_string(local) + " GPUs on this node but " +
             std::to_string(free.size()) + " of " + std::to_string(options_.gpuIndices.size()) +
             " are free" + reservations_.refusalNote(/*gpus=*/true, steadySeconds());
    } else {
      ownGpus.assign(free.begin(), free.begin() + local);
      if (heldGpus.size() >= local) ownGpus.assign(heldGpus.begin(), heldGpus.begin() + local);
    }
  }
  if (multiNode) {
    // The owner does not queue a multi-node run (it would have to hold the other nodes' slots
    // while it waits): busy slots are refused, as the pre-flight said.
    if (!busy.empty()) return Status::resourceExhausted(busy + ": lower the ranks or stop a run");
  } else if (!busy.empty() || queuedAhead(spec.priority(), gpuJob)) {
    return enqueue(std::move(spec), world);
  }
  Tracked fresh;
  fresh.info.set_run_id(newTimestampedId('r'));
  *fresh.info.mutable_spec() = spec;
  copyTrialParams(fresh.info);
  fresh.info.set_created_time(now());
  fresh.info.set_world_size(world);
  auto [it, inserted] = runs_.emplace(fresh.info.run_id(), std::move(fresh));
  Status started = spawn(it->second, argv, ownGpus, /*journalQueued=*/true);
  if (!started.isOk()) {
    // Once journaled (QUEUED), it ends FAILED there too, so that no restarted agent starts it.
    if (it->second.info.state() == v1::QUEUED) {
      setState(it->second, v1::FAILED, started.message());
    } else {
      runs_.erase(it);
    }
    return started;
  }
  return it->second.info;
}

Status RunManager::checkFitsNode(uint32_t local, bool gpuJob) const {
  if (gpuJob && options_.gpuIndices.empty()) {
    return Status::invalidArgument(
        "the run uses GPUs (one per rank) but this node has none: choose a GPU node, or the mpi "
        "backend (a CPU script) here");
  }
  if (gpuJob && local > options_.gpuIndices.size()) {
    return Status::invalidArgument(
        "run asks for " + std::to_string(local) + " GPUs on this node, which has " +
        std::to_string(options_.gpuIndices.size()) +
        " in all: it could never start here; lower the ranks on this node or add nodes");
  }
  if (!gpuJob && options_.cpuSlots > 0 && local > options_.cpuSlots) {
    return Status::invalidArgument(
        "run asks for " + std::to_string(local) + " ranks on this node, which has " +
        std::to_string(options_.cpuSlots) +
        " CPU slots in all: it could never start here; lower ranks_per_node or add nodes");
  }
  return Status::ok();
}

Result<v1::RunInfo> RunManager::enqueue(v1::RunSpec spec, uint32_t world) {
  Tracked run;
  run.info.set_run_id(newTimestampedId('r'));
  *run.info.mutable_spec() = std::move(spec);
  copyTrialParams(run.info);
  run.info.set_created_time(now());
  run.info.set_queue_order(run.info.created_time());
  run.info.set_world_size(world);
  const std::string dir = runDir(run.info.run_id());
  run.info.set_run_dir(dir);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Status::internal("cannot create run directory " + dir + ": " + ec.message());
  if (run.info.spec().has_trainer()) {
    std::ofstream(fs::path(dir) / kSpecFile)
        << trainerConfigToJson(run.info.spec().trainer().config(), /*multiline=*/true) << "\n";
  }
  run.info.set_state(v1::QUEUED);
  auto [it, inserted] = runs_.emplace(run.info.run_id(), std::move(run));
  // Its place and reason, journaled once with the QUEUED state; the others' new places too.
  dispatchQueue(/*force=*/true, it->first);
  Tracked& queued = it->second;
  if (queued.info.state() == v1::QUEUED && onStateChange_) onStateChange_(queued.info, queued.ids);
  return queued.info;
}

Status RunManager::spawn(Tracked& run, const std::vector<std::string>& argv,
                         const std::vector<uint32_t>& ownGpus, bool journalQueued) {
  const v1::RunSpec spec = run.info.spec();
  const uint32_t world = run.info.world_size();
  const bool multiNode = !spec.hosts().empty();
  const bool gpuJob = usesGpus(spec);
  std::vector<std::string> remoteHosts;
  for (const auto& host : spec.hosts()) {
    if (!isLocalHost(host.host())) remoteHosts.push_back(host.host());
  }
  const uint32_t local = localRanks(spec);
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

  run.gpus = ownGpus;
  run.info.clear_placement();
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
  // The run's own keypair: the agent's rank endpoints take a message for this run only from a
  // connection made with it (a rank cannot write into another run).
  const bool withKeys = multiNode || options_.curveRankEndpoint;
  curve::KeyPair runKeys;
  if (withKeys) {
    auto keys = curve::generateKeyPair();
    if (!keys.isOk()) return keys.status();
    runKeys = *keys;
    run.runPublicKey = runKeys.publicKey;
  }
  env.push_back(std::string(protocol::kAgentEndpointEnv) + "=" +
                (multiNode ? options_.rankTcpEndpoint : options_.rankEndpoint));
  if (withKeys) {
    env.push_back(std::string(protocol::kAgentPublicKeyEnv) + "=" + options_.agentPublicKey);
    env.push_back(std::string(protocol::kRunPublicKeyEnv) + "=" + runKeys.publicKey);
    env.push_back(std::string(protocol::kRunSecretKeyEnv) + "=" + runKeys.secretKey);
  }
  if (spec.has_python()) {
    // torch.distributed's rendezvous (env://): rank 0's TCP store on the owner node, at the
    // address the run's host list gives it (the other nodes reach it there).
    auto port = freeTcpPort();
    if (!port.isOk()) return port.status();
    env.push_back("MASTER_ADDR=" + (multiNode ? spec.hosts(0).host() : std::string("127.0.0.1")));
    env.push_back("MASTER_PORT=" + std::to_string(*port));
    // Its output reaches stdout.log (and the log tail) as it prints, not when a buffer fills.
    env.push_back("PYTHONUNBUFFERED=1");
    // A CPU script sees no GPU: it runs gloo and leaves the node's GPUs to GPU runs.
    if (!gpuJob) env.push_back("CUDA_VISIBLE_DEVICES=");
    // The ringside package the agent ships, after the user's own path (their copy wins).
    if (!options_.pythonPackageDir.empty()) {
      const auto own = spec.env().find("PYTHONPATH");
      const char* inherited = std::getenv("PYTHONPATH");
      std::string path = own != spec.env().end() ? own->second
                         : inherited != nullptr  ? std::string(inherited)
                                                 : std::string();
      path += (path.empty() ? "" : ":") + options_.pythonPackageDir;
      env.push_back("PYTHONPATH=" + path);
    }
  }
  for (const auto& [name, value] : spec.env()) {
    if (spec.has_python() && name == "PYTHONPATH" && !options_.pythonPackageDir.empty()) continue;
    env.push_back(name + "=" + value);
  }
  if (spec.has_sweep_trial()) {
    auto values = valuesFromJsonMap(spec.sweep_trial().params());
    if (values.isOk()) env.push_back(std::string(kTrialParamsEnv) + "=" + valuesJsonObject(*values));
  }
  std::vector<std::string> exported;
  for (auto entry = env.begin(); entry != env.end();) {
    if (entry->starts_with("PATH=")) {
      // The ranks' PATH, not mpirun's (which finds its own helpers on the agent's PATH): handed
      // to them by value (-x PATH=...), and left out of the shim's environment.
      exported.push_back(*entry);
      entry = env.erase(entry);
      continue;
    }
    exported.push_back(entry->substr(0, entry->find('=')));
    ++entry;
  }
  MpirunSettings settings;
  settings.mpirunPath = onAgentPath(options_.mpirunPath);
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
  if (withKeys) {
    RINGSIDE_RETURN_IF_ERROR(
        writeFileAtomic((fs::path(dir) / kRunKeyFile).string(), runKeys.secretKey + "\n", 0600));
    if (options_.runKeys != nullptr) {
      RINGSIDE_RETURN_IF_ERROR(
          options_.runKeys->add(runKeys.publicKey, "run " + run.info.run_id()));
    }
  }
  if (journalQueued) {
    run.info.set_state(v1::QUEUED);
    if (onStateChange_) onStateChange_(run.info, run.ids);
  }
  // From here on a restarted agent must not start the run again (adopt() reads this).
  RINGSIDE_RETURN_IF_ERROR(writeFileAtomic((fs::path(dir) / kDispatchedFile).string(),
                                           std::to_string(wallSeconds()) + "\n", 0644));

  std::string script;
  for (const std::string& word : *command) script += shellQuote(word) + " ";
  const std::string quotedDir = shellQuote(dir);
  script += ">" + quotedDir + "/" + kStdoutFile + " 2>" + quotedDir + "/" + kStderrFile +
            " </dev/null; echo $? >" + quotedDir + "/" + kExitStatusFile + ".tmp && " +
            shellQuote(onAgentPath("mv")) + " " +
            quotedDir + "/" + kExitStatusFile + ".tmp " + quotedDir + "/" + kExitStatusFile;
  std::string workDir = dir;
  if (spec.has_command() && !spec.command().working_dir().empty()) {
    workDir = spec.command().working_dir();
  }
  if (spec.has_python() && !spec.python().working_dir().empty()) {
    workDir = spec.python().working_dir();
  }

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
    // Close inherited descriptors (agent sockets, database) above stderr: all of them, also
    // above 1024 (the agent raises its descriptor limit, agent.cpp). close_range(2), Linux 5.9.
    if (::close_range(3, ~0U, 0) != 0) {
      for (int fd = 3; fd < 65536; ++fd) close(fd);
    }
    execl("/bin/sh", "sh", "-c", script.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  run.ids.shimPid = pid;
  char state = 0;
  procStat(pid, &run.ids.shimStartTicks, &state);
  std::ofstream(fs::path(dir) / "shim") << pid << " " << run.ids.shimStartTicks << "\n";
  run.info.set_queue_position(0);
  run.info.clear_waiting_reason();
  run.info.clear_estimated_start();
  setState(run, v1::STARTING, "");
  return Status::ok();
}

}  // namespace ringside::agent

namespace ringside::agent::run_manager_detail {

void copyTrialParams(v1::RunInfo& info) {
  if (!info.spec().has_sweep_trial()) return;
  for (const auto& [name, text] : info.spec().sweep_trial().params()) {
    (*info.mutable_params())[name] = text;
  }
}

}  // namespace ringside::agent::run_manager_detail
