#include "agent_fleet.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
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

}  // namespace

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
  for (int i = 1; i <= options_.nodes; ++i) {
    FleetAgent agent;
    agent.name = "node-" + std::to_string(i);
    agent.stateDir = options_.rootDir + "/" + agent.name;
    std::filesystem::create_directories(agent.stateDir, ec);
    if (ec) return Status::ioError("cannot create " + agent.stateDir + ": " + ec.message());
    RINGSIDE_RETURN_IF_ERROR(authorize(agent, clientKey));
    // unshare --uts gives the agent a host name of its own; the agent's ready file names its
    // ports and key.
    agent.pid = spawn({"unshare",
                       "--uts",
                       "--",
                       "/bin/sh",
                       "-c",
                       "hostname \"$0\" && exec \"$@\"",
                       agent.name,
                       options_.agentPath,
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
                       options_.launcher,
                       "--mpirun",
                       options_.mpirunPath,
                       "--telemetry-interval",
                       std::to_string(options_.telemetryIntervalS),
                       "--ready-file",
                       agent.stateDir + "/ready.json"},
                      agent.stateDir + "/agent.log");
    if (agent.pid < 0) return Status::internal("cannot start unshare/" + options_.agentPath);
    agents_.push_back(std::move(agent));
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (FleetAgent& agent : agents_) {
    while (true) {
      auto ready = readAgentReady(agent.stateDir + "/ready.json");
      if (ready.isOk()) {
        agent.controlPort = portOf(ready->control_endpoint());
        agent.eventsPort = portOf(ready->events_endpoint());
        agent.publicKey = ready->public_key();
        agent.rankEndpoint = ready->rank_endpoint();
        agent.pid = static_cast<pid_t>(ready->pid());
        break;
      }
      int status = 0;
      if (::waitpid(agent.pid, &status, WNOHANG) == agent.pid ||
          std::chrono::steady_clock::now() > deadline) {
        return Status::internal(agent.name +
                                "'s agent did not start (unshare --uts needs root):\n" +
                                tail(agent.stateDir + "/agent.log"));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
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
    if (agent.pid > 0) ::kill(agent.pid, SIGTERM);
  }
  int failed = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (FleetAgent& agent : agents_) {
    if (agent.pid <= 0) continue;
    int status = 0;
    while (::waitpid(agent.pid, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(agent.pid, SIGKILL);
        ::waitpid(agent.pid, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed;
    agent.pid = -1;
  }
  agents_.clear();
  return failed;
}

double AgentFleet::cpuSeconds(size_t i) const {
  return processCpuSeconds(std::to_string(agents_[i].pid));
}

double AgentFleet::rssMiB(size_t i) const { return processRssMiB(std::to_string(agents_[i].pid)); }

}  // namespace ringside::bench
