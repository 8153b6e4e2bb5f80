// GpuProbe: one interface, one file per backend (nvtop's gpu_vendor table). The agent asks a probe
// for the node's GPUs once (inventory) and for their live values every telemetry tick.
// NvmlProbe (nvml_probe.h) is the NVIDIA backend; StaticGpuProbe below reports fixed values for
// tests and demos.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ringside/common/status.h"

namespace ringside::agent {

// What does not change while the agent runs. Strings are empty and optionals absent when the
// backend cannot read the value (never a made-up 0).
struct GpuStaticInfo {
  uint32_t index = 0;                      // the backend's device index (NVML index for NVML)
  std::string name;                        // e.g. "NVIDIA H100 80GB HBM3"
  std::string uuid;                        // e.g. "GPU-5f3c...", stable across reboots
  std::optional<uint64_t> memoryTotalMiB;  // MiB (2^20 bytes)
  std::string driverVersion;               // e.g. "580.65.06"
  std::string cudaVersion;                 // highest CUDA the driver supports, "major.minor"
};

// A process with a compute context on a GPU (NVML's compute running processes).
struct GpuProcess {
  uint32_t pid = 0;                  // as the driver reports it (the host's PID namespace)
  std::optional<double> usedMiB;     // device memory it holds, MiB; absent when not reported
};

// One reading of one GPU. Every value is absent when the device or the backend cannot report it
// (a field not supported by the device, a symbol missing from an old driver, a transient error).
struct GpuSample {
  uint32_t index = 0;                  // as in GpuStaticInfo::index
  std::optional<double> utilPct;       // percent of the last sample period a kernel ran, 0-100
  std::optional<double> memUsedMiB;    // device memory allocated, MiB
  std::optional<double> powerW;        // board power draw, W
  std::optional<double> tempC;         // GPU die temperature, degrees Celsius
  std::optional<double> memTotalMiB;   // device memory size, MiB
  std::optional<double> smClockMHz;    // current SM (shader) clock, MHz
  std::optional<double> pcieRxMBps;    // PCIe receive (host -> GPU), MB/s (1e6 bytes/s)
  std::optional<double> pcieTxMBps;    // PCIe transmit (GPU -> host), MB/s
  std::optional<double> nvlinkRxMBps;  // NVLink receive summed over all links, MB/s
  std::optional<double> nvlinkTxMBps;  // NVLink transmit summed over all links, MB/s
  // The processes with a compute context on it; absent when the backend cannot list them (an
  // old driver, an error), empty when none.
  std::optional<std::vector<GpuProcess>> computeProcesses;
};

// A GPU backend. Lifecycle: construct, init() once; devices() and sample() are meaningful only
// after init() returned OK (before that, or after a failed init, both return empty vectors).
// A probe whose init() fails is skipped by the agent, never fatal: the node then has no GPUs.
// Not thread-safe: one thread (the agent's telemetry loop) owns a probe.
class GpuProbe {
 public:
  virtual ~GpuProbe() = default;

  // Short backend name for logs, e.g. "nvml".
  virtual std::string backendName() const = 0;

  // Loads and initialises the backend. Errors: NotFound when the backend's library is not
  // installed; Internal when it is but fails to start (message carries the library's own text).
  // Calling init() again after success returns OK and does nothing.
  virtual Status init() = 0;

  // The GPUs found by init(), in index order. Empty before a successful init().
  virtual std::vector<GpuStaticInfo> devices() const = 0;

  // One reading per device of devices(), same order. A value that cannot be read this time is
  // absent; the call itself never fails.
  virtual std::vector<GpuSample> sample() = 0;
};

// A probe that reports the devices and samples it was given: for tests, and for exercising GPU
// slot handling on a machine without GPUs. init() returns `initStatus`.
class StaticGpuProbe final : public GpuProbe {
 public:
  explicit StaticGpuProbe(std::vector<GpuStaticInfo> devices, std::vector<GpuSample> samples = {},
                          Status initStatus = Status::ok())
      : devices_(std::move(devices)),
        samples_(std::move(samples)),
        init_status_(std::move(initStatus)) {}

  std::string backendName() const override { return "static"; }
  Status init() override {
    initialized_ = init_status_.isOk();
    return init_status_;
  }
  std::vector<GpuStaticInfo> devices() const override {
    return initialized_ ? devices_ : std::vector<GpuStaticInfo>{};
  }
  std::vector<GpuSample> sample() override {
    return initialized_ ? samples_ : std::vector<GpuSample>{};
  }
  // Replaces what the next sample() returns.
  void setSamples(std::vector<GpuSample> samples) { samples_ = std::move(samples); }

 private:
  std::vector<GpuStaticInfo> devices_;
  std::vector<GpuSample> samples_;
  Status init_status_;
  bool initialized_ = false;
};

}  // namespace ringside::agent
