// libFuzzer target for the wire decoder: any bytes must give an Envelope or a DecodeError with a
// code, never a crash, a leak or undefined behaviour; a decoded Envelope must re-encode and decode
// to the same body (the agent echoes what it parsed).
#include <google/protobuf/stubs/logging.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "ringside/common/protocol.h"

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  // protobuf logs every string field with invalid UTF-8; that noise slows the fuzzer down.
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ringside;
  protocol::DecodeResult decoded = protocol::decodeEnvelope(data, size);
  if (!decoded.isOk()) {
    const protocol::DecodeError& error = decoded.error();
    if (error.code == v1::ErrorReply::CODE_UNSPECIFIED || error.message.empty()) std::abort();
    // The reply to a refused frame must itself decode.
    const std::string reply = protocol::encodeEnvelope(protocol::makeErrorReply(error));
    if (!protocol::decodeEnvelope(reply.data(), reply.size()).isOk()) std::abort();
    return 0;
  }
  if (protocol::bodyName(decoded.value()) == nullptr) std::abort();
  const std::string again = protocol::encodeEnvelope(decoded.value());
  protocol::DecodeResult redecoded = protocol::decodeEnvelope(again.data(), again.size());
  if (!redecoded.isOk() || redecoded->body_case() != decoded->body_case() ||
      redecoded->request_id() != decoded->request_id()) {
    std::abort();
  }
  return 0;
}
