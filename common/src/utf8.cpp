#include "ringside/common/utf8.h"

#include <cstdint>

namespace ringside {

namespace {

// The length of the well-formed sequence at text[i], or 0 when it is ill-formed; *subpart gets
// the length of its maximal subpart then (>= 1: the bytes one U+FFFD replaces). Unicode 3.0+
// table 3-7 "Well-Formed UTF-8 Byte Sequences".
size_t sequenceAt(std::string_view text, size_t i, size_t* subpart) {
  const auto byte = [&](size_t k) { return static_cast<uint8_t>(text[k]); };
  const uint8_t lead = byte(i);
  *subpart = 1;
  if (lead < 0x80) return 1;
  size_t length = 0;
  uint8_t secondMin = 0x80, secondMax = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) secondMin = 0xA0;  // below: overlong
    if (lead == 0xED) secondMax = 0x9F;  // above: surrogates U+D800..U+DFFF
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) secondMin = 0x90;  // below: overlong
    if (lead == 0xF4) secondMax = 0x8F;  // above: beyond U+10FFFF
  } else {
    return 0;  // a continuation byte, C0/C1 (always overlong) or F5..FF (never in UTF-8)
  }
  for (size_t k = 1; k < length; ++k) {
    const uint8_t min = k == 1 ? secondMin : 0x80;
    const uint8_t max = k == 1 ? secondMax : 0xBF;
    if (i + k >= text.size() || byte(i + k) < min || byte(i + k) > max) {
      *subpart = k;
      return 0;
    }
  }
  return length;
}

}  // namespace

bool isValidUtf8(std::string_view text) {
  size_t subpart = 0;
  for (size_t i = 0; i < text.size();) {
    // ASCII runs are the common case of log text.
    if (static_cast<uint8_t>(text[i]) < 0x80) {
      ++i;
      continue;
    }
    const size_t length = sequenceAt(text, i, &subpart);
    if (length == 0) return false;
    i += length;
  }
  return true;
}

std::string toValidUtf8(std::string_view text) {
  if (isValidUtf8(text)) return std::string(text);
  std::string out;
  out.reserve(text.size() + 8);
  size_t subpart = 0;
  for (size_t i = 0; i < text.size();) {
    const size_t length = sequenceAt(text, i, &subpart);
    if (length > 0) {
      out.append(text.substr(i, length));
      i += length;
    } else {
      out.append(kUtf8Replacement);
      i += subpart;
    }
  }
  return out;
}

size_t utf8PrefixLength(std::string_view text, size_t maxBytes) {
  if (text.size() <= maxBytes) return text.size();
  size_t cut = maxBytes;
  // Step back to the lead byte of the sequence the cut falls in (continuation bytes: 10xxxxxx).
  for (int steps = 0; steps < 3 && cut > 0; ++steps) {
    if ((static_cast<uint8_t>(text[cut]) & 0xC0) != 0x80) break;
    --cut;
  }
  // Still on a continuation byte: the text is not UTF-8 there, so no character can be split.
  if ((static_cast<uint8_t>(text[cut]) & 0xC0) == 0x80) return maxBytes;
  return cut;
}

}  // namespace ringside
