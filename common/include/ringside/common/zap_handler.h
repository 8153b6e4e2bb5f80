// The ZAP handler (ZeroMQ RFC 27) that makes Ringside's server sockets accept only allowlisted
// CURVE clients.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "ringside/common/allowlist.h"
#include "ringside/common/status.h"

namespace ringside::curve {

// Answers libzmq's ZAP requests (RFC 27) for one zmq::context_t: CURVE with an allowlisted client
// public key -> 200 (the key's Z85 text becomes the connection's User-Id), everything else -> 400;
// NULL (plaintext) is accepted only with Options::allowNull. Runs its own thread. It reads the
// allowlist as it is at each request: the allowlist's owner reloads it (and, since a connection
// is authenticated only at its handshake, closes the connections of a revoked key).
//
// Order matters: start() before any server socket binds, and stop() only after every server socket
// of the context is closed: libzmq lets connections through unauthenticated when no handler is
// bound. Thread-safety: start/stop from one owner thread; the counters from any thread.
class ZapHandler {
 public:
  struct Options {
    bool allowNull = false;  // --insecure on loopback: accept the NULL mechanism (plaintext)
    // Poll timeout of the handler thread: stop() returns within about this long.
    std::chrono::milliseconds pollInterval{100};
  };

  // `context` and `allowlist` must outlive the handler.
  ZapHandler(zmq::context_t& context, Allowlist& allowlist, Options options);
  ZapHandler(zmq::context_t& context, Allowlist& allowlist)
      : ZapHandler(context, allowlist, Options{}) {}
  ~ZapHandler();  // stop()
  ZapHandler(const ZapHandler&) = delete;
  ZapHandler& operator=(const ZapHandler&) = delete;

  // Answers requests for ZAP domain `domain` (curve::configureServer's zapDomain) from `keys`
  // instead of the allowlist given to the constructor; e.g. kRankZapDomain with the per-run keys.
  // `keys` must outlive the handler. Call before start(); errors: Internal after start().
  Status addDomain(const std::string& domain, Allowlist& keys);

  // Binds kZapEndpoint and starts the thread. Errors: Internal when the bind fails (another
  // handler is already bound in this context) or start() was already called.
  Status start();

  // Stops and joins the thread (within about pollInterval). Idempotent.
  void stop();

  uint64_t acceptedCount() const { return accepted_.load(std::memory_order_relaxed); }
  uint64_t refusedCount() const { return refused_.load(std::memory_order_relaxed); }

 private:
  void run();
  // Answers one request (frames as received); true when accepted.
  bool handle(zmq::socket_t& socket, std::vector<zmq::message_t>& request);

  zmq::context_t& context_;
  Allowlist& allowlist_;
  std::map<std::string, Allowlist*, std::less<>> domains_;  // fixed once the thread runs
  const Options options_;
  zmq::socket_t socket_;  // owned by the thread once started
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> accepted_{0};
  std::atomic<uint64_t> refused_{0};
};

}  // namespace ringside::curve
