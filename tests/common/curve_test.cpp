// CURVE keys on disk, the allowlist, and real CURVE sockets behind the ZAP handler: an allowlisted
// client is served; a client with an unknown key and a plaintext client get nothing.
#include "ringside/common/allowlist.h"
#include "ringside/common/curve.h"
#include "ringside/common/zap_handler.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>
#include <zmq_addon.hpp>

namespace ringside::curve {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// Generous deadline for things that must happen; never asserted as a duration.
constexpr auto kDeadline = 10s;
// How long a socket that must get nothing is watched.
constexpr auto kQuietWindow = 500ms;

class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "ringside-curve-XXXXXX").string();
    const char* made = ::mkdtemp(pattern.data());
    EXPECT_NE(made, nullptr);
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string readText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

void writeText(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

mode_t modeOf(const std::string& path) {
  struct stat info {};
  EXPECT_EQ(::stat(path.c_str(), &info), 0) << path;
  return info.st_mode & 07777;
}

bool waitFor(const std::function<bool()>& condition) {
  const auto deadline = std::chrono::steady_clock::now() + kDeadline;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return condition();
}

// Receives one multipart message within `timeout`, or nothing.
std::optional<std::vector<zmq::message_t>> receive(zmq::socket_t& socket,
                                                   std::chrono::milliseconds timeout) {
  zmq::pollitem_t items[] = {{socket.handle(), 0, ZMQ_POLLIN, 0}};
  zmq::poll(items, 1, timeout);
  if ((items[0].revents & ZMQ_POLLIN) == 0) return std::nullopt;
  std::vector<zmq::message_t> frames;
  if (!zmq::recv_multipart(socket, std::back_inserter(frames), zmq::recv_flags::dontwait)) {
    return std::nullopt;
  }
  return frames;
}

KeyPair newPair() {
  Result<KeyPair> pair = generateKeyPair();
  EXPECT_TRUE(pair.isOk()) << pair.status().toString();
  return pair.value();
}

zmq::socket_t newSocket(zmq::context_t& context, zmq::socket_type type) {
  zmq::socket_t socket(context, type);
  socket.set(zmq::sockopt::linger, 0);
  return socket;
}

std::string bindLoopback(zmq::socket_t& socket) {
  socket.bind("tcp://127.0.0.1:*");
  return socket.get(zmq::sockopt::last_endpoint);
}

// ---- Keys

TEST(CurveKeysTest, KeyPairCreatedPrivateAndReloadedIdentically) {
  TempDir temp;
  const std::string dir = temp.path() + "/state/keys";
  Result<KeyPair> created = loadOrCreateKeyPair(dir, "agent");
  ASSERT_TRUE(created.isOk()) << created.status().toString();
  EXPECT_TRUE(validateKey(created->publicKey).isOk());
  EXPECT_TRUE(validateKey(created->secretKey).isOk());
  EXPECT_NE(created->publicKey, created->secretKey);
  EXPECT_EQ(modeOf(dir), 0700u);
  EXPECT_EQ(modeOf(dir + "/agent.key_secret"), 0600u);
  EXPECT_EQ(readText(dir + "/agent.key_secret"), created->secretKey + "\n");
  EXPECT_EQ(readText(dir + "/agent.key"), created->publicKey + "\n");

  Result<KeyPair> loaded = loadOrCreateKeyPair(dir, "agent");
  ASSERT_TRUE(loaded.isOk()) << loaded.status().toString();
  EXPECT_EQ(loaded->publicKey, created->publicKey);
  EXPECT_EQ(loaded->secretKey, created->secretKey);

  // A second name in the same directory is a different pair.
  Result<KeyPair> other = loadOrCreateKeyPair(dir, "gui");
  ASSERT_TRUE(other.isOk());
  EXPECT_NE(other->publicKey, created->publicKey);
}

TEST(CurveKeysTest, GroupOrWorldReadableSecretIsRefused) {
  TempDir temp;
  ASSERT_TRUE(loadOrCreateKeyPair(temp.path(), "agent").isOk());
  const std::string secret = temp.path() + "/agent.key_secret";
  for (mode_t mode : {0640, 0604, 0660}) {
    ASSERT_EQ(::chmod(secret.c_str(), mode), 0);
    Result<KeyPair> loaded = loadOrCreateKeyPair(temp.path(), "agent");
    ASSERT_FALSE(loaded.isOk());
    EXPECT_EQ(loaded.status().code(), Status::Code::kInvalidArgument);
    EXPECT_NE(loaded.status().message().find("chmod 600 " + secret), std::string::npos)
        << loaded.status().message();
  }
  ASSERT_EQ(::chmod(secret.c_str(), 0600), 0);
  EXPECT_TRUE(loadOrCreateKeyPair(temp.path(), "agent").isOk());
}

TEST(CurveKeysTest, PublicKeyFileIsRederivedOrChecked) {
  TempDir temp;
  Result<KeyPair> created = loadOrCreateKeyPair(temp.path(), "agent");
  ASSERT_TRUE(created.isOk());
  const std::string publicPath = temp.path() + "/agent.key";
  fs::remove(publicPath);
  Result<KeyPair> loaded = loadOrCreateKeyPair(temp.path(), "agent");
  ASSERT_TRUE(loaded.isOk()) << loaded.status().toString();
  EXPECT_EQ(readText(publicPath), created->publicKey + "\n");

  writeText(publicPath, newPair().publicKey + "\n");
  Result<KeyPair> mismatched = loadOrCreateKeyPair(temp.path(), "agent");
  ASSERT_FALSE(mismatched.isOk());
  EXPECT_EQ(mismatched.status().code(), Status::Code::kCorruption);
}

TEST(CurveKeysTest, GarbageSecretIsCorruption) {
  TempDir temp;
  const std::string secret = temp.path() + "/agent.key_secret";
  writeText(secret, "not a key\n");
  ASSERT_EQ(::chmod(secret.c_str(), 0600), 0);
  Result<KeyPair> loaded = loadOrCreateKeyPair(temp.path(), "agent");
  ASSERT_FALSE(loaded.isOk());
  EXPECT_EQ(loaded.status().code(), Status::Code::kCorruption);
}

TEST(CurveKeysTest, KeyPairIsReadFromItsSecretFileAlone) {
  TempDir temp;
  Result<KeyPair> created = loadOrCreateKeyPair(temp.path(), "run");
  ASSERT_TRUE(created.isOk());
  fs::remove(temp.path() + "/run.key");  // the public half is derived, not read
  Result<KeyPair> read = readKeyPairFromSecretFile(temp.path() + "/run.key_secret");
  ASSERT_TRUE(read.isOk()) << read.status().toString();
  EXPECT_EQ(read->publicKey, created->publicKey);
  EXPECT_EQ(read->secretKey, created->secretKey);
  EXPECT_EQ(readKeyPairFromSecretFile(temp.path() + "/absent").status().code(),
            Status::Code::kNotFound);
  writeText(temp.path() + "/garbage", "not a key\n");
  EXPECT_EQ(readKeyPairFromSecretFile(temp.path() + "/garbage").status().code(),
            Status::Code::kCorruption);
}

TEST(CurveKeysTest, ValidateKey) {
  EXPECT_TRUE(validateKey(newPair().publicKey).isOk());
  EXPECT_FALSE(validateKey("").isOk());
  EXPECT_FALSE(validateKey(std::string(39, 'a')).isOk());
  EXPECT_FALSE(validateKey(std::string(41, 'a')).isOk());
  EXPECT_FALSE(validateKey(std::string(39, 'a') + " ").isOk());   // not Z85
  EXPECT_FALSE(validateKey(std::string(39, 'a') + "\"").isOk());  // not Z85
  EXPECT_FALSE(validateKey(std::string(40, '#')).isOk());  // Z85 characters, but > 2^32 per group
}

TEST(CurveKeysTest, LoopbackEndpoints) {
  EXPECT_TRUE(isLoopbackEndpoint("tcp://127.0.0.1:47600"));
  EXPECT_TRUE(isLoopbackEndpoint("tcp://127.1.2.3:*"));
  EXPECT_TRUE(isLoopbackEndpoint("tcp://localhost:47600"));
  EXPECT_TRUE(isLoopbackEndpoint("tcp://[::1]:47600"));
  EXPECT_TRUE(isLoopbackEndpoint("ipc:///run/ringside/ranks.sock"));
  EXPECT_TRUE(isLoopbackEndpoint("inproc://events"));
  EXPECT_FALSE(isLoopbackEndpoint("tcp://*:47600"));
  EXPECT_FALSE(isLoopbackEndpoint("tcp://0.0.0.0:47600"));
  EXPECT_FALSE(isLoopbackEndpoint("tcp://10.0.0.5:47600"));
  EXPECT_FALSE(isLoopbackEndpoint("tcp://eth0:47600"));
  EXPECT_FALSE(isLoopbackEndpoint("tcp://[::]:47600"));
  EXPECT_FALSE(isLoopbackEndpoint("tcp://127.0.0.1"));
  EXPECT_FALSE(isLoopbackEndpoint("udp://127.0.0.1:1"));
}

// ---- Allowlist

TEST(AllowlistTest, AddRemoveContainsAndValidation) {
  Allowlist allowlist;
  const std::string key = newPair().publicKey;
  EXPECT_FALSE(allowlist.contains(key));
  ASSERT_TRUE(allowlist.add(key, "alice's laptop").isOk());
  ASSERT_TRUE(allowlist.add(key).isOk());  // already present: fine
  EXPECT_TRUE(allowlist.contains(key));
  EXPECT_EQ(allowlist.size(), 1u);

  Status bad = allowlist.add("too short");
  EXPECT_EQ(bad.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(allowlist.size(), 1u);

  EXPECT_TRUE(allowlist.remove(key));
  EXPECT_FALSE(allowlist.remove(key));
  EXPECT_FALSE(allowlist.contains(key));
  EXPECT_FALSE(allowlist.save().isOk());  // never loaded: no path
}

TEST(AllowlistTest, SaveLoadKeepsKeysAndComments) {
  TempDir temp;
  const std::string path = temp.path() + "/allowlist";
  const std::string alice = newPair().publicKey;
  const std::string bob = newPair().publicKey;

  Allowlist writer;
  ASSERT_TRUE(writer.load(path).isOk());  // missing file: empty
  EXPECT_EQ(writer.size(), 0u);
  ASSERT_TRUE(writer.add(alice, "alice\nINJECTED").isOk());
  ASSERT_TRUE(writer.add(bob).isOk());
  ASSERT_TRUE(writer.save().isOk());
  EXPECT_EQ(modeOf(path), 0600u);

  Allowlist reader;
  ASSERT_TRUE(reader.load(path).isOk());
  EXPECT_TRUE(reader.contains(alice));
  EXPECT_TRUE(reader.contains(bob));
  EXPECT_EQ(reader.size(), 2u);
  const std::string text = readText(path);
  EXPECT_NE(text.find(alice + "  # alice INJECTED"), std::string::npos) << text;

  // Another process revokes bob; reloadIfChanged sees the new file.
  ASSERT_TRUE(writer.remove(bob));
  ASSERT_TRUE(writer.save().isOk());
  ASSERT_TRUE(reader.reloadIfChanged().isOk());
  EXPECT_FALSE(reader.contains(bob));
  EXPECT_TRUE(reader.contains(alice));

  // A hand edit, then reload().
  std::ofstream(path, std::ios::app) << "\n# a comment line\n   " << bob << "\t# bob again\n";
  ASSERT_TRUE(reader.reload().isOk());
  EXPECT_TRUE(reader.contains(bob));
}

TEST(AllowlistTest, BadFileIsRefusedAndContentsKept) {
  TempDir temp;
  const std::string path = temp.path() + "/allowlist";
  const std::string alice = newPair().publicKey;
  writeText(path, alice + "\n");
  ASSERT_EQ(::chmod(path.c_str(), 0600), 0);
  Allowlist allowlist;
  ASSERT_TRUE(allowlist.load(path).isOk());

  writeText(path, alice + "\nnot-a-key\n");
  Status status = allowlist.reload();
  EXPECT_EQ(status.code(), Status::Code::kCorruption);
  EXPECT_NE(status.message().find(path + ":2"), std::string::npos) << status.message();
  EXPECT_TRUE(allowlist.contains(alice));

  writeText(path, alice + " trailing words\n");
  EXPECT_EQ(allowlist.reload().code(), Status::Code::kCorruption);

  writeText(path, alice + "\n");
  ASSERT_EQ(::chmod(path.c_str(), 0666), 0);
  EXPECT_EQ(allowlist.reload().code(), Status::Code::kInvalidArgument);
  EXPECT_TRUE(allowlist.contains(alice));
}

TEST(AllowlistTest, ConcurrentReadersAndWriters) {
  Allowlist allowlist;
  std::vector<std::string> keys;
  for (int i = 0; i < 8; ++i) keys.push_back(newPair().publicKey);
  std::atomic<bool> done{false};
  std::thread reader([&] {
    while (!done.load()) {
      for (const std::string& key : keys) (void)allowlist.contains(key);
    }
  });
  for (int round = 0; round < 200; ++round) {
    for (const std::string& key : keys) ASSERT_TRUE(allowlist.add(key).isOk());
    for (const std::string& key : keys) allowlist.remove(key);
  }
  done.store(true);
  reader.join();
  EXPECT_EQ(allowlist.size(), 0u);
}

// ---- Sockets behind the ZAP handler

class CurveSocketTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = newPair();
    client_ = newPair();
    stranger_ = newPair();
    ASSERT_TRUE(allowlist_.add(client_.publicKey).isOk());
  }

  zmq::context_t context_;
  Allowlist allowlist_;
  KeyPair server_;
  KeyPair client_;
  KeyPair stranger_;
};

