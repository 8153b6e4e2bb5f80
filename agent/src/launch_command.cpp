#include "ringside/agent/launch_command.h"
#include "ringside/common/protocol.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>
#include <sstream>
#include <thread>

namespace ringside::agent {

namespace {

bool isAddress(std::string_view text) {
  const std::string copy(text);
  unsigned char buffer[16];
  return inet_pton(AF_INET, copy.c_str(), buffer) == 1 ||
         inet_pton(AF_INET6, copy.c_str(), buffer) == 1;
}

bool isLabelChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
}

std::string joinGpus(const std::vector<uint32_t>& gpus) {
  std::string text;
  for (uint32_t gpu : gpus) {
    if (!text.empty()) text += ',';
    text += std::to_string(gpu);
  }
  return text;
}

}  // namespace

Status validateRunEnvName(const std::string& name) {
  const bool posix = !name.empty() && !(name[0] >= '0' && name[0] <= '9') &&
                     std::all_of(name.begin(), name.end(), [](char c) {
                       return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                              (c >= '0' && c <= '9') || c == '_';
                     });
  if (!posix) {
    return Status::invalidArgument("env variable name '" + name +
                                   "' is not a name: use letters, digits and '_', not starting "
                                   "with a digit");
  }
  // The agent finds a run's processes, routes its metrics and hands it GPUs by these.
  if (name.starts_with("RINGSIDE_") || name == "CUDA_VISIBLE_DEVICES") {
    return Status::invalidArgument(
        "env variable " + name + " is set by the agent for every run (" +
        (name == "CUDA_VISIBLE_DEVICES" ? std::string("the GPUs it hands the run")
                                        : std::string("RINGSIDE_* names the run and its agent")) +
        "): remove it from the run's env" +
        (name == "CUDA_VISIBLE_DEVICES" ? std::string("; GPUs are chosen per host (HostSlots.gpus)")
                                        : std::string()));
  }
  return Status::ok();
}

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

Result<uint32_t> worldSizeOf(const v1::RunSpec& spec) {
  uint64_t ranks = spec.ranks_per_node();
  if (!spec.hosts().empty()) {
    ranks = 0;
    for (const auto& host : spec.hosts()) ranks += host.ranks();  // at most 2^32 x 2^31: no wrap
  }
  if (ranks == 0) {
    return Status::invalidArgument("run spec asks for 0 ranks: set ranks_per_node (or hosts)");
  }
  if (ranks > kMaxWorldSize) {
    return Status::invalidArgument("run spec asks for " + std::to_string(ranks) +
                                   " ranks in all, more than the " + std::to_string(kMaxWorldSize) +
                                   " a run may have: lower ranks_per_node or the hosts' ranks");
  }
  return static_cast<uint32_t>(ranks);
}

Status validateHostName(std::string_view host) {
  const auto refuse = [&](const std::string& why) {
    return Status::invalidArgument("host '" + std::string(host) + "' " + why +
                                   ": use a host name (letters, digits, '-' and '.', RFC 1123) or "
                                   "an IP address");
  };
  if (host.empty()) return refuse("is empty");
  if (isAddress(host)) return Status::ok();
  if (host.size() > 253) return refuse("is longer than 253 characters");
  size_t begin = 0;
  while (begin <= host.size()) {
    size_t end = host.find('.', begin);
    if (end == std::string_view::npos) end = host.size();
    const std::string_view label = host.substr(begin, end - begin);
    if (label.empty()) return refuse("has an empty label");
    if (label.size() > 63) return refuse("has a label longer than 63 characters");
    if (!std::all_of(label.begin(), label.end(), isLabelChar)) {
      return refuse("has a character that is not allowed");
    }
    if (label.front() == '-' || label.back() == '-') {
      return refuse("has a label that starts or ends with '-'");
    }
    begin = end + 1;
  }
  return Status::ok();
}

Status validateNetworkInterface(std::string_view value) {
  const size_t slash = value.find('/');
  if (slash != std::string_view::npos) {
    const std::string address(value.substr(0, slash));
    const std::string bits(value.substr(slash + 1));
    unsigned char buffer[4];
    const bool bitsOk = !bits.empty() && bits.size() <= 2 &&
                        bits.find_first_not_of("0123456789") == std::string::npos &&
                        std::stoi(bits) <= 32;
    if (inet_pton(AF_INET, address.c_str(), buffer) == 1 && bitsOk) return Status::ok();
    return Status::invalidArgument("network subnet '" + std::string(value) +
                                   "' is not IPv4 CIDR: write it like 10.0.0.0/24");
  }
  const bool nameOk =
      !value.empty() && value.size() <= 15 && value.front() != '-' &&
      std::all_of(value.begin(), value.end(), [](char c) {
        return isLabelChar(c) || c == '_' || c == '.' || c == ':';
      });
  if (nameOk) return Status::ok();
  return Status::invalidArgument("network interface '" + std::string(value) +
                                 "' is not an interface name (e.g. eth1, up to 15 characters) "
                                 "nor an IPv4 subnet (e.g. 10.0.0.0/24)");
}

