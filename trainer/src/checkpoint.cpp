#include "ringside/trainer/checkpoint.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string_view>

#include "ringside/common/file_io.h"

namespace ringside::trainer {

namespace fs = std::filesystem;

namespace {

constexpr char kMagic[8] = {'R', 'S', 'C', 'K', 'P', 'T', '\r', '\n'};
// Bounds that catch garbage sizes before they become allocations.
constexpr uint64_t kMaxLayers = 1024;
constexpr uint64_t kMaxBuffers = 16;

// Little-endian serialisation (the project targets x86-64 and aarch64, both little-endian; the
// static_assert keeps a big-endian port from writing silently wrong files).
static_assert(std::endian::native == std::endian::little, "checkpoint format is little-endian");

class Writer {
 public:
  template <typename T>
  void put(const T& value) {
    const auto* bytes = reinterpret_cast<const char*>(&value);
    buffer_.insert(buffer_.end(), bytes, bytes + sizeof(T));
  }
  void putFloats(const std::vector<float>& values) {
    put<uint64_t>(values.size());
    const auto* bytes = reinterpret_cast<const char*>(values.data());
    buffer_.insert(buffer_.end(), bytes, bytes + values.size() * sizeof(float));
  }
  std::vector<char>& buffer() { return buffer_; }
  // Makes room for `bytes` in one allocation (the plan in memory_plan.h counts one copy).
  void reserve(size_t bytes) { buffer_.reserve(bytes); }

