// CURVE security for the TCP sockets (docs/architecture.md, "Security"): keypairs on disk and
// socket configuration helpers. The allowlist of client keys is in allowlist.h, the ZAP handler
// that enforces it in zap_handler.h.
// Keys are Z85 text, 40 characters for 32 bytes (ZeroMQ RFC 32; CurveZMQ, RFC 26).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <zmq.hpp>

#include "ringside/common/status.h"

namespace ringside::curve {

// Length of a Z85-encoded CURVE key (32 bytes -> 40 characters).
inline constexpr size_t kKeyTextLength = 40;

// The ZAP domain of an agent's control and events sockets (and the GUI's): clients in the
// allowlist file. A ZapHandler answers a domain it was given no list for from that allowlist.
inline constexpr const char* kZapDomain = "ringside";

// The ZAP domain of an agent's tcp:// rank endpoint: only the per-run keys of the runs it owns
// (a rank's key opens this socket and nothing else; docs/protocol.md, "Ranks on other nodes").
inline constexpr const char* kRankZapDomain = "ringside-ranks";

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

// The keypair whose secret key `path` holds (one Z85 key and a newline, as NAME.key_secret), the
// public key derived from the secret. Creates nothing and does not check the file's mode.
// Errors: NotFound or IOError (readSmallFile); Corruption when the file holds no valid key.
Result<KeyPair> readKeyPairFromSecretFile(const std::string& path);

// OK when `key` is kKeyTextLength Z85 characters that zmq_z85_decode accepts; InvalidArgument
// (saying what is wrong) otherwise.
Status validateKey(std::string_view key);

// The Z85 text of a 32-byte binary key (e.g. a ZAP CURVE credential).
std::string encodeKey(const uint8_t (&key)[32]);

// True for endpoints that cannot be reached from another host: tcp:// on 127.0.0.0/8, [::1] or
// localhost, and every ipc:// and inproc:// endpoint. `--insecure` is only allowed on these.
bool isLoopbackEndpoint(std::string_view endpoint);

// Makes `socket` a CURVE server with `server`'s secret key and ZAP domain `zapDomain`. Call before
// bind(). Errors: InvalidArgument for a bad key; Internal when libzmq refuses an option.
Status configureServer(zmq::socket_t& socket, const KeyPair& server,
                       const char* zapDomain = kZapDomain);

// Makes `socket` a plaintext (NULL mechanism) server that still consults ZAP (domain kZapDomain),
// for --insecure on loopback with ZapHandler::Options::allowNull. Call before bind().
Status configureInsecureServer(zmq::socket_t& socket);

// Makes `socket` a CURVE client of the server whose public key is `serverPublicKey`, presenting
// `client`'s keys. Call before connect(). Errors: InvalidArgument for a bad key; Internal.
Status configureClient(zmq::socket_t& socket, const KeyPair& client,
                       const std::string& serverPublicKey);

}  // namespace ringside::curve
