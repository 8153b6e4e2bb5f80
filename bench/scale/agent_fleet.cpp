#include "agent_fleet.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "ringside/common/agent_ready.h"
#include "telemetry/noise_meter.h"

extern char** environ;

namespace ringside::bench {

namespace {

// Spawns argv with stdout and stderr to `logPath` (appended); -1 on failure.
pid_t spawn(const std::vector<std::string>& args, const std::string& logPath) {
  std::vector<char*> argv;
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, logPath.c_str(), O_WRONLY | O_CREAT | O_APPEND,
                                   0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = -1;
  const int spawned = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  return spawned == 0 ? pid : -1;
}

std::string tail(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  const std::string all = text.str();
  return all.size() > 2000 ? all.substr(all.size() - 2000) : all;
}

int portOf(const std::string& endpoint) {
  const size_t colon = endpoint.rfind(':');
  return colon == std::string::npos ? 0 : std::atoi(endpoint.c_str() + colon + 1);
}

// The pids (this machine's) of the children of `pid` (/proc/PID/task/PID/children); empty when
// it is gone.
std::vector<pid_t> childrenOf(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children");
  std::vector<pid_t> children;
  for (pid_t child = 0; in >> child;) children.push_back(child);
  return children;
}

// The innermost pid of process `pid` (/proc/PID/status, the last field of "NSpid:"); -1 if gone.
pid_t innermostPid(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with("NSpid:")) continue;
    std::istringstream fields(line.substr(6));
    pid_t last = -1;
    for (pid_t value = 0; fields >> value;) last = value;
    return last;
  }
  return -1;
}

}  // namespace

pid_t hostPidOf(pid_t launcher, pid_t namespacePid) {
  if (innermostPid(launcher) == namespacePid) return launcher;  // it exec'd the agent
  std::vector<pid_t> queue = {launcher};
  for (size_t i = 0; i < queue.size() && i < 64; ++i) {
    for (pid_t child : childrenOf(queue[i])) {
      if (innermostPid(child) == namespacePid) return child;
      queue.push_back(child);
    }
  }
  return -1;
}

double processRssMiB(const std::string& pid, bool peak) {
  std::ifstream in("/proc/" + pid + "/status");
  std::string line;
  const std::string field = peak ? "VmHWM:" : "VmRSS:";
  while (std::getline(in, line)) {
    if (line.starts_with(field)) return std::atof(line.c_str() + field.size()) / 1024.0;
  }
  return 0;
}

