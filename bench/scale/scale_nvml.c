/* scale_bench's fake libnvidia-ml: a node of 8 GPUs whose readings change with every sample, so
 * that each simulated node's agent reports, journals and publishes GPU telemetry as a real 8-GPU
 * node does (bench/scale/README in bench/README.md, "Scale"). Loaded by ringside-agent
 * --nvml-library; exports the entry points NvmlProbe resolves (agent/src/nvml_probe.cpp, the
 * versioned ones as NVML 11+ has them). Utilization, memory, power, temperature and SM clock
 * follow a triangle wave in the number of utilization reads, different per GPU; PCIe and NVLink
 * are not supported (NVML_ERROR_NOT_SUPPORTED, as many PCIe cards answer). Signatures follow
 * nvml.h. Not thread-safe beyond what the agent needs (one telemetry thread). */
#include <stdio.h>
#include <string.h>

typedef int nvmlReturn_t;
#define NVML_SUCCESS 0
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_NOT_SUPPORTED 3
#define NVML_ERROR_UNKNOWN 999
#define SCALE_GPUS 8

typedef struct nvmlDevice_st {
  unsigned int index;
} * nvmlDevice_t;
typedef struct {
  unsigned long long total, free, used;
} nvmlMemory_t;
typedef struct {
  unsigned int gpu, memory;
} nvmlUtilization_t;

static struct nvmlDevice_st devices[SCALE_GPUS] = {{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}};
static int initialized = 0;
static unsigned long long reads = 0; /* utilization reads: one per GPU per telemetry sample */

/* 0..100 and back, period 40 reads of the GPU, phase-shifted per GPU. */
static unsigned int wave(const nvmlDevice_t device) {
  const unsigned long long t = reads / SCALE_GPUS + device->index * 5ULL;
  const unsigned int at = (unsigned int)(t % 40ULL);
  return at <= 20 ? at * 5 : (40 - at) * 5;
}

static nvmlReturn_t copyString(const char* value, char* buffer, unsigned int length) {
  if (buffer == NULL || strlen(value) + 1 > length) return NVML_ERROR_INVALID_ARGUMENT;
  memcpy(buffer, value, strlen(value) + 1);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlInit(void) { return NVML_ERROR_UNKNOWN; } /* _v2 is the one to use */
nvmlReturn_t nvmlInit_v2(void) {
  initialized = 1;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlShutdown(void) {
  initialized = 0;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) {
  if (!initialized) return NVML_ERROR_UNKNOWN;
  *count = SCALE_GPUS;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  if (!initialized || index >= SCALE_GPUS) return NVML_ERROR_INVALID_ARGUMENT;
  *device = &devices[index];
  return NVML_SUCCESS;
}
const char* nvmlErrorString(nvmlReturn_t result) {
  return result == NVML_ERROR_NOT_SUPPORTED ? "Not Supported" : "Fake Error";
}
nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned int length) {
  return copyString("580.65.06", version, length);
}
nvmlReturn_t nvmlSystemGetCudaDriverVersion(int* version) {
  *version = 13000;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned int length) {
  (void)device;
  return copyString("Fake H100 80GB HBM3", name, length);
}
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned int length) {
  char text[64];
  snprintf(text, sizeof text, "GPU-5ca1e000-0000-0000-0000-00000000000%u", device->index);
  return copyString(text, uuid, length);
}
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory) {
  memory->total = 81559ULL * 1024 * 1024;
  memory->used = (2048ULL + 600ULL * wave(device)) * 1024 * 1024;
  memory->free = memory->total - memory->used;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t* utilization) {
  ++reads;
  utilization->gpu = wave(device);
  utilization->memory = wave(device) / 2;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int* milliwatts) {
  *milliwatts = 90000 + 5500 * wave(device);
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, int sensor, unsigned int* celsius) {
  if (sensor != 0) return NVML_ERROR_INVALID_ARGUMENT; /* NVML_TEMPERATURE_GPU */
  *celsius = 35 + wave(device) * 4 / 10;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, int type, unsigned int* megahertz) {
  if (type != 1) return NVML_ERROR_INVALID_ARGUMENT; /* NVML_CLOCK_SM */
  *megahertz = 1200 + 8 * wave(device);
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t device, int counter, unsigned int* value) {
  (void)device;
  (void)counter;
  (void)value;
  return NVML_ERROR_NOT_SUPPORTED;
}
