#include "ringside/common/zap_handler.h"

#include <cerrno>
#include <cstring>
#include <string>

#include "ringside/common/curve.h"

namespace ringside::curve {

ZapHandler::ZapHandler(zmq::context_t& context, Allowlist& allowlist, Options options)
    : context_(context), allowlist_(allowlist), options_(options) {}

ZapHandler::~ZapHandler() { stop(); }

Status ZapHandler::addDomain(const std::string& domain, Allowlist& keys) {
  if (thread_.joinable()) return Status::internal("ZapHandler::addDomain called after start()");
  domains_[domain] = &keys;
  return Status::ok();
}

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
    // A domain with its own key list (the rank endpoint) never takes plaintext.
    const auto domain = domains_.find(request[2].to_string_view());
    if (mechanism == "CURVE" && request.size() >= 7 && request[6].size() == 32) {
      uint8_t key[32];
      std::memcpy(key, request[6].data(), sizeof key);
      const std::string text = encodeKey(key);
      const Allowlist& keys = domain == domains_.end() ? allowlist_ : *domain->second;
      if (keys.contains(text)) {
        accept = true;
        userId = text;
      } else {
        statusText = "client public key is not in the allowlist";
      }
    } else if (mechanism == "NULL" && options_.allowNull && domain == domains_.end()) {
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

}  // namespace ringside::curve