Status AgentFleet::start(const std::string& clientKey) {
  std::error_code ec;
  // The agents' --launcher: scale-rsh with the file that maps each host name to a process in
  // that node's namespaces (written below, once every agent runs; mpirun calls the launcher only
  // when a run starts).
  const std::string nodePids = options_.rootDir + "/node-pids";
  const std::string launcher = options_.rootDir + "/scale-rsh";
  std::filesystem::create_directories(options_.rootDir, ec);
  if (ec) return Status::ioError("cannot create " + options_.rootDir + ": " + ec.message());
  {
    std::ofstream wrapper(launcher);
    wrapper << "#!/bin/sh\nSCALE_NODE_PIDS='" << nodePids << "' exec '" << options_.launcher
            << "' \"$@\"\n";
    if (!wrapper) return Status::ioError("cannot write " + launcher);
  }
  std::filesystem::permissions(launcher, std::filesystem::perms::owner_all, ec);
  for (int i = 1; i <= options_.nodes; ++i) {
    FleetAgent agent;
    agent.name = "node-" + std::to_string(i);
    agent.stateDir = options_.rootDir + "/" + agent.name;
    std::filesystem::create_directories(agent.stateDir, ec);
    if (ec) return Status::ioError("cannot create " + agent.stateDir + ": " + ec.message());
    RINGSIDE_RETURN_IF_ERROR(authorize(agent, clientKey));
    // A node of its own. Nodes 2 to N: a UTS namespace (the host name), a PID namespace and a
    // mount namespace with its own /proc (its process list: the agent, and later the run's daemon
    // and ranks on that node); the namespace's init is sh, which waits for the agent and exits
    // with its status, and when it exits the kernel ends whatever is left in the namespace.
    // Node 1, the run's owner, whose mpirun enters the other nodes' namespaces through the
    // launcher: a UTS namespace only, in this machine's PID namespace, since a process can enter
    // only a PID namespace below its own (setns(2)). So the owner's agent sees every process of
    // the machine, as before, and skips those of the other nodes' namespaces (rank_processes.h).
    std::vector<std::string> command;
    if (i > 1 && options_.idle) command = {"chrt", "--idle", "0"};
    command.insert(command.end(), {"unshare", "--uts"});
    std::string script = "hostname \"$0\" && exec \"$@\"";
    if (i > 1) {
      // --kill-child: should unshare die first (terminate's SIGKILL), the namespace's init
      // gets SIGKILL too, and with it the whole node.
      command.insert(command.end(), {"--pid", "--fork", "--kill-child", "--mount-proc"});
      script = "hostname \"$0\" && { \"$@\" & wait $!; }";
    }
    command.insert(command.end(), {"--", "/bin/sh", "-c", script, agent.name});
    command.insert(command.end(), {options_.agentPath,
                                   "--state-dir",
                                   agent.stateDir,
                                   "--control-port",
                                   "0",
                                   "--events-port",
                                   "0",
                                   "--rank-port",
                                   "0",
                                   "--nvml-library",
                                   options_.nvmlLibrary,
                                   "--launcher",
                                   launcher,
                                   "--mpirun",
                                   options_.mpirunPath,
                                   "--telemetry-interval",
                                   std::to_string(options_.telemetryIntervalS),
                                   "--ready-file",
                                   agent.stateDir + "/ready.json"});
    agent.launcherPid = spawn(command, agent.stateDir + "/agent.log");
    if (agent.launcherPid < 0) return Status::internal("cannot start unshare/" + options_.agentPath);
    agents_.push_back(std::move(agent));
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  std::ofstream pids(nodePids);
  for (FleetAgent& agent : agents_) {
    while (true) {
      auto ready = readAgentReady(agent.stateDir + "/ready.json");
      if (ready.isOk()) {
        agent.controlPort = portOf(ready->control_endpoint());
        agent.eventsPort = portOf(ready->events_endpoint());
        agent.publicKey = ready->public_key();
        agent.rankEndpoint = ready->rank_endpoint();
        // The ready file holds the agent's pid in its own namespace; this machine's is found
        // among the launcher's descendants.
        agent.pid = hostPidOf(agent.launcherPid, static_cast<pid_t>(ready->pid()));
        if (agent.pid > 0) break;
      }
      int status = 0;
      const bool exited = ::waitpid(agent.launcherPid, &status, WNOHANG) == agent.launcherPid;
      if (exited || std::chrono::steady_clock::now() > deadline) {
        if (exited) agent.launcherPid = -1;  // reaped
        return Status::internal(agent.name +
                                "'s agent did not start (unshare needs root):\n" +
                                tail(agent.stateDir + "/agent.log"));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    pids << agent.name << ' ' << agent.pid << '\n';
  }
  pids.close();
  if (!pids) return Status::ioError("cannot write " + nodePids);
  return Status::ok();
}

Status AgentFleet::authorize(const FleetAgent& agent, const std::string& key) {
  {
    const pid_t pid = spawn({options_.agentPath, "--state-dir", agent.stateDir, "authorize", key},
                            agent.stateDir + "/authorize.log");
    int status = 0;
    if (pid < 0 || ::waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0) {
      return Status::internal("authorize failed on " + agent.name + ": " +
                              tail(agent.stateDir + "/authorize.log"));
    }
  }
  return Status::ok();
}

int AgentFleet::terminate() {
  for (const FleetAgent& agent : agents_) {
    if (agent.pid > 0) {
      ::kill(agent.pid, SIGTERM);
    } else if (agent.launcherPid > 0) {
      ::kill(agent.launcherPid, SIGTERM);  // its agent never became ready (start failed)
    }
  }
  int failed = 0;
  // At SCHED_IDLE (options_.idle) an agent gets a CPU only when nothing else wants one, and
  // while 60 others shut down at once that can take longer than the 10 s a node gets otherwise.
  const int graceSeconds = options_.idle ? 60 : 10;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(graceSeconds);
  for (FleetAgent& agent : agents_) {
    if (agent.launcherPid <= 0) continue;
    int status = 0;
    bool killed = false;
    while (::waitpid(agent.launcherPid, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        if (agent.pid > 0) ::kill(agent.pid, SIGKILL);
        ::kill(agent.launcherPid, SIGKILL);
        ::waitpid(agent.launcherPid, &status, 0);
        killed = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      ++failed;
      // How it ended, and what it logged last: a slow exit on a saturated machine and a failed
      // one read differently.
      const std::string how =
          killed ? "still running " + std::to_string(graceSeconds) + " s after SIGTERM, killed"
          : WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status))
          : WIFSIGNALED(status) ? "killed by signal " + std::to_string(WTERMSIG(status))
                                : "ended with wait status " + std::to_string(status);
      std::fprintf(stderr, "%s's agent: %s; its log ends:\n%s\n", agent.name.c_str(),
                   how.c_str(), tail(agent.stateDir + "/agent.log").c_str());
    }
    agent.pid = -1;
    agent.launcherPid = -1;
  }
  agents_.clear();
  return failed;
}

double AgentFleet::cpuSeconds(size_t i) const {
  return processCpuSeconds(std::to_string(agents_[i].pid));
}

double AgentFleet::rssMiB(size_t i) const { return processRssMiB(std::to_string(agents_[i].pid)); }

}  // namespace ringside::bench
