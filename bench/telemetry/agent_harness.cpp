#include "agent_harness.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "ringside/common/agent_ready.h"
#include "ringside/common/protocol.h"

extern char** environ;

namespace ringside::bench {

namespace fs = std::filesystem;

Status AgentProcess::start(const Options& options, const std::string& stateDir,
                           const std::string& logPath) {
  logPath_ = logPath;
  const std::string readyFile = stateDir + "/ready.json";
  ::unlink(readyFile.c_str());
  const std::vector<std::string> args = {options.agentPath, "--insecure",
                                         "--state-dir",     stateDir,
                                         "--control-port",  "0",
                                         "--events-port",   "0",
                                         "--mpirun",        options.mpirunPath,
                                         "--ready-file",    readyFile};
  std::vector<char*> argv;
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, logPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  const int spawned = posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    pid_ = -1;
    return Status::internal("cannot start " + options.agentPath + ": " + std::strerror(spawned) +
                            " (pass --agent PATH)");
  }
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  while (Clock::now() < deadline) {
    const Result<v1::AgentReady> ready = readAgentReady(readyFile);
    if (ready.isOk()) {
      controlEndpoint_ = ready->control_endpoint();
      eventsEndpoint_ = ready->events_endpoint();
      rankEndpoint_ = "ipc://" + stateDir + "/run/ranks.sock";
      return Status::ok();
    }
    if (ready.status().code() != Status::Code::kNotFound) return ready.status();
    if (!alive()) return Status::internal("ringside-agent exited at start:\n" + log());
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return Status::internal("ringside-agent did not serve within 30 s:\n" + log());
}

bool AgentProcess::alive() {
  if (pid_ <= 0) return false;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) {
    exitStatus_ = status;
    pid_ = -1;
    return false;
  }
  return true;
}

bool AgentProcess::terminate() {
  if (pid_ <= 0) return exitStatus_ && WIFEXITED(*exitStatus_) && WEXITSTATUS(*exitStatus_) == 0;
  ::kill(pid_, SIGTERM);
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  while (alive() && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (alive()) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return false;
  }
  return exitStatus_ && WIFEXITED(*exitStatus_) && WEXITSTATUS(*exitStatus_) == 0;
}

std::string AgentProcess::log() const {
  std::ifstream in(logPath_);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

ControlClient::ControlClient(zmq::context_t& context, const std::string& endpoint)
    : dealer_(context, zmq::socket_type::dealer) {
  dealer_.set(zmq::sockopt::linger, 0);
  dealer_.connect(endpoint);
}

Result<v1::Envelope> ControlClient::request(v1::Envelope envelope,
                                            std::chrono::milliseconds timeout) {
  envelope.set_protocol_version(protocol::kProtocolVersion);
  envelope.set_request_id(++requestId_);
  dealer_.send(zmq::buffer(protocol::encodeEnvelope(envelope)));
  zmq::pollitem_t item{dealer_.handle(), 0, ZMQ_POLLIN, 0};
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    if (zmq::poll(&item, 1, kPollInterval) == 0) continue;
    zmq::message_t message;
    if (!dealer_.recv(message, zmq::recv_flags::dontwait)) continue;
    auto reply = protocol::decodeEnvelope(message.data(), message.size());
    if (!reply.isOk() || reply->request_id() != requestId_) continue;
    if (reply->has_error()) {
      return Status::internal(std::string(protocol::bodyName(envelope)) +
                              " refused: " + protocol::errorCodeName(reply->error().code()) + ": " +
                              reply->error().message());
    }
    return std::move(reply).value();
  }
  return Status::aborted(std::string("no reply to ") + protocol::bodyName(envelope) + " within " +
                         std::to_string(timeout.count()) + " ms");
}

TempDir::~TempDir() {
  if (path.empty()) return;
  if (keep) {
    std::fprintf(stderr, "telemetry_bench: kept %s\n", path.c_str());
    return;
  }
  std::error_code ec;
  fs::remove_all(path, ec);
}

Result<std::string> makeTempDir() {
  std::string pattern = (fs::temp_directory_path() / "ringside-telemetry-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    return Status::ioError("cannot create a temporary directory like " + pattern + ": " +
                           std::strerror(errno) + " (set TMPDIR)");
  }
  return pattern;
}

}  // namespace ringside::bench
