// What the GUI accepts from an agent (docs/protocol.md#limits; docs/security.md, "What a node
// can do to the GUI"). A node is one machine among several and may be broken or compromised: the
// GUI bounds every reply and event it sends to the protocol's limits (protocol_limits.h,
// run_spec_limits.h) where the message arrives, on the connection's network thread, so that no
// work proportional to an agent's claims reaches the GUI thread. Over a bound:
//  - text a person reads (run names, reasons, error messages, node descriptions, log lines) is
//    clipped at a character boundary and ends with an ellipsis ("…");
//  - an entry that cannot be clipped meaningfully (a metric sample with a bad name or rank, a GPU
//    index past the per-node bound, a run with a bad id in a list) is dropped;
//  - a list the GUI sizes work by (a run's placement or host list past the world-size bound, a
//    run spec past its limits) is refused as a whole: the run keeps its name and tags;
//  - a reply that cannot be used at all (a catch-up page over its entry bound, a reply that names
//    no valid run) becomes an ErrorReply saying why, so the request fails as on any agent error.
// Every change is written to a BoundsReport, which the connection logs and reports, naming the
// node (AgentConnection::agentDataRefused).
//
// Qt-free (the standard library and protobuf only), so the fuzz tier builds it with clang
// (tests/fuzz/agent_message_fuzzer.cpp). Thread-safety: pure functions over their arguments.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "ringside/proto/ringside.pb.h"

namespace ringside::gui {

// What bounding one message changed: one sentence per kind of change, e.g. "the reason of run
// r1 is 4194304 bytes, over the limit of 4096: clipped". Not thread-safe (a plain value).
class BoundsReport {
 public:
  // Sentences kept; more are only counted.
  static constexpr size_t kMaxKept = 8;

  void add(std::string finding);
  bool empty() const { return count_ == 0; }
  // Findings added, kept or not.
  size_t count() const { return count_; }
  // The first kMaxKept findings.
  const std::vector<std::string>& findings() const { return findings_; }
  // The kept findings joined with "; ", and "(and N more)" when some were not kept; "" if empty.
  std::string summary() const;

 private:
  std::vector<std::string> findings_;
  size_t count_ = 0;
};

// Cuts `text` to at most `maxBytes` bytes when it is longer: the longest prefix that does not end
// inside a UTF-8 sequence, then "…" (3 bytes), together within maxBytes (maxBytes >= 3). Returns
// true when it cut.
bool clipText(std::string& text, size_t maxBytes);

// A run id the GUI accepts: 1 to kMaxRunIdBytes bytes, no control characters (bytes below 0x20
// and 0x7f).
bool isValidRunId(std::string_view runId);

// A metric sample the GUI stores: name of 1 to kMaxMetricNameBytes bytes without control
// characters, rank -1 or 0..kMaxWorldSize-1.
bool isValidSample(const v1::MetricSample& sample);

// The bounds of each message part (see the file comment). They leave the run id alone: whoever
// holds the part checks it (isValidRunId).
void boundNodeInfo(v1::NodeInfo& node, BoundsReport& report);
void boundTelemetry(v1::NodeTelemetry& telemetry, BoundsReport& report);
void boundRunSpec(v1::RunSpec& spec, const std::string& runId, BoundsReport& report);
void boundRunInfo(v1::RunInfo& run, BoundsReport& report);
void boundLogLine(v1::LogLine& line, BoundsReport& report);
// A sweep (SweepInfo) as an agent reports it: at most kMaxSweepTrialsShown trials (later ones
// dropped), names, reasons and parameter texts clipped, the base run spec bounded as a run's.
inline constexpr int kMaxSweepTrialsShown = 1000;
void boundSweep(v1::SweepInfo& sweep, BoundsReport& report);

// Where a message came from: a reply on the control socket, or an event on the events socket.
enum class AgentChannel { kReply, kEvent };

// Bounds one decoded message from an agent in place (see the file comment), and drops the
// fields this build does not know (protobuf keeps them otherwise, whatever their size). A reply
// whose body is no reply the GUI reads (a request, an event) becomes an ErrorReply
// {UNKNOWN_MESSAGE}; an event whose body is no event, or an event that names no valid run, loses
// its body (the connection ignores it). Work is linear in the message's size.
void boundAgentMessage(v1::Envelope& envelope, AgentChannel channel, BoundsReport& report);

}  // namespace ringside::gui
