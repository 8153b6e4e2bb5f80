// Wire protocol helpers: framing limits, default ports, and the decode/encode of the one frame
// every message travels in (a serialized ringside.v1.Envelope, common/proto/ringside.proto).
// docs/protocol.md is the page a client in another language is written from; keep it in step.
//
// Thread-safety: every function here is pure (no shared state) and safe to call from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ringside/common/status.h"
#include "ringside/proto/ringside.pb.h"

namespace ringside::protocol {

// Envelope.protocol_version this build speaks. A receiver accepts 1..kProtocolVersion and answers
// a newer (or an unset, 0) version with ErrorReply{UNSUPPORTED_VERSION}.
inline constexpr uint32_t kProtocolVersion = 2;

// The oldest protocol_version an agent serves control requests from. Version 2 counts slots by
// kind (NodeInfo.cpu_slots_total, gpu_slots_total): a version 1 client would read a GPU node's
// slots as its GPUs only and offer no CPU runs there, so the agent answers it with
// ErrorReply{UNSUPPORTED_VERSION} naming both versions and what to upgrade. Rank messages are
// unchanged since version 1 and accepted from either.
inline constexpr uint32_t kMinControlProtocolVersion = 2;

// Largest frame (serialized Envelope) a receiver decodes: 16 MiB. Larger frames are answered with
// ErrorReply{TOO_LARGE} without being parsed. Senders keep every message under it (the agent pages
// FetchRunData replies well below it).
inline constexpr size_t kMaxMessageBytes = size_t{16} * 1024 * 1024;

// ZMQ_MAXMSGSIZE of every socket of the protocol, at both ends (agent and GUI): 64 MiB. ZeroMQ
// drops the connection on a larger frame, silently; frames between kMaxMessageBytes and this are
// received and then refused by the decoder (TOO_LARGE), so a receiver can say what it refused.
inline constexpr int64_t kTransportMaxMessageBytes = int64_t{64} * 1024 * 1024;

// Byte budget of the entries of one reply page (FetchRunData samples, log lines and states;
// ListRuns runs; TailLog lines), measured as their serialized size: 8 MiB, half of
// kMaxMessageBytes, leaving room for the envelope and the page's RunInfo. A page holds at least
// one entry; no single entry is larger than the budget (log lines are at most 64 KiB, a RunInfo
// at most about kMaxRunSpecBytes plus its reason), so every reply stays under kMaxMessageBytes.
inline constexpr size_t kMaxReplyPageBytes = size_t{8} * 1024 * 1024;

// Default TCP ports of an agent: control (ROUTER) and events (PUB), on 127.0.0.1 unless
// `ringside-agent --listen` names another address.
inline constexpr uint16_t kDefaultControlPort = 47600;
inline constexpr uint16_t kDefaultEventsPort = 47601;

// Default TCP port of an agent's rank endpoint (PULL, CURVE): ranks of a multi-node run on other
// nodes push their metrics there (`ringside-agent --rank-port`).
inline constexpr uint16_t kDefaultRankPort = 47602;

// Environment variables the agent sets for the ranks of a run: the endpoint of its PULL socket
// (ipc:// for a run on its own node; its CURVE tcp:// rank endpoint for a multi-node run) and the
// run id the ranks put in RankMetrics.run_id.
inline constexpr const char* kAgentEndpointEnv = "RINGSIDE_AGENT_ENDPOINT";
inline constexpr const char* kRunIdEnv = "RINGSIDE_RUN_ID";
// Set with a tcp:// endpoint only: the owning agent's public key, and the run's own CURVE keypair
// (Z85), which opens the agent's rank endpoint for this run's metrics and nothing else. A rank
// refuses a tcp:// endpoint without them (metrics are never sent in plaintext across nodes).
inline constexpr const char* kAgentPublicKeyEnv = "RINGSIDE_AGENT_PUBLIC_KEY";
inline constexpr const char* kRunPublicKeyEnv = "RINGSIDE_RUN_PUBLIC_KEY";
inline constexpr const char* kRunSecretKeyEnv = "RINGSIDE_RUN_SECRET_KEY";
// Set for the ranks of a multi-node run on a node whose pre-flight held slots for it
// (HostSlots.reservation_id): that node's agent ends the hold when it sees them.
inline constexpr const char* kReservationIdEnv = "RINGSIDE_RESERVATION_ID";

// Why a frame could not be decoded: the ErrorReply to answer it with.
struct DecodeError {
  v1::ErrorReply::Code code = v1::ErrorReply::MALFORMED;
  // The request_id to echo: the frame's own when it parsed (UNSUPPORTED_VERSION,
  // UNKNOWN_MESSAGE), 0 when it did not (MALFORMED, TOO_LARGE).
  uint64_t requestId = 0;
  std::string message;  // what was wrong and what to do
};

// The outcome of decodeEnvelope. It is a Result<v1::Envelope> (isOk(), value(), status() work as
// usual; status() is Corruption for MALFORMED and InvalidArgument otherwise) that also carries the
// DecodeError, so a server can answer with the right ErrorReply code and request id.
// Not thread-safe (a plain value type).
class DecodeResult : public Result<v1::Envelope> {
 public:
  DecodeResult(v1::Envelope envelope);  // NOLINT(google-explicit-constructor)
  DecodeResult(DecodeError error);      // NOLINT(google-explicit-constructor)
  // Valid when !isOk(); a default DecodeError otherwise.
  const DecodeError& error() const { return error_; }

