// checkJsonDepth (common/include/ringside/common/json_limits.h): the nesting bound of every JSON
// text the agent reads, checked without building a document.
#include "ringside/common/json_limits.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

namespace ringside {
namespace {

std::string nestedLists(int depth) {
  return std::string(static_cast<size_t>(depth), '[') +
         std::string(static_cast<size_t>(depth), ']');
}

TEST(JsonLimitsTest, DepthUpToTheBoundIsAcceptedAndOneMoreIsRefused) {
  EXPECT_TRUE(checkJsonDepth("1", kMaxJsonDepth, "text").isOk());
  EXPECT_TRUE(checkJsonDepth(R"({"hidden": [256, 128]})", 2, "text").isOk());
  EXPECT_TRUE(checkJsonDepth(nestedLists(kMaxJsonDepth), kMaxJsonDepth, "text").isOk());
  const Status deep = checkJsonDepth(nestedLists(kMaxJsonDepth + 1), kMaxJsonDepth, "config_json");
  EXPECT_EQ(deep.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(deep.message().find("config_json"), std::string::npos) << deep.message();
  EXPECT_NE(deep.message().find("32 levels"), std::string::npos) << deep.message();
}

TEST(JsonLimitsTest, BracketsInsideStringsAreNotLevels) {
  EXPECT_TRUE(checkJsonDepth(R"({"a": "[[[[[[[[[[{{{{{{{{"})", 1, "text").isOk());
}

// Text that is not JSON is the caller's parser's to report (in its own words).
TEST(JsonLimitsTest, NonJsonIsLeftToTheCallersParser) {
  for (const char* text : {"", "{", "not json", R"({"a": 1} trailing)", "{'a': 1}"}) {
    EXPECT_TRUE(checkJsonDepth(text, kMaxJsonDepth, "text").isOk()) << text;
  }
}

TEST(JsonLimitsTest, HundredThousandLevelsAreRefusedQuicklyWithoutRecursion) {
  std::string objects;
  for (int i = 0; i < 100'000; ++i) objects += R"({"a": )";
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(checkJsonDepth(nestedLists(100'000), kMaxJsonDepth, "text").isOk());
  EXPECT_FALSE(checkJsonDepth(objects, kMaxJsonDepth, "text").isOk());  // unterminated, too
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
}

}  // namespace
}  // namespace ringside
