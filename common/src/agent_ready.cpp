#include "ringside/common/agent_ready.h"

#include <google/protobuf/util/json_util.h>

#include "ringside/common/file_io.h"

namespace ringside {

Status writeAgentReady(const std::string& path, const v1::AgentReady& ready) {
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  if (!google::protobuf::util::MessageToJsonString(ready, &json, options).ok()) {
    return Status::internal("cannot encode the agent's ready file as JSON");
  }
  json += '\n';
  return writeFileAtomic(path, json, 0600);
}

Result<v1::AgentReady> readAgentReady(const std::string& path) {
  Result<std::string> text = readSmallFile(path, kMaxAgentReadyBytes, nullptr);
  if (!text.isOk()) return text.status();
  v1::AgentReady ready;
  const auto parsed = google::protobuf::util::JsonStringToMessage(*text, &ready);
  if (!parsed.ok()) {
    return Status::corruption("the agent's ready file " + path +
                              " is not an AgentReady JSON object: " + parsed.ToString());
  }
  if (ready.control_endpoint().empty() || ready.events_endpoint().empty()) {
    return Status::corruption("the agent's ready file " + path + " names no endpoints");
  }
  return ready;
}

}  // namespace ringside
