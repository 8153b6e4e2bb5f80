/* A fake libnvidia-ml for nvml_probe_test: exports the NVML entry points NvmlProbe resolves, with
 * fixed answers, so the dlopen path is tested on machines without a GPU. Two builds:
 *   full     versioned symbols (nvmlInit_v2, ...) and every optional one; two GPUs, the second
 *            without power, SM clock and NVLink readings (NVML_ERROR_NOT_SUPPORTED, as a PCIe
 *            card without NVLink answers). The unversioned nvmlInit fails, so a probe that
 *            calls it instead of nvmlInit_v2 is caught. GPU 0's NVLink counters grow by
 *            FAKE_NVLINK_RX/TX_KIB_PER_CALL KiB per nvmlDeviceGetFieldValues call, whose
 *            timestamps advance 1 s per call: 1000 KiB/s received, 500 KiB/s sent.
 *   minimal  (FAKE_NVML_MINIMAL) only unversioned required symbols and nvmlDeviceGetName; one GPU.
 * FAKE_NVML_INIT_ERROR=<code> in the environment makes init return that NVML error code.
 * FAKE_NVML_PROCESSES_FILE=<path> (full build): the GPUs' compute processes, one "<gpu index>
 *            <pid> <MiB>" per line, read at every nvmlDeviceGetComputeRunningProcesses_v2 call
 *            (so a test changes them while the agent runs); without it, or without the file,
 *            none. A buffer too small for the list gets NVML_ERROR_INSUFFICIENT_SIZE and the
 *            count needed, as NVML answers.
 * fake_nvml_shutdown_calls counts nvmlShutdown calls. Signatures follow nvml.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int nvmlReturn_t;
#define NVML_SUCCESS 0
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_NOT_SUPPORTED 3
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_ERROR_UNKNOWN 999
#define FAKE_NVLINK_RX_KIB_PER_CALL 1000ULL
#define FAKE_NVLINK_TX_KIB_PER_CALL 500ULL

typedef struct nvmlDevice_st {
  const char* name;
  const char* uuid;
} * nvmlDevice_t;
typedef struct {
  unsigned long long total, free, used;
} nvmlMemory_t;
typedef struct {
  unsigned int gpu, memory;
} nvmlUtilization_t;
typedef union {
  double dVal;
  unsigned int uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  long long sllVal;
} nvmlValue_t;
typedef struct {
  unsigned int fieldId;
  unsigned int scopeId;
  long long timestamp;
  long long latencyUsec;
  int valueType;
  nvmlReturn_t nvmlReturn;
  nvmlValue_t value;
} nvmlFieldValue_t;

static struct nvmlDevice_st devices[2] = {
    {"Fake GPU 0", "GPU-00000000-fake-0000-0000-000000000000"},
    {"Fake GPU 1", "GPU-11111111-fake-1111-1111-111111111111"},
};
#ifdef FAKE_NVML_MINIMAL
static const unsigned int device_count = 1;
#else
static const unsigned int device_count = 2;
#endif

int fake_nvml_shutdown_calls = 0;

static int initialized = 0;

static nvmlReturn_t doInit(void) {
  const char* error = getenv("FAKE_NVML_INIT_ERROR");
  if (error != NULL && *error != '\0') return atoi(error);
  initialized = 1;
  return NVML_SUCCESS;
}

static nvmlReturn_t copyString(const char* value, char* buffer, unsigned int length) {
  if (buffer == NULL || strlen(value) + 1 > length) return NVML_ERROR_INVALID_ARGUMENT;
  memcpy(buffer, value, strlen(value) + 1);
  return NVML_SUCCESS;
}

static nvmlReturn_t getCount(unsigned int* count) {
  if (!initialized) return NVML_ERROR_UNKNOWN;
  *count = device_count;
  return NVML_SUCCESS;
}

static nvmlReturn_t getHandle(unsigned int index, nvmlDevice_t* device) {
  if (!initialized || index >= device_count) return NVML_ERROR_INVALID_ARGUMENT;
  *device = &devices[index];
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlShutdown(void) {
  ++fake_nvml_shutdown_calls;
  initialized = 0;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned int length) {
  return copyString(device->name, name, length);
}

#ifdef FAKE_NVML_MINIMAL

nvmlReturn_t nvmlInit(void) { return doInit(); }
nvmlReturn_t nvmlDeviceGetCount(unsigned int* count) { return getCount(count); }
nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t* device) {
  return getHandle(index, device);
}

#else

nvmlReturn_t nvmlInit(void) { return NVML_ERROR_UNKNOWN; } /* must not be chosen over _v2 */
nvmlReturn_t nvmlInit_v2(void) { return doInit(); }
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) { return getCount(count); }
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  return getHandle(index, device);
}