std::vector<std::string> launcherWords(const std::string& launcher) {
  std::vector<std::string> words;
  std::istringstream in(launcher);
  std::string word;
  while (in >> word) words.push_back(word);
  if (words.empty()) words.push_back("ssh");
  return words;
}

Result<std::vector<std::string>> buildMpirunCommand(const MpirunSettings& settings,
                                                    const v1::RunSpec& spec,
                                                    const std::vector<HostPart>& hosts,
                                                    uint32_t worldSize,
                                                    const std::vector<uint32_t>& singleNodeGpus,
                                                    const std::vector<std::string>& exported,
                                                    const std::vector<std::string>& job) {
  std::vector<std::string> command = {settings.mpirunPath, "--tag-output"};
  command.insert(command.end(), settings.args.begin(), settings.args.end());
  if (!spec.mpirun_args().empty() && !spec.mpirun_args(0).starts_with("-")) {
    return Status::invalidArgument("extra mpirun options must start with an option (a word "
                                   "beginning with '-'), not '" +
                                   spec.mpirun_args(0) + "'");
  }
  command.insert(command.end(), spec.mpirun_args().begin(), spec.mpirun_args().end());
  if (!hosts.empty()) {
    if (!settings.launcher.empty()) {
      command.insert(command.end(), {"--mca", "plm_rsh_agent", settings.launcher});
    }
    std::vector<std::string> interfaces;
    for (const HostPart& part : hosts) {
      RINGSIDE_RETURN_IF_ERROR(validateHostName(part.host));
      if (part.networkInterface.empty()) continue;
      RINGSIDE_RETURN_IF_ERROR(validateNetworkInterface(part.networkInterface)
                                   .withContext("node " + part.host));
      if (std::find(interfaces.begin(), interfaces.end(), part.networkInterface) ==
          interfaces.end()) {
        interfaces.push_back(part.networkInterface);
      }
    }
    if (!interfaces.empty()) {
      std::string list;
      for (const std::string& value : interfaces) list += (list.empty() ? "" : ",") + value;
      command.insert(command.end(), {"--mca", "btl_tcp_if_include", list, "--mca",
                                     "oob_tcp_if_include", list});
    }
  }
  // -x is an option of an app context in Open MPI 4.1: it is repeated in each one.
  std::vector<std::string> exports;
  for (const std::string& name : exported) exports.insert(exports.end(), {"-x", name});
  if (hosts.empty()) {
    command.insert(command.end(), exports.begin(), exports.end());
    command.insert(command.end(), {"-np", std::to_string(worldSize)});
    if (!singleNodeGpus.empty()) {
      command.insert(command.end(), {"env", "CUDA_VISIBLE_DEVICES=" + joinGpus(singleNodeGpus)});
    }
    command.insert(command.end(), job.begin(), job.end());
    return command;
  }
  bool first = true;
  for (const HostPart& part : hosts) {
    if (part.ranks == 0) continue;
    if (!part.gpus.empty() && part.gpus.size() < part.ranks) {
      return Status::invalidArgument("node " + part.host + " runs " + std::to_string(part.ranks) +
                                     " ranks but is given " + std::to_string(part.gpus.size()) +
                                     " GPUs: give one GPU per rank");
    }
    if (!part.reservationId.empty() &&
        (part.reservationId.size() != 32 ||
         part.reservationId.find_first_not_of("0123456789abcdef") != std::string::npos)) {
      return Status::invalidArgument("the pre-flight reservation id of node " + part.host +
                                     " is not 32 hex digits: pre-flight the node again");
    }
    if (!first) command.push_back(":");
    first = false;
    command.insert(command.end(), {"-np", std::to_string(part.ranks), "--host",
                                   part.host + ":" + std::to_string(part.ranks)});
    command.insert(command.end(), exports.begin(), exports.end());
    std::vector<std::string> perHost;
    if (!part.gpus.empty()) perHost.push_back("CUDA_VISIBLE_DEVICES=" + joinGpus(part.gpus));
    if (!part.reservationId.empty()) {
      perHost.push_back(std::string(protocol::kReservationIdEnv) + "=" + part.reservationId);
    }
    // NCCL takes interface names only; with a subnet it chooses the interface itself.
    if (!part.networkInterface.empty() && part.networkInterface.find('/') == std::string::npos) {
      perHost.push_back("NCCL_SOCKET_IFNAME=" + part.networkInterface);
    }
    if (!perHost.empty()) {
      command.push_back("env");
      command.insert(command.end(), perHost.begin(), perHost.end());
    }
    command.insert(command.end(), job.begin(), job.end());
  }
  return command;
}

