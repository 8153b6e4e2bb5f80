// Status and Result: error values for the core (docs/design.md decision 9, after leveldb's Status).
// Exceptions are used only at process edges; core functions return a Status or Result<T> whose
// message says what failed, with which value, and what to do.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace ringside {

// [[nodiscard]]: a Status (or Result) that is neither checked nor returned is a compile error
// (-Werror=unused-result); drop one on purpose with `(void)` and a comment saying why.
class [[nodiscard]] Status {
 public:
  enum class Code {
    kOk = 0,
    kInvalidArgument,  // a bad option, config value or request
    kNotFound,         // a file, dataset or entity that does not exist
    kCorruption,       // data that exists but fails validation (bad magic, checksum, size)
    kIOError,          // the OS refused a read or write
    kInternal,         // a failed library call (MPI, CUDA, NCCL, BLAS)
    kAborted,          // stopped on request or because another rank failed
    kResourceExhausted,  // not enough of something (free slots, queue space)
    kFailedPrecondition, // the system is not in a state that allows the call (node draining)
  };

  Status() = default;
  static Status ok() { return Status(); }
  static Status invalidArgument(std::string msg) {
    return {Code::kInvalidArgument, std::move(msg)};
  }
  static Status notFound(std::string msg) { return {Code::kNotFound, std::move(msg)}; }
  static Status corruption(std::string msg) { return {Code::kCorruption, std::move(msg)}; }
  static Status ioError(std::string msg) { return {Code::kIOError, std::move(msg)}; }
  static Status internal(std::string msg) { return {Code::kInternal, std::move(msg)}; }
  static Status aborted(std::string msg) { return {Code::kAborted, std::move(msg)}; }
  static Status resourceExhausted(std::string msg) {
    return {Code::kResourceExhausted, std::move(msg)};
  }
  static Status failedPrecondition(std::string msg) {
    return {Code::kFailedPrecondition, std::move(msg)};
  }

  bool isOk() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  // "InvalidArgument: <message>", or "OK".
  std::string toString() const;
  // Returns a copy whose message is "<context>: <message>"; OK stays OK.
  Status withContext(const std::string& context) const;

 private:
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}
  Code code_ = Code::kOk;
  std::string message_;
};

// A value or the Status that explains why there is none. Not thread-safe (a plain value type).
// The value accessors assert that there is a value (a Result holding an error has none).
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}         // NOLINT(google-explicit-constructor)
  Result(Status status) : status_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    assert(!status_.isOk() && "Result needs a value or an error");
  }
  bool isOk() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  T& value() & { return checked(), *value_; }
  const T& value() const& { return checked(), *value_; }
  T&& value() && { return checked(), std::move(*value_); }
  T* operator->() { return checked(), &*value_; }
  const T* operator->() const { return checked(), &*value_; }
  T& operator*() { return checked(), *value_; }
  const T& operator*() const { return checked(), *value_; }

 private:
  void checked() const { assert(value_.has_value() && "Result::value() on an error"); }
  std::optional<T> value_;
  Status status_;
};

}  // namespace ringside

// Returns the Status of `expr` from the enclosing function when it is not OK.
#define RINGSIDE_RETURN_IF_ERROR(expr)                     \
  do {                                                     \
    ::ringside::Status ringside_status_ = (expr);          \
    if (!ringside_status_.isOk()) return ringside_status_; \
  } while (0)
