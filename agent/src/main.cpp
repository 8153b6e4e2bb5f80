// ringside-agent: the node agent (see ringside/agent/agent.h). Subcommands manage its keys.
#include <grp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "ringside/agent/agent.h"
#include "ringside/agent/run_manager.h"
#include "ringside/common/allowlist.h"
#include "ringside/common/curve.h"
#include "ringside/common/private_dir.h"

namespace {

ringside::agent::Agent* gAgent = nullptr;

extern "C" void onSignal(int) {
  if (gAgent != nullptr) gAgent->requestStop();
}

// ringside-trainer installed beside the agent, or in the build tree's trainer/ folder.
std::string defaultTrainerPath() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  for (const auto& candidate : {exe.parent_path() / "ringside-trainer",
                                exe.parent_path() / "../trainer/ringside-trainer"}) {
    if (std::filesystem::exists(candidate, ec)) {
      return std::filesystem::weakly_canonical(candidate, ec).string();
    }
  }
  return "ringside-trainer";
}

// The directory holding the `ringside` Python package that PyTorch script runs import: the
// installed one beside the agent (<prefix>/lib/python3/dist-packages, from the ringside-node
// package), else the source tree's for an agent run from its build tree; "" when neither.
std::string defaultPythonPackageDir() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::filesystem::path installed = exe.parent_path() / "../lib/python3/dist-packages";
  if (std::filesystem::exists(installed / "ringside/__init__.py", ec)) {
    return std::filesystem::weakly_canonical(installed, ec).string();
  }
#ifdef RINGSIDE_SOURCE_PYTHON_DIR
  if (std::filesystem::exists(
          std::filesystem::path(RINGSIDE_SOURCE_PYTHON_DIR) / "ringside/__init__.py", ec)) {
    return RINGSIDE_SOURCE_PYTHON_DIR;
  }
#endif
  return "";
}

// The command line with "--" inserted before the key of `authorize KEY` / `revoke KEY` when the
// key starts with '-' (1 in 85 Z85 keys does), so CLI11 reads it as the key, not as options.
// A key already after "--" is left alone.
std::vector<std::string> protectKeyArguments(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  for (size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i] == "--") break;
    const std::string& next = args[i + 1];
    if ((args[i] == "authorize" || args[i] == "revoke") && next.size() > 1 && next[0] == '-' &&
        next != "--" && ringside::curve::validateKey(next).isOk()) {
      args.insert(args.begin() + static_cast<std::ptrdiff_t>(i) + 1, "--");
      break;
    }
  }
  return args;
}

// As root, the key subcommands act as the owner of an existing state directory (for the packaged
// agent: the ringside-agent user), so the files they create stay readable by the agent that
// owns them. Errors: the identity could not be changed (nothing was written).
ringside::Status actAsStateDirOwner(const std::string& stateDir) {
  struct stat info {};
  if (::geteuid() != 0 || ::stat(stateDir.c_str(), &info) != 0 || info.st_uid == 0) {
    return ringside::Status::ok();
  }
  if (::setgroups(0, nullptr) != 0 || ::setgid(info.st_gid) != 0 || ::setuid(info.st_uid) != 0) {
    return ringside::Status::ioError("cannot act as uid " + std::to_string(info.st_uid) +
                                     ", the owner of " + stateDir +
                                     ": run this command as that user");
  }
  return ringside::Status::ok();
}

