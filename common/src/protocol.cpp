#include "ringside/common/protocol.h"

#include <google/protobuf/descriptor.h>

#include <utility>

namespace ringside::protocol {

namespace {

Status statusFor(const DecodeError& error) {
  std::string message = std::string(errorCodeName(error.code)) + ": " + error.message;
  if (error.code == v1::ErrorReply::MALFORMED) return Status::corruption(std::move(message));
  return Status::invalidArgument(std::move(message));
}

}  // namespace

DecodeResult::DecodeResult(v1::Envelope envelope) : Result<v1::Envelope>(std::move(envelope)) {}

DecodeResult::DecodeResult(DecodeError error)
    : Result<v1::Envelope>(statusFor(error)), error_(std::move(error)) {}

DecodeResult decodeEnvelope(const void* data, size_t size) {
  if (size > kMaxMessageBytes) {
    return DecodeError{v1::ErrorReply::TOO_LARGE, 0,
                       "frame of " + std::to_string(size) + " bytes exceeds the limit of " +
                           std::to_string(kMaxMessageBytes) +
                           " bytes; ask for less (e.g. a smaller FetchRunDataRequest.max_entries)"};
  }
  if (size == 0 || data == nullptr) {
    // Typically the empty delimiter frame of a REQ socket, or a DEALER imitating one.
    return DecodeError{v1::ErrorReply::MALFORMED, 0,
                       "empty frame; send exactly one frame holding the serialized Envelope, "
                       "without an empty delimiter frame"};
  }
  v1::Envelope envelope;
  // size <= kMaxMessageBytes, so the int conversion is exact.
  if (!envelope.ParseFromArray(data, static_cast<int>(size))) {
    return DecodeError{v1::ErrorReply::MALFORMED, 0,
                       "frame of " + std::to_string(size) +
                           " bytes is not a serialized ringside.v1.Envelope (send exactly one "
                           "frame holding Envelope.SerializeToString(), no delimiter frame)"};
  }
  const uint32_t version = envelope.protocol_version();
  if (version == 0 || version > kProtocolVersion) {
    return DecodeError{
        v1::ErrorReply::UNSUPPORTED_VERSION, envelope.request_id(),
        "protocol_version " + std::to_string(version) + (version == 0 ? " (unset)" : "") +
            " is not supported; this side speaks 1.." + std::to_string(kProtocolVersion)};
  }
  if (envelope.body_case() == v1::Envelope::BODY_NOT_SET) {
    return DecodeError{v1::ErrorReply::UNKNOWN_MESSAGE, envelope.request_id(),
                       "the envelope has no body this side knows (protocol version " +
                           std::to_string(kProtocolVersion) + ")"};
  }
  return DecodeResult(std::move(envelope));
}

DecodeResult decodeRequest(const std::vector<std::string_view>& frames) {
  if (frames.size() == 1) return decodeEnvelope(frames[0].data(), frames[0].size());
  if (frames.size() == 2 && frames[0].empty()) {
    return DecodeError{v1::ErrorReply::MALFORMED, 0,
                       "an empty delimiter frame came before the envelope (a REQ socket's "
                       "framing): send exactly one frame holding the serialized Envelope from a "
                       "DEALER, without the empty frame"};
  }
  return DecodeError{v1::ErrorReply::MALFORMED, 0,
                     "a request of " + std::to_string(frames.size()) +
                         " frames: send exactly one frame holding the serialized Envelope"};
}

std::string encodeEnvelope(const v1::Envelope& envelope) { return envelope.SerializeAsString(); }

v1::Envelope newEnvelope(uint64_t requestId) {
  v1::Envelope envelope;
  envelope.set_protocol_version(kProtocolVersion);
  envelope.set_request_id(requestId);
  return envelope;
}

v1::Envelope makeErrorReply(uint64_t requestId, v1::ErrorReply::Code code, std::string message) {
  v1::Envelope envelope = newEnvelope(requestId);
  v1::ErrorReply* error = envelope.mutable_error();
  error->set_code(code);
  error->set_message(std::move(message));
  return envelope;
}

v1::Envelope makeErrorReply(const DecodeError& error) {
  return makeErrorReply(error.requestId, error.code, error.message);
}

v1::ErrorReply::Code errorCodeFor(Status::Code code) {
  switch (code) {
    case Status::Code::kOk:
      return v1::ErrorReply::CODE_UNSPECIFIED;
    case Status::Code::kInvalidArgument:
      return v1::ErrorReply::INVALID_ARGUMENT;
    case Status::Code::kNotFound:
      return v1::ErrorReply::NOT_FOUND;
    case Status::Code::kResourceExhausted:
      return v1::ErrorReply::RESOURCE_EXHAUSTED;
    case Status::Code::kFailedPrecondition:
    case Status::Code::kAborted:
      return v1::ErrorReply::FAILED_PRECONDITION;
    case Status::Code::kCorruption:
    case Status::Code::kIOError:
    case Status::Code::kInternal:
      return v1::ErrorReply::INTERNAL;
  }
  return v1::ErrorReply::INTERNAL;
}

bool isControlRequest(const v1::Envelope& envelope) {
  switch (envelope.body_case()) {
    case v1::Envelope::kHello:
    case v1::Envelope::kListRuns:
    case v1::Envelope::kLaunchRun:
    case v1::Envelope::kStopRun:
    case v1::Envelope::kFetchRunData:
    case v1::Envelope::kTailLog:
    case v1::Envelope::kSetDrain:
    case v1::Envelope::kPreflight:
    case v1::Envelope::kFetchTelemetry:
    case v1::Envelope::kReorderQueuedRun:
    case v1::Envelope::kLaunchSweep:
    case v1::Envelope::kListSweeps:
    case v1::Envelope::kControlSweep:
      return true;
    default:
      return false;
  }
}

const char* bodyName(const v1::Envelope& envelope) {
  if (envelope.body_case() == v1::Envelope::BODY_NOT_SET) return "(none)";
  const google::protobuf::FieldDescriptor* field =
      v1::Envelope::descriptor()->FindFieldByNumber(envelope.body_case());
  // Descriptor names live as long as the generated pool, i.e. the process.
  return field != nullptr ? field->name().c_str() : "(unknown)";
}

const char* errorCodeName(v1::ErrorReply::Code code) {
  const google::protobuf::EnumValueDescriptor* value =
      v1::ErrorReply::Code_descriptor()->FindValueByNumber(code);
  return value != nullptr ? value->name().c_str() : "CODE_UNKNOWN";
}

const char* rankPhaseName(v1::RankPhase phase) {
  switch (phase) {
    case v1::SETUP:
      return "set-up";
    case v1::DATA:
      return "data";
    case v1::COMPUTE:
      return "compute";
    case v1::ALLREDUCE:
      return "all-reduce";
    case v1::OPTIMIZER:
      return "optimizer";
    case v1::EVALUATION:
      return "evaluation";
    case v1::CHECKPOINT:
      return "checkpoint";
    case v1::SYNC:
      return "synchronisation";
    case v1::FINISHING:
      return "finishing";
    default:
      return "unknown";
  }
}

}  // namespace ringside::protocol
