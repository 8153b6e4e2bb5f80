#include "ringside/common/curve.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <utility>

#include "ringside/common/file_io.h"

namespace ringside::curve {

namespace {

constexpr char kZ85Alphabet[] =
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";
// Key files are small; refuse anything larger rather than read it whole.
constexpr off_t kMaxKeyFileBytes = 4096;

// Reads one key file: the key on its first non-empty line. Errors: as readSmallFile; Corruption.
Result<std::string> readKeyFile(const std::string& path, struct stat* info) {
  Result<std::string> content = readSmallFile(path, kMaxKeyFileBytes, info);
  if (!content.isOk()) return content.status();
  std::string key = trimSpace(*content);
  Status valid = validateKey(key);
  if (!valid.isOk()) {
    return Status::corruption(path + " does not hold a CURVE key: " + valid.message());
  }
  return key;
}

Result<std::string> publicKeyOf(const std::string& secretKey) {
  char publicKey[kKeyTextLength + 1] = {};
  if (zmq_curve_public(publicKey, secretKey.c_str()) != 0) {
    return Status::internal(std::string("zmq_curve_public failed: ") + zmq_strerror(zmq_errno()));
  }
  return std::string(publicKey);
}

}  // namespace

// ---- Keys

Result<KeyPair> readKeyPairFromSecretFile(const std::string& path) {
  Result<std::string> secret = readKeyFile(path, nullptr);
  if (!secret.isOk()) return secret.status();
  Result<std::string> derived = publicKeyOf(*secret);
  if (!derived.isOk()) return derived.status();
  return KeyPair{*derived, *secret};
}

Result<KeyPair> generateKeyPair() {
  char publicKey[kKeyTextLength + 1] = {};
  char secretKey[kKeyTextLength + 1] = {};
  if (zmq_curve_keypair(publicKey, secretKey) != 0) {
    return Status::internal(std::string("zmq_curve_keypair failed (") + zmq_strerror(zmq_errno()) +
                            "); libzmq must be built with CURVE (libsodium) support");
  }
  return KeyPair{publicKey, secretKey};
}

Status validateKey(std::string_view key) {
  if (key.size() != kKeyTextLength) {
    return Status::invalidArgument("a CURVE key is " + std::to_string(kKeyTextLength) +
                                   " Z85 characters, got " + std::to_string(key.size()));
  }
  const size_t bad = key.find_first_not_of(std::string_view(kZ85Alphabet));
  if (bad != std::string_view::npos) {
    return Status::invalidArgument("character " + std::to_string(bad + 1) + " ('" +
                                   std::string(1, key[bad]) + "') of the key is not Z85");
  }
  const std::string text(key);
  uint8_t decoded[32];
  if (zmq_z85_decode(decoded, text.c_str()) == nullptr) {
    return Status::invalidArgument("the key is not valid Z85 (a 4-byte group overflows)");
  }
  return Status::ok();
}

std::string encodeKey(const uint8_t (&key)[32]) {
  char text[kKeyTextLength + 1] = {};
  zmq_z85_encode(text, key, sizeof key);
  return text;
}

Result<KeyPair> loadOrCreateKeyPair(const std::string& dir, const std::string& name) {
  if (dir.empty() || name.empty() || name.find('/') != std::string::npos) {
    return Status::invalidArgument("key directory and name must be non-empty (name '" + name +
                                   "' without '/')");
  }
  std::error_code error;
  if (!std::filesystem::exists(dir, error)) {
    std::filesystem::create_directories(dir, error);
    if (error) return Status::ioError("cannot create " + dir + ": " + error.message());
    std::filesystem::permissions(dir, std::filesystem::perms::owner_all, error);
    if (error) return Status::ioError("cannot chmod 700 " + dir + ": " + error.message());
  }
  const std::string secretPath = dir + "/" + name + ".key_secret";
  const std::string publicPath = dir + "/" + name + ".key";

  struct stat info {};
  Result<std::string> secret = readKeyFile(secretPath, &info);
  if (!secret.isOk() && secret.status().code() != Status::Code::kNotFound) {
    return secret.status();
  }
  if (!secret.isOk()) {
    // First start: a new pair, the secret first so a crash never leaves a lone public key.
    Result<KeyPair> pair = generateKeyPair();
    if (!pair.isOk()) return pair.status();
    RINGSIDE_RETURN_IF_ERROR(writeFileAtomic(secretPath, pair->secretKey + "\n", 0600));
    RINGSIDE_RETURN_IF_ERROR(writeFileAtomic(publicPath, pair->publicKey + "\n", 0644));
    return pair;
  }

  // Like ssh with its private keys: a secret others can read is no secret.
  if ((info.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(info.st_mode & 07777));
    return Status::invalidArgument("secret key file " + secretPath + " is accessible by group or " +
                                   "others (mode " + mode + "); run `chmod 600 " + secretPath +
                                   "`, or delete it to create a new keypair");
  }
  if (info.st_uid != ::geteuid()) {
    return Status::invalidArgument("secret key file " + secretPath + " is owned by uid " +
                                   std::to_string(info.st_uid) + ", not by this user (uid " +
                                   std::to_string(::geteuid()) + ")");
  }
  Result<std::string> derived = publicKeyOf(*secret);
  if (!derived.isOk()) return derived.status();

  struct stat publicInfo {};
  Result<std::string> stored = readKeyFile(publicPath, &publicInfo);
  if (!stored.isOk() && stored.status().code() == Status::Code::kNotFound) {
    RINGSIDE_RETURN_IF_ERROR(writeFileAtomic(publicPath, *derived + "\n", 0644));
  } else if (!stored.isOk()) {
    return stored.status();
  } else if (*stored != *derived) {
    return Status::corruption("public key file " + publicPath + " does not match the secret key " +
                              secretPath + "; delete " + publicPath + " to re-derive it");
  }
  return KeyPair{*derived, *secret};
}

bool isLoopbackEndpoint(std::string_view endpoint) {
  if (endpoint.starts_with("ipc://") || endpoint.starts_with("inproc://")) return true;
  if (!endpoint.starts_with("tcp://")) return false;
  std::string_view address = endpoint.substr(6);
  // "tcp://source;destination" (connect with a source address): the destination decides.
  if (const size_t semicolon = address.find(';'); semicolon != std::string_view::npos) {
    address = address.substr(semicolon + 1);
  }
  const size_t colon = address.rfind(':');
  if (colon == std::string_view::npos) return false;
  std::string host(address.substr(0, colon));
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host == "localhost" || host == "lo") return true;
  in_addr v4{};
  if (::inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (::inet_pton(AF_INET6, host.c_str(), &v6) == 1) {
    return IN6_IS_ADDR_LOOPBACK(&v6) != 0;
  }
  return false;
}

// ---- Sockets

Status configureServer(zmq::socket_t& socket, const KeyPair& server, const char* zapDomain) {
  Status valid = validateKey(server.secretKey);
  if (!valid.isOk()) return valid.withContext("server secret key");
  try {
    socket.set(zmq::sockopt::curve_server, 1);
    socket.set(zmq::sockopt::curve_secretkey, server.secretKey);
    socket.set(zmq::sockopt::zap_domain, zapDomain);
  } catch (const zmq::error_t& error) {
    return Status::internal(std::string("cannot configure a CURVE server socket: ") + error.what());
  }
  return Status::ok();
}

Status configureInsecureServer(zmq::socket_t& socket) {
  try {
    socket.set(zmq::sockopt::zap_domain, kZapDomain);
  } catch (const zmq::error_t& error) {
    return Status::internal(std::string("cannot set the ZAP domain: ") + error.what());
  }
  return Status::ok();
}

Status configureClient(zmq::socket_t& socket, const KeyPair& client,
                       const std::string& serverPublicKey) {
  Status valid = validateKey(serverPublicKey);
  if (!valid.isOk()) return valid.withContext("server public key");
  valid = validateKey(client.publicKey);
  if (!valid.isOk()) return valid.withContext("client public key");
  valid = validateKey(client.secretKey);
  if (!valid.isOk()) return valid.withContext("client secret key");
  try {
    socket.set(zmq::sockopt::curve_serverkey, serverPublicKey);
    socket.set(zmq::sockopt::curve_publickey, client.publicKey);
    socket.set(zmq::sockopt::curve_secretkey, client.secretKey);
  } catch (const zmq::error_t& error) {
    return Status::internal(std::string("cannot configure a CURVE client socket: ") + error.what());
  }
  return Status::ok();
}

}  // namespace ringside::curve
