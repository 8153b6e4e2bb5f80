#include "ringside/trainer/idx_reader.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>

namespace ringside::trainer {

namespace {

constexpr uint8_t kTypeUnsignedByte = 0x08;
// A sanity bound on the element count, far above any MNIST-style dataset (Fashion-MNIST's largest
// file has 47 million); catches garbage headers.
constexpr uint64_t kMaxElements = uint64_t{1} << 34;
// The data is read (and its buffer grown) in chunks that start at 1 MiB and double up to 64 MiB,
// so a damaged header that promises more than the file holds costs memory only for about the
// bytes that are really there.
constexpr uint64_t kFirstReadChunkBytes = uint64_t{1} << 20;
constexpr uint64_t kMaxReadChunkBytes = uint64_t{64} << 20;

// The IDX type codes of LeCun's page ("FILE FORMATS FOR THE MNIST DATABASE"), for messages.
const char* idxTypeName(uint8_t type) {
  switch (type) {
    case 0x08:
      return "unsigned byte";
    case 0x09:
      return "signed byte";
    case 0x0B:
      return "short";
    case 0x0C:
      return "int";
    case 0x0D:
      return "float";
    case 0x0E:
      return "double";
    default:
      return "not an IDX type";
  }
}

// "0x0d".
std::string hexByte(uint8_t value) {
  char text[8];
  std::snprintf(text, sizeof text, "0x%02x", static_cast<unsigned>(value));
  return text;
}

struct GzCloser {
  void operator()(gzFile file) const { gzclose(file); }
};
using GzHandle = std::unique_ptr<std::remove_pointer_t<gzFile>, GzCloser>;

// Reads exactly `size` bytes; returns the number read (less at end of file) or -1 on error.
int64_t readFully(gzFile file, void* out, uint64_t size) {
  uint64_t done = 0;
  auto* bytes = static_cast<uint8_t*>(out);
  while (done < size) {
    const unsigned chunk = static_cast<unsigned>(std::min<uint64_t>(size - done, 1u << 30));
    const int got = gzread(file, bytes + done, chunk);
    if (got < 0) return -1;
    if (got == 0) break;
    done += static_cast<uint64_t>(got);
  }
  return static_cast<int64_t>(done);
}

uint32_t bigEndian32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

}  // namespace

Result<IdxArray> readIdxFile(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return Status::notFound("no such file: " + path);
  GzHandle file(gzopen(path.c_str(), "rb"));
  if (!file) return Status::ioError("cannot open " + path + ": " + std::strerror(errno));

  uint8_t magic[4];
  const int64_t got = readFully(file.get(), magic, sizeof magic);
  if (got < 0) return Status::corruption(path + ": unreadable (bad gzip stream?)");
  if (got != 4) return Status::corruption(path + ": truncated IDX header (file too short)");
  if (magic[0] != 0 || magic[1] != 0) {
    return Status::corruption(path + ": not an IDX file (the first two bytes must be zero)");
  }
  if (magic[2] != kTypeUnsignedByte) {
    return Status::corruption(path + ": IDX type " + hexByte(magic[2]) + " (" +
                              idxTypeName(magic[2]) +
                              ") is not supported (only 0x08, unsigned byte)");
  }
  const int rank = magic[3];
  if (rank == 0) return Status::corruption(path + ": IDX header has zero dimensions");

  IdxArray array;
  array.dims.resize(rank);
  uint64_t elements = 1;
  for (int d = 0; d < rank; ++d) {
    uint8_t raw[4];
    if (readFully(file.get(), raw, 4) != 4) {
      return Status::corruption(path + ": truncated IDX header (dimension " + std::to_string(d) +
                                " missing)");
    }
    array.dims[d] = bigEndian32(raw);
    elements *= array.dims[d];
    if (elements > kMaxElements) {
      return Status::corruption(path + ": IDX dimensions are implausibly large (dimension " +
                                std::to_string(d) + " is " + std::to_string(array.dims[d]) +
                                ", over 2^34 elements in all): the header is damaged");
    }
  }
  uint64_t dataRead = 0;
  while (dataRead < elements) {
    const uint64_t chunk = std::clamp(dataRead, kFirstReadChunkBytes, kMaxReadChunkBytes);
    const uint64_t want = std::min(elements - dataRead, chunk);
    array.data.resize(dataRead + want);
    const int64_t got = readFully(file.get(), array.data.data() + dataRead, want);
    if (got < 0) return Status::corruption(path + ": unreadable data (bad gzip stream?)");
    dataRead += static_cast<uint64_t>(got);
    if (static_cast<uint64_t>(got) < want) break;
  }
  if (dataRead != elements) {
    return Status::corruption(path + ": truncated: header promises " + std::to_string(elements) +
                              " bytes of data, file has " + std::to_string(dataRead));
  }
  uint8_t extra;
  const int64_t tail = readFully(file.get(), &extra, 1);
  if (tail < 0) return Status::corruption(path + ": unreadable data (bad gzip stream?)");
  if (tail != 0) {
    return Status::corruption(path + ": trailing bytes after the " + std::to_string(elements) +
                              " the header describes");
  }
  return array;
}

Status writeIdxFile(const std::string& path, const IdxArray& array, bool gzip) {
  GzHandle file(gzopen(path.c_str(), gzip ? "wb" : "wbT"));
  if (!file) return Status::ioError("cannot create " + path + ": " + std::strerror(errno));
  std::vector<uint8_t> header = {0, 0, kTypeUnsignedByte, static_cast<uint8_t>(array.dims.size())};
  for (uint32_t d : array.dims) {
    for (int shift = 24; shift >= 0; shift -= 8) header.push_back(static_cast<uint8_t>(d >> shift));
  }
  if (gzwrite(file.get(), header.data(), static_cast<unsigned>(header.size())) !=
      static_cast<int>(header.size())) {
    return Status::ioError("cannot write " + path);
  }
  if (!array.data.empty() &&
      gzwrite(file.get(), array.data.data(), static_cast<unsigned>(array.data.size())) !=
          static_cast<int>(array.data.size())) {
    return Status::ioError("cannot write " + path);
  }
  if (gzclose(file.release()) != Z_OK) return Status::ioError("cannot close " + path);
  return Status::ok();
}

}  // namespace ringside::trainer
