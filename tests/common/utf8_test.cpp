// toValidUtf8 and friends (common/include/ringside/common/utf8.h): a run's output bytes become
// text that a proto3 `string` may carry (`printf 'caf\351\n'` made every fetch page
// and tail reply holding that line undecodable).
#include "ringside/common/utf8.h"

#include <gtest/gtest.h>

#include <string>

#include "ringside/proto/ringside.pb.h"

namespace ringside {
namespace {

const std::string kFffd(kUtf8Replacement);

std::string repeat(const std::string& text, int times) {
  std::string out;
  for (int i = 0; i < times; ++i) out += text;
  return out;
}

TEST(Utf8Test, WellFormedMultiByteTextIsKeptUnchanged) {
  for (const std::string& text :
       {std::string("plain ascii"), std::string("caf\xC3\xA9"),  // é, 2 bytes
        std::string("\xE2\x82\xAC 12"),                          // €, 3 bytes
        std::string("\xF0\x9D\x84\x9E"),                         // U+1D11E, 4 bytes
        std::string("\xEF\xBF\xBD"),                             // U+FFFD itself
        std::string("\xED\x9F\xBF"),                             // U+D7FF, below surrogates
        std::string("\xEE\x80\x80"),                             // U+E000, above them
        std::string("\xF4\x8F\xBF\xBF"),                         // U+10FFFF, the last
        std::string("nul \0 inside", 12), std::string()}) {
    EXPECT_TRUE(isValidUtf8(text)) << text;
    EXPECT_EQ(toValidUtf8(text), text);
  }
}

TEST(Utf8Test, Latin1ByteFromAPrintfBecomesOneReplacementCharacter) {
  EXPECT_FALSE(isValidUtf8("caf\351"));
  EXPECT_EQ(toValidUtf8("caf\351"), "caf" + kFffd);
  EXPECT_EQ(toValidUtf8("\351t\351"), kFffd + "t" + kFffd);
}

TEST(Utf8Test, OverlongEncodingsAreReplacedByteByByte) {
  // Each byte of an overlong form is its own maximal subpart (Unicode 3.9, table 3-8).
  EXPECT_EQ(toValidUtf8("\xC0\x80"), repeat(kFffd, 2));          // U+0000 in 2 bytes
  EXPECT_EQ(toValidUtf8("\xC1\xBF"), repeat(kFffd, 2));          // U+007F in 2 bytes
  EXPECT_EQ(toValidUtf8("\xE0\x80\xAF"), repeat(kFffd, 3));      // '/' in 3 bytes
  EXPECT_EQ(toValidUtf8("\xE0\x9F\xBF"), repeat(kFffd, 3));      // U+07FF in 3 bytes
  EXPECT_EQ(toValidUtf8("\xF0\x8F\xBF\xBF"), repeat(kFffd, 4));  // U+FFFF in 4 bytes
}

TEST(Utf8Test, SurrogatesAndCodePointsBeyondUnicodeAreReplaced) {
  EXPECT_EQ(toValidUtf8("\xED\xA0\x80"), repeat(kFffd, 3));      // U+D800
  EXPECT_EQ(toValidUtf8("\xED\xBF\xBF"), repeat(kFffd, 3));      // U+DFFF
  EXPECT_EQ(toValidUtf8("\xF4\x90\x80\x80"), repeat(kFffd, 4));  // U+110000
  for (int lead = 0xF5; lead <= 0xFF; ++lead) {
    EXPECT_EQ(toValidUtf8(std::string(1, static_cast<char>(lead)) + "a"), kFffd + "a") << lead;
  }
}

TEST(Utf8Test, TruncatedSequencesBecomeOneReplacementCharacterEach) {
  EXPECT_EQ(toValidUtf8("\xE2\x82"), kFffd);         // € without its last byte, at the end
  EXPECT_EQ(toValidUtf8("\xE2\x82z"), kFffd + "z");  // ... before ASCII
  EXPECT_EQ(toValidUtf8("\xF0\x9F\x98"), kFffd);     // 4-byte lead, 2 more of 3
  EXPECT_EQ(toValidUtf8("\xF0\x9F\x98\xE2\x82\xAC"), kFffd + "\xE2\x82\xAC");
  EXPECT_EQ(toValidUtf8("\xC3"), kFffd);
  EXPECT_EQ(toValidUtf8("\x80\xBF"), repeat(kFffd, 2));  // lone continuation bytes
}

TEST(Utf8Test, EveryTwoByteInputComesOutValid) {
  for (int first = 0; first < 256; ++first) {
    for (int second = 0; second < 256; ++second) {
      const std::string input{static_cast<char>(first), static_cast<char>(second)};
      const std::string output = toValidUtf8(input);
      ASSERT_TRUE(isValidUtf8(output)) << first << " " << second;
      if (isValidUtf8(input)) {
        ASSERT_EQ(output, input);
      }
    }
  }
}

// What the wire needs: protobuf refuses to parse a proto3 string that is not UTF-8.
TEST(Utf8Test, ALogLineWithReplacedBytesSurvivesTheWire) {
  v1::LogLine raw;
  raw.set_text("caf\351");
  v1::LogLine parsed;
  EXPECT_FALSE(parsed.ParseFromString(raw.SerializeAsString())) << "the bug: undecodable";
  v1::LogLine clean;
  clean.set_text(toValidUtf8("caf\351"));
  ASSERT_TRUE(parsed.ParseFromString(clean.SerializeAsString()));
  EXPECT_EQ(parsed.text(), "caf" + kFffd);
}

TEST(Utf8Test, PrefixLengthNeverSplitsACharacter) {
  const std::string euro = "\xE2\x82\xAC";
  const std::string text = "ab" + euro + "c";  // 61 62 E2 82 AC 63
  EXPECT_EQ(utf8PrefixLength(text, 100), text.size());
  EXPECT_EQ(utf8PrefixLength(text, 2), 2u);
  EXPECT_EQ(utf8PrefixLength(text, 3), 2u);
  EXPECT_EQ(utf8PrefixLength(text, 4), 2u);
  EXPECT_EQ(utf8PrefixLength(text, 5), 5u);
  EXPECT_EQ(utf8PrefixLength("\xF0\x9D\x84\x9E", 3), 0u);
  // Not UTF-8 at the cut: nothing to keep whole, cut where asked.
  EXPECT_EQ(utf8PrefixLength(std::string(8, '\x80'), 5), 5u);
}

}  // namespace
}  // namespace ringside
