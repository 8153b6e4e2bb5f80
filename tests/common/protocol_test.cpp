// Envelope framing: round trips of the message kinds, and the ErrorReply code each bad frame gets.
#include "ringside/common/protocol.h"

#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include <string>

namespace ringside::protocol {
namespace {

using google::protobuf::util::MessageDifferencer;

// Encodes and decodes `envelope`, expecting success and an identical message.
void expectRoundTrip(const v1::Envelope& envelope) {
  const std::string frame = encodeEnvelope(envelope);
  DecodeResult decoded = decodeEnvelope(frame.data(), frame.size());
  ASSERT_TRUE(decoded.isOk()) << decoded.status().toString();
  EXPECT_TRUE(MessageDifferencer::Equals(envelope, decoded.value()))
      << "sent:\n"
      << envelope.DebugString() << "received:\n"
      << decoded->DebugString();
}

DecodeError expectRefused(const std::string& frame, v1::ErrorReply::Code code) {
  DecodeResult decoded = decodeEnvelope(frame.data(), frame.size());
  EXPECT_FALSE(decoded.isOk());
  EXPECT_EQ(decoded.error().code, code)
      << errorCodeName(decoded.error().code) << ": " << decoded.error().message;
  EXPECT_FALSE(decoded.error().message.empty());
  EXPECT_FALSE(decoded.status().isOk());
  return decoded.error();
}

// Appends a varint field `number` = `value` (wire type 0) to a serialized message.
void appendVarintField(std::string& bytes, uint32_t number, uint64_t value) {
  uint64_t tag = uint64_t{number} << 3;
  for (uint64_t v : {tag, value}) {
    while (v >= 0x80) {
      bytes.push_back(static_cast<char>((v & 0x7f) | 0x80));
      v >>= 7;
    }
    bytes.push_back(static_cast<char>(v));
  }
}

TEST(ProtocolTest, HelloRoundTrip) {
  v1::Envelope envelope = newEnvelope(7);
  envelope.mutable_hello()->set_client_name("protocol_test");
  expectRoundTrip(envelope);
  EXPECT_STREQ(bodyName(envelope), "hello");
  EXPECT_TRUE(isControlRequest(envelope));
}

TEST(ProtocolTest, HelloReplyRoundTrip) {
  v1::Envelope envelope = newEnvelope(7);
  v1::HelloReply* reply = envelope.mutable_hello_reply();
  reply->set_protocol_version(kProtocolVersion);
  v1::NodeInfo* node = reply->mutable_node();
  node->set_node_id("a1b2c3");
  node->set_hostname("node-1");
  node->set_cpu_cores(16);
  node->set_slot_kind("gpu");
  v1::GpuInfo* gpu = node->add_gpus();
  gpu->set_name("NVIDIA H100");
  gpu->set_memory_total_mib(81559);
  node->add_labels("rack-a");
  expectRoundTrip(envelope);
  EXPECT_FALSE(isControlRequest(envelope));
}

TEST(ProtocolTest, LaunchRunRoundTrip) {
  v1::Envelope envelope = newEnvelope(uint64_t{1} << 40);
  v1::RunSpec* spec = envelope.mutable_launch_run()->mutable_spec();
  spec->set_name("mnist-2x");
  spec->add_tags("baseline");
  spec->mutable_command()->add_argv("python3");
  spec->mutable_command()->add_argv("train.py");
  spec->set_ranks_per_node(2);
  (*spec->mutable_env())["OMP_NUM_THREADS"] = "1";
  (*spec->mutable_env())["SEED"] = "42";
  v1::HostSlots* host = spec->add_hosts();
  host->set_host("node-2");
  host->set_ranks(4);
  expectRoundTrip(envelope);
  EXPECT_STREQ(bodyName(envelope), "launch_run");
}

TEST(ProtocolTest, FetchRunDataReplyRoundTrip) {
  v1::Envelope envelope = newEnvelope(99);
  v1::FetchRunDataReply* reply = envelope.mutable_fetch_run_data_reply();
  reply->set_run_id("run-1");
  for (int i = 1; i <= 3; ++i) {
    v1::MetricSample* sample = reply->add_samples();
    sample->set_seq(i);
    sample->set_step(i * 10);
    sample->set_rank(-1);
    sample->set_name("train/loss");
    sample->set_value(1.0 / i);
  }
  v1::LogLine* line = reply->add_log_lines();
  line->set_seq(4);
  line->set_stream("stderr");
  line->set_text("warning: \xc3\xa9");  // UTF-8 survives
  v1::RunStateEvent* state = reply->add_states();
  state->set_seq(5);
  state->mutable_run()->set_state(v1::FAILED);
  state->mutable_run()->set_reason("rank 1 killed by signal 9");
  reply->set_last_seq(5);
  reply->set_more(true);
  expectRoundTrip(envelope);
}

TEST(ProtocolTest, TelemetryKeepsAbsentDistinctFromZero) {
  v1::Envelope envelope = newEnvelope(0);
  v1::NodeTelemetry* telemetry = envelope.mutable_node_telemetry();
  telemetry->set_cpu_pct(0.0);  // present, zero
  v1::GpuTelemetry* gpu = telemetry->add_gpus();
  gpu->set_util_pct(55.0);  // power_w left absent
  const std::string frame = encodeEnvelope(envelope);
  DecodeResult decoded = decodeEnvelope(frame.data(), frame.size());
  ASSERT_TRUE(decoded.isOk());
  const v1::NodeTelemetry& received = decoded->node_telemetry();
  EXPECT_TRUE(received.has_cpu_pct());
  EXPECT_FALSE(received.has_mem_used_mib());
  EXPECT_TRUE(received.gpus(0).has_util_pct());
  EXPECT_FALSE(received.gpus(0).has_power_w());
  EXPECT_STREQ(bodyName(decoded.value()), "node_telemetry");
}

TEST(ProtocolTest, RankMetricsRoundTrip) {
  v1::Envelope envelope = newEnvelope(0);
  v1::RankMetrics* metrics = envelope.mutable_rank_metrics();
  metrics->set_run_id("run-1");
  metrics->set_rank(1);
  metrics->set_batch_seq(12);
  metrics->set_dropped_total(3);
  v1::RankMetricPoint* point = metrics->add_points();
  point->set_name("time/step_ms");
  point->set_value(12.5);
  point->set_global(false);
  expectRoundTrip(envelope);
}

TEST(ProtocolTest, ErrorReplyRoundTrip) {
  v1::Envelope envelope = makeErrorReply(5, v1::ErrorReply::NOT_FOUND, "no run 'x'");
  EXPECT_EQ(envelope.protocol_version(), kProtocolVersion);
  EXPECT_EQ(envelope.request_id(), 5u);
  expectRoundTrip(envelope);
  EXPECT_STREQ(bodyName(envelope), "error");
}

TEST(ProtocolTest, MalformedBytesGetMalformed) {
  // Field 1 with wire type 7, which does not exist.
  expectRefused(std::string("\x0f\x01", 2), v1::ErrorReply::MALFORMED);
  // A valid frame cut inside a length-delimited field.
  v1::Envelope envelope = newEnvelope(3);
  envelope.mutable_hello()->set_client_name("a client name long enough to cut");
  const std::string frame = encodeEnvelope(envelope);
  DecodeError error = expectRefused(frame.substr(0, frame.size() - 5), v1::ErrorReply::MALFORMED);
  EXPECT_EQ(error.requestId, 0u);  // unparsed: nothing to echo
  expectRefused("this is not protobuf at all", v1::ErrorReply::MALFORMED);
}

TEST(ProtocolTest, EmptyFrameIsMalformed) {
  // An empty frame is what a REQ-style delimiter looks like to the agent.
  DecodeResult decoded = decodeEnvelope(nullptr, 0);
  ASSERT_FALSE(decoded.isOk());
  EXPECT_EQ(decoded.error().code, v1::ErrorReply::MALFORMED);
  EXPECT_EQ(decoded.status().code(), Status::Code::kCorruption);
}

// Regression: a DEALER frame ["", envelope] was answered as if the delimiter were not
// there, while docs/protocol.md#framing says a request is exactly one frame and the empty frame
// gets MALFORMED. The code now follows the doc (REQ/REP framing is not part of the protocol).
TEST(ProtocolTest, DealerFrameWithAnEmptyDelimiterIsMalformedAsTheProtocolDocSays) {
  v1::Envelope hello = newEnvelope(42);
  hello.mutable_hello();
  const std::string frame = encodeEnvelope(hello);

  DecodeResult single = decodeRequest({frame});
  ASSERT_TRUE(single.isOk()) << single.status().toString();
  EXPECT_EQ(single->request_id(), 42u);

  DecodeResult delimited = decodeRequest({"", frame});
  ASSERT_FALSE(delimited.isOk());
  EXPECT_EQ(delimited.error().code, v1::ErrorReply::MALFORMED);
  EXPECT_EQ(delimited.error().requestId, 0u) << "MALFORMED echoes no request id";
  EXPECT_NE(delimited.error().message.find("empty delimiter frame"), std::string::npos)
      << delimited.error().message;

  for (const std::vector<std::string_view>& frames :
       {std::vector<std::string_view>{frame, frame}, std::vector<std::string_view>{"", "", frame},
        std::vector<std::string_view>{}}) {
    DecodeResult refused = decodeRequest(frames);
    ASSERT_FALSE(refused.isOk()) << frames.size() << " frames";
    EXPECT_EQ(refused.error().code, v1::ErrorReply::MALFORMED);
    EXPECT_NE(refused.error().message.find("exactly one frame"), std::string::npos)
        << refused.error().message;
  }
}

TEST(ProtocolTest, OversizedFrameIsTooLarge) {
  const std::string frame(kMaxMessageBytes + 1, '\0');
  DecodeError error = expectRefused(frame, v1::ErrorReply::TOO_LARGE);
  EXPECT_EQ(error.requestId, 0u);
}

TEST(ProtocolTest, EmptyBodyIsUnknownMessage) {
  v1::Envelope envelope = newEnvelope(11);
  DecodeError error = expectRefused(encodeEnvelope(envelope), v1::ErrorReply::UNKNOWN_MESSAGE);
  EXPECT_EQ(error.requestId, 11u);
  EXPECT_STREQ(bodyName(envelope), "(none)");
}

TEST(ProtocolTest, UnknownBodyFromANewerPeerIsUnknownMessage) {
  // A body field this build does not have (number 29, length-delimited, empty).
  std::string frame = encodeEnvelope(newEnvelope(12));
  frame += std::string("\xea\x01\x00", 3);  // tag (29 << 3 | 2) = 234 -> varint ea 01; length 0
  DecodeError error = expectRefused(frame, v1::ErrorReply::UNKNOWN_MESSAGE);
  EXPECT_EQ(error.requestId, 12u);
}

TEST(ProtocolTest, NewerVersionIsUnsupported) {
  v1::Envelope envelope = newEnvelope(13);
  envelope.set_protocol_version(kProtocolVersion + 1);
  envelope.mutable_list_runs();
  DecodeError error = expectRefused(encodeEnvelope(envelope), v1::ErrorReply::UNSUPPORTED_VERSION);
  EXPECT_EQ(error.requestId, 13u);
  v1::Envelope reply = makeErrorReply(error);
  EXPECT_EQ(reply.request_id(), 13u);
  EXPECT_EQ(reply.error().code(), v1::ErrorReply::UNSUPPORTED_VERSION);
}

TEST(ProtocolTest, UnsetVersionIsUnsupported) {
  v1::Envelope envelope;
  envelope.set_request_id(14);
  envelope.mutable_list_runs();
  expectRefused(encodeEnvelope(envelope), v1::ErrorReply::UNSUPPORTED_VERSION);
}

TEST(ProtocolTest, UnknownFieldsAreTolerated) {
  v1::Envelope envelope = newEnvelope(15);
  envelope.mutable_stop_run()->set_run_id("run-7");
  std::string frame = encodeEnvelope(envelope);
  appendVarintField(frame, 999, 42);  // an envelope field from the future
  DecodeResult decoded = decodeEnvelope(frame.data(), frame.size());
  ASSERT_TRUE(decoded.isOk()) << decoded.status().toString();
  EXPECT_EQ(decoded->stop_run().run_id(), "run-7");

  // And inside a nested message: StopRunRequest with an extra field 50.
  v1::StopRunRequest stop;
  stop.set_run_id("run-8");
  std::string stopBytes = stop.SerializeAsString();
  appendVarintField(stopBytes, 50, 1);
  std::string nested = encodeEnvelope(newEnvelope(16));
  nested += '\x6a';  // field 13 (stop_run), wire type 2
  nested += static_cast<char>(stopBytes.size());
  nested += stopBytes;
  DecodeResult decodedNested = decodeEnvelope(nested.data(), nested.size());
  ASSERT_TRUE(decodedNested.isOk()) << decodedNested.status().toString();
  EXPECT_EQ(decodedNested->stop_run().run_id(), "run-8");
}

TEST(ProtocolTest, StatusCodesMapToErrorReplyCodes) {
  EXPECT_EQ(errorCodeFor(Status::Code::kInvalidArgument), v1::ErrorReply::INVALID_ARGUMENT);
  EXPECT_EQ(errorCodeFor(Status::Code::kNotFound), v1::ErrorReply::NOT_FOUND);
  EXPECT_EQ(errorCodeFor(Status::Code::kResourceExhausted), v1::ErrorReply::RESOURCE_EXHAUSTED);
  EXPECT_EQ(errorCodeFor(Status::Code::kFailedPrecondition), v1::ErrorReply::FAILED_PRECONDITION);
  EXPECT_EQ(errorCodeFor(Status::Code::kIOError), v1::ErrorReply::INTERNAL);
  EXPECT_STREQ(errorCodeName(v1::ErrorReply::TOO_LARGE), "TOO_LARGE");
}

}  // namespace
}  // namespace ringside::protocol
