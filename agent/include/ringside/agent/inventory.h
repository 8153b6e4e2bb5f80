// Node inventory: what a node is (host, OS, CPU, memory, GPUs, slots), read once at agent start
// from /proc, /sys and /etc and from a GpuProbe, and sent in HelloReply as v1::NodeInfo.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "ringside/agent/gpu_probe.h"
#include "ringside/proto/ringside.pb.h"

namespace ringside::agent {

struct InventoryOptions {
  // Prefix for every file read (proc/..., sys/..., etc/os-release): "/" on a real node, a
  // fixture directory in tests. Syscall fallbacks (gethostname, uname, sysconf) are used only
  // when root is "/".
  std::filesystem::path root = "/";
  // An initialised probe, or null for a node without GPUs. Not owned; only devices() is called.
  GpuProbe* gpuProbe = nullptr;
  std::string agentVersion;         // e.g. "0.1.0"
  std::vector<std::string> labels;  // user-given node labels, passed through
};

// What the agent knows about its node. Every value it cannot read is empty/absent, not 0.
struct NodeInventory {
  std::string hostname;                    // proc/sys/kernel/hostname, else gethostname()
  std::string os;                          // "<PRETTY_NAME>, Linux <kernel release>"
  std::string cpuModel;                    // first "model name" of proc/cpuinfo
  std::optional<uint32_t> cpuCores;        // logical CPUs online
  std::optional<uint64_t> memoryTotalMiB;  // MemTotal of proc/meminfo, MiB
  std::vector<GpuStaticInfo> gpus;         // from the probe; empty without one
  std::string agentVersion;
  std::vector<std::string> labels;
  // Slots (docs/architecture.md, Vocabulary): one per GPU, or one per logical CPU for the mpi backend when
  // the node has no GPU. Absent when neither GPUs nor the core count are known.
  std::optional<uint32_t> slotsTotal;
  std::string slotKind;  // "gpu" or "cpu"
};

// Reads the inventory. Never fails: a file that is missing or unparsable leaves its values
// empty/absent. Blocking file reads only (a few KiB); safe to call from any thread as long as
// the probe is not used concurrently.
NodeInventory collectInventory(const InventoryOptions& options);

// The wire form. node_id, slots_used and draining are the caller's (they are not inventory);
// absent values become proto3 defaults (0 or ""), which NodeInfo documents as unknown.
v1::NodeInfo toProto(const NodeInventory& inventory);
v1::GpuInfo toProto(const GpuStaticInfo& gpu);

// Parsers, exposed for tests. Each returns absent/empty when its input has no such value.

// PRETTY_NAME from os-release(5) text, unquoted ("..." or '...', backslash escapes resolved).
std::optional<std::string> parseOsReleasePrettyName(const std::string& osRelease);
// The first "model name" value of /proc/cpuinfo text.
std::optional<std::string> parseCpuModel(const std::string& cpuinfo);
// Number of CPUs in a kernel CPU list such as /sys/devices/system/cpu/online ("0-3,8,10-11" ->
// 7), see the kernel's Documentation/admin-guide/cputopology.rst.
std::optional<uint32_t> parseCpuListCount(const std::string& cpuList);
// A "<Key>: <value> kB" field of /proc/meminfo text, in KiB (proc(5)).
std::optional<uint64_t> parseMeminfoKiB(const std::string& meminfo, const std::string& key);

}  // namespace ringside::agent