TEST_F(CurveSocketTest, RouterServesOnlyTheAllowlistedDealer) {
  ZapHandler zap(context_, allowlist_);
  ASSERT_TRUE(zap.start().isOk());
  zmq::socket_t router = newSocket(context_, zmq::socket_type::router);
  ASSERT_TRUE(configureServer(router, server_).isOk());
  const std::string endpoint = bindLoopback(router);

  // An unknown key: the handshake is refused, nothing reaches the server.
  zmq::socket_t stranger = newSocket(context_, zmq::socket_type::dealer);
  ASSERT_TRUE(configureClient(stranger, stranger_, server_.publicKey).isOk());
  stranger.connect(endpoint);
  stranger.send(zmq::str_buffer("from stranger"), zmq::send_flags::dontwait);
  EXPECT_FALSE(receive(router, kQuietWindow).has_value());
  EXPECT_TRUE(waitFor([&] { return zap.refusedCount() >= 1; }));

  // Plaintext: the mechanisms do not match, nothing reaches the server.
  zmq::socket_t plaintext = newSocket(context_, zmq::socket_type::dealer);
  plaintext.connect(endpoint);
  plaintext.send(zmq::str_buffer("from plaintext"), zmq::send_flags::dontwait);
  EXPECT_FALSE(receive(router, kQuietWindow).has_value());

  // The allowlisted client is served.
  zmq::socket_t dealer = newSocket(context_, zmq::socket_type::dealer);
  ASSERT_TRUE(configureClient(dealer, client_, server_.publicKey).isOk());
  dealer.connect(endpoint);
  dealer.send(zmq::str_buffer("ping"), zmq::send_flags::none);
  auto request = receive(router, kDeadline);
  ASSERT_TRUE(request.has_value());
  ASSERT_EQ(request->size(), 2u);  // [identity][payload], no delimiter
  EXPECT_EQ((*request)[1].to_string(), "ping");
  EXPECT_STREQ((*request)[1].gets("User-Id"), client_.publicKey.c_str());
  router.send((*request)[0], zmq::send_flags::sndmore);
  router.send(zmq::str_buffer("pong"), zmq::send_flags::none);
  auto reply = receive(dealer, kDeadline);
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ((*reply)[0].to_string(), "pong");
  EXPECT_GE(zap.acceptedCount(), 1u);

  // Nothing from the refused clients arrived meanwhile.
  EXPECT_FALSE(receive(router, 100ms).has_value());
  EXPECT_FALSE(receive(stranger, 100ms).has_value());
  EXPECT_FALSE(receive(plaintext, 100ms).has_value());
}