int fail(const ringside::Status& status) {
  std::fprintf(stderr, "ringside-agent: %s\n", status.message().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "ringside-agent: the Ringside node agent. Serves the GUI over ZeroMQ (CURVE), "
      "launches and tracks training runs under mpirun, and journals their metrics."};
  ringside::agent::AgentConfig config;
  config.trainerPath = defaultTrainerPath();
  config.pythonPackageDir = defaultPythonPackageDir();
  app.option_defaults()->always_capture_default();
  app.set_config("--config", "", "Configuration file (TOML/INI: key = value per option)");
  app.add_option("--state-dir", config.stateDir,
                 "Keys, allowlist, journal and run directories (default: /var/lib/ringside-agent "
                 "for root, else ~/.local/state/ringside-agent)");
  app.add_option("--runtime-dir", config.runtimeDir,
                 "Directory for the ranks' ipc socket "
                 "(default: <state dir>/run)");
  app.add_option("--listen", config.listenAddress, "Address to serve on (loopback by default)");
  app.add_option("--control-port", config.controlPort, "Control (ROUTER) port; 0 = any free");
  app.add_option("--events-port", config.eventsPort, "Events (PUB) port; 0 = any free");
  app.add_option("--rank-port", config.rankPort,
                 "CURVE port for the metrics of multi-node runs' ranks on other nodes "
                 "(default: control port + 2; 0 = any free)");
  app.add_option("--advertise-address", config.advertiseAddress,
                 "Address other nodes reach this agent at (default: --listen, or the host name "
                 "when it is a wildcard)");
  app.add_option("--engine", config.engine,
                 "How this node runs runs: local (its own queue, mpirun) or slurm (a Slurm login "
                 "node: every run is a Slurm job, submitted with sbatch; docs/slurm.md)")
      ->check(CLI::IsMember({"local", "slurm"}));
  app.add_option("--launcher", config.launcher,
                 "How mpirun starts ranks on other nodes (Open MPI's plm_rsh_agent, e.g. "
                 "\"ssh -p 2222\"; default: ssh)");
  app.add_option("--network-interface", config.networkInterface,
                 "Interface (eth1) or subnet (10.0.0.0/24) for MPI and NCCL traffic between nodes");
  app.add_option("--mpirun-arg", config.mpirunArgs,
                 "Extra mpirun option for every run (repeatable, e.g. --mpirun-arg=--mca "
                 "--mpirun-arg=btl_tcp_links --mpirun-arg=2)");
  app.add_flag("--insecure", config.insecure, "Plaintext instead of CURVE (loopback only)");
  app.add_option("--telemetry-interval", config.telemetryIntervalS, "Seconds between samples")
      ->check(CLI::PositiveNumber);
  app.add_option("--telemetry-retention-days", config.telemetryRetentionDays,
                 "Days the node's telemetry journal keeps readings (0: no age bound)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--telemetry-max-mib", config.telemetryMaxMiB,
                 "MiB of readings the telemetry journal keeps at most, the oldest deleted first "
                 "(0: no size bound)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--trainer", config.trainerPath, "ringside-trainer for trainer runs");
  app.add_option("--python-path", config.pythonPackageDir,
                 "Directory with the ringside Python package, appended to PYTHONPATH of PyTorch "
                 "script runs (default: the installed package beside the agent)");
  app.add_option("--mpirun", config.mpirunPath, "mpirun to launch runs with");
  app.add_option("--nvml-library", config.nvmlLibrary,
                 "NVML library to load for GPU inventory and telemetry (default "
                 "libnvidia-ml.so.1; the tests pass a fake one)");
  app.add_flag("--share-gpus", config.shareGpus,
               "Place runs on GPUs that other processes compute on too (by default such a GPU "
               "counts as taken until the process ends; docs/queue.md)");
  app.add_option("--label", config.labels, "Node label (repeatable)");
  app.add_option("--ready-file", config.readyFile,
                 "Once serving, write the endpoints and public key here as JSON (AgentReady, "
                 "docs/protocol.md); removed again on a clean stop");
  app.add_option("--retention-days", config.retentionDays,
                 "Delete runs that ended more than N days ago (0 = keep)");
  app.add_option("--retention-max-runs", config.retentionMaxRuns,
                 "Keep at most N ended runs, deleting the earliest ended first (0 = no bound)")
      ->capture_default_str();
  app.add_option("--stop-grace", config.stopGraceS,
                 "Seconds from SIGTERM to SIGKILL on stop (above 0, at most " +
                     std::to_string(static_cast<int>(ringside::agent::kMaxStopGraceSeconds)) + ")")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            // The bound of StopRunRequest.grace_seconds (0 there means this default).
            const double seconds = std::strtod(text.c_str(), nullptr);
            if (std::isfinite(seconds) && seconds > 0 &&
                seconds <= ringside::agent::kMaxStopGraceSeconds) {
              return "";
            }
            return "--stop-grace " + text + " is not a number of seconds above 0 and at most " +
                   std::to_string(static_cast<int>(ringside::agent::kMaxStopGraceSeconds));
          },
          "SECONDS"));
  std::string logLevel = "info";
  app.add_option("--log-level", logLevel, "error, warning, info or debug")
      ->check(CLI::IsMember({"error", "warning", "info", "debug"}));
  app.require_subcommand(0, 1);
  auto* printKey = app.add_subcommand("print-public-key", "Print the agent's public key");
  std::string key;
  auto* authorize = app.add_subcommand("authorize", "Allow a client public key");
  authorize->add_option("key", key, "The client's public key (40 Z85 characters)")->required();
  auto* revoke = app.add_subcommand("revoke", "Remove a client public key");
  revoke->add_option("key", key, "The client's public key")->required();
  std::string keyDir, keyName;
  auto* createKeypair = app.add_subcommand(
      "create-keypair",
      "Create (or load) the CURVE keypair DIR/NAME.key_secret (mode 0600) and DIR/NAME.key, e.g. "
      "a client key for scripts; print the public key");
  createKeypair->add_option("dir", keyDir, "Directory (created mode 0700)")->required();
  createKeypair->add_option("name", keyName, "File name without extension")->required();
  app.name(std::filesystem::path(argv[0]).filename().string());  // for the usage line
  std::vector<std::string> args = protectKeyArguments(argc, argv);
  std::reverse(args.begin(), args.end());  // CLI11 takes the arguments last first
  try {
    app.parse(args);
  } catch (const CLI::ParseError& error) {
    return app.exit(error);
  }

  (void)ringside::agent::setLogLevel(logLevel);
  if (createKeypair->parsed()) {
    auto keys = ringside::curve::loadOrCreateKeyPair(keyDir, keyName);
    if (!keys.isOk()) return fail(keys.status());
    std::printf("%s\n", keys->publicKey.c_str());
    return 0;
  }
  if (config.stateDir.empty()) config.stateDir = ringside::agent::defaultStateDir();
  if (printKey->parsed() || authorize->parsed() || revoke->parsed()) {
    if (auto s = actAsStateDirOwner(config.stateDir); !s.isOk()) return fail(s);
    // Created 0700 when missing; a directory others can write is refused, unchanged.
    if (auto s = ringside::preparePrivateDirectory(config.stateDir, "--state-dir"); !s.isOk()) {
      return fail(s);
    }
    if (printKey->parsed()) {
      auto keys = ringside::curve::loadOrCreateKeyPair(config.stateDir, "agent");
      if (!keys.isOk()) return fail(keys.status());
      std::printf("%s\n", keys->publicKey.c_str());
      return 0;
    }
    ringside::curve::Allowlist allowlist;
    const std::string path = config.stateDir + "/allowlist";
    if (auto s = allowlist.load(path); !s.isOk()) return fail(s);
    if (authorize->parsed()) {
      if (auto s = allowlist.add(key); !s.isOk()) return fail(s);
    } else if (!allowlist.remove(key)) {
      return fail(ringside::Status::notFound("key " + key + " is not in " + path));
    }
    if (auto s = allowlist.save(path); !s.isOk()) return fail(s);
    std::printf("%s %s\n", authorize->parsed() ? "authorized" : "revoked", key.c_str());
    return 0;
  }

  ringside::agent::Agent agent(config);
  if (auto s = agent.start(); !s.isOk()) return fail(s);
  gAgent = &agent;
  std::signal(SIGTERM, onSignal);
  std::signal(SIGINT, onSignal);
  std::signal(SIGPIPE, SIG_IGN);
  if (auto s = agent.run(); !s.isOk()) return fail(s);
  gAgent = nullptr;
  return 0;
}
