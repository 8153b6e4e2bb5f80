#include "cuda_check.h"

#include <string_view>

namespace ringside::trainer::gpu {

namespace {

// "ncclAllReduce(grads + offset, ...)" -> "ncclAllReduce"; a message names the call, not its
// arguments.
std::string_view callName(const char* expression) {
  const std::string_view text(expression);
  return text.substr(0, text.find('('));
}

std::string_view baseName(const char* file) {
  const std::string_view path(file);
  const size_t slash = path.find_last_of('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

Status failure(const ErrorContext& where, const char* expression, const std::string& error,
               const char* file, int line) {
  return Status::internal(where.prefix() + ": " + std::string(callName(expression)) +
                          " failed: " + error + " (" + std::string(baseName(file)) + ":" +
                          std::to_string(line) + ")");
}

}  // namespace

Status cudaFailure(const ErrorContext& where, cudaError_t code, const char* expression,
                   const char* file, int line) {
  return failure(where, expression,
                 std::string(cudaGetErrorString(code)) + " [" + cudaGetErrorName(code) + "]", file,
                 line);
}

Status cublasFailure(const ErrorContext& where, cublasStatus_t code, const char* expression,
                     const char* file, int line) {
  return failure(where, expression, cublasGetStatusString(code), file, line);
}

Status cudnnFailure(const ErrorContext& where, cudnnStatus_t code, const char* expression,
                    const char* file, int line) {
  return failure(where, expression, cudnnGetErrorString(code), file, line);
}

Status ncclFailure(const ErrorContext& where, ncclResult_t code, const char* expression,
                   const char* file, int line) {
  std::string error = ncclGetErrorString(code);
  // NCCL documents the argument as unused. The text is NCCL's most recent error, so after an
  // earlier failure it may describe that one; it is still the best lead a user gets.
  const char* detail = ncclGetLastError(nullptr);
  if (detail != nullptr && detail[0] != '\0') error += std::string(": ") + detail;
  return failure(where, expression, error, file, line);
}

}  // namespace ringside::trainer::gpu
