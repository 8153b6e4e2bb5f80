#include "ringside/common/curve.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <sstream>
#include <utility>

namespace ringside::curve {

namespace {

constexpr char kZ85Alphabet[] =
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";
// Key files and allowlists are small; refuse anything larger rather than read it whole.
constexpr off_t kMaxKeyFileBytes = 4096;
constexpr off_t kMaxAllowlistBytes = 4 * 1024 * 1024;

std::string errnoText(int error) { return std::strerror(error); }

std::string trim(std::string_view text) {
  const char* kSpace = " \t\r\n";
  const size_t begin = text.find_first_not_of(kSpace);
  if (begin == std::string_view::npos) return {};
  const size_t end = text.find_last_not_of(kSpace);
  return std::string(text.substr(begin, end - begin + 1));
}

// Closes a file descriptor on scope exit.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

// Reads a whole regular file of at most `maxBytes`; `info` receives its fstat.
// Errors: NotFound (ENOENT), IOError, Corruption when too large.
Result<std::string> readFile(const std::string& path, off_t maxBytes, struct stat* info) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    const int error = errno;
    if (error == ENOENT) return Status::notFound(path + " does not exist");
    return Status::ioError("cannot open " + path + ": " + errnoText(error));
  }
  if (::fstat(fd.get(), info) != 0) {
    return Status::ioError("cannot stat " + path + ": " + errnoText(errno));
  }
  if (!S_ISREG(info->st_mode)) return Status::corruption(path + " is not a regular file");
  if (info->st_size > maxBytes) {
    return Status::corruption(path + " is " + std::to_string(info->st_size) +
                              " bytes, more than the " + std::to_string(maxBytes) +
                              " expected; is it the right file?");
  }
  std::string content;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::ioError("cannot read " + path + ": " + errnoText(errno));
    if (n == 0) break;
    content.append(buffer, static_cast<size_t>(n));
    if (static_cast<off_t>(content.size()) > maxBytes) {
      return Status::corruption(path + " grew past " + std::to_string(maxBytes) + " bytes");
    }
  }
  return content;
}

// Writes `content` to `path` atomically with exactly `mode`: a temporary file in the same
// directory, fsync, rename, fsync of the directory. Errors: IOError naming the path.
Status writeFileAtomic(const std::string& path, const std::string& content, mode_t mode) {
  const std::string temp = path + ".tmp." + std::to_string(::getpid());
  Fd fd(::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode));
  if (fd.get() < 0) return Status::ioError("cannot create " + temp + ": " + errnoText(errno));
  auto fail = [&](const std::string& what) {
    const int error = errno;
    ::unlink(temp.c_str());
    return Status::ioError("cannot " + what + " " + temp + ": " + errnoText(error));
  };
  // The umask may have narrowed the mode; never widen it beyond `mode` either.
  if (::fchmod(fd.get(), mode) != 0) return fail("chmod");
  size_t written = 0;
  while (written < content.size()) {
    const ssize_t n = ::write(fd.get(), content.data() + written, content.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail("write");
    written += static_cast<size_t>(n);
  }
  if (::fsync(fd.get()) != 0) return fail("fsync");
  if (::close(fd.release()) != 0) return fail("close");
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(temp.c_str());
    return Status::ioError("cannot rename " + temp + " to " + path + ": " + errnoText(error));
  }
  const std::string dir = std::filesystem::path(path).parent_path().string();
  Fd dirFd(::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dirFd.get() >= 0) ::fsync(dirFd.get());  // best effort: the rename is already visible
  return Status::ok();
}