 private:
  DecodeError error_;
};

// Decodes one frame of `size` bytes at `data` (may be null when size is 0). Checks, in order:
// size > kMaxMessageBytes -> TOO_LARGE; empty, or not a parseable Envelope -> MALFORMED;
// protocol_version 0 or > kProtocolVersion -> UNSUPPORTED_VERSION; no body (including a body
// field this build does not know, which protobuf keeps as an unknown field) -> UNKNOWN_MESSAGE.
// Unknown fields are tolerated everywhere else. Never throws.
DecodeResult decodeEnvelope(const void* data, size_t size);

// Decodes a request as the control socket receives it, after the ROUTER's routing id: exactly
// one frame (docs/protocol.md#framing), decoded with decodeEnvelope. Any other count is
// MALFORMED, request_id 0, without looking at the frames' contents: in particular a DEALER that
// sends ["", envelope] (the empty delimiter of REQ sockets) is told to drop the empty frame.
// Never throws.
DecodeResult decodeRequest(const std::vector<std::string_view>& frames);

// Serializes `envelope` into one frame. The caller sets protocol_version (newEnvelope does).
// Never fails for a message built through the generated API.
std::string encodeEnvelope(const v1::Envelope& envelope);

// An empty Envelope with protocol_version = kProtocolVersion and `requestId`; set its body.
v1::Envelope newEnvelope(uint64_t requestId);

// An Envelope holding ErrorReply{code, message} for `requestId`.
v1::Envelope makeErrorReply(uint64_t requestId, v1::ErrorReply::Code code, std::string message);

// The ErrorReply that answers a frame decodeEnvelope refused.
v1::Envelope makeErrorReply(const DecodeError& error);

// The ErrorReply code for a failed request handler's Status: InvalidArgument -> INVALID_ARGUMENT,
// NotFound -> NOT_FOUND, ResourceExhausted -> RESOURCE_EXHAUSTED, FailedPrecondition and
// Aborted -> FAILED_PRECONDITION, Corruption/IOError/Internal -> INTERNAL, Ok -> CODE_UNSPECIFIED.
v1::ErrorReply::Code errorCodeFor(Status::Code code);

// True for the bodies a client sends on the control socket (hello ... set_drain).
bool isControlRequest(const v1::Envelope& envelope);

// The body's field name in the .proto ("hello", "metric_batch", ...) or "(none)", for logs.
// The pointer stays valid for the life of the process.
const char* bodyName(const v1::Envelope& envelope);

// "MALFORMED", "TOO_LARGE", ... for logs.
const char* errorCodeName(v1::ErrorReply::Code code);

// A rank's phase (RankHeartbeat.phase) in words for messages: "set-up", "data", "compute",
// "all-reduce", "optimizer", "evaluation", "checkpoint", "synchronisation", "finishing"; "unknown"
// for another value. The one spelling the trainer's and the agent's messages share.
const char* rankPhaseName(v1::RankPhase phase);

}  // namespace ringside::protocol