const char* nvmlErrorString(nvmlReturn_t result) {
  return result == 9 ? "Driver Not Loaded" : "Fake Error";
}

nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned int length) {
  return copyString("580.65.06", version, length);
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion(int* version) {
  *version = 13000;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned int length) {
  return copyString(device->uuid, uuid, length);
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory) {
  memory->total = 81559ULL * 1024 * 1024;
  memory->used = (device == &devices[0] ? 1024ULL : 512ULL) * 1024 * 1024;
  memory->free = memory->total - memory->used;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t* utilization) {
  utilization->gpu = device == &devices[0] ? 87 : 3;
  utilization->memory = 40;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int* milliwatts) {
  if (device != &devices[0]) return NVML_ERROR_NOT_SUPPORTED;
  *milliwatts = 312500;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, int sensor, unsigned int* celsius) {
  if (sensor != 0) return NVML_ERROR_INVALID_ARGUMENT; /* NVML_TEMPERATURE_GPU */
  *celsius = device == &devices[0] ? 71 : 35;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, int type, unsigned int* megahertz) {
  if (type != 1) return NVML_ERROR_INVALID_ARGUMENT; /* NVML_CLOCK_SM */
  if (device != &devices[0]) return NVML_ERROR_NOT_SUPPORTED;
  *megahertz = 1980;
  return NVML_SUCCESS;
}

/* KB/s over NVML's 20 ms window: GPU 0 receives 25000 and sends 12500; GPU 1 idles at 0. */
nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t device, int counter, unsigned int* value) {
  if (counter != 0 && counter != 1) return NVML_ERROR_INVALID_ARGUMENT; /* TX_BYTES, RX_BYTES */
  if (device != &devices[0]) {
    *value = 0;
  } else {
    *value = counter == 1 ? 25000 : 12500;
  }
  return NVML_SUCCESS;
}

typedef struct {
  unsigned int pid;
  unsigned long long usedGpuMemory; /* bytes */
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
} nvmlProcessInfo_v2_t;

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device, unsigned int* count,
                                                     nvmlProcessInfo_v2_t* infos) {
  if (count == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  const unsigned int capacity = *count;
  unsigned int found = 0;
  const char* path = getenv("FAKE_NVML_PROCESSES_FILE");
  FILE* file = path != NULL ? fopen(path, "r") : NULL;
  if (file != NULL) {
    unsigned int gpu = 0, pid = 0;
    unsigned long long mib = 0;
    while (fscanf(file, "%u %u %llu", &gpu, &pid, &mib) == 3) {
      if (gpu >= device_count || &devices[gpu] != device) continue;
      if (found < capacity && infos != NULL) {
        infos[found].pid = pid;
        infos[found].usedGpuMemory = mib * 1024ULL * 1024ULL;
        infos[found].gpuInstanceId = 0xFFFFFFFFu;
        infos[found].computeInstanceId = 0xFFFFFFFFu;
      }
      ++found;
    }
    fclose(file);
  }
  *count = found;
  return found > capacity ? NVML_ERROR_INSUFFICIENT_SIZE : NVML_SUCCESS;
}

static unsigned long long nvlink_calls = 0;

/* NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX (138) and _RX (139), summed over links (scopeId
 * UINT_MAX): cumulative KiB, as NVML returns them. */
nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t device, int count, nvmlFieldValue_t* values) {
  if (count < 0 || values == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  if (device == &devices[0]) ++nvlink_calls;
  for (int i = 0; i < count; ++i) {
    nvmlFieldValue_t* field = &values[i];
    field->timestamp = (long long)(nvlink_calls * 1000000ULL);
    field->latencyUsec = 0;
    if (device != &devices[0] || (field->fieldId != 138 && field->fieldId != 139) ||
        field->scopeId != 0xFFFFFFFFu) {
      field->nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
      continue;
    }
    field->nvmlReturn = NVML_SUCCESS;
    field->valueType = 3; /* NVML_VALUE_TYPE_UNSIGNED_LONG_LONG */
    field->value.ullVal = nvlink_calls * (field->fieldId == 139 ? FAKE_NVLINK_RX_KIB_PER_CALL
                                                                : FAKE_NVLINK_TX_KIB_PER_CALL);
  }
  return NVML_SUCCESS;
}

#endif
