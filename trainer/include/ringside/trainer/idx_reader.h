// Reader for the IDX format used by MNIST-style datasets (http://yann.lecun.com/exdb/mnist/,
// "FILE FORMATS FOR THE MNIST DATABASE"): a big-endian header of two zero bytes, a type byte
// (0x08 = unsigned byte), a dimension count, one uint32 per dimension, then the row-major data.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ringside/common/status.h"

namespace ringside::trainer {

// An IDX array of unsigned bytes: `dims` as in the header, `data` row-major with
// product(dims) elements.
struct IdxArray {
  std::vector<uint32_t> dims;
  std::vector<uint8_t> data;
};

// Reads an IDX file of type 0x08 (unsigned byte). The file may be gzip-compressed or raw (zlib
// detects which). The data buffer grows with the bytes actually read (in chunks of 1 MiB
// doubling up to 64 MiB), never from the header alone, so a damaged header cannot cause a large
// allocation; a header describing more than 2^34 elements is refused. Errors: NotFound when the
// file does not exist, Corruption when the header is malformed, the type is not 0x08 (the message
// names the type in hex, e.g. "0x0d (float)"), or the data is shorter or longer than the header
// says, IOError when the file cannot be opened. Thread-safe (no shared state).
Result<IdxArray> readIdxFile(const std::string& path);

// Writes `array` as an IDX file (raw, or gzip when `gzip` is true). Used by tests and tools.
// Errors: IOError when the file cannot be written.
Status writeIdxFile(const std::string& path, const IdxArray& array, bool gzip);

}  // namespace ringside::trainer