 private:
  std::vector<char> buffer_;
};

class Reader {
 public:
  Reader(const std::vector<char>& data, size_t end) : data_(data), end_(end) {}
  template <typename T>
  bool get(T* value) {
    if (end_ - pos_ < sizeof(T)) return false;
    std::memcpy(value, data_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return true;
  }
  bool getFloats(std::vector<float>* values) {
    uint64_t count = 0;
    if (!get(&count) || count > (end_ - pos_) / sizeof(float)) return false;
    values->resize(count);
    // An empty vector's data() may be null, and memcpy from or to null is undefined even for 0
    // bytes (found by checkpoint_header_fuzzer).
    if (count > 0) std::memcpy(values->data(), data_.data() + pos_, count * sizeof(float));
    pos_ += count * sizeof(float);
    return true;
  }
  bool atEnd() const { return pos_ == end_; }

 private:
  const std::vector<char>& data_;
  size_t end_;
  size_t pos_ = 0;
};

uint32_t crc32Of(const char* data, size_t size) {
  uLong crc = crc32(0L, Z_NULL, 0);
  while (size > 0) {
    const uInt chunk = static_cast<uInt>(std::min<size_t>(size, 1u << 30));
    crc = crc32(crc, reinterpret_cast<const Bytef*>(data), chunk);
    data += chunk;
    size -= chunk;
  }
  return static_cast<uint32_t>(crc);
}

}  // namespace

Status writeCheckpoint(const std::string& path, const TrainingCheckpoint& checkpoint) {
  Writer out;
  size_t floats = checkpoint.params.size();
  for (const auto& buffer : checkpoint.optimizerState.buffers) floats += buffer.size();
  out.reserve(256 + checkpoint.layerSizes.size() * sizeof(int32_t) +
              (1 + checkpoint.optimizerState.buffers.size()) * sizeof(uint64_t) +
              floats * sizeof(float));
  for (char c : kMagic) out.put(c);
  out.put<uint32_t>(kCheckpointVersion);
  out.put<uint32_t>(static_cast<uint32_t>(checkpoint.model));
  out.put<uint32_t>(static_cast<uint32_t>(checkpoint.layerSizes.size()));
  for (int size : checkpoint.layerSizes) out.put<int32_t>(size);
  out.put<uint32_t>(static_cast<uint32_t>(checkpoint.optimizer));
  out.put<int64_t>(checkpoint.step);
  out.put<int64_t>(checkpoint.epoch);
  out.put<int64_t>(checkpoint.stepInEpoch);
  out.put<uint64_t>(checkpoint.seed);
  out.put<int64_t>(checkpoint.globalBatch);
  out.put<int64_t>(checkpoint.trainSamples);
  out.put<int32_t>(checkpoint.worldSize);
  out.putFloats(checkpoint.params);
  out.put<int64_t>(checkpoint.optimizerState.stepCount);
  out.put<uint32_t>(static_cast<uint32_t>(checkpoint.optimizerState.buffers.size()));
  for (const auto& buffer : checkpoint.optimizerState.buffers) out.putFloats(buffer);
  out.put<uint32_t>(crc32Of(out.buffer().data(), out.buffer().size()));

  const fs::path target(path);
  std::error_code ec;
  if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
  const std::vector<char>& bytes = out.buffer();
  return writeFileAtomic(path, std::string_view(bytes.data(), bytes.size()), 0644);
}

Result<CheckpointHeader> readCheckpointHeader(const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return Status::notFound("no checkpoint file at " + path);
  std::ifstream file(path, std::ios::binary | std::ios::ate);
  if (!file) return Status::ioError("cannot open checkpoint " + path);
  const std::streamoff size = file.tellg();
  if (size < 0) return Status::ioError("cannot read checkpoint " + path);
  file.seekg(0);
  CheckpointHeader header;
  header.fileBytes = static_cast<uint64_t>(size);
  const auto fileSize = header.fileBytes;
  const std::string advice = ": the file is damaged; resume from an older checkpoint";
  uint64_t pos = 0;
  // Reads the next field; false at the end of the file.
  const auto get = [&](auto* value) {
    if (fileSize - pos < sizeof *value ||
        !file.read(reinterpret_cast<char*>(value), sizeof *value)) {
      return false;
    }
    pos += sizeof *value;
    return true;
  };
  // Reads a buffer's float count and seeks over its floats; false past the end of the file.
  const auto skipFloats = [&](uint64_t* count) {
    if (!get(count) || *count > (fileSize - pos) / sizeof(float)) return false;
    pos += *count * sizeof(float);
    return static_cast<bool>(file.seekg(static_cast<std::streamoff>(pos)));
  };

  char magic[sizeof kMagic];
  bool ok = true;
  for (char& c : magic) ok = ok && get(&c);
  if (!ok || std::memcmp(magic, kMagic, sizeof kMagic) != 0) {
    return Status::corruption(path + " is not a Ringside checkpoint (bad magic)");
  }
  uint32_t version = 0;
  if (!get(&version)) {
    return Status::corruption(path + " is not a Ringside checkpoint (it ends after the magic)");
  }
  if (version < kOldestCheckpointVersion || version > kCheckpointVersion) {
    return Status::corruption(path + " has checkpoint format version " + std::to_string(version) +
                              "; this trainer reads versions " +
                              std::to_string(kOldestCheckpointVersion) + " to " +
                              std::to_string(kCheckpointVersion));
  }
  TrainingCheckpoint& checkpoint = header.checkpoint;
  uint32_t model = 0, layerCount = 0, optimizer = 0, bufferCount = 0;
  // Version 1 had no model field: every version-1 checkpoint is an MLP.
  if (version >= 2) ok = get(&model) && model <= static_cast<uint32_t>(ModelKind::kCnn);
  checkpoint.model = static_cast<ModelKind>(model);
  ok = ok && get(&layerCount) && layerCount <= kMaxLayers;
  for (uint32_t i = 0; ok && i < layerCount; ++i) {
    int32_t layer = 0;
    ok = get(&layer);
    checkpoint.layerSizes.push_back(layer);
  }
  ok = ok && get(&optimizer) && optimizer <= static_cast<uint32_t>(OptimizerKind::kAdamW);
  checkpoint.optimizer = static_cast<OptimizerKind>(optimizer);
  ok = ok && get(&checkpoint.step) && get(&checkpoint.epoch) && get(&checkpoint.stepInEpoch) &&
       get(&checkpoint.seed) && get(&checkpoint.globalBatch) && get(&checkpoint.trainSamples) &&
       get(&checkpoint.worldSize) && skipFloats(&header.numParams) &&
       get(&checkpoint.optimizerState.stepCount) && get(&bufferCount) && bufferCount <= kMaxBuffers;
  for (uint32_t i = 0; ok && i < bufferCount; ++i) {
    ok = skipFloats(&header.bufferSizes.emplace_back());
  }
  if (!ok) return Status::corruption(path + ": inconsistent sizes" + advice);
  const uint64_t expected = pos + sizeof(uint32_t);  // the CRC-32 ends the file
  if (fileSize != expected) {
    return Status::corruption(path + " is " + std::to_string(fileSize) +
                              " bytes but its header describes " + std::to_string(expected) +
                              ": inconsistent sizes" + advice);
  }
  return header;
}

Result<TrainingCheckpoint> readCheckpoint(const std::string& path) {
  // The header first: a file that is not a checkpoint, or whose sizes are wrong, is refused
  // before its bytes are read (a 10 GB file must not be read to find a bad magic).
  auto header = readCheckpointHeader(path);
  if (!header.isOk()) return header.status();
  std::ifstream file(path, std::ios::binary);
  if (!file) return Status::ioError("cannot open checkpoint " + path);
  // One allocation of the file's size (the plan in memory_plan.h counts one copy).
  std::vector<char> data(static_cast<size_t>(header->fileBytes));
  if (!file.read(data.data(), static_cast<std::streamsize>(data.size())) ||
      static_cast<uint64_t>(file.gcount()) != header->fileBytes) {
    return Status::ioError("cannot read checkpoint " + path + ": " + std::strerror(errno) +
                           " (did the file change while it was read?)");
  }
  const std::string advice = ": the file is damaged; resume from an older checkpoint";
  const size_t payloadEnd = data.size() - sizeof(uint32_t);
  uint32_t storedCrc = 0;
  std::memcpy(&storedCrc, data.data() + payloadEnd, sizeof storedCrc);
  if (crc32Of(data.data(), payloadEnd) != storedCrc) {
    return Status::corruption(path + ": checksum mismatch" + advice);
  }

  Reader in(data, payloadEnd);
  TrainingCheckpoint checkpoint;
  char magic[8];
  uint32_t storedVersion = 0, model = 0, layerCount = 0, optimizer = 0, bufferCount = 0;
  bool ok = true;
  for (char& c : magic) ok = ok && in.get(&c);
  ok = ok && in.get(&storedVersion);
  // Version 1 had no model field: every version-1 checkpoint is an MLP.
  if (ok && storedVersion >= 2) {
    ok = in.get(&model) && model <= static_cast<uint32_t>(ModelKind::kCnn);
  }
  checkpoint.model = static_cast<ModelKind>(model);
  ok = ok && in.get(&layerCount) && layerCount <= kMaxLayers;
  for (uint32_t i = 0; ok && i < layerCount; ++i) {
    int32_t size = 0;
    ok = in.get(&size);
    checkpoint.layerSizes.push_back(size);
  }
  ok = ok && in.get(&optimizer) && optimizer <= static_cast<uint32_t>(OptimizerKind::kAdamW);
  checkpoint.optimizer = static_cast<OptimizerKind>(optimizer);
  ok = ok && in.get(&checkpoint.step) && in.get(&checkpoint.epoch) &&
       in.get(&checkpoint.stepInEpoch) && in.get(&checkpoint.seed) &&
       in.get(&checkpoint.globalBatch) && in.get(&checkpoint.trainSamples) &&
       in.get(&checkpoint.worldSize) && in.getFloats(&checkpoint.params) &&
       in.get(&checkpoint.optimizerState.stepCount) && in.get(&bufferCount) &&
       bufferCount <= kMaxBuffers;
  checkpoint.optimizerState.buffers.resize(ok ? bufferCount : 0);
  for (auto& buffer : checkpoint.optimizerState.buffers) ok = ok && in.getFloats(&buffer);
  if (!ok || !in.atEnd()) return Status::corruption(path + ": inconsistent sizes" + advice);
  return checkpoint;
}

Status checkCheckpointDirWritable(const std::string& dir) {
  std::error_code ec;
  const fs::path absolute = fs::absolute(dir, ec);
  const std::string shown = ec ? dir : absolute.string();
  const std::string advice =
      ": pass a writable --checkpoint-dir (checkpoints are written there "
      "at the end, on SIGTERM and every --checkpoint-every steps)";
  fs::create_directories(shown, ec);
  if (ec) {
    return Status::ioError("cannot create the checkpoint directory " + shown + ": " + ec.message() +
                           advice);
  }
  if (!fs::is_directory(shown, ec)) {
    return Status::ioError("the checkpoint directory " + shown + " exists and is not a directory" +
                           advice);
  }
  const std::string probe =
      (fs::path(shown) / (".ringside-probe-" + std::to_string(::getpid()))).string();
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    return Status::ioError("cannot create a file in the checkpoint directory " + shown + ": " +
                           std::strerror(errno) + advice);
  }
  // One byte written and synced: a full or read-only file system fails here, not at the end.
  const char byte = 0;
  const bool written = ::write(fd, &byte, 1) == 1 && ::fsync(fd) == 0;
  const int writeErrno = errno;
  ::close(fd);
  ::unlink(probe.c_str());
  if (!written) {
    return Status::ioError("cannot write to the checkpoint directory " + shown + ": " +
                           std::strerror(writeErrno) + advice);
  }
  return Status::ok();
}

std::string checkpointFileName(const std::string& dir, int64_t step) {
  char name[64];
  std::snprintf(name, sizeof name, "ckpt-%08lld%s", static_cast<long long>(step),
                kCheckpointExtension);
  return (fs::path(dir) / name).string();
}

namespace {
// Checkpoint files of `dir`, oldest first (names sort by step).
std::vector<fs::path> listCheckpoints(const std::string& dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_regular_file(ec) && name.starts_with("ckpt-") &&
        entry.path().extension() == kCheckpointExtension) {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}
}  // namespace

Result<std::string> resolveCheckpointPath(const std::string& path) {
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) return path;
  if (fs::is_directory(path, ec)) {
    const auto files = listCheckpoints(path);
    if (files.empty()) return Status::notFound("no checkpoint (ckpt-*.rsck) in directory " + path);
    return files.back().string();
  }
  return Status::notFound("no checkpoint file or directory at " + path);
}

void pruneCheckpoints(const std::string& dir, int keep) {
  if (keep <= 0) return;
  auto files = listCheckpoints(dir);
  std::error_code ec;
  for (size_t i = 0; i + keep < files.size(); ++i) fs::remove(files[i], ec);
}

}  // namespace ringside::trainer
