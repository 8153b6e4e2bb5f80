// Owning handles for device memory (cudaMalloc) and page-locked host memory (cudaMallocHost).
// Move-only; the destructor frees. Not thread-safe (plain values). Only for files compiled by nvcc
// or with the CUDA toolkit's include directory.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#include "cuda_check.h"

namespace ringside::trainer::gpu {

enum class MemoryKind { kDevice, kPinnedHost };

template <typename T, MemoryKind kKind>
class CudaBuffer {
 public:
  CudaBuffer() = default;
  ~CudaBuffer() { reset(); }
  CudaBuffer(const CudaBuffer&) = delete;
  CudaBuffer& operator=(const CudaBuffer&) = delete;
  CudaBuffer(CudaBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  CudaBuffer& operator=(CudaBuffer&& other) noexcept {
    if (this != &other) {
      reset();
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }

  // Replaces the buffer with an uninitialised one of `count` elements (none for 0). Errors: the
  // allocator's code (cudaErrorMemoryAllocation when out of memory); the buffer is then empty.
  cudaError_t allocate(size_t count) {
    reset();
    if (count == 0) return cudaSuccess;
    void* memory = nullptr;
    const cudaError_t code = kKind == MemoryKind::kDevice
                                 ? cudaMalloc(&memory, count * sizeof(T))
                                 : cudaMallocHost(&memory, count * sizeof(T));
    if (code != cudaSuccess) return code;
    data_ = static_cast<T*>(memory);
    size_ = count;
    return cudaSuccess;
  }

  // Frees the memory (a device free waits for the device's work on it, as cudaFree does).
  void reset() {
    if (data_ == nullptr) return;
    if constexpr (kKind == MemoryKind::kDevice) {
      cudaFree(data_);
    } else {
      cudaFreeHost(data_);
    }
    data_ = nullptr;
    size_ = 0;
  }

  // The allocator's name, for error messages.
  static constexpr const char* allocatorName() {
    return kKind == MemoryKind::kDevice ? "cudaMalloc" : "cudaMallocHost";
  }

  T* get() const { return data_; }
  size_t size() const { return size_; }  // elements
  size_t bytes() const { return size_ * sizeof(T); }

 private:
  T* data_ = nullptr;
  size_t size_ = 0;
};

template <typename T>
using DeviceBuffer = CudaBuffer<T, MemoryKind::kDevice>;
template <typename T>
using PinnedBuffer = CudaBuffer<T, MemoryKind::kPinnedHost>;

}  // namespace ringside::trainer::gpu

// buffer.allocate(count) under the check macros' rules (cuda_check.h): on failure, returns the
// Status naming host, rank, cudaMalloc or cudaMallocHost, file and line.
#define RINGSIDE_CUDA_ALLOCATE(where, buffer, count)                                            \
  do {                                                                                          \
    auto& ringside_buffer_ = (buffer);                                                          \
    const cudaError_t ringside_alloc_code_ = ringside_buffer_.allocate(count);                  \
    if (ringside_alloc_code_ != cudaSuccess) {                                                  \
      return ::ringside::trainer::gpu::cudaFailure(                                             \
          (where), ringside_alloc_code_, ringside_buffer_.allocatorName(), __FILE__, __LINE__); \
    }                                                                                           \
  } while (0)
