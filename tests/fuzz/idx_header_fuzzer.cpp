// libFuzzer target for the IDX reader (ringside::trainer::readIdxFile, trainer/src/idx_reader.cpp):
// any file, raw or gzip, must give an array or Corruption, never a crash, undefined behaviour, or
// an allocation larger than the data the file really holds (a damaged header promising gigabytes
// must not allocate them: run under -malloc_limit_mb). A read array agrees with its header.
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "fuzz_file.h"
#include "ringside/trainer/idx_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ringside;
  const std::string& path = fuzz::writeFuzzFile(data, size);
  auto read = trainer::readIdxFile(path);
  if (!read.isOk()) {
    if (read.status().code() != Status::Code::kCorruption) std::abort();
    return 0;
  }
  if (read->dims.empty() || read->dims.size() > 255) std::abort();
  uint64_t elements = 1;
  for (uint32_t dim : read->dims) elements *= dim;
  if (elements != read->data.size()) std::abort();
  return 0;
}