TEST_F(CurveSocketTest, PublisherReachesOnlyTheAllowlistedSubscriber) {
  ZapHandler zap(context_, allowlist_);
  ASSERT_TRUE(zap.start().isOk());
  zmq::socket_t publisher = newSocket(context_, zmq::socket_type::pub);
  ASSERT_TRUE(configureServer(publisher, server_).isOk());
  const std::string endpoint = bindLoopback(publisher);

  zmq::socket_t subscriber = newSocket(context_, zmq::socket_type::sub);
  ASSERT_TRUE(configureClient(subscriber, client_, server_.publicKey).isOk());
  subscriber.set(zmq::sockopt::subscribe, "");
  subscriber.connect(endpoint);
  zmq::socket_t stranger = newSocket(context_, zmq::socket_type::sub);
  ASSERT_TRUE(configureClient(stranger, stranger_, server_.publicKey).isOk());
  stranger.set(zmq::sockopt::subscribe, "");
  stranger.connect(endpoint);
  zmq::socket_t plaintext = newSocket(context_, zmq::socket_type::sub);
  plaintext.set(zmq::sockopt::subscribe, "");
  plaintext.connect(endpoint);

  // PUB drops until a subscription arrives: publish until the allowlisted subscriber hears.
  bool heard = false;
  const auto deadline = std::chrono::steady_clock::now() + kDeadline;
  while (!heard && std::chrono::steady_clock::now() < deadline) {
    publisher.send(zmq::str_buffer("event"), zmq::send_flags::dontwait);
    heard = receive(subscriber, 50ms).has_value();
  }
  ASSERT_TRUE(heard);
  for (int i = 0; i < 5; ++i) publisher.send(zmq::str_buffer("event"), zmq::send_flags::dontwait);
  EXPECT_FALSE(receive(stranger, kQuietWindow).has_value());
  EXPECT_FALSE(receive(plaintext, kQuietWindow).has_value());
  EXPECT_TRUE(waitFor([&] { return zap.refusedCount() >= 1; }));
}

