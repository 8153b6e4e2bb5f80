#include "ringside/common/status.h"

namespace ringside {

namespace {
const char* codeName(Status::Code code) {
  switch (code) {
    case Status::Code::kOk:
      return "OK";
    case Status::Code::kInvalidArgument:
      return "InvalidArgument";
    case Status::Code::kNotFound:
      return "NotFound";
    case Status::Code::kCorruption:
      return "Corruption";
    case Status::Code::kIOError:
      return "IOError";
    case Status::Code::kInternal:
      return "Internal";
    case Status::Code::kAborted:
      return "Aborted";
    case Status::Code::kResourceExhausted:
      return "ResourceExhausted";
    case Status::Code::kFailedPrecondition:
      return "FailedPrecondition";
  }
  return "Unknown";
}
}  // namespace

std::string Status::toString() const {
  if (isOk()) return "OK";
  return std::string(codeName(code_)) + ": " + message_;
}

Status Status::withContext(const std::string& context) const {
  if (isOk()) return *this;
  return Status(code_, context + ": " + message_);
}

}  // namespace ringside
