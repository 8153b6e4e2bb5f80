#include "ringside/agent/nvml_probe.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <utility>
#include <vector>

namespace ringside::agent {
namespace {

// The agent's own minimal NVML declarations, ABI-compatible with the driver's nvml.h (NVML API
// Reference Guide, docs.nvidia.com/deploy/nvml-api). Names keep NVML's spelling so they can be
// looked up there. Only what the probe calls is declared.
using nvmlReturn_t = int;  // enum nvmlReturn_enum (an int in the C ABI)
constexpr nvmlReturn_t NVML_SUCCESS = 0;
struct nvmlDevice_st;  // opaque
using nvmlDevice_t = nvmlDevice_st*;
struct nvmlMemory_t {  // nvmlMemory_t (v1), bytes
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};
struct nvmlUtilization_t {  // percent of the last sample period
  unsigned int gpu;
  unsigned int memory;
};
using nvmlTemperatureSensors_t = int;  // enum nvmlTemperatureSensors_enum
constexpr nvmlTemperatureSensors_t NVML_TEMPERATURE_GPU = 0;
using nvmlClockType_t = int;  // enum nvmlClockType_enum
constexpr nvmlClockType_t NVML_CLOCK_SM = 1;
using nvmlPcieUtilCounter_t = int;  // enum nvmlPcieUtilCounter_enum
constexpr nvmlPcieUtilCounter_t NVML_PCIE_UTIL_TX_BYTES = 0;
constexpr nvmlPcieUtilCounter_t NVML_PCIE_UTIL_RX_BYTES = 1;
// Field ids of nvmlDeviceGetFieldValues (nvml.h): NVLink data throughput counters in KiB,
// cumulative; scopeId selects the link, UINT_MAX sums all links.
constexpr unsigned int NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX = 138;
constexpr unsigned int NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX = 139;
constexpr unsigned int kAllNvlinks = 0xFFFFFFFFu;  // UINT_MAX
using nvmlValueType_t = int;                       // enum nvmlValueType_enum
constexpr nvmlValueType_t NVML_VALUE_TYPE_UNSIGNED_INT = 1;
constexpr nvmlValueType_t NVML_VALUE_TYPE_UNSIGNED_LONG = 2;
constexpr nvmlValueType_t NVML_VALUE_TYPE_UNSIGNED_LONG_LONG = 3;
union nvmlValue_t {
  double dVal;
  unsigned int uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  long long sllVal;
};
struct nvmlFieldValue_t {
  unsigned int fieldId;
  unsigned int scopeId;
  long long timestamp;  // CPU time of the reading, microseconds since 1970
  long long latencyUsec;
  nvmlValueType_t valueType;
  nvmlReturn_t nvmlReturn;
  nvmlValue_t value;
};
// nvmlProcessInfo_v2_t, what nvmlDeviceGetComputeRunningProcesses_v2 fills, and
// nvmlProcessInfo_v1_t, what the unversioned export fills (NVML API Reference, "Device
// Queries"). _v3 is not used: the R535 drivers fill it with a 32-byte entry
// (usedGpuCcProtectedMemory added) and later ones with this 24-byte one, so its stride depends
// on the driver; every driver with _v3 also exports _v2. usedGpuMemory is in bytes, or
// NVML_VALUE_NOT_AVAILABLE (all bits set) when the driver cannot tell (e.g. without privileges
// on Windows, or under MIG).
struct nvmlProcessInfo_v2_t {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};
struct nvmlProcessInfo_v1_t {
  unsigned int pid;
  unsigned long long usedGpuMemory;
};
constexpr unsigned long long NVML_VALUE_NOT_AVAILABLE = ~0ULL;
constexpr nvmlReturn_t NVML_ERROR_INSUFFICIENT_SIZE = 7;
// Buffer sizes from nvml.h: NVML_DEVICE_NAME_V2_BUFFER_SIZE, NVML_DEVICE_UUID_V2_BUFFER_SIZE,
// NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE.
constexpr unsigned int kNameBufferSize = 96;
constexpr unsigned int kUuidBufferSize = 96;
constexpr unsigned int kDriverVersionBufferSize = 80;

using DeviceGetProcessesV2Fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*,
                                                nvmlProcessInfo_v2_t*);
using DeviceGetProcessesV1Fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*,
                                                nvmlProcessInfo_v1_t*);
