// telemetry_bench's harness around a real ringside-agent: the agent process (started on loopback
// in plaintext, any free ports, its ready file read), a DEALER control client, and the temporary
// directory the run lives in.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <zmq.hpp>

#include "ringside/common/status.h"
#include "ringside/proto/ringside.pb.h"
#include "telemetry_bench.h"

namespace ringside::bench {

class AgentProcess {
 public:
  ~AgentProcess() { terminate(); }

  // Starts `options.agentPath` on loopback (plaintext, any free ports) with its state in
  // `stateDir`, stderr and stdout to `logPath`, and waits up to 30 s for its ready file.
  // Errors: kInternal when it cannot be started or exits or does not serve in time (the message
  // holds its log).
  Status start(const Options& options, const std::string& stateDir, const std::string& logPath);

  // True while the process runs (reaps it when it has exited).
  bool alive();

  // SIGTERM, then SIGKILL after 10 s. Returns true when it exited 0 on SIGTERM.
  bool terminate();

  // Everything the agent wrote to stdout and stderr so far.
  std::string log() const;

  pid_t pid() const { return pid_; }
  const std::string& controlEndpoint() const { return controlEndpoint_; }
  const std::string& eventsEndpoint() const { return eventsEndpoint_; }
  const std::string& rankEndpoint() const { return rankEndpoint_; }

 private:
  pid_t pid_ = -1;
  std::optional<int> exitStatus_;
  std::string logPath_, controlEndpoint_, eventsEndpoint_, rankEndpoint_;
};

// A DEALER on the agent's control socket: one request at a time.
class ControlClient {
 public:
  ControlClient(zmq::context_t& context, const std::string& endpoint);

  // Sends `envelope` and returns its reply, or an ErrorReply as kInternal. Errors: kAborted when
  // no reply came within `timeout`.
  Result<v1::Envelope> request(v1::Envelope envelope,
                               std::chrono::milliseconds timeout = std::chrono::seconds(30));

 private:
  zmq::socket_t dealer_;
  uint64_t requestId_ = 0;
};

// A directory removed with everything in it when this goes, unless `keep` (then its path is
// printed on stderr).
struct TempDir {
  std::string path;
  bool keep = false;
  ~TempDir();
};

// A new directory under the system's temporary directory. Errors: kIOError when it cannot be
// created.
Result<std::string> makeTempDir();

}  // namespace ringside::bench