Status checkLauncherReaches(const std::string& launcher, const std::vector<std::string>& hosts,
                            std::chrono::milliseconds timeout) {
  if (hosts.empty()) return Status::ok();
  std::vector<std::string> words = launcherWords(launcher);
  // ssh must not stop for a password or a host-key question: there is nobody to answer.
  if (launcher.empty()) words.insert(words.end(), {"-o", "BatchMode=yes"});
  struct Probe {
    std::string host;
    pid_t pid = -1;
    int errFd = -1;
    int status = -1;
    bool done = false;
  };
  std::vector<Probe> probes;
  for (const std::string& host : hosts) {
    Probe probe{.host = host};
    int pipeFds[2];
    if (pipe2(pipeFds, O_CLOEXEC) != 0) {
      return Status::internal(std::string("pipe failed: ") + std::strerror(errno));
    }
    std::vector<std::string> argv = words;
    argv.insert(argv.end(), {host, "true"});
    const pid_t pid = fork();
    if (pid == 0) {
      setpgid(0, 0);
      dup2(pipeFds[1], STDERR_FILENO);
      const int devNull = open("/dev/null", O_RDWR);
      dup2(devNull, STDIN_FILENO);
      dup2(devNull, STDOUT_FILENO);
      std::vector<char*> args;
      for (std::string& word : argv) args.push_back(word.data());
      args.push_back(nullptr);
      execvp(args[0], args.data());
      std::fprintf(stderr, "cannot run %s: %s\n", args[0], std::strerror(errno));
      _exit(127);
    }
    close(pipeFds[1]);
    if (pid < 0) {
      close(pipeFds[0]);
      return Status::internal(std::string("fork failed: ") + std::strerror(errno));
    }
    fcntl(pipeFds[0], F_SETFL, O_NONBLOCK);
    probe.pid = pid;
    probe.errFd = pipeFds[0];
    probes.push_back(probe);
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::vector<std::string> stderrText(probes.size());
  for (;;) {
    bool pending = false;
    for (size_t i = 0; i < probes.size(); ++i) {
      Probe& probe = probes[i];
      char buffer[512];
      ssize_t got;
      while ((got = read(probe.errFd, buffer, sizeof buffer)) > 0 && stderrText[i].size() < 4096) {
        stderrText[i].append(buffer, static_cast<size_t>(got));
      }
      if (probe.done) continue;
      if (waitpid(probe.pid, &probe.status, WNOHANG) == probe.pid) {
        probe.done = true;
      } else {
        pending = true;
      }
    }
    if (!pending || std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::string failures;
  const std::string launcherText = launcher.empty() ? "ssh" : launcher;
  for (size_t i = 0; i < probes.size(); ++i) {
    Probe& probe = probes[i];
    std::string why;
    if (!probe.done) {
      kill(-probe.pid, SIGKILL);
      waitpid(probe.pid, nullptr, 0);
      why = "no answer within " + std::to_string(timeout.count() / 1000) + " s";
    } else if (!WIFEXITED(probe.status) || WEXITSTATUS(probe.status) != 0) {
      std::istringstream lines(stderrText[i]);
      std::string line, last;
      while (std::getline(lines, line)) {
        if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
      }
      why = last.empty() ? "exit status " + std::to_string(WEXITSTATUS(probe.status)) : last;
    }
    close(probe.errFd);
    if (!why.empty()) failures += (failures.empty() ? "" : "; ") + probe.host + ": " + why;
  }
  if (failures.empty()) return Status::ok();
  return Status::failedPrecondition(
      "the launcher '" + launcherText + "' cannot reach node(s) " + failures +
      ". mpirun starts the ranks of other nodes with it: give the agent's user passwordless ssh "
      "to every node (docs/multi-node.md), or set the agent's --launcher");
}

}  // namespace ringside::agent