using InitFn = nvmlReturn_t (*)();
using ShutdownFn = nvmlReturn_t (*)();
using ErrorStringFn = const char* (*)(nvmlReturn_t);
using GetCountFn = nvmlReturn_t (*)(unsigned int*);
using GetHandleByIndexFn = nvmlReturn_t (*)(unsigned int, nvmlDevice_t*);
using GetStringFn = nvmlReturn_t (*)(char*, unsigned int);
using GetIntFn = nvmlReturn_t (*)(int*);
using DeviceGetStringFn = nvmlReturn_t (*)(nvmlDevice_t, char*, unsigned int);
using DeviceGetMemoryInfoFn = nvmlReturn_t (*)(nvmlDevice_t, nvmlMemory_t*);
using DeviceGetUtilizationRatesFn = nvmlReturn_t (*)(nvmlDevice_t, nvmlUtilization_t*);
using DeviceGetPowerUsageFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*);
using DeviceGetTemperatureFn = nvmlReturn_t (*)(nvmlDevice_t, nvmlTemperatureSensors_t,
                                                unsigned int*);
using DeviceGetClockInfoFn = nvmlReturn_t (*)(nvmlDevice_t, nvmlClockType_t, unsigned int*);
using DeviceGetPcieThroughputFn = nvmlReturn_t (*)(nvmlDevice_t, nvmlPcieUtilCounter_t,
                                                   unsigned int*);
using DeviceGetFieldValuesFn = nvmlReturn_t (*)(nvmlDevice_t, int, nvmlFieldValue_t*);

constexpr double kBytesPerMiB = 1024.0 * 1024.0;
constexpr double kBytesPerMB = 1e6;  // MB as in the MB/s of docs/metrics.md
// NVML counts PCIe throughput in "KB/s" and NVLink counters in KiB; both taken as 1024 bytes.
constexpr double kBytesPerKiB = 1024.0;

// A field value that NVML read as an unsigned counter, or absent.
std::optional<unsigned long long> counterOf(const nvmlFieldValue_t& field) {
  if (field.nvmlReturn != NVML_SUCCESS) return std::nullopt;
  switch (field.valueType) {
    case NVML_VALUE_TYPE_UNSIGNED_INT:
      return field.value.uiVal;
    case NVML_VALUE_TYPE_UNSIGNED_LONG:
      return field.value.ulVal;
    case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG:
      return field.value.ullVal;
    default:
      return std::nullopt;
  }
}

// The first of `names` that the library exports, or null. Versioned names come first: they are
// what nvml.h maps the plain names to (`#define nvmlInit nvmlInit_v2` unless
// NVML_NO_UNVERSIONED_FUNC_DEFS); the unversioned exports are the old ABI, kept for old binaries
// and the only ones a very old driver has.
template <typename Fn>
Fn resolve(void* library, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (void* symbol = dlsym(library, name)) return reinterpret_cast<Fn>(symbol);
  }
  return nullptr;
}

// Copies a NUL-terminated string NVML wrote into `buffer` of `size` bytes, never past its end.
std::string fromBuffer(const char* buffer, size_t size) {
  return std::string(buffer, strnlen(buffer, size));
}

}  // namespace

struct NvmlProbe::Api {
  // Required.
  InitFn init = nullptr;
  ShutdownFn shutdown = nullptr;
  GetCountFn deviceGetCount = nullptr;
  GetHandleByIndexFn deviceGetHandleByIndex = nullptr;
  // Optional: a missing one makes its value absent.
  ErrorStringFn errorString = nullptr;
  GetStringFn systemGetDriverVersion = nullptr;
  GetIntFn systemGetCudaDriverVersion = nullptr;
  DeviceGetStringFn deviceGetName = nullptr;
  DeviceGetStringFn deviceGetUuid = nullptr;
  DeviceGetMemoryInfoFn deviceGetMemoryInfo = nullptr;
  DeviceGetUtilizationRatesFn deviceGetUtilizationRates = nullptr;
  DeviceGetPowerUsageFn deviceGetPowerUsage = nullptr;
  DeviceGetTemperatureFn deviceGetTemperature = nullptr;
  DeviceGetClockInfoFn deviceGetClockInfo = nullptr;
  DeviceGetPcieThroughputFn deviceGetPcieThroughput = nullptr;
  DeviceGetFieldValuesFn deviceGetFieldValues = nullptr;
  // nvmlDeviceGetComputeRunningProcesses: _v2 (the v2 struct), else the old export (v1).
  DeviceGetProcessesV2Fn deviceGetComputeProcessesV2 = nullptr;
  DeviceGetProcessesV1Fn deviceGetComputeProcessesV1 = nullptr;

