// NvmlProbe: the NVIDIA GPU backend. NVML (libnvidia-ml, shipped with the driver) is loaded at run
// time with dlopen and called through the agent's own minimal declarations (nvtop's approach), so
// the agent builds and runs on machines without the NVIDIA driver: there init() returns NotFound
// and the node reports no GPUs (docs/design.md decision 11).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ringside/agent/gpu_probe.h"
#include "ringside/common/status.h"

namespace ringside::agent {

// The NVML library's soname, as the driver installs it (the unversioned libnvidia-ml.so is only
// in the development package).
inline constexpr const char* kNvmlLibraryName = "libnvidia-ml.so.1";

// NVML reports the CUDA driver version as 1000 * major + 10 * minor (NVML API reference,
// nvmlSystemGetCudaDriverVersion, and its macros NVML_CUDA_DRIVER_VERSION_MAJOR/MINOR):
// 12040 -> "12.4", 13000 -> "13.0". Returns "" for a non-positive value.
std::string formatCudaDriverVersion(int version);

class NvmlProbe final : public GpuProbe {
 public:
  // `libraryPath` is passed to dlopen as is: a soname searched on the library path, or a file
  // path (tests point it at a missing file or at a fake NVML). Loads nothing until init().
  explicit NvmlProbe(std::string libraryPath = kNvmlLibraryName);
  // Calls nvmlShutdown when init() succeeded and unloads the library.
  ~NvmlProbe() override;
  NvmlProbe(const NvmlProbe&) = delete;
  NvmlProbe& operator=(const NvmlProbe&) = delete;

  std::string backendName() const override { return "nvml"; }

  // dlopen()s the library, resolves symbols (versioned names such as nvmlInit_v2 first, then the
  // unversioned ones), calls nvmlInit and reads the static info of every device.
  // Errors: NotFound when the library cannot be loaded or lacks a required symbol (nvmlInit,
  // nvmlShutdown, nvmlDeviceGetCount, nvmlDeviceGetHandleByIndex); Internal when nvmlInit or
  // nvmlDeviceGetCount fail (message has nvmlErrorString's text and the NVML code). After an
  // error the library is unloaded and the probe reports no GPUs. A missing optional symbol
  // (name, UUID, memory, utilization, power, temperature, versions) only makes that value absent.
  // A device whose handle cannot be obtained (e.g. NVML_ERROR_NO_PERMISSION) is left out.
  Status init() override;

  std::vector<GpuStaticInfo> devices() const override { return devices_; }

  // Reads utilization (nvmlDeviceGetUtilizationRates, .gpu), used and total memory
  // (nvmlDeviceGetMemoryInfo, bytes -> MiB), power (nvmlDeviceGetPowerUsage, mW -> W),
  // temperature (nvmlDeviceGetTemperature, NVML_TEMPERATURE_GPU, degrees C), SM clock
  // (nvmlDeviceGetClockInfo, NVML_CLOCK_SM, MHz), PCIe throughput (nvmlDeviceGetPcieThroughput,
  // NVML's own 20 ms window, KB/s -> MB/s with 1 KB = 1024 bytes as NVML counts) and NVLink
  // throughput (nvmlDeviceGetFieldValues, NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX/TX with scopeId
  // UINT_MAX = all links: cumulative KiB counters, turned into MB/s between two calls, so absent
  // on the first call and when a counter went backwards). Any call that returns an error
  // (NVML_ERROR_NOT_SUPPORTED, NVML_ERROR_GPU_IS_LOST, ...) leaves that value absent. Cost: a
  // few NVML calls per device; nvmlDeviceGetPcieThroughput blocks for its 20 ms window per
  // direction, so about 40 ms per device on real hardware. The compute processes come from
  // nvmlDeviceGetComputeRunningProcesses (_v2, else the unversioned v1 export; absent without
  // either, on an error, or when a GPU has more than kMaxGpuProcesses).
  std::vector<GpuSample> sample() override;

  static constexpr size_t kMaxGpuProcesses = 1024;

 private:
  struct Api;  // resolved NVML entry points, declared in nvml_probe.cpp
  void unload();
  // Sets sample.nvlink*MBps from the NVLink counters of devices_[deviceSlot] and the previous
  // reading, and keeps this reading for the next call.
  void sampleNvlink(size_t deviceSlot, GpuSample& sample);
  // The compute processes of a device (an nvmlDevice_t).
  std::optional<std::vector<GpuProcess>> computeProcesses(void* device) const;

  std::string library_path_;
  void* library_ = nullptr;  // dlopen handle
  std::unique_ptr<Api> api_;
  bool initialized_ = false;    // nvmlInit succeeded, nvmlShutdown is owed
  std::vector<void*> handles_;  // nvmlDevice_t per entry of devices_
  std::vector<GpuStaticInfo> devices_;
  // Per entry of devices_: the previous NVLink data counters (KiB) and NVML's timestamp of
  // them (microseconds), absent until a first successful read.
  struct NvlinkCounters {
    unsigned long long rxKiB = 0;
    unsigned long long txKiB = 0;
    long long timestampUs = 0;
  };
  std::vector<std::optional<NvlinkCounters>> previous_nvlink_;
};

}  // namespace ringside::agent