// Reads one key file: the key on its first non-empty line. Errors: as readFile; Corruption.
Result<std::string> readKeyFile(const std::string& path, struct stat* info) {
  Result<std::string> content = readFile(path, kMaxKeyFileBytes, info);
  if (!content.isOk()) return content.status();
  std::string key = trim(*content);
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

// ---- Allowlist

Allowlist::FileStamp Allowlist::stampOf(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return {};
  return stampOf(info);
}

Allowlist::FileStamp Allowlist::stampOf(const struct stat& info) {
  return FileStamp{static_cast<int64_t>(info.st_ino),
                   static_cast<int64_t>(info.st_mtim.tv_sec) * 1000000000 + info.st_mtim.tv_nsec,
                   static_cast<int64_t>(info.st_size)};
}

Status Allowlist::load(const std::string& path) {
  struct stat info {};
  Result<std::string> content = readFile(path, kMaxAllowlistBytes, &info);
  std::map<std::string, std::string, std::less<>> keys;
  FileStamp stamp;
  if (content.isOk()) {
    if ((info.st_mode & 022) != 0) {
      return Status::invalidArgument("allowlist " + path +
                                     " is writable by group or others, so anyone could authorize "
                                     "a key; run `chmod 600 " +
                                     path + "`");
    }
    std::istringstream lines(*content);
    std::string line;
    for (int number = 1; std::getline(lines, line); ++number) {
      const std::string text = trim(line);
      if (text.empty() || text.front() == '#') continue;
      const size_t end = text.find_first_of(" \t");
      const std::string key = text.substr(0, end);
      std::string comment;
      if (end != std::string::npos) {
        const std::string rest = trim(std::string_view(text).substr(end));
        if (rest.front() != '#') {
          return Status::corruption(path + ":" + std::to_string(number) +
                                    ": unexpected text after the key (comments start with #)");
        }
        comment = trim(std::string_view(rest).substr(1));
      }
      Status valid = validateKey(key);
      if (!valid.isOk()) {
        return Status::corruption(path + ":" + std::to_string(number) + ": " + valid.message());
      }
      keys[key] = comment;
    }
    stamp = stampOf(info);
  } else if (content.status().code() != Status::Code::kNotFound) {
    return content.status();
  }
  std::unique_lock lock(mutex_);
  keys_ = std::move(keys);
  path_ = path;
  stamp_ = stamp;
  return Status::ok();
}

Status Allowlist::reload() {
  std::string path;
  {
    std::shared_lock lock(mutex_);
    path = path_;
  }
  if (path.empty()) return Status::invalidArgument("the allowlist was never loaded from a file");
  return load(path);
}

Status Allowlist::reloadIfChanged() {
  std::string path;
  FileStamp stamp;
  {
    std::shared_lock lock(mutex_);
    path = path_;
    stamp = stamp_;
  }
  if (path.empty()) return Status::ok();
  if (stampOf(path) == stamp) return Status::ok();
  return load(path);
}

Status Allowlist::save(const std::string& path) const {
  std::unique_lock lock(mutex_);
  const std::string target = path.empty() ? path_ : path;
  if (target.empty()) return Status::invalidArgument("no allowlist path to save to");
  std::string content =
      "# Ringside allowlist: CURVE public keys (Z85) of the clients this agent serves.\n"
      "# One key per line, optionally followed by a # comment. Edit with `ringside-agent "
      "authorize KEY` and `revoke KEY`.\n";
  for (const auto& [key, comment] : keys_) {
    content += key;
    if (!comment.empty()) content += "  # " + comment;
    content += '\n';
  }
  RINGSIDE_RETURN_IF_ERROR(writeFileAtomic(target, content, 0600));
  if (target == path_) stamp_ = stampOf(target);
  return Status::ok();
}

Status Allowlist::add(const std::string& key, const std::string& comment) {
  RINGSIDE_RETURN_IF_ERROR(validateKey(key));
  // A comment is one line: newlines would let it inject keys into the file.
  std::string oneLine = comment;
  for (char& c : oneLine) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  std::unique_lock lock(mutex_);
  auto [it, inserted] = keys_.try_emplace(key, oneLine);
  if (!inserted && !oneLine.empty()) it->second = oneLine;
  return Status::ok();
}

bool Allowlist::remove(const std::string& key) {
  std::unique_lock lock(mutex_);
  return keys_.erase(key) > 0;
}

bool Allowlist::contains(std::string_view key) const {
  std::shared_lock lock(mutex_);
  return keys_.find(key) != keys_.end();
}

std::vector<std::string> Allowlist::keys() const {
  std::shared_lock lock(mutex_);
  std::vector<std::string> result;
  result.reserve(keys_.size());
  for (const auto& entry : keys_) result.push_back(entry.first);
  return result;
}

size_t Allowlist::size() const {
  std::shared_lock lock(mutex_);
  return keys_.size();
}

// ---- ZapHandler

ZapHandler::ZapHandler(zmq::context_t& context, Allowlist& allowlist, Options options)
    : context_(context), allowlist_(allowlist), options_(options) {}

ZapHandler::~ZapHandler() { stop(); }

Status ZapHandler::start() {
  if (thread_.joinable() || socket_.handle() != nullptr) {
    return Status::internal("ZapHandler::start called twice");
  }
  try {
    socket_ = zmq::socket_t(context_, zmq::socket_type::rep);
    socket_.set(zmq::sockopt::linger, 0);
    socket_.bind(kZapEndpoint);
  } catch (const zmq::error_t& error) {
    socket_.close();
    return Status::internal(std::string("cannot bind the ZAP handler at ") + kZapEndpoint + ": " +
                            error.what() + " (is another handler running in this context?)");
  }
  stopping_.store(false);
  thread_ = std::thread(&ZapHandler::run, this);
  return Status::ok();
}

void ZapHandler::stop() {
  stopping_.store(true);
  if (thread_.joinable()) thread_.join();
}

void ZapHandler::run() {
  while (!stopping_.load()) {
    try {
      zmq::pollitem_t items[] = {{socket_.handle(), 0, ZMQ_POLLIN, 0}};
      zmq::poll(items, 1, options_.pollInterval);
      if ((items[0].revents & ZMQ_POLLIN) == 0) continue;
      std::vector<zmq::message_t> request;
      for (;;) {
        zmq::message_t frame;
        if (!socket_.recv(frame, zmq::recv_flags::dontwait)) break;
        const bool more = frame.more();
        request.push_back(std::move(frame));
        if (!more) break;
      }
      if (request.empty()) continue;
      handle(socket_, request);
    } catch (const zmq::error_t& error) {
      if (error.num() == ETERM) break;  // the context is shutting down
    }
  }
  socket_.close();
}

bool ZapHandler::handle(zmq::socket_t& socket, std::vector<zmq::message_t>& request) {
  // RFC 27: version, request id, domain, address, identity, mechanism, credentials...
  const std::string requestId = request.size() > 1 ? request[1].to_string() : std::string();
  bool accept = false;
  std::string statusText = "client refused";
  std::string userId;
  if (request.size() < 6 || request[0].to_string_view() != "1.0") {
    statusText = "malformed ZAP request";
  } else {
    const std::string_view mechanism = request[5].to_string_view();
    if (mechanism == "CURVE" && request.size() >= 7 && request[6].size() == 32) {
      uint8_t key[32];
      std::memcpy(key, request[6].data(), sizeof key);
      const std::string text = encodeKey(key);
      if (allowlist_.contains(text)) {
        accept = true;
        userId = text;
      } else {
        statusText = "client public key is not in the allowlist";
      }
    } else if (mechanism == "NULL" && options_.allowNull) {
      accept = true;
    } else {
      statusText = "mechanism " + std::string(mechanism) + " is not accepted";
    }
  }
  const std::string statusCode = accept ? "200" : "400";
  if (accept) statusText = "OK";
  // Count before replying: once the reply is out, the connection (and a test watching it) may
  // already see the outcome.
  (accept ? accepted_ : refused_).fetch_add(1, std::memory_order_relaxed);
  socket.send(zmq::buffer(std::string_view("1.0")), zmq::send_flags::sndmore);
  socket.send(zmq::buffer(requestId), zmq::send_flags::sndmore);
  socket.send(zmq::buffer(statusCode), zmq::send_flags::sndmore);
  socket.send(zmq::buffer(statusText), zmq::send_flags::sndmore);
  socket.send(zmq::buffer(userId), zmq::send_flags::sndmore);
  socket.send(zmq::message_t(), zmq::send_flags::none);  // metadata: none
  return accept;
}

// ---- Sockets

Status configureServer(zmq::socket_t& socket, const KeyPair& server) {
  Status valid = validateKey(server.secretKey);
  if (!valid.isOk()) return valid.withContext("server secret key");
  try {
    socket.set(zmq::sockopt::curve_server, 1);
    socket.set(zmq::sockopt::curve_secretkey, server.secretKey);
    socket.set(zmq::sockopt::zap_domain, kZapDomain);
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