  // "NVML error 9 (Driver Not Loaded)".
  std::string describe(nvmlReturn_t code) const {
    std::string text = "NVML error " + std::to_string(code);
    if (errorString != nullptr) {
      if (const char* message = errorString(code)) text += std::string(" (") + message + ")";
    }
    return text;
  }
};

std::string formatCudaDriverVersion(int version) {
  if (version <= 0) return "";
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

NvmlProbe::NvmlProbe(std::string libraryPath) : library_path_(std::move(libraryPath)) {}

NvmlProbe::~NvmlProbe() { unload(); }

void NvmlProbe::unload() {
  if (initialized_ && api_ && api_->shutdown != nullptr) api_->shutdown();
  initialized_ = false;
  api_.reset();
  handles_.clear();
  devices_.clear();
  previous_nvlink_.clear();
  if (library_ != nullptr) dlclose(library_);
  library_ = nullptr;
}

Status NvmlProbe::init() {
  if (initialized_) return Status::ok();

  library_ = dlopen(library_path_.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library_ == nullptr) {
    const char* error = dlerror();
    return Status::notFound("cannot load NVML from " + library_path_ + ": " +
                            (error != nullptr ? error : "dlopen failed") +
                            "; this node reports no GPUs (install the NVIDIA driver to see them)");
  }

  auto api = std::make_unique<Api>();
  api->init = resolve<InitFn>(library_, {"nvmlInit_v2", "nvmlInit"});
  api->shutdown = resolve<ShutdownFn>(library_, {"nvmlShutdown"});
  api->deviceGetCount =
      resolve<GetCountFn>(library_, {"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"});
  api->deviceGetHandleByIndex = resolve<GetHandleByIndexFn>(
      library_, {"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"});
  api->errorString = resolve<ErrorStringFn>(library_, {"nvmlErrorString"});
  api->systemGetDriverVersion = resolve<GetStringFn>(library_, {"nvmlSystemGetDriverVersion"});
  api->systemGetCudaDriverVersion = resolve<GetIntFn>(
      library_, {"nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion"});
  api->deviceGetName = resolve<DeviceGetStringFn>(library_, {"nvmlDeviceGetName"});
  api->deviceGetUuid = resolve<DeviceGetStringFn>(library_, {"nvmlDeviceGetUUID"});
  api->deviceGetMemoryInfo = resolve<DeviceGetMemoryInfoFn>(library_, {"nvmlDeviceGetMemoryInfo"});
  api->deviceGetUtilizationRates =
      resolve<DeviceGetUtilizationRatesFn>(library_, {"nvmlDeviceGetUtilizationRates"});
  api->deviceGetPowerUsage = resolve<DeviceGetPowerUsageFn>(library_, {"nvmlDeviceGetPowerUsage"});
  api->deviceGetTemperature =
      resolve<DeviceGetTemperatureFn>(library_, {"nvmlDeviceGetTemperature"});
  api->deviceGetClockInfo = resolve<DeviceGetClockInfoFn>(library_, {"nvmlDeviceGetClockInfo"});
  api->deviceGetPcieThroughput =
      resolve<DeviceGetPcieThroughputFn>(library_, {"nvmlDeviceGetPcieThroughput"});
  api->deviceGetFieldValues =
      resolve<DeviceGetFieldValuesFn>(library_, {"nvmlDeviceGetFieldValues"});
  api->deviceGetComputeProcessesV2 = resolve<DeviceGetProcessesV2Fn>(
      library_, {"nvmlDeviceGetComputeRunningProcesses_v2"});
  if (api->deviceGetComputeProcessesV2 == nullptr) {
    api->deviceGetComputeProcessesV1 = resolve<DeviceGetProcessesV1Fn>(
        library_, {"nvmlDeviceGetComputeRunningProcesses"});
  }

  std::string missing;
  if (api->init == nullptr) missing += " nvmlInit";
  if (api->shutdown == nullptr) missing += " nvmlShutdown";
  if (api->deviceGetCount == nullptr) missing += " nvmlDeviceGetCount";
  if (api->deviceGetHandleByIndex == nullptr) missing += " nvmlDeviceGetHandleByIndex";
  if (!missing.empty()) {
    unload();
    return Status::notFound(library_path_ + " lacks required NVML symbols:" + missing +
                            "; this node reports no GPUs (is it really libnvidia-ml?)");
  }
  api_ = std::move(api);

  if (nvmlReturn_t rc = api_->init(); rc != NVML_SUCCESS) {
    Status status = Status::internal("nvmlInit failed: " + api_->describe(rc) +
                                     "; this node reports no GPUs (check the NVIDIA driver with "
                                     "nvidia-smi)");
    unload();
    return status;
  }
  initialized_ = true;

  unsigned int count = 0;
  if (nvmlReturn_t rc = api_->deviceGetCount(&count); rc != NVML_SUCCESS) {
    Status status = Status::internal("nvmlDeviceGetCount failed: " + api_->describe(rc));
    unload();
    return status;
  }

  std::string driverVersion;
  if (api_->systemGetDriverVersion != nullptr) {
    char buffer[kDriverVersionBufferSize] = {};
    if (api_->systemGetDriverVersion(buffer, sizeof buffer) == NVML_SUCCESS) {
      driverVersion = fromBuffer(buffer, sizeof buffer);
    }
  }
  std::string cudaVersion;
  if (api_->systemGetCudaDriverVersion != nullptr) {
    int version = 0;
    if (api_->systemGetCudaDriverVersion(&version) == NVML_SUCCESS) {
      cudaVersion = formatCudaDriverVersion(version);
    }
  }

  for (unsigned int index = 0; index < count; ++index) {
    nvmlDevice_t device = nullptr;
    if (api_->deviceGetHandleByIndex(index, &device) != NVML_SUCCESS) continue;
    GpuStaticInfo info;
    info.index = index;
    info.driverVersion = driverVersion;
    info.cudaVersion = cudaVersion;
    if (api_->deviceGetName != nullptr) {
      char buffer[kNameBufferSize] = {};
      if (api_->deviceGetName(device, buffer, sizeof buffer) == NVML_SUCCESS) {
        info.name = fromBuffer(buffer, sizeof buffer);
      }
    }
    if (api_->deviceGetUuid != nullptr) {
      char buffer[kUuidBufferSize] = {};
      if (api_->deviceGetUuid(device, buffer, sizeof buffer) == NVML_SUCCESS) {
        info.uuid = fromBuffer(buffer, sizeof buffer);
      }
    }
    if (api_->deviceGetMemoryInfo != nullptr) {
      nvmlMemory_t memory{};
      if (api_->deviceGetMemoryInfo(device, &memory) == NVML_SUCCESS) {
        info.memoryTotalMiB = memory.total / (1024ULL * 1024ULL);
      }
    }
    handles_.push_back(device);
    devices_.push_back(std::move(info));
  }
  previous_nvlink_.assign(devices_.size(), std::nullopt);
  return Status::ok();
}

std::vector<GpuSample> NvmlProbe::sample() {
  std::vector<GpuSample> samples;
  if (!initialized_) return samples;
  samples.reserve(devices_.size());
  for (size_t i = 0; i < devices_.size(); ++i) {
    auto device = static_cast<nvmlDevice_t>(handles_[i]);
    GpuSample sample;
    sample.index = devices_[i].index;
    if (api_->deviceGetUtilizationRates != nullptr) {
      nvmlUtilization_t utilization{};
      if (api_->deviceGetUtilizationRates(device, &utilization) == NVML_SUCCESS) {
        sample.utilPct = utilization.gpu;
      }
    }
    if (api_->deviceGetMemoryInfo != nullptr) {
      nvmlMemory_t memory{};
      if (api_->deviceGetMemoryInfo(device, &memory) == NVML_SUCCESS) {
        sample.memUsedMiB = static_cast<double>(memory.used) / kBytesPerMiB;
        sample.memTotalMiB = static_cast<double>(memory.total) / kBytesPerMiB;
      }
    }
    if (api_->deviceGetPowerUsage != nullptr) {
      unsigned int milliwatts = 0;
      if (api_->deviceGetPowerUsage(device, &milliwatts) == NVML_SUCCESS) {
        sample.powerW = milliwatts / 1000.0;
      }
    }
    if (api_->deviceGetTemperature != nullptr) {
      unsigned int celsius = 0;
      if (api_->deviceGetTemperature(device, NVML_TEMPERATURE_GPU, &celsius) == NVML_SUCCESS) {
        sample.tempC = celsius;
      }
    }
    if (api_->deviceGetClockInfo != nullptr) {
      unsigned int megahertz = 0;
      if (api_->deviceGetClockInfo(device, NVML_CLOCK_SM, &megahertz) == NVML_SUCCESS) {
        sample.smClockMHz = megahertz;
      }
    }
    if (api_->deviceGetPcieThroughput != nullptr) {
      unsigned int kilobytesPerSecond = 0;
      if (api_->deviceGetPcieThroughput(device, NVML_PCIE_UTIL_RX_BYTES, &kilobytesPerSecond) ==
          NVML_SUCCESS) {
        sample.pcieRxMBps = kilobytesPerSecond * kBytesPerKiB / kBytesPerMB;
      }
      if (api_->deviceGetPcieThroughput(device, NVML_PCIE_UTIL_TX_BYTES, &kilobytesPerSecond) ==
          NVML_SUCCESS) {
        sample.pcieTxMBps = kilobytesPerSecond * kBytesPerKiB / kBytesPerMB;
      }
    }
    if (api_->deviceGetFieldValues != nullptr) sampleNvlink(i, sample);
    sample.computeProcesses = computeProcesses(device);
    samples.push_back(sample);
  }
  return samples;
}

namespace {

// Calls an nvmlDeviceGetComputeRunningProcesses variant with a buffer that grows while NVML says
// it is too small (processes may start between two calls), up to kMaxGpuProcesses entries and
// four calls; std::nullopt on an error or past that (NVML does not say it fills a buffer that
// is too small).
template <typename Info, typename Fn>
std::optional<std::vector<GpuProcess>> listProcesses(Fn fn, nvmlDevice_t device) {
  std::vector<Info> infos(16);
  for (int attempt = 0; attempt < 4; ++attempt) {
    auto count = static_cast<unsigned int>(infos.size());
    const nvmlReturn_t rc = fn(device, &count, infos.data());
    if (rc == NVML_ERROR_INSUFFICIENT_SIZE && infos.size() < NvmlProbe::kMaxGpuProcesses) {
      infos.resize(std::min<size_t>(
          std::max<size_t>(static_cast<size_t>(count) + 8, 2 * infos.size()),
          NvmlProbe::kMaxGpuProcesses));
      continue;
    }
    if (rc != NVML_SUCCESS) return std::nullopt;
    std::vector<GpuProcess> processes;
    for (unsigned int i = 0; i < count && i < infos.size(); ++i) {
      GpuProcess process;
      process.pid = infos[i].pid;
      if (infos[i].usedGpuMemory != NVML_VALUE_NOT_AVAILABLE) {
        process.usedMiB = static_cast<double>(infos[i].usedGpuMemory) / (1024.0 * 1024.0);
      }
      processes.push_back(process);
    }
    return processes;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::vector<GpuProcess>> NvmlProbe::computeProcesses(void* handle) const {
  auto device = static_cast<nvmlDevice_t>(handle);
  if (api_->deviceGetComputeProcessesV2 != nullptr) {
    return listProcesses<nvmlProcessInfo_v2_t>(api_->deviceGetComputeProcessesV2, device);
  }
  if (api_->deviceGetComputeProcessesV1 != nullptr) {
    return listProcesses<nvmlProcessInfo_v1_t>(api_->deviceGetComputeProcessesV1, device);
  }
  return std::nullopt;
}

void NvmlProbe::sampleNvlink(size_t deviceSlot, GpuSample& sample) {
  nvmlFieldValue_t fields[2] = {};
  fields[0].fieldId = NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX;
  fields[0].scopeId = kAllNvlinks;
  fields[1].fieldId = NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX;
  fields[1].scopeId = kAllNvlinks;
  auto device = static_cast<nvmlDevice_t>(handles_[deviceSlot]);
  std::optional<NvlinkCounters>& previous = previous_nvlink_[deviceSlot];
  // A GPU without NVLink answers NVML_ERROR_NOT_SUPPORTED in each field's nvmlReturn.
  if (api_->deviceGetFieldValues(device, 2, fields) != NVML_SUCCESS) {
    previous.reset();
    return;
  }
  const auto rx = counterOf(fields[0]);
  const auto tx = counterOf(fields[1]);
  if (!rx || !tx) {
    previous.reset();
    return;
  }
  const NvlinkCounters now{.rxKiB = *rx, .txKiB = *tx, .timestampUs = fields[0].timestamp};
  if (previous && now.timestampUs > previous->timestampUs && now.rxKiB >= previous->rxKiB &&
      now.txKiB >= previous->txKiB) {
    const double seconds = static_cast<double>(now.timestampUs - previous->timestampUs) / 1e6;
    sample.nvlinkRxMBps =
        static_cast<double>(now.rxKiB - previous->rxKiB) * kBytesPerKiB / kBytesPerMB / seconds;
    sample.nvlinkTxMBps =
        static_cast<double>(now.txKiB - previous->txKiB) * kBytesPerKiB / kBytesPerMB / seconds;
  }
  previous = now;
}

}  // namespace ringside::agent
