// Check macros for CUDA runtime, cuBLAS, cuDNN and NCCL calls (docs/design.md decision 9, after
// nccl-tests' CUDACHECK/NCCLCHECK): a failing call returns, from the enclosing function, a
// Status::internal whose message names the host, the rank, the call, the library's error text, file
// and line:
//   "gpu-node-1 rank 3: ncclAllReduce failed: unhandled cuda error (nccl_backend.cu:212)"
// The enclosing function must return Status (or Result<T>). Only for files compiled by nvcc or
// with the CUDA toolkit's include directory.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>
#include <nccl.h>

#include <string>

#include "ringside/common/status.h"

namespace ringside::trainer::gpu {

// Where the calls run: goes into every error message. A plain value; thread-safe to read.
struct ErrorContext {
  std::string host;  // Communicator::hostname()
  int rank = 0;      // Communicator::rank()

  // "<host> rank <rank>"
  std::string prefix() const { return host + " rank " + std::to_string(rank); }
};

// The Status for a failed call. `expression` is the stringified call; only the function name
// (the text before its first '(') goes into the message, and only the base name of `file`.
Status cudaFailure(const ErrorContext& where, cudaError_t code, const char* expression,
                   const char* file, int line);
Status cublasFailure(const ErrorContext& where, cublasStatus_t code, const char* expression,
                     const char* file, int line);
Status cudnnFailure(const ErrorContext& where, cudnnStatus_t code, const char* expression,
                    const char* file, int line);
// Adds NCCL's last error text (ncclGetLastError), which usually names the failing peer or
// transport, to ncclGetErrorString's generic one. Thread-safe (all three functions).
Status ncclFailure(const ErrorContext& where, ncclResult_t code, const char* expression,
                   const char* file, int line);

}  // namespace ringside::trainer::gpu

#define RINGSIDE_CUDA_CHECK(where, expr)                                                          \
  do {                                                                                            \
    const cudaError_t ringside_cuda_code_ = (expr);                                               \
    if (ringside_cuda_code_ != cudaSuccess) {                                                     \
      return ::ringside::trainer::gpu::cudaFailure((where), ringside_cuda_code_, #expr, __FILE__, \
                                                   __LINE__);                                     \
    }                                                                                             \
  } while (0)

#define RINGSIDE_CUBLAS_CHECK(where, expr)                                                  \
  do {                                                                                      \
    const cublasStatus_t ringside_cublas_code_ = (expr);                                    \
    if (ringside_cublas_code_ != CUBLAS_STATUS_SUCCESS) {                                   \
      return ::ringside::trainer::gpu::cublasFailure((where), ringside_cublas_code_, #expr, \
                                                     __FILE__, __LINE__);                   \
    }                                                                                       \
  } while (0)

#define RINGSIDE_CUDNN_CHECK(where, expr)                                                 \
  do {                                                                                    \
    const cudnnStatus_t ringside_cudnn_code_ = (expr);                                    \
    if (ringside_cudnn_code_ != CUDNN_STATUS_SUCCESS) {                                   \
      return ::ringside::trainer::gpu::cudnnFailure((where), ringside_cudnn_code_, #expr, \
                                                    __FILE__, __LINE__);                  \
    }                                                                                     \
  } while (0)

#define RINGSIDE_NCCL_CHECK(where, expr)                                                          \
  do {                                                                                            \
    const ncclResult_t ringside_nccl_code_ = (expr);                                              \
    if (ringside_nccl_code_ != ncclSuccess) {                                                     \
      return ::ringside::trainer::gpu::ncclFailure((where), ringside_nccl_code_, #expr, __FILE__, \
                                                   __LINE__);                                     \
    }                                                                                             \
  } while (0)
