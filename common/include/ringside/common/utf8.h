// UTF-8 checks for text that crosses the wire: proto3 `string` fields must hold valid UTF-8
// (protobuf refuses to parse a message whose string field does not), but a run's output is
// whatever bytes its programs print (`printf 'caf\351\n'` is Latin-1).
//
// Thread-safety: pure functions; safe from any thread.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace ringside {

// U+FFFD REPLACEMENT CHARACTER in UTF-8.
inline constexpr std::string_view kUtf8Replacement = "\xEF\xBF\xBD";

// True when `text` is well-formed UTF-8 as the Unicode Standard defines it (chapter 3, table 3-7):
// no overlong forms, no surrogates (U+D800..U+DFFF), nothing above U+10FFFF, no truncated
// sequences. NUL bytes are valid (U+0000).
bool isValidUtf8(std::string_view text);

// `text` with every ill-formed sequence replaced by U+FFFD, one per "maximal subpart" (Unicode
// 3.9, U+FFFD substitution of maximal subparts, as WHATWG's decoder and Python's
// bytes.decode(errors="replace") do): "caf\xE9" -> "caf\uFFFD", a truncated "\xE2\x82" -> one
// U+FFFD, an overlong "\xC0\x80" -> two. Well-formed text comes back unchanged.
std::string toValidUtf8(std::string_view text);

// The longest prefix length <= maxBytes that does not end inside a multi-byte sequence (it steps
// back over at most 3 continuation bytes), for cutting text to a byte budget without leaving a
// broken character at the cut. `text.size()` when it fits.
size_t utf8PrefixLength(std::string_view text, size_t maxBytes);

}  // namespace ringside
