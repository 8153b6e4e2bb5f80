// libFuzzer target for the checkpoint reader (ringside::trainer::readCheckpoint,
// trainer/src/checkpoint.cpp, format in docs/checkpoint.md). The input is a checkpoint without its
// trailing CRC-32: the harness appends the right one, so that the fuzzer explores the parsing
// behind the checksum (a wrong checksum is refused before any of it, and is covered by the unit
// tests). Any file must give a checkpoint or Corruption, never a crash, undefined behaviour or an
// allocation beyond the file's size.
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "fuzz_file.h"
#include "ringside/trainer/checkpoint.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ringside;
  std::vector<uint8_t> file(data, data + size);
  const uint32_t crc =
      static_cast<uint32_t>(crc32(crc32(0L, Z_NULL, 0), data, static_cast<uInt>(size)));
  const auto* crcBytes = reinterpret_cast<const uint8_t*>(&crc);  // little-endian, as written
  file.insert(file.end(), crcBytes, crcBytes + sizeof crc);
  const std::string& path = fuzz::writeFuzzFile(file.data(), file.size());
  auto read = trainer::readCheckpoint(path);
  if (!read.isOk()) {
    if (read.status().code() != Status::Code::kCorruption) std::abort();
    return 0;
  }
  // What was read accounts for every byte: its sizes can be no larger than the file.
  size_t floats = read->params.size();
  for (const auto& buffer : read->optimizerState.buffers) floats += buffer.size();
  if (floats * sizeof(float) + read->layerSizes.size() * sizeof(int32_t) > file.size()) {
    std::abort();
  }
  return 0;
}
