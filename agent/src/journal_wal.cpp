// The journal's write-ahead log read as SQLite's file format defines it, to find frames SQLite
// would silently skip (journal_schema.h, checkJournalWal; docs/journal.md, "Damaged journals").
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "journal_schema.h"

namespace ringside::agent {
namespace {

constexpr size_t kWalHeaderBytes = 32;
constexpr size_t kFrameHeaderBytes = 24;
constexpr uint32_t kWalMagic = 0x377f0682;  // | 1: checksums over big-endian words
constexpr uint32_t kWalVersion = 3007000;   // the only WAL format version SQLite reads

uint32_t bigEndian32(const unsigned char* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

// SQLite's WAL checksum (file format, 4.3): over 32-bit words in the byte order the magic
// chose, two at a time, s0 += x0 + s1; s1 += x1 + s0, continuing from (s0, s1). `size` is a
// multiple of 8.
void walChecksum(const unsigned char* data, size_t size, bool bigEndianWords, uint32_t& s0,
                 uint32_t& s1) {
  for (size_t i = 0; i + 8 <= size; i += 8) {
    uint32_t x0, x1;
    if (bigEndianWords) {
      x0 = bigEndian32(data + i);
      x1 = bigEndian32(data + i + 4);
    } else {
      std::memcpy(&x0, data + i, 4);  // this machine's order: little-endian on every target
      std::memcpy(&x1, data + i + 4, 4);
    }
    s0 += x0 + s1;
    s1 += x1 + s0;
  }
}

}  // namespace

Result<std::optional<WalDamage>> checkJournalWal(const std::string& walPath) {
  std::error_code ec;
  if (!std::filesystem::exists(walPath, ec) && !ec) return std::optional<WalDamage>{};
  std::ifstream file(walPath, std::ios::binary);
  if (!file) {
    return Status::ioError("cannot read the journal's write-ahead log " + walPath + ": " +
                           std::strerror(errno));
  }
  unsigned char header[kWalHeaderBytes];
  if (!file.read(reinterpret_cast<char*>(header), kWalHeaderBytes)) {
    return std::optional<WalDamage>{};  // empty or shorter than a header: nothing to replay
  }
  const uint32_t magic = bigEndian32(header);
  const uint32_t pageSize = bigEndian32(header + 8);
  const bool validPageSize = pageSize >= 512 && pageSize <= 65536 && (pageSize & (pageSize - 1)) == 0;
  const bool bigEndianWords = (magic & 1) != 0;
  uint32_t s0 = 0, s1 = 0;
  walChecksum(header, 24, bigEndianWords, s0, s1);
  const bool headerSound = (magic & ~1u) == kWalMagic && bigEndian32(header + 4) == kWalVersion &&
                           validPageSize &&
                           s0 == bigEndian32(header + 24) && s1 == bigEndian32(header + 28);
  // How many frames the file holds, if its page size can be trusted (SQLite's maximum when not).
  file.seekg(0, std::ios::end);
  const auto fileSize = static_cast<uint64_t>(file.tellg());
  const uint64_t frameBytes = kFrameHeaderBytes + (validPageSize ? pageSize : 65536);
  const uint64_t frames = (fileSize - kWalHeaderBytes) / frameBytes;
  if (!headerSound) {
    if (frames == 0) return std::optional<WalDamage>{};
    // SQLite ignores the whole file; whatever its frames held is lost. (A WAL whose header is
    // all zeros with no frame is what a reset leaves: nothing then.)
    WalDamage damage;
    damage.badHeader = true;
    damage.badFrame = 1;
    damage.badOffset = 0;
    damage.lostFrames = frames;
    return std::optional<WalDamage>{damage};
  }
  const uint32_t salt1 = bigEndian32(header + 16);
  const uint32_t salt2 = bigEndian32(header + 20);
  std::vector<unsigned char> frame(frameBytes);
  file.seekg(static_cast<std::streamoff>(kWalHeaderBytes));
  uint64_t replayed = 0;        // up to the last commit frame so far
  uint64_t soundFrames = 0;     // frames that passed, committed or not
  bool broken = false;
  WalDamage damage;
  for (uint64_t i = 0; i < frames; ++i) {
    if (!file.read(reinterpret_cast<char*>(frame.data()), static_cast<std::streamsize>(frameBytes))) {
      break;
    }
    const unsigned char* fh = frame.data();
    const bool ours = bigEndian32(fh + 8) == salt1 && bigEndian32(fh + 12) == salt2;
    const bool hasPage = bigEndian32(fh) != 0;  // SQLite stops at a frame of page 0
    const bool commit = bigEndian32(fh + 4) != 0;
    if (!broken) {
      bool sound = ours && hasPage;
      if (sound) {
        uint32_t f0 = s0, f1 = s1;
        walChecksum(fh, 8, bigEndianWords, f0, f1);
        walChecksum(fh + kFrameHeaderBytes, pageSize, bigEndianWords, f0, f1);
        sound = f0 == bigEndian32(fh + 16) && f1 == bigEndian32(fh + 20);
        if (sound) {
          s0 = f0;
          s1 = f1;
        }
      }
      if (sound) {
        ++soundFrames;
        if (commit) replayed = soundFrames;
        continue;
      }
      broken = true;
      damage.badFrame = i + 1;
      damage.badOffset = kWalHeaderBytes + i * frameBytes;
      // A frame of this WAL that fails its checksum is itself lost; one with other salts may be
      // stale, which only a later frame of this WAL can tell.
      if (ours) {
        ++damage.lostFrames;
        if (commit) ++damage.lostCommits;
      }
      continue;
    }
    if (ours) {
      ++damage.lostFrames;
      if (commit) ++damage.lostCommits;
    }
  }
  damage.replayedFrames = replayed;
  // Lost: a commit of this WAL that cannot be replayed. A torn last frame of a transaction that
  // never committed (no commit frame of ours after the break) loses nothing that was committed.
  if (!broken || damage.lostCommits == 0) return std::optional<WalDamage>{};
  return std::optional<WalDamage>{damage};
}

}  // namespace ringside::agent