TEST_F(CurveSocketTest, NullMechanismRefusedUnlessAllowed) {
  {
    ZapHandler zap(context_, allowlist_);
    ASSERT_TRUE(zap.start().isOk());
    zmq::socket_t router = newSocket(context_, zmq::socket_type::router);
    ASSERT_TRUE(configureInsecureServer(router).isOk());
    const std::string endpoint = bindLoopback(router);
    zmq::socket_t dealer = newSocket(context_, zmq::socket_type::dealer);
    dealer.connect(endpoint);
    dealer.send(zmq::str_buffer("plain"), zmq::send_flags::dontwait);
    EXPECT_FALSE(receive(router, kQuietWindow).has_value());
    EXPECT_TRUE(waitFor([&] { return zap.refusedCount() >= 1; }));
    // Sockets close before the handler stops (declared after it).
  }
  // A fresh context: the first handler's inproc ZAP endpoint is released asynchronously, and
  // rebinding it in the same context can race with that under load.
  zmq::context_t context;
  ZapHandler::Options options;
  options.allowNull = true;
  ZapHandler zap(context, allowlist_, options);
  ASSERT_TRUE(zap.start().isOk());
  zmq::socket_t router = newSocket(context, zmq::socket_type::router);
  ASSERT_TRUE(configureInsecureServer(router).isOk());
  const std::string endpoint = bindLoopback(router);
  zmq::socket_t dealer = newSocket(context, zmq::socket_type::dealer);
  dealer.connect(endpoint);
  dealer.send(zmq::str_buffer("plain"), zmq::send_flags::none);
  auto request = receive(router, kDeadline);
  ASSERT_TRUE(request.has_value());
  EXPECT_EQ((*request)[1].to_string(), "plain");
  EXPECT_GE(zap.acceptedCount(), 1u);
}

TEST_F(CurveSocketTest, OneHandlerPerContextAndStopIsIdempotent) {
  ZapHandler first(context_, allowlist_);
  ASSERT_TRUE(first.start().isOk());
  EXPECT_FALSE(first.start().isOk());
  ZapHandler second(context_, allowlist_);
  EXPECT_EQ(second.start().code(), Status::Code::kInternal);
  first.stop();
  first.stop();
  second.stop();
}

TEST_F(CurveSocketTest, ConfigureRejectsBadKeys) {
  zmq::socket_t socket = newSocket(context_, zmq::socket_type::dealer);
  EXPECT_EQ(configureClient(socket, client_, "short").code(), Status::Code::kInvalidArgument);
  KeyPair broken{client_.publicKey, "x"};
  EXPECT_EQ(configureServer(socket, broken).code(), Status::Code::kInvalidArgument);
}

}  // namespace
}  // namespace ringside::curve
