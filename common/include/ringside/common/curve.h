// CURVE security for the TCP sockets (DESIGN.md decision 3): keypairs on disk, the allowlist of
// client public keys, the ZAP handler that enforces it, and socket configuration helpers.
// Keys are Z85 text, 40 characters for 32 bytes (ZeroMQ RFC 32; CurveZMQ, RFC 26).
#pragma once

#include <sys/stat.h>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "ringside/common/status.h"

namespace ringside::curve {

// Length of a Z85-encoded CURVE key (32 bytes -> 40 characters).
inline constexpr size_t kKeyTextLength = 40;

// The ZAP domain Ringside's server sockets use; the ZapHandler answers any domain.
inline constexpr const char* kZapDomain = "ringside";

// Where libzmq sends ZAP requests (RFC 27); one handler per zmq::context_t.
inline constexpr const char* kZapEndpoint = "inproc://zeromq.zap.01";

// A CURVE keypair as Z85 text (kKeyTextLength characters each).
struct KeyPair {
  std::string publicKey;
  std::string secretKey;
};

// A fresh keypair from zmq_curve_keypair. Errors: Internal when libzmq lacks CURVE support.
Result<KeyPair> generateKeyPair();

// Loads the keypair `<dir>/<name>.key_secret` (secret, mode 0600) and `<dir>/<name>.key` (public),
// creating `dir` (mode 0700) and both files on first use. Each file holds one Z85 key and a
// newline. The public key is re-derived from the secret on load (and its file rewritten when
// missing). Errors: InvalidArgument when the secret file is group/world-accessible or owned by
// another user (the message says to chmod 600 it); Corruption when a file does not hold a valid key
// or the public file does not match the secret; IOError for an OS failure (path and errno text).
// Not safe against two processes creating the same pair at the same moment.
Result<KeyPair> loadOrCreateKeyPair(const std::string& dir, const std::string& name);

// OK when `key` is kKeyTextLength Z85 characters that zmq_z85_decode accepts; InvalidArgument
// (saying what is wrong) otherwise.
Status validateKey(std::string_view key);

// The Z85 text of a 32-byte binary key (e.g. a ZAP CURVE credential).
std::string encodeKey(const uint8_t (&key)[32]);

// True for endpoints that cannot be reached from another host: tcp:// on 127.0.0.0/8, [::1] or
// localhost, and every ipc:// and inproc:// endpoint. `--insecure` is only allowed on these.
bool isLoopbackEndpoint(std::string_view endpoint);

// The client public keys a server accepts. File format: one Z85 key per line, optionally followed
// by whitespace and a `#` comment (kept); lines that are empty or start with `#` are ignored.
// Thread-safe: every method may be called from any thread (a shared mutex; contains() takes it
// shared, so the ZAP thread never waits on another reader).
class Allowlist {
 public:
  Allowlist() = default;
  Allowlist(const Allowlist&) = delete;
  Allowlist& operator=(const Allowlist&) = delete;

  // Replaces the contents with those of `path` and remembers the path for reload()/save().
  // A missing file is an empty allowlist (OK). Errors (the contents are then unchanged):
  // Corruption naming the line of an invalid key; InvalidArgument when the file is group- or
  // world-writable (anyone could authorize themselves); IOError.
  Status load(const std::string& path);

  // load() of the remembered path. Errors: as load(); InvalidArgument when load() was never called.
  Status reload();

  // reload() when the file's modification time or size changed since the last load or save;
  // OK without reading it otherwise. For polling: the agent calls it every second and reports
  // its errors (the previous keys stay in force).
  Status reloadIfChanged();

  // Writes the keys atomically (temporary file in the same directory, fsync, rename) with mode
  // 0600 to `path`, or to the remembered path when `path` is empty. Errors: IOError;
  // InvalidArgument when there is no path.
  Status save(const std::string& path = "") const;

  // Adds `key` with an optional one-line comment. OK when already present (the comment is
  // replaced when non-empty). Errors: InvalidArgument from validateKey.
  Status add(const std::string& key, const std::string& comment = "");

  // Removes `key`; false when it was not present.
  bool remove(const std::string& key);

  bool contains(std::string_view key) const;
  std::vector<std::string> keys() const;  // sorted
  size_t size() const;

 private:
  // Identifies a version of the file: a save() by another process renames a new inode into place.
  struct FileStamp {
    int64_t inode = -1;
    int64_t mtimeNs = -1;
    int64_t size = -1;
    bool operator==(const FileStamp&) const = default;
  };
  static FileStamp stampOf(const std::string& path);  // {} when it cannot be stat'ed
  static FileStamp stampOf(const struct stat& info);

  mutable std::shared_mutex mutex_;
  std::map<std::string, std::string, std::less<>> keys_;  // key -> comment; GUARDED_BY(mutex_)
  std::string path_;                                      // GUARDED_BY(mutex_)
  mutable FileStamp stamp_;                               // GUARDED_BY(mutex_)
};

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
  const Options options_;
  zmq::socket_t socket_;  // owned by the thread once started
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> accepted_{0};
  std::atomic<uint64_t> refused_{0};
};

// Makes `socket` a CURVE server with `server`'s secret key and ZAP domain kZapDomain. Call before
// bind(). Errors: InvalidArgument for a bad key; Internal when libzmq refuses an option.
Status configureServer(zmq::socket_t& socket, const KeyPair& server);

// Makes `socket` a plaintext (NULL mechanism) server that still consults ZAP (domain kZapDomain),
// for --insecure on loopback with ZapHandler::Options::allowNull. Call before bind().
Status configureInsecureServer(zmq::socket_t& socket);

// Makes `socket` a CURVE client of the server whose public key is `serverPublicKey`, presenting
// `client`'s keys. Call before connect(). Errors: InvalidArgument for a bad key; Internal.
Status configureClient(zmq::socket_t& socket, const KeyPair& client,
                       const std::string& serverPublicKey);

}  // namespace ringside::curve
