#include "ringside/agent/slurm/slurm_command.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>

namespace ringside::agent::slurm {

namespace {

// The program's path from PATH, as execvp would find it; empty when there is none.
std::string findProgram(const std::string& name) {
  if (name.find('/') != std::string::npos) return ::access(name.c_str(), X_OK) == 0 ? name : "";
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/bin:/bin";
  size_t begin = 0;
  while (begin <= dirs.size()) {
    size_t end = dirs.find(':', begin);
    if (end == std::string::npos) end = dirs.size();
    const std::string dir = end > begin ? dirs.substr(begin, end - begin) : ".";
    const std::string candidate = dir + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    begin = end + 1;
  }
  return "";
}

}  // namespace

std::string lastLine(const std::string& text) {
  size_t end = text.size();
  while (end > 0) {
    while (end > 0 && (text[end - 1] == '\n' || text[end - 1] == '\r' || text[end - 1] == ' ')) {
      --end;
    }
    if (end == 0) break;
    const size_t begin = text.rfind('\n', end - 1);
    const size_t from = begin == std::string::npos ? 0 : begin + 1;
    std::string line = text.substr(from, end - from);
    if (line.size() > 300) line = line.substr(0, 300) + "…";
    return line;
  }
  return "";
}

Result<CommandOutput> runCommand(const std::vector<std::string>& argv,
                                 const std::vector<std::string>& env,
                                 std::chrono::milliseconds timeout) {
  if (argv.empty()) return Status::invalidArgument("no command to run");
  const std::string program = findProgram(argv[0]);
  if (program.empty()) {
    return Status::notFound(argv[0] + " not found on PATH (" +
                            std::string(std::getenv("PATH") ? std::getenv("PATH") : "") +
                            "): the agent of a Slurm node needs Slurm's commands (sbatch, squeue, "
                            "sinfo, scancel, scontrol; docs/slurm.md)");
  }
  // The environment: the agent's, then `env` over it.
  std::map<std::string, std::string> vars;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string text(*entry);
    const size_t eq = text.find('=');
    if (eq != std::string::npos) vars[text.substr(0, eq)] = text.substr(eq + 1);
  }
  for (const std::string& entry : env) {
    const size_t eq = entry.find('=');
    if (eq != std::string::npos) vars[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  std::vector<std::string> envText;
  envText.reserve(vars.size());
  for (const auto& [name, value] : vars) envText.push_back(name + "=" + value);
  std::vector<char*> envp;
  for (std::string& entry : envText) envp.push_back(entry.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = argv;
  std::vector<char*> argp;
  for (std::string& arg : args) argp.push_back(arg.data());
  argp.push_back(nullptr);

  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return Status::internal(std::string("pipe: ") + std::strerror(errno));
  if (::pipe2(err, O_CLOEXEC) != 0) {
    const int error = errno;
    ::close(out[0]);
    ::close(out[1]);
    return Status::internal(std::string("pipe: ") + std::strerror(error));
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int error = errno;
    for (int fd : {out[0], out[1], err[0], err[1]}) ::close(fd);
    return Status::internal(std::string("fork: ") + std::strerror(error));
  }
  if (pid == 0) {
    // Only async-signal-safe calls between fork and exec.
    ::setpgid(0, 0);  // its own group: a time-out kills what it started too
    const int null = ::open("/dev/null", O_RDONLY);
    if (null >= 0) ::dup2(null, 0);
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    ::close_range(3, ~0U, 0);
    ::execve(program.c_str(), argp.data(), envp.data());
    _exit(127);
  }
  ::close(out[1]);
  ::close(err[1]);
  CommandOutput result;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open = 2;
  bool timedOut = false;
  while (open > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timedOut = true;
      break;
    }
    const int ready = ::poll(fds, 2, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (ready < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      char buffer[65536];
      const ssize_t got = ::read(fds[i].fd, buffer, sizeof buffer);
      if (got > 0) {
        const size_t room = kMaxCommandOutputBytes - std::min(kMaxCommandOutputBytes, sinks[i]->size());
        sinks[i]->append(buffer, std::min(room, static_cast<size_t>(got)));
      } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open;
      }
    }
  }
  for (pollfd& fd : fds) {
    if (fd.fd >= 0) ::close(fd.fd);
  }
  if (timedOut) ::kill(-pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timedOut) {
    return Status::aborted(argv[0] + " gave no answer within " +
                           std::to_string(timeout.count() / 1000) +
                           " s (is slurmctld reachable? `scontrol ping` says)");
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127 && result.err.empty()) {
    return Status::internal("cannot run " + program);
  }
  result.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

}  // namespace ringside::agent::slurm
