#include "ringside/agent/inventory.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <charconv>
#include <fstream>
#include <iterator>
#include <sstream>

namespace ringside::agent {
namespace {

// The whole file, or absent when it cannot be opened. /proc files report size 0, so this reads
// to EOF instead of trusting the size.
std::optional<std::string> readFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::string trim(const std::string& text) {
  const char* space = " \t\r\n";
  size_t begin = text.find_first_not_of(space);
  if (begin == std::string::npos) return "";
  size_t end = text.find_last_not_of(space);
  return text.substr(begin, end - begin + 1);
}

bool isRealRoot(const std::filesystem::path& root) { return root == "/" || root.empty(); }

std::optional<uint32_t> parseUint32(const std::string& text) {
  uint32_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// Number of "processor : N" entries in /proc/cpuinfo text, absent when there are none.
std::optional<uint32_t> countCpuinfoProcessors(const std::string& cpuinfo) {
  std::istringstream lines(cpuinfo);
  uint32_t count = 0;
  for (std::string line; std::getline(lines, line);) {
    size_t colon = line.find(':');
    if (colon != std::string::npos && trim(line.substr(0, colon)) == "processor") ++count;
  }
  return count > 0 ? std::optional<uint32_t>(count) : std::nullopt;
}

std::string readHostname(const InventoryOptions& options) {
  if (auto text = readFile(options.root / "proc/sys/kernel/hostname")) {
    if (std::string name = trim(*text); !name.empty()) return name;
  }
  if (isRealRoot(options.root)) {
    char buffer[256] = {};  // HOST_NAME_MAX is 64 on Linux
    if (gethostname(buffer, sizeof buffer - 1) == 0) return buffer;
  }
  return "";
}

std::string readKernelRelease(const InventoryOptions& options) {
  if (auto text = readFile(options.root / "proc/sys/kernel/osrelease")) {
    if (std::string release = trim(*text); !release.empty()) return release;
  }
  if (isRealRoot(options.root)) {
    utsname names{};
    if (uname(&names) == 0) return names.release;
  }
  return "";
}

std::string readOs(const InventoryOptions& options) {
  // os-release(5): /etc/os-release, falling back to /usr/lib/os-release.
  std::optional<std::string> prettyName;
  for (const char* file : {"etc/os-release", "usr/lib/os-release"}) {
    if (auto text = readFile(options.root / file)) {
      prettyName = parseOsReleasePrettyName(*text);
      if (prettyName) break;
    }
  }
  std::string kernel = readKernelRelease(options);
  std::string os = prettyName.value_or("");
  if (!kernel.empty()) os += (os.empty() ? "Linux " : ", Linux ") + kernel;
  return os;
}

std::optional<uint32_t> readCpuCores(const InventoryOptions& options) {
  // The online list is what glibc's sysconf(_SC_NPROCESSORS_ONLN) reads too.
  if (auto text = readFile(options.root / "sys/devices/system/cpu/online")) {
    if (auto count = parseCpuListCount(*text)) return count;
  }
  if (auto text = readFile(options.root / "proc/cpuinfo")) {
    if (auto count = countCpuinfoProcessors(*text)) return count;
  }
  if (isRealRoot(options.root)) {
    long count = sysconf(_SC_NPROCESSORS_ONLN);
    if (count > 0) return static_cast<uint32_t>(count);
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> parseOsReleasePrettyName(const std::string& osRelease) {
  std::istringstream lines(osRelease);
  for (std::string line; std::getline(lines, line);) {
    line = trim(line);
    const std::string key = "PRETTY_NAME=";
    if (line.compare(0, key.size(), key) != 0) continue;
    std::string raw = line.substr(key.size());
    if (raw.size() >= 2 && (raw.front() == '"' || raw.front() == '\'') &&
        raw.back() == raw.front()) {
      char quote = raw.front();
      raw = raw.substr(1, raw.size() - 2);
      if (quote == '\'') return raw;  // single quotes: literal
    }
    std::string value;
    for (size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '\\' && i + 1 < raw.size()) ++i;  // \" \\ \$ \` escape the next character
      value += raw[i];
    }
    if (value.empty()) return std::nullopt;
    return value;
  }
  return std::nullopt;
}

std::optional<std::string> parseCpuModel(const std::string& cpuinfo) {
  std::istringstream lines(cpuinfo);
  for (std::string line; std::getline(lines, line);) {
    size_t colon = line.find(':');
    if (colon == std::string::npos || trim(line.substr(0, colon)) != "model name") continue;
    std::string model = trim(line.substr(colon + 1));
    if (!model.empty()) return model;
  }
  return std::nullopt;
}

std::optional<uint32_t> parseCpuListCount(const std::string& cpuList) {
  std::string list = trim(cpuList);
  if (list.empty()) return std::nullopt;
  uint32_t count = 0;
  std::istringstream ranges(list);
  for (std::string range; std::getline(ranges, range, ',');) {
    size_t dash = range.find('-');
    auto first = parseUint32(trim(range.substr(0, dash)));
    auto last = dash == std::string::npos ? first : parseUint32(trim(range.substr(dash + 1)));
    if (!first || !last || *last < *first) return std::nullopt;
    count += *last - *first + 1;
  }
  return count;
}

std::optional<uint64_t> parseMeminfoKiB(const std::string& meminfo, const std::string& key) {
  std::istringstream lines(meminfo);
  for (std::string line; std::getline(lines, line);) {
    size_t colon = line.find(':');
    if (colon == std::string::npos || line.compare(0, colon, key) != 0 || colon != key.size()) {
      continue;
    }
    std::istringstream fields(line.substr(colon + 1));
    uint64_t value = 0;
    if (fields >> value) return value;
    return std::nullopt;
  }
  return std::nullopt;
}

NodeInventory collectInventory(const InventoryOptions& options) {
  NodeInventory inventory;
  inventory.hostname = readHostname(options);
  inventory.os = readOs(options);
  if (auto text = readFile(options.root / "proc/cpuinfo")) {
    inventory.cpuModel = parseCpuModel(*text).value_or("");
  }
  inventory.cpuCores = readCpuCores(options);
  if (auto text = readFile(options.root / "proc/meminfo")) {
    if (auto kib = parseMeminfoKiB(*text, "MemTotal")) inventory.memoryTotalMiB = *kib / 1024;
  }
  if (options.gpuProbe != nullptr) inventory.gpus = options.gpuProbe->devices();
  inventory.agentVersion = options.agentVersion;
  inventory.labels = options.labels;
  if (!inventory.gpus.empty()) {
    inventory.slotsTotal = static_cast<uint32_t>(inventory.gpus.size());
    inventory.slotKind = "gpu";
  } else {
    inventory.slotsTotal = inventory.cpuCores;
    inventory.slotKind = "cpu";
  }
  return inventory;
}

v1::GpuInfo toProto(const GpuStaticInfo& gpu) {
  v1::GpuInfo info;
  info.set_index(gpu.index);
  info.set_name(gpu.name);
  info.set_uuid(gpu.uuid);
  info.set_memory_total_mib(gpu.memoryTotalMiB.value_or(0));
  info.set_driver_version(gpu.driverVersion);
  info.set_cuda_version(gpu.cudaVersion);
  return info;
}

v1::NodeInfo toProto(const NodeInventory& inventory) {
  v1::NodeInfo info;
  info.set_hostname(inventory.hostname);
  info.set_os(inventory.os);
  info.set_cpu_model(inventory.cpuModel);
  info.set_cpu_cores(inventory.cpuCores.value_or(0));
  info.set_memory_total_mib(inventory.memoryTotalMiB.value_or(0));
  for (const GpuStaticInfo& gpu : inventory.gpus) *info.add_gpus() = toProto(gpu);
  info.set_agent_version(inventory.agentVersion);
  info.set_slots_total(inventory.slotsTotal.value_or(0));
  for (const std::string& label : inventory.labels) info.add_labels(label);
  info.set_slot_kind(inventory.slotKind);
  // Version 2: slots by kind (a GPU node also runs CPU jobs on its cores).
  info.set_cpu_slots_total(inventory.cpuCores.value_or(0));
  info.set_gpu_slots_total(static_cast<uint32_t>(inventory.gpus.size()));
  return info;
}

}  // namespace ringside::agent
